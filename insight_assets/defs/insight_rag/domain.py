"""Insight-RAG's parts besides its assets (see ``defs/domain.py``): its dry-run steps, smoke settings,
``ask`` flow and section of the collection's page."""

from insight_assets.app.cli import insight_rag as cli
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.domain import Domain
from insight_assets.defs.insight_rag.answers import InsightRAGAnswersConfig, insight_rag_scores
from insight_assets.defs.insight_rag.assets import InsightRAGBenchmarkConfig, InsightRAGTriplesConfig
from insight_assets.defs.insight_rag.retriever import InsightRetrieverAccuracyConfig
from insight_assets.defs.model_calls import SMOKE_ANSWERS
from insight_assets.defs.pages import MethodPage

# Op config for a smoke run with a slow model (see ``defs/runs.py``): one benchmark item of each
# kind, RAG with one chunk.
SMOKE_SETTINGS = {
    "knowledge_triples": {"max_chunks_per_paper": 2, "max_tokens": 1000},
    "insight_rag_benchmark": {"max_buried": 1, "max_multi": 1, "max_matching": 1, **SMOKE_ANSWERS},
    "insight_rag_answers": {"max_items": 2, "rag_ks": [1], **SMOKE_ANSWERS},
    "insight_retriever": {"epochs": 1, "max_epoch_tokens": 1000, "probes": 4},
    "insight_retriever_accuracy": {"max_items": 1, **SMOKE_ANSWERS},
}

PAGE = MethodPage(
    method="insight-rag",
    title="Insight-RAG: insights identified, retrieved and answered from",
    paper="Insight-RAG: Enhancing LLMs with Insight-Driven Augmentation",
    report=insight_rag_scores,
    report_file="insight_rag_report.md",
)

DOMAIN = Domain(
    "insight_rag",
    estimate_steps=(
        EstimateStep("knowledge_triples", InsightRAGTriplesConfig),
        EstimateStep("insight_rag_benchmark", InsightRAGBenchmarkConfig),
        EstimateStep("insight_rag_answers", InsightRAGAnswersConfig),
        EstimateStep("insight_retriever_accuracy", InsightRetrieverAccuracyConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
    ask=cli.ASK,
    page=PAGE,
)
