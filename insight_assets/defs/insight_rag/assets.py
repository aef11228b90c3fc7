"""Insight-RAG's stage assets (``core/methods/insight_rag/stages/``): the collection's knowledge
triples (and its searchable triples and sentences), the benchmark built from them and the citation
graph, the answers of Insight-RAG and its baselines, and the insight retriever scored alone."""

from insight_assets.core.methods.insight_rag import stages
from insight_assets.defs.stage_assets import stage_assets

ASSETS = stage_assets(stages.STAGES)
