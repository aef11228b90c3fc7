"""InsightGen's dry-run steps: insights (once the collection has a theme graph) and their judging."""

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core import curation
from insight_assets.core.index import IndexMissing
from insight_assets.core.methods import insightgen
from insight_assets.core.methods.insightgen.judge import judge_questions, judged_questions
from insight_assets.defs.insightgen.assets import InsightGenInsightsConfig
from insight_assets.defs.insightgen.evaluation import InsightGenJudgeConfig


def _find_insights(config: InsightGenInsightsConfig, run: DryRun) -> None:
    """Priced once the collection has a theme graph (it needs no model, but does need a build)."""
    variant = run.embedder.get_embedder().variant
    try:
        index, cluster_index = insightgen.load_insightgen_index(
            run.storage.warehouse, run.storage.vectors, run.collection, variant
        )
    except IndexMissing:
        return
    run.outputs["insights"] = insightgen.run_insightgen(
        run.client,
        curation.kept_pairs(run.output("generated_answers", [])),
        index,
        cluster_index,
        run.embed,
        config.settings(),
    )


def _judge(config: InsightGenJudgeConfig, run: DryRun) -> None:
    found_insights = run.output("insights")
    if found_insights is None:
        return
    insights = (
        (found.question_id, found.method, insightgen.insight_text(insight))
        for found in found_insights.outcome.runs
        for insight in found.insights
    )
    runs = ((found.question_id, found.method, found.error) for found in found_insights.outcome.runs)
    judge_questions(
        run.client,
        judged_questions(curation.kept_pairs(run.output("generated_answers", [])), insights, runs),
        judge="estimate",
        seed=config.seed,
        levels=config.levels,
        repetitions=config.repetitions,
    )


ESTIMATE_STEPS = (
    EstimateStep("insights", InsightGenInsightsConfig, _find_insights),
    EstimateStep("judge_scores", InsightGenJudgeConfig, _judge),
)
