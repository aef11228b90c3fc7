"""InsightGen's stages (see ``core/stage.py``): the work the build and the dry run share. The
judging asset runs ``judge_questions`` on ``questions_to_judge`` once per judge, each with its own
client."""

from __future__ import annotations

from dataclasses import dataclass

from ...curation.records import QAPair
from ...curation.stages import kept_pairs_of
from ...curation.tables import load_pairs
from ...stage import CollectionScope
from . import InsightGenResult, InsightGenSettings, load_insightgen_index, run_insightgen, store
from .judge import JudgedQuestion, judged_questions
from .schemas import insight_text

JUDGED = "judged_questions"


@dataclass(frozen=True)
class Found:
    pairs: list[QAPair]  # the pairs insights were sought for; none: nothing was run
    result: InsightGenResult | None


def find_insights(scope: CollectionScope, settings: InsightGenSettings, max_questions: int | None) -> Found:
    """Every method's insights for the first ``max_questions`` kept pairs (``IndexMissing`` before
    the collection has its theme graph)."""
    index, cluster_index = load_insightgen_index(
        scope.warehouse, scope.vectors, scope.collection, scope.embedder.variant
    )
    pairs = kept_pairs_of(scope, max_questions)
    if not pairs:
        return Found(pairs, None)
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
    return Found(pairs, result)


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
