"""SciPIP for research backgrounds of the user's: the ideas stage's own path, with the settings the
collection was built with."""

from __future__ import annotations

from insight_assets.core.methods.scipip import store
from insight_assets.core.methods.scipip.backgrounds import Background
from insight_assets.core.methods.scipip.settings import IdeasSettings, RetrievalSettings
from insight_assets.core.methods.scipip.stages.ideas import IDEAS, Proposed, _propose
from insight_assets.core.methods.scipip.stages.retrievals import RETRIEVALS
from insight_assets.core.runtime.stage import CollectionScope


def ideas_for(scope: CollectionScope, backgrounds: list[Background]) -> Proposed:
    """SciPIP's own ideas (the dual path, expanded; no baselines to compare) for research
    ``backgrounds`` (a run each), with the settings the collection's ideas and retrievals were built
    with: ``insight-assets ideas``, ``ask --method scipip`` and the MCP server's ``ask`` all run this."""
    library = store.load_library(scope.warehouse, scope.vectors_uri, scope.embedder, scope.collection)
    settings = scope.built_settings(IDEAS, IdeasSettings)
    retrieval = scope.built_settings(RETRIEVALS, RetrievalSettings)
    return _propose(scope, library, backgrounds, settings, retrieval, own_path_only=True)
