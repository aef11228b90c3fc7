"""SciPIP's section of the collection's page."""

from insight_assets.defs.pages import MethodPage
from insight_assets.defs.scipip.ideas import scipip_scores

PAGE = MethodPage(
    method="scipip",
    title="SciPIP: research ideas",
    paper="SciPIP: An LLM-based Scientific Paper Idea Proposer",
    report=scipip_scores,
    report_file="scipip_report.md",
)
