"""Curation (InsightGen §3): its model calls' dry-run steps and smoke settings."""

from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.curation.assets import (
    CurationAnswersConfig,
    CurationCompressionConfig,
    CurationQuestionsConfig,
)
from insight_assets.defs.domain import Domain
from insight_assets.defs.model_calls import SMOKE_ANSWERS

# Op config for a smoke run with a slow model (see ``defs/runs.py``): one question, short papers,
# answers of at most 400 tokens.
SMOKE_SETTINGS = {
    "compressed_documents": {"max_input_tokens": 1500, "max_tokens": 400},
    "generated_questions": {
        "num_combinations": 1,
        "candidates_per_combination": 2,
        "target_count": 1,
        "min_words": 4,
        **SMOKE_ANSWERS,
    },
    "generated_answers": {"max_tokens": 400},
}

DOMAIN = Domain(
    "curation",
    estimate_steps=(
        EstimateStep("compressed_documents", CurationCompressionConfig),
        EstimateStep("generated_questions", CurationQuestionsConfig),
        EstimateStep("generated_answers", CurationAnswersConfig),
    ),
    smoke_settings=SMOKE_SETTINGS,
)
