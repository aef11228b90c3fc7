"""InsightGen's judging stage: every judge's scores of every method's insights, each judge with its own
client."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from insight_assets.core.methods.insightgen.judge import (
    JUDGE_INSIGHT_SET,
    JUDGE_SINGLE_INSIGHTS,
    JudgedQuestion,
    JudgeOutcome,
    judge_agreement,
    judge_questions,
    mean_scores,
)
from insight_assets.core.methods.insightgen.report import OFFLINE_JUDGE
from insight_assets.core.methods.insightgen.settings import JudgeSettings
from insight_assets.core.methods.insightgen.stages.insights import INSIGHTS, JUDGED
from insight_assets.core.runtime.stage import CollectionScope, Stage
from insight_assets.core.runtime.stage_output import (
    Json,
    Markdown,
    StageOutput,
    judge_note,
    preview,
    stop_if_over_budget,
)
from insight_assets.core.startup.lazy import pa

JUDGE_SCORES = "judge_scores"


@dataclass(frozen=True)
class Judged:
    questions: list[JudgedQuestion]
    outcomes: dict[str, JudgeOutcome]  # by judge name


def judge(scope: CollectionScope, settings: JudgeSettings) -> Judged:
    """Every judge's scores of every method's insights, each judge with its own client."""
    questions = scope.upstream(JUDGED)
    outcomes = {}
    if questions:  # none: `insights` says why with its own warning; nothing is judged or invented
        for member in scope.panel:
            name = member.name or judge_name(member.client)
            outcome = judge_questions(
                member.client,
                questions,
                judge=name,
                seed=settings.seed,
                levels=settings.levels,
                repetitions=settings.repetitions,
            )
            stop_if_over_budget(outcome.budget_error)
            outcomes[name] = outcome
    return Judged(questions, outcomes)


def judge_name(client) -> str:
    """A judge named after its model: the offline stand-in, or "provider:model"."""
    settings = client.settings
    return OFFLINE_JUDGE if settings.is_offline else f"{settings.provider}:{settings.model or 'default'}"


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


def output(scope: CollectionScope, settings: JudgeSettings, judged: Judged) -> StageOutput:
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


JUDGE_STAGE = Stage(
    JUDGE_SCORES,
    "insightgen",
    "Every judge's 0-5 scores of every method's insights: at set level (novelty, diversity, "
    "relevance, depth, all methods' sets shown together under shuffled anonymous labels) and at "
    "insight level (one sampled insight per method, ten repetitions, no diversity).",
    JudgeSettings,
    reads=(INSIGHTS,),
    run=judge,
    output=output,
    tasks=(JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS),
    judges=JudgeSettings.panel,
)
