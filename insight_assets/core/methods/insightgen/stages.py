"""InsightGen's stages (see ``core/runtime/stage.py``): the work the build, the dry run and ``ask`` share,
and their declarations (``STAGES``); their settings models are in ``settings.py``. The judging stage runs ``judge_questions``
on ``questions_to_judge`` once per judge of its panel, each with its own client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.runtime.stage import Check, CollectionScope, Stage
from insight_assets.core.runtime.stage_output import stop_if_over_budget

from ...curation.stages import ANSWERS as CURATED_ANSWERS
from ...curation.stages import kept_pairs_of
from ...curation.tables import load_pairs
from . import (
    TASKS,
    InsightGenResult,
    load_insightgen_index,
    outputs,
    run_insightgen,
    store,
)
from .judge import (
    JUDGE_INSIGHT_SET,
    JUDGE_SINGLE_INSIGHTS,
    JudgedQuestion,
    JudgeOutcome,
    judge_questions,
    judged_questions,
)
from .repetition import REPEATS_ANSWER_COSINE
from .report import OFFLINE_JUDGE
from .schemas import insight_text
from .settings import InsightsSettings, JudgeSettings

if TYPE_CHECKING:
    from insight_assets.core.retrieval.index import CollectionIndex

    from ...curation.records import QAPair

INSIGHTS, JUDGE_SCORES = "insights", "judge_scores"
JUDGED = "judged_questions"


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
    result = run_insightgen(scope.client, pairs, index, cluster_index, scope.embed, settings)
    runs = result.outcome.runs
    scope.plan(
        JUDGED,
        judged_questions(
            pairs,
            (
                (run.question_id, run.method, insight_text(insight))
                for run in runs
                for insight in run.insights
            ),
            ((run.question_id, run.method, run.error) for run in runs),
        ),
    )
    return Found(pairs, result, index)


def insights_for(scope: CollectionScope) -> Found:
    """InsightGen's insights (InsightGen alone, no baselines) for the one pair ``scope`` is given
    (``curation.stages.answer_for``): the insights stage's work, with the settings the collection
    was built with."""
    built = scope.built_settings(INSIGHTS, InsightsSettings)
    return find_insights(scope, built.model_copy(update={"methods": ["insightgen"], "max_questions": None}))


def questions_to_judge(scope: CollectionScope) -> list[JudgedQuestion]:
    """Each question with insights: its pair and every method's insights (or why it has none)."""

    def stored() -> list[JudgedQuestion]:
        rows, runs = store.judging_inputs(scope.warehouse, scope.collection)
        return judged_questions(
            load_pairs(scope.warehouse, scope.collection),
            ((r["question_id"], r["method"], f"{r['hook']}: {r['body']}") for r in rows),
            (
                (r["question_id"], r["method"], r["error"] or f"its run is {r['status']} with no insight")
                for r in runs
            ),
        )

    return scope.upstream(JUDGED, stored)


@dataclass(frozen=True)
class Judged:
    questions: list[JudgedQuestion]
    outcomes: dict[str, JudgeOutcome]  # by judge name


def judge(scope: CollectionScope, settings: JudgeSettings) -> Judged:
    """Every judge's scores of every method's insights, each judge with its own client."""
    questions = questions_to_judge(scope)
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


STAGES = (
    Stage(
        INSIGHTS,
        "insightgen",
        "Up to five related insights per question-answer pair and method: InsightGen (the answer's "
        "theme clusters and their graph neighbours, chain of thought) and the baselines Direct, CoT, "
        "vector top-k and vector top-k with CoT, in one table with a `method` column.",
        InsightsSettings,
        reads=("theme_graph", CURATED_ANSWERS),
        run=find_insights,
        output=outputs.insights,
        tasks=TASKS,
        checks=(
            Check(
                outputs.CITE_CONTEXT,
                "Every stored insight cites at least one chunk, and only chunks its method was given for "
                "that question (the run's context).",
            ),
            Check(
                outputs.NOT_REPEATING,
                f"No insight is at cosine >= {REPEATS_ANSWER_COSINE} to a sentence of its answer.",
            ),
            Check(
                outputs.QUESTIONS_FOUND,
                "`generated_answers` kept a question-answer pair to find insights for.",
            ),
        ),
        embedder=True,
    ),
    Stage(
        JUDGE_SCORES,
        "insightgen",
        "Every judge's 0-5 scores of every method's insights: at set level (novelty, diversity, "
        "relevance, depth, all methods' sets shown together under shuffled anonymous labels) and at "
        "insight level (one sampled insight per method, ten repetitions, no diversity).",
        JudgeSettings,
        reads=(INSIGHTS,),
        run=judge,
        output=outputs.judge_scores,
        tasks=(JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS),
        judges=JudgeSettings.panel,
    ),
)
