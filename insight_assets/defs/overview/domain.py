"""The collection's page: its dry-run step (its question answered by every method) and smoke settings."""

from insight_assets.defs.domain import Domain
from insight_assets.defs.overview import estimate

# A smoke run with a slow model shows the reports without asking every method a question.
SMOKE_SETTINGS = {"collection_report": {"answer_question": False}}

DOMAIN = Domain("overview", estimate_steps=estimate.ESTIMATE_STEPS, smoke_settings=SMOKE_SETTINGS)
