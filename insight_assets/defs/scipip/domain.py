"""SciPIP's section of the collection's page (see ``defs/domain.py``)."""

from insight_assets.core.methods.scipip import stages as scipip_stages
from insight_assets.defs.domain import Domain
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="scipip",
    title="SciPIP: research ideas",
    paper="SciPIP: An LLM-based Scientific Paper Idea Proposer",
    report=scipip_stages.SCORES,
    report_file="scipip_report.md",
)

DOMAIN = Domain("scipip", page=PAGE)
