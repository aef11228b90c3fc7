"""ConTReGen's section of the collection's page (see ``defs/domain.py``)."""

from insight_assets.core.methods.contregen import stages as contregen_stages
from insight_assets.defs.domain import Domain
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="contregen",
    title="ConTReGen: tree-structured retrieval, then a cited answer",
    paper="ConTReGen: Context-driven Tree-structured Retrieval for Open-domain Long-form Text Generation",
    report=contregen_stages.SCORES,
    report_file="contregen_report.md",
)

DOMAIN = Domain("contregen", page=PAGE)
