"""The citation graph: no model calls, no ask flow, no page section of its own."""

from insight_assets.defs.domain import Domain

DOMAIN = Domain("citations")
