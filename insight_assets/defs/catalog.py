"""Every asset of the code location, from the one list of asset modules."""

import dagster as dg

from insight_assets.defs import (
    citations,
    contregen,
    curation,
    evaluation,
    ingestion,
    insight_rag,
    insights,
    scipip,
    themes,
    xsum,
)

ASSET_MODULES = (
    ingestion,
    citations,
    curation,
    themes,
    insights,
    evaluation,
    xsum,
    contregen,
    insight_rag,
    scipip,
)
ALL_ASSETS = dg.load_assets_from_modules(ASSET_MODULES)
INGESTION_ASSETS = dg.load_assets_from_modules([ingestion])
