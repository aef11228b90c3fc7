"""InsightGen's section of the collection's page."""

from insight_assets.defs.insightgen.evaluation import method_report
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="insightgen",
    title="InsightGen: related insights from the theme graph",
    paper="An Answer is just the Start: Related Insight Generation for Open-Ended Document-Grounded QA",
    report=method_report,
    report_file="method_report.md",
    core=True,
)
