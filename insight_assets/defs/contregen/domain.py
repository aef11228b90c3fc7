"""ConTReGen's parts besides its assets (see ``defs/domain.py``): its dry-run steps, smoke settings,
``ask`` flow and section of the collection's page."""

from insight_assets.app.cli import contregen as cli
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.contregen.assets import (
    ConTReGenAnswersConfig,
    ConTReGenScoresConfig,
    ConTReGenTreesConfig,
    contregen_scores,
)
from insight_assets.defs.domain import Domain
from insight_assets.defs.model_calls import SMOKE_ANSWERS
from insight_assets.defs.pages import MethodPage

# Op config for a smoke run with a slow model (see ``defs/runs.py``): one tree of depth 1, no baselines.
SMOKE_SETTINGS = {
    "contregen_trees": {"max_questions": 1, "max_depth": 1, "max_sub_questions": 2, **SMOKE_ANSWERS},
    "contregen_answers": {"baselines": False, "answer_words": 80, **SMOKE_ANSWERS},
    "contregen_scores": SMOKE_ANSWERS,
}

PAGE = MethodPage(
    method="contregen",
    title="ConTReGen: tree-structured retrieval, then a cited answer",
    paper="ConTReGen: Context-driven Tree-structured Retrieval for Open-domain Long-form Text Generation",
    report=contregen_scores,
    report_file="contregen_report.md",
)

DOMAIN = Domain(
    "contregen",
    estimate_steps=(
        EstimateStep("contregen_trees", ConTReGenTreesConfig),
        EstimateStep("contregen_answers", ConTReGenAnswersConfig),
        EstimateStep("contregen_scores", ConTReGenScoresConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
    ask=cli.ASK,
    page=PAGE,
)
