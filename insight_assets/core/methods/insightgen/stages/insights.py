"""InsightGen's insights stage: every method's related insights for each kept question-answer pair, and
the questions they hand the judges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.curation.stages import ANSWERS as CURATED_ANSWERS
from insight_assets.core.curation.stages import kept_pairs_of
from insight_assets.core.curation.tables import load_pairs
from insight_assets.core.methods.insightgen import (
    GENERATE_INSIGHTS,
    OK,
    TASKS,
    InsightGenResult,
    baseline_documents,
    load_insightgen_index,
    run_insightgen,
    store,
)
from insight_assets.core.methods.insightgen.judge import JudgedQuestion, judged_questions
from insight_assets.core.methods.insightgen.repetition import REPEATS_ANSWER_COSINE, repeating_insights
from insight_assets.core.methods.insightgen.schemas import insight_text
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, Json, StageOutput, items_check, preview
from insight_assets.core.startup.lazy import np, pa

if TYPE_CHECKING:
    from insight_assets.core.curation.records import QAPair
    from insight_assets.core.retrieval.index import CollectionIndex
    from insight_assets.core.storage.stores import Warehouse


INSIGHTS = "insights"


def stored_judged_questions(warehouse: Warehouse, collection: str) -> list[JudgedQuestion]:
    """Each stored question with insights: its pair and every method's insights (or why it has none)."""
    rows, runs = store.judging_inputs(warehouse, collection)
    return judged_questions(
        load_pairs(warehouse, collection),
        ((r["question_id"], r["method"], f"{r['hook']}: {r['body']}") for r in rows),
        (
            (r["question_id"], r["method"], r["error"] or f"its run is {r['status']} with no insight")
            for r in runs
        ),
    )


# Each question with insights, as the judges read it (see ``judged_questions``).
JUDGED = Handoff("judged_questions", stored_judged_questions)


@dataclass(frozen=True)
class Found:
    pairs: list[QAPair]  # the pairs insights were sought for; none: nothing was run
    result: InsightGenResult | None
    index: CollectionIndex  # the collection's InsightGen chunks (titles, labels) the insights cite


def find_insights(scope: CollectionScope, settings: InsightsSettings) -> Found:
    """Every method's insights for the first ``max_questions`` kept pairs (``IndexMissing`` before
    the collection has its theme graph). No pair (every answer failed its checks, say): nothing is
    run, and the stage keeps zero rows with a warning that says why."""
    index, cluster_index = load_insightgen_index(
        scope.warehouse, scope.vectors, scope.collection, scope.embedder.variant
    )
    pairs = kept_pairs_of(scope, settings.max_questions)
    if not pairs:
        return Found(pairs, None, index)
    earlier = store.baseline_documents(scope.warehouse, scope.collection)
    return Found(
        pairs,
        run_insightgen(scope.client, pairs, index, cluster_index, scope.embed, settings, earlier),
        index,
    )


def questions_found(found: Found) -> list[JudgedQuestion]:
    """The questions ``find_insights`` found insights for, as the judges read them."""
    runs = found.result.outcome.runs if found.result is not None else []
    return judged_questions(
        found.pairs,
        ((run.question_id, run.method, insight_text(insight)) for run in runs for insight in run.insights),
        ((run.question_id, run.method, run.error) for run in runs),
    )


CITE_CONTEXT = "insights_cite_their_context"
NOT_REPEATING = "insights_do_not_repeat_the_answer"
QUESTIONS_FOUND = "questions_to_find_insights_for"
INSIGHT_TABLES = ("insight_runs", "insights", "insight_intents", "insight_pools")


def output(scope: CollectionScope, settings: InsightsSettings, found: Found) -> StageOutput:
    pairs, result = found.pairs, found.result
    if result is None:
        return _no_insights(scope)
    contexts, outcome = result.contexts, result.outcome
    writer = scope.client.writer_label(GENERATE_INSIGHTS)
    insight_rows = [(run, insight) for run in outcome.runs for insight in run.insights]
    failed = [run for run in outcome.runs if run.status != OK]
    examples = [
        {"method": run.method, "type": insight.type, "insight": insight_text(insight)[:300]}
        for run in outcome.runs[: len(settings.methods)]
        for insight in run.insights[:2]
    ]
    mean_tokens = {
        m: round(float(np.mean([c.tokens for c in contexts if c.method == m])), 1) for m in settings.methods
    }
    failures = [{"method": r.method, "question": r.question_id, "error": r.error} for r in failed]
    return StageOutput(
        tables={
            **_tables(scope.collection, contexts, outcome, writer, result.retrieval),
            "insight_pools": pa.Table.from_pylist(
                baseline_documents.rows(scope.collection, result.documents)
            ),
        },
        metadata={
            "dagster/row_count": len(insight_rows),
            "questions": len(pairs),
            "insights_per_method": Json(
                {
                    m: sum(len(run.insights) for run in outcome.runs if run.method == m)
                    for m in settings.methods
                }
            ),
            "failed_runs": len(failed),
            "mean_context_tokens": Json(mean_tokens if contexts else {}),
            "examples": preview(examples, ["method", "type", "insight"], empty="No insights."),
            "failures": preview(failures, ["method", "question", "error"], empty="None."),
        },
        checks=[
            _do_not_repeat_the_answer(scope, pairs, insight_rows),
            items_check(QUESTIONS_FOUND, len(pairs), ""),
        ],
        checks_of_stored=lambda: [_cite_their_context(scope, len(insight_rows))],
    )


def _cite_their_context(scope: CollectionScope, checked: int) -> CheckOutcome:
    uncited = store.cited_outside_context(store.insights_with_contexts(scope.warehouse, scope.collection))
    return CheckOutcome(
        CITE_CONTEXT,
        passed=not uncited,
        metadata={
            "insights_checked": checked,
            "outside_context": len(uncited),
            "examples": "; ".join(uncited[:5]) or "none",
        },
    )


def _do_not_repeat_the_answer(scope: CollectionScope, pairs, insight_rows) -> CheckOutcome:
    """Insights that say again a sentence of their question's answer: weak insights, not wrong data."""
    answers = {pair.question_id: pair.answer for pair in pairs}
    repeats = repeating_insights(
        scope.embed, [(run.question_id, insight_text(insight)) for run, insight in insight_rows], answers
    )
    shown = [
        {
            "insight": insight_rows[r.index][1].hook,
            "cosine": round(r.cosine, 3),
            "answer_sentence": r.sentence[:200],
        }
        for r in repeats[:10]
    ]
    return CheckOutcome(
        NOT_REPEATING,
        passed=not repeats,
        warning=True,
        metadata={
            "threshold": REPEATS_ANSWER_COSINE,
            "insights_checked": len(insight_rows),
            "repeating": preview(shown, ["insight", "cosine", "answer_sentence"], empty="None."),
        },
    )


def _no_insights(scope: CollectionScope) -> StageOutput:
    """No pair to find insights for (every answer failed its checks, say): zero rows, and the
    warning check says why."""
    why = "no question-answer pairs to find insights for: `generated_answers` kept none (see its failures)."
    none = {"problems": "none: no insights"}
    return StageOutput(
        tables={name: pa.Table.from_pylist([]) for name in INSIGHT_TABLES},
        metadata={"dagster/row_count": 0, "why_none": why},
        checks=[
            CheckOutcome(CITE_CONTEXT, passed=True, metadata=none),
            CheckOutcome(NOT_REPEATING, passed=True, metadata=none),
            items_check(QUESTIONS_FOUND, 0, why),
        ],
    )


def _tables(collection, contexts, outcome, writer, retrieval) -> dict[str, pa.Table]:
    runs = {(run.method, run.question_id): run for run in outcome.runs}
    run_rows = [
        {
            "collection": collection,
            "question_id": c.question_id,
            "method": c.method,
            "status": runs[(c.method, c.question_id)].status,
            "error": runs[(c.method, c.question_id)].error,
            "chunk_ids": list(c.chunk_ids),
            "context_tokens": c.tokens,
            "truncated": c.truncated,
            "answer_clusters": list(c.answer_clusters),
            "related_clusters": list(c.related_clusters),
            # Retrieval that needed the model (the RAG baselines'); none for the others.
            "retrieval_calls": retrieval.get(c.method, {}).get("calls", 0.0),
            "retrieval_seconds": retrieval.get(c.method, {}).get("seconds", 0.0),
        }
        for c in contexts
    ]
    insight_rows = [
        {
            "collection": collection,
            "question_id": run.question_id,
            "method": run.method,
            "insight_index": position,
            **insight.model_dump(),
            "writer": writer,
        }
        for run in outcome.runs
        for position, insight in enumerate(run.insights)
    ]
    intent_rows = [
        {"collection": collection, "question_id": question_id, **intent.model_dump()}
        for question_id, intent in sorted(outcome.intents.items())
    ]
    return {
        "insight_runs": pa.Table.from_pylist(run_rows),
        "insights": pa.Table.from_pylist(insight_rows),
        "insight_intents": pa.Table.from_pylist(intent_rows),
    }


INSIGHTS_STAGE = Stage(
    INSIGHTS,
    "insightgen",
    "Up to five related insights per question-answer pair and method: InsightGen (the answer's "
    "theme clusters and their graph neighbours, chain of thought) and the baselines Direct, CoT, "
    "vector top-k and vector top-k with CoT, in one table with a `method` column.",
    InsightsSettings,
    reads=("theme_graph", CURATED_ANSWERS.name),
    run=find_insights,
    hands=(JUDGED.of(questions_found),),
    output=output,
    tasks=TASKS,
    checks=(
        Check(
            CITE_CONTEXT,
            "Every stored insight cites at least one chunk, and only chunks its method was given for "
            "that question (the run's context).",
        ),
        Check(
            NOT_REPEATING,
            f"No insight is at cosine >= {REPEATS_ANSWER_COSINE} to a sentence of its answer.",
        ),
        Check(
            QUESTIONS_FOUND,
            "`generated_answers` kept a question-answer pair to find insights for.",
        ),
    ),
    embedder=True,
)
