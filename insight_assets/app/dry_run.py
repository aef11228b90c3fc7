"""The state of a dry run, and the shape of its steps (see ``app/estimating.py``).

A module apart from the dry run's machinery, which imports the catalog: a defs folder's
``domain.py`` imports this while the catalog is loading that folder.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from insight_assets.core.llm import LLMClient
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.resources import EmbedderResource, StorageResource


@dataclass
class DryRun:
    """What a dry run's steps share: the resources, and the collection's scope with the
    estimate-only client and what the stages before planned (see ``core/stage.py``)."""

    storage: StorageResource
    embedder: EmbedderResource
    scope: CollectionScope

    @property
    def client(self) -> LLMClient:
        return self.scope.client

    @property
    def collection(self) -> str:
        return self.scope.collection


@dataclass(frozen=True)
class EstimateStep:
    """One model-calling asset in a dry run: its name and its config class (defaults and task
    overrides). The dry run runs the config's ``stage`` on its scope, the code the asset runs; a
    step that is not a method stage (the collection page's, which asks every method with clients of
    their own) gives ``run`` instead. A defs folder names its steps in its ``Domain``
    (``defs/domain.py``)."""

    asset: str
    config: type
    run: Callable[[Any, DryRun], None] | None = None
