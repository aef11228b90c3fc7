"""SciPIP's parts besides its assets (see ``defs/domain.py``): its dry-run steps, smoke settings,
``ask`` flow and section of the collection's page."""

from insight_assets.app.cli import scipip as cli
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.domain import Domain
from insight_assets.defs.model_calls import SMOKE_ANSWERS
from insight_assets.defs.pages import MethodPage
from insight_assets.defs.scipip.assets import SciPIPRetrievalConfig, SciPIPSummariesConfig
from insight_assets.defs.scipip.ideas import SciPIPIdeasConfig, SciPIPScoresConfig, scipip_scores

# Op config for a smoke run with a slow model (see ``defs/runs.py``): one background (every
# method's ideas are expanded and judged twice), one AI Scientist idea with one reflection, and no
# pairwise judging (four baselines in both orders is tens of calls; its protocol has its own test).
SMOKE_SETTINGS = {
    "paper_summaries": SMOKE_ANSWERS,
    "scipip_retrievals": SMOKE_ANSWERS,
    "scipip_ideas": {
        "max_backgrounds": 1,
        "ai_scientist_ideas": 1,
        "ai_scientist_reflections": 1,
        **SMOKE_ANSWERS,
    },
    "scipip_scores": {"pairwise": False, **SMOKE_ANSWERS},
}

PAGE = MethodPage(
    method="scipip",
    title="SciPIP: research ideas",
    paper="SciPIP: An LLM-based Scientific Paper Idea Proposer",
    report=scipip_scores,
    report_file="scipip_report.md",
)

DOMAIN = Domain(
    "scipip",
    estimate_steps=(
        EstimateStep("paper_summaries", SciPIPSummariesConfig),
        EstimateStep("scipip_retrievals", SciPIPRetrievalConfig),
        EstimateStep("scipip_ideas", SciPIPIdeasConfig),
        EstimateStep("scipip_scores", SciPIPScoresConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
    ask=cli.ASK,
    page=PAGE,
)
