"""Insight-RAG's section of the collection's page."""

from insight_assets.defs.insight_rag.answers import insight_rag_scores
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="insight-rag",
    title="Insight-RAG: insights identified, retrieved and answered from",
    paper="Insight-RAG: Enhancing LLMs with Insight-Driven Augmentation",
    report=insight_rag_scores,
    report_file="insight_rag_report.md",
)
