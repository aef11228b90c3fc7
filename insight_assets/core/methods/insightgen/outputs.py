"""What InsightGen's stages keep (see ``core/runtime/stage_output.py``): the tables each writes, and its report."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    Markdown,
    StageOutput,
    items_check,
    judge_note,
    preview,
)
from insight_assets.core.startup.lazy import np, pa

from . import GENERATE_INSIGHTS, OK, store
from .judge import JUDGE_INSIGHT_SET, judge_agreement, mean_scores
from .repetition import REPEATS_ANSWER_COSINE, repeating_insights
from .schemas import insight_text

if TYPE_CHECKING:
    from insight_assets.core.runtime.stage import CollectionScope

    from .settings import InsightsSettings, JudgeSettings
    from .stages import Found, Judged

CITE_CONTEXT = "insights_cite_their_context"
NOT_REPEATING = "insights_do_not_repeat_the_answer"
QUESTIONS_FOUND = "questions_to_find_insights_for"
INSIGHT_TABLES = ("insight_runs", "insights", "insight_intents")
SCORE_COLUMNS = [
    "judge",
    "level",
    "panel",
    "method",
    "novelty",
    "diversity",
    "relevance",
    "depth",
    "overall",
    "count",
]
AGREEMENT_COLUMNS = [
    "level",
    "judge_a",
    "judge_b",
    "questions",
    "pairwise_agreement",
    "spearman_median",
    "spearman_mean",
]


def insights(scope: CollectionScope, settings: InsightsSettings, found: Found) -> StageOutput:
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
        tables=_tables(scope.collection, contexts, outcome, writer, result.retrieval),
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


def judge_scores(scope: CollectionScope, settings: JudgeSettings, judged: Judged) -> StageOutput:
    """Every judge's scores, their means and agreement, and each judge's model and calls."""
    if not judged.questions:
        why = "no insights to judge: `insights` produced none (see its checks and failures)."
        return StageOutput(
            tables={"judge_scores": pa.Table.from_pylist([])},
            metadata={"dagster/row_count": 0, "why_none": why},
        )
    rows = [row for outcome in judged.outcomes.values() for row in outcome.rows]
    failures = [
        {"judge": name, "question": question, "error": error}
        for name, outcome in judged.outcomes.items()
        for question, error in outcome.failures
    ]
    insight_writers = scope.warehouse.writers("insights", scope.collection)
    clients = dict(zip(judged.outcomes, [member.client for member in scope.panel], strict=True))
    judge_notes = [
        f"{name}: "
        + judge_note(
            client.writer_label(JUDGE_INSIGHT_SET),
            insight_writers,
            "lexical stand-in scores, not a model's judgement",
        )
        for name, client in clients.items()
    ]
    names = list(judged.outcomes)
    agreements = [
        {key: _rounded(value) for key, value in judge_agreement(rows, a, b, level).items()}
        for level in settings.levels
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]
    scores = [{key: _rounded(value) for key, value in row.items()} for row in mean_scores(rows)]
    one_judge = "One judge: configure two or more `judges` to measure agreement."
    return StageOutput(
        tables={
            "judge_scores": pa.Table.from_pylist(
                [{"collection": scope.collection, **dataclasses.asdict(row)} for row in rows]
            )
        },
        metadata={
            "dagster/row_count": len(rows),
            "questions": len(judged.questions),
            "judges": ", ".join(names),
            "judge_models": Markdown("\n".join(f"- {note}" for note in judge_notes)),
            "failed_calls": len(failures),
            "mean_scores": preview(scores, SCORE_COLUMNS, empty="Nothing judged."),
            "judge_agreement": preview(agreements, AGREEMENT_COLUMNS, empty=one_judge),
            "failures": preview(failures, ["judge", "question", "error"], empty="None."),
            "llm_by_judge": Json({name: client.summary().as_metadata() for name, client in clients.items()}),
        },
    )


def _rounded(value):
    return round(value, 3) if isinstance(value, float) else value
