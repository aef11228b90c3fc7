"""ConTReGen's section of the collection's page."""

from insight_assets.defs.contregen.assets import contregen_scores
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="contregen",
    title="ConTReGen: tree-structured retrieval, then a cited answer",
    paper="ConTReGen: Context-driven Tree-structured Retrieval for Open-domain Long-form Text Generation",
    report=contregen_scores,
    report_file="contregen_report.md",
)
