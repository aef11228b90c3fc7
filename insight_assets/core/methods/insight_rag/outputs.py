"""What Insight-RAG's stages keep (see ``core/runtime/stage_output.py``): the tables each writes (and the
searchable triples' vectors), and its report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.embedding.models import one_torch_thread
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    StageOutput,
    items_check,
    preview,
    skipped,
    table,
)
from insight_assets.core.startup.lazy import np, pa

from ...citations import citation_links
from ...retrieval.citing import citation_problems
from . import accuracy, retriever, store
from .benchmark import why_no_matching
from .schemas import FAILED, KINDS, MATCHING
from .tasks import INSIGHT_RAG_ANSWER, INSIGHT_RAG_IDENTIFY, INSIGHT_RAG_QUESTION, INSIGHT_RAG_TRIPLES
from .triples import EXTRACTOR

if TYPE_CHECKING:
    from insight_assets.core.runtime.stage import CollectionScope

    from .collection import ChunkTriples
    from .settings import AccuracySettings, AnswersSettings, BenchmarkSettings, TriplesSettings
    from .stages import Answered, Benchmarked, Measured

TRIPLES_FOUND = "triples_found"
HAS_ITEMS = "benchmark_has_items"
CITE_GIVEN = "answers_cite_given_passages"
RETRIEVERS_SCORED = "retrievers_scored"


def triples(scope: CollectionScope, settings: TriplesSettings, read: ChunkTriples) -> StageOutput:
    """The triples and sentences, embedded into their vector table (only those without a vector yet:
    one new paper, its own). No triple (a small model whose every reply failed its checks, say): the
    sentences are still indexed, for the sentences mode and the matching items; the check says why."""
    found, sentences = read.triples, read.sentences
    writer = scope.client.writer_label(INSIGHT_RAG_TRIPLES)
    extractor = EXTRACTOR if writer.startswith("offline") else writer
    model = scope.embedder
    units = store.unit_vectors(scope.vectors_uri)
    with one_torch_thread():
        vectors, embedded = retriever.index_vectors(
            units.read(scope.collection), model.variant, found, sentences, model.embed
        )
    units.replace(
        scope.collection, retriever.index_table(scope.collection, model.variant, found, sentences, vectors)
    )
    units.build_text_index(scope.collection)
    sample = [
        {"subject": t.subject, "relation": t.relation, "object": t.object, "sentence": t.sentence[:160]}
        for t in found[:: max(1, len(found) // 15)][:15]
    ]
    why_none = (
        f"the extractor found no triple in the {len(sentences)} sentences of {read.chunks_read} chunks it "
        "read (see failures); only the sentences are indexed."
    )
    return StageOutput(
        tables=store.triple_tables(scope.collection, found, sentences, extractor),
        metadata={
            "dagster/row_count": len(found),
            "sentences": len(sentences),
            "chunks_read": read.chunks_read,
            "chunks_failed": len(read.failed),
            "texts_embedded": embedded,
            "texts_reused": len(vectors) - embedded,
            "failures": "; ".join(sorted({item.error or item.status for item in read.failed})[:5]) or "none",
            "extractor": extractor,
            "sample": preview(sample, ["subject", "relation", "object", "sentence"]),
        },
        checks=[items_check(TRIPLES_FOUND, len(found), why_none)],
    )


def benchmark(scope: CollectionScope, settings: BenchmarkSettings, benchmarked: Benchmarked) -> StageOutput:
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


def answers(scope: CollectionScope, settings: AnswersSettings, answered: Answered | None) -> StageOutput:
    if answered is None:
        return _no_answers()
    items, setup, identified, found = answered.items, answered.setup, answered.identified, answered.answers
    writer = scope.client.writer_label(INSIGHT_RAG_ANSWER)
    identifier = scope.client.writer_label(INSIGHT_RAG_IDENTIFY)
    problems = [
        f"{a.method} on {a.item_id}: {problem}"
        for a in found
        for problem in citation_problems(a.answer, a.passage_chunk_ids, a.error)
    ]
    statuses = {s: sum(i.status == s for i in identified) for s in {i.status for i in identified}}
    questions = {i.item_id: i.question for i in items}
    failures = [
        {"method": a.method, "item": questions[a.item_id] or a.item_id, "error": a.error}
        for a in found
        if a.status == FAILED
    ][:20]
    return StageOutput(
        tables=store.answer_tables(scope.collection, identified, found, setup.sources, identifier, writer),
        metadata={
            "dagster/row_count": len(found),
            "items": len(items),
            "identifier": Json(statuses),
            "methods": ", ".join(dict.fromkeys(a.method for a in found)),
            "mean_context_tokens": Json(_mean_context_tokens(found)),
            "failures": preview(failures, ["method", "item", "error"], empty="None."),
            "writer": writer,
        },
        checks=[
            CheckOutcome(
                CITE_GIVEN, passed=not problems, metadata={"problems": "; ".join(problems[:10]) or "none"}
            )
        ],
    )


def _mean_context_tokens(found) -> dict[str, float]:
    methods = dict.fromkeys(a.method for a in found)
    return {m: round(float(np.mean([a.context_tokens for a in found if a.method == m])), 1) for m in methods}


def _no_answers() -> StageOutput:
    """Nothing to answer: the benchmark is empty (its own check says why)."""
    why = "no benchmark items: `insight_rag_benchmark` stored none (see its check benchmark_has_items)."
    return StageOutput(
        tables={name: pa.Table.from_pylist([]) for name in ("insight_rag_insights", "insight_rag_answers")},
        metadata={"dagster/row_count": 0, "why_none": why},
        checks=[CheckOutcome(CITE_GIVEN, passed=True, metadata={"problems": "none: no answers"})],
    )


def retriever_accuracy(scope: CollectionScope, settings: AccuracySettings, measured: Measured) -> StageOutput:
    rows = accuracy.accuracy_rows(measured.items, measured.outputs)
    why = "no buried or multi-document question: `insight_rag_benchmark` stored none (see its check)"
    return StageOutput(
        tables={"insight_retriever_accuracy": table(scope.collection, rows)},
        metadata={
            "dagster/row_count": len(rows),
            "questions": len(measured.items),
            "accuracy": preview(accuracy.accuracy_table(rows), accuracy.TABLE_COLUMNS, empty="None."),
            **skipped(measured.skipped),
        },
        checks=[items_check(RETRIEVERS_SCORED, len(rows), why)],
    )
