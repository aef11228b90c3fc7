"""The collection's page: its dry-run pricing (its question answered by every method)."""

from insight_assets.defs.domain import Domain
from insight_assets.defs.overview.side_by_side import price_page

DOMAIN = Domain("overview", price={"collection_report": price_page})
