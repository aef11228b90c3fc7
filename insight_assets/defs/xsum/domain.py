"""XSum's section of the collection's page (see ``defs/domain.py``)."""

from insight_assets.core.methods.xsum import stages as xsum_stages
from insight_assets.defs.domain import Domain
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="xsum",
    title="XSum: cited multi-paper summaries",
    paper="Ask, Retrieve, Summarize: A Modular Pipeline for Scientific Literature Summarization",
    report=xsum_stages.SCORES,
    report_file="xsum_report.md",
)

DOMAIN = Domain("xsum", page=PAGE)
