"""InsightGen's parts besides its assets (see ``defs/domain.py``): its dry-run steps, smoke settings,
``ask`` flow and section of the collection's page."""

from insight_assets.app.cli import insightgen as cli
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.domain import Domain
from insight_assets.defs.insightgen.assets import InsightGenInsightsConfig
from insight_assets.defs.insightgen.evaluation import InsightGenJudgeConfig, method_report
from insight_assets.defs.model_calls import SMOKE_ANSWERS
from insight_assets.defs.pages import MethodPage

# Op config for a smoke run with a slow model (see ``defs/runs.py``): two themes, one question, two
# insights, one judging.
SMOKE_SETTINGS = {
    "theme_graph": {"max_clusters": 2},
    "insights": {"max_questions": 1, "max_insights": 2, **SMOKE_ANSWERS},
    "judge_scores": {"repetitions": 1, **SMOKE_ANSWERS},
}

PAGE = MethodPage(
    method="insightgen",
    title="InsightGen: related insights from the theme graph",
    paper="An Answer is just the Start: Related Insight Generation for Open-Ended Document-Grounded QA",
    report=method_report,
    report_file="method_report.md",
    core=True,
)

DOMAIN = Domain(
    "insightgen",
    estimate_steps=(
        EstimateStep("insights", InsightGenInsightsConfig),
        EstimateStep("judge_scores", InsightGenJudgeConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
    ask=cli.ASK,
    page=PAGE,
)
