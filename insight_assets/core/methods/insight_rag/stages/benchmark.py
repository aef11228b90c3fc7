"""Insight-RAG's benchmark stage: buried, multi-document and matching questions from the triples and
the citation graph."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.citations import citation_links
from insight_assets.core.methods.insight_rag import collection_benchmark, store
from insight_assets.core.methods.insight_rag.benchmark import Benchmark, BenchmarkItem, why_no_matching
from insight_assets.core.methods.insight_rag.collection import phrase_questions
from insight_assets.core.methods.insight_rag.schemas import KINDS, MATCHING
from insight_assets.core.methods.insight_rag.settings import BenchmarkSettings
from insight_assets.core.methods.insight_rag.stages.triples import TRIPLES
from insight_assets.core.methods.insight_rag.tasks import BENCHMARK_TASKS, INSIGHT_RAG_QUESTION
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, Stage
from insight_assets.core.runtime.stage_output import Json, StageOutput, items_check, preview, skipped

BENCHMARK = Handoff("insight_rag_benchmark", store.load_benchmark)


@dataclass(frozen=True)
class Benchmarked:
    benchmark: Benchmark  # every triple's fate
    items: list[BenchmarkItem]  # the questions, phrased


def benchmark(scope: CollectionScope, settings: BenchmarkSettings) -> Benchmarked:
    """Buried, multi-document and matching items from the triples (none: matching items only) and
    the citation graph, their questions phrased by the model."""
    read = scope.upstream(TRIPLES)
    built = collection_benchmark(scope.warehouse, scope.collection, read, settings)
    return Benchmarked(built, phrase_questions(scope.client, built, read))


HAS_ITEMS = "benchmark_has_items"


def output(scope: CollectionScope, settings: BenchmarkSettings, benchmarked: Benchmarked) -> StageOutput:
    built, items = benchmarked.benchmark, benchmarked.items
    triples = (
        f"every triple was dropped ({built.dropped_reasons()})"
        if built.fates
        else "`knowledge_triples` kept no triple to ask about"
    )
    why_none = (
        f"no benchmark item: {triples}, and matching needs a pair of papers that cite each other and a "
        "pair that do not."
    )
    writer = scope.client.writer_label(INSIGHT_RAG_QUESTION)
    counts = {kind: sum(item.kind == kind for item in items) for kind in KINDS}
    left_out = {}
    if not built.fates:  # an empty result upstream is said here, not read as a success
        left_out["buried and multi-document questions"] = (
            "no triple to ask about: `knowledge_triples` kept none (see its check triples_found)"
        )
    if not counts[MATCHING]:
        links = citation_links(scope.warehouse, scope.collection)
        left_out["matching items"] = why_no_matching(links, settings.max_matching)
    sample = [
        {
            "kind": item.kind,
            "question": item.question or f"{item.paper_a[:8]} vs {item.paper_b[:8]}",
            "gold": "; ".join(item.gold_answers),
        }
        for kind in KINDS
        for item in [i for i in items if i.kind == kind][:4]
    ]
    return StageOutput(
        tables=store.benchmark_tables(scope.collection, items, built.fates, writer),
        metadata={
            "dagster/row_count": len(items),
            "items": Json(counts),
            "dropped_triples": Json(built.dropped_reasons()),
            "sample": preview(sample, ["kind", "question", "gold"]),
            "rules": "buried: one object in the collection, subject and object once in the paper's full text "
            "(the paper: once in the abstract)",
            "writer": writer,
            **skipped(left_out),
        },
        checks=[items_check(HAS_ITEMS, len(items), why_none)],
    )


BENCHMARK_STAGE = Stage(
    BENCHMARK.name,
    "insight_rag",
    "Deeply buried and multi-document questions from the collection's triples (phrased by a task "
    "asking about the object; offline: templates) and citation-recommendation pairs from its "
    "citation graph, with gold answers and documents. Every triple's fate is kept: the item it "
    "became or why it was dropped.",
    BenchmarkSettings,
    reads=(TRIPLES.name, "citations"),
    run=benchmark,
    hands=(BENCHMARK.of(lambda benchmarked: benchmarked.items),),
    output=output,
    tasks=BENCHMARK_TASKS,
    checks=(Check(HAS_ITEMS, "Some triple became a question, or some citation pair a matching item."),),
)
