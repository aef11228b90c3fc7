"""Insight-RAG's section of the collection's page (see ``defs/domain.py``)."""

from insight_assets.defs.domain import Domain
from insight_assets.defs.pages import MethodPage

PAGE = MethodPage(
    method="insight-rag",
    title="Insight-RAG: insights identified, retrieved and answered from",
    paper="Insight-RAG: Enhancing LLMs with Insight-Driven Augmentation",
    report="insight_rag_scores",
    report_file="insight_rag_report.md",
)

DOMAIN = Domain("insight_rag", page=PAGE)
