"""XSum's parts besides its assets (see ``defs/domain.py``): its dry-run steps, smoke settings,
``ask`` flow and section of the collection's page."""

from insight_assets.app.cli import xsum as cli
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.domain import Domain
from insight_assets.defs.model_calls import SMOKE_ANSWERS
from insight_assets.defs.pages import MethodPage
from insight_assets.defs.xsum.assets import XSumAnswersConfig, XSumQuestionsConfig
from insight_assets.defs.xsum.summaries import XSumScoresConfig, XSumSummariesConfig, xsum_scores

# Op config for a smoke run with a slow model (see ``defs/runs.py``): one question per paper, few
# passages; the baselines stay, as XSum itself writes nothing when every answer abstains.
SMOKE_SETTINGS = {
    "xsum_questions": {"questions_per_paper": 1, **SMOKE_ANSWERS},
    "xsum_answers": {"candidates": 10, "top_n": 3, "max_targets": 1, **SMOKE_ANSWERS},
    "xsum_summaries": {"plain_rag_k": 3, "pipeline_1_top_n": 3, "pipeline_2_candidates": 10, **SMOKE_ANSWERS},
    "xsum_scores": SMOKE_ANSWERS,
}

PAGE = MethodPage(
    method="xsum",
    title="XSum: cited multi-paper summaries",
    paper="Ask, Retrieve, Summarize: A Modular Pipeline for Scientific Literature Summarization",
    report=xsum_scores,
    report_file="xsum_report.md",
)

DOMAIN = Domain(
    "xsum",
    estimate_steps=(
        EstimateStep("xsum_questions", XSumQuestionsConfig),
        EstimateStep("xsum_answers", XSumAnswersConfig),
        EstimateStep("xsum_summaries", XSumSummariesConfig),
        EstimateStep("xsum_scores", XSumScoresConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
    ask=cli.ASK,
    page=PAGE,
)
