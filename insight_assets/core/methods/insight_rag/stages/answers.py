"""Insight-RAG's answers stage: each benchmark item's identified insights and every method's answer."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.methods.insight_rag import store
from insight_assets.core.methods.insight_rag.benchmark import BenchmarkItem
from insight_assets.core.methods.insight_rag.pipeline import (
    Identification,
    MethodAnswer,
    Setup,
    answer,
    identify,
)
from insight_assets.core.methods.insight_rag.schemas import FAILED, KINDS, PARAMETRIC
from insight_assets.core.methods.insight_rag.settings import AnswersSettings
from insight_assets.core.methods.insight_rag.stages.benchmark import BENCHMARK
from insight_assets.core.methods.insight_rag.stages.triples import units
from insight_assets.core.methods.insight_rag.tasks import (
    ANSWER_TASKS,
    INSIGHT_RAG_ANSWER,
    INSIGHT_RAG_IDENTIFY,
)
from insight_assets.core.retrieval.citing import citation_problems
from insight_assets.core.runtime.stage import Check, CollectionScope, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, Json, StageOutput, preview
from insight_assets.core.startup.lazy import np, pa

ANSWERS = "insight_rag_answers"
# The parametric retriever's training: an asset of its own (not a stage: it calls no priced model).
RETRIEVER = "insight_retriever"


def first_of_each_kind(items: list[BenchmarkItem], max_items: int | None) -> list[BenchmarkItem]:
    """All ``items``, or the first ``max_items`` of each kind."""
    if max_items is None:
        return items
    return [item for kind in KINDS for item in [i for i in items if i.kind == kind][:max_items]]


@dataclass(frozen=True)
class Answered:
    items: list[BenchmarkItem]
    setup: Setup
    identified: list[Identification]
    answers: list[MethodAnswer]


def answers(scope: CollectionScope, answer_settings: AnswersSettings) -> Answered | None:
    """Each item's identified insights and every method's answer; ``None`` without items (or, in a
    dry run, with no mode that calls the model). ``IndexMissing`` before the triples are indexed."""
    items = first_of_each_kind(scope.upstream(BENCHMARK), answer_settings.max_items)
    settings = answer_settings
    if scope.estimating:
        modes = [mode for mode in settings.retriever_modes if mode != PARAMETRIC]
        settings = settings.model_copy(update={"retriever_modes": modes})
    if not items or not settings.retriever_modes:
        return None
    setup = store.open_setup(
        scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection, settings, units(scope)
    )
    identified = identify(scope.client, items, setup)
    answered = answer(scope.client, items, identified, setup, answer_settings.baselines)
    return Answered(items, setup, identified, answered)


CITE_GIVEN = "answers_cite_given_passages"


def output(scope: CollectionScope, settings: AnswersSettings, answered: Answered | None) -> StageOutput:
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


ANSWERS_STAGE = Stage(
    ANSWERS,
    "insight_rag",
    "The identified insights of every benchmark item, and the answers of Insight-RAG (each "
    "retriever mode), RAG with k chunks and no retrieval, with their contexts' sizes and the "
    "retrieval rankings they came from.",
    AnswersSettings,
    reads=(BENCHMARK.name, RETRIEVER),
    run=answers,
    output=output,
    tasks=ANSWER_TASKS,
    checks=(
        Check(
            CITE_GIVEN,
            "Every citation of every answer is a passage (insight or chunk) its method was given; an "
            "invented alias, or a writer rejected for citing sources it was not given, fails it.",
        ),
    ),
    embedder=True,
)
