"""The collection's page: its dry-run step (its question answered by every method) and smoke settings."""

from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.domain import Domain
from insight_assets.defs.overview.side_by_side import CollectionReportConfig, price_page

# A smoke run with a slow model shows the reports without asking every method a question.
SMOKE_SETTINGS = {"collection_report": {"answer_question": False}}

DOMAIN = Domain(
    "overview",
    estimate_steps=(EstimateStep("collection_report", CollectionReportConfig, price_page),),
    smoke_settings=SMOKE_SETTINGS,
)
