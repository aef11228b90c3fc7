"""XSum's section of the collection's page."""

from insight_assets.defs.pages import MethodPage
from insight_assets.defs.xsum.summaries import xsum_scores

PAGE = MethodPage(
    method="xsum",
    title="XSum: cited multi-paper summaries",
    paper="Ask, Retrieve, Summarize: A Modular Pipeline for Scientific Literature Summarization",
    report=xsum_scores,
    report_file="xsum_report.md",
)
