"""InsightGen's section of the collection's page (see ``defs/domain.py``)."""

from insight_assets.defs.domain import Domain
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="insightgen",
    title="InsightGen: related insights from the theme graph",
    paper="An Answer is just the Start: Related Insight Generation for Open-Ended Document-Grounded QA",
    report="method_report",
    report_file="method_report.md",
    core=True,
)

DOMAIN = Domain("insightgen", page=PAGE)
