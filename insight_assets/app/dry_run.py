"""The state a dry run's steps share, and the shape of a step (see ``app/estimating.py``).

A module apart from the dry run's machinery, which imports the catalog: a defs folder's
``estimate.py`` imports this while the catalog is loading that folder.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from insight_assets.core.index import IndexMissing
from insight_assets.core.llm import LLMClient
from insight_assets.core.retrieval import Retriever
from insight_assets.defs.model_calls import ModelCallConfig
from insight_assets.defs.resources import EmbedderResource, StorageResource


@dataclass
class DryRun:
    """What the steps of a dry run share: the estimate-only client, the collection, and what the
    earlier steps produced (offline answers, of a realistic size), by the name of the asset whose
    step produced it: a step reads its upstream assets' ``outputs``."""

    client: LLMClient
    storage: StorageResource
    embedder: EmbedderResource
    collection: str
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def embed(self):
        return self.embedder.get_embedder().embed

    def output(self, asset: str, default: Any = None) -> Any:
        """What the step of ``asset`` produced; ``default`` when it produced nothing (or has no step)."""
        return self.outputs.get(asset, default)

    def open_retriever(self, profile: str) -> Retriever | None:
        """The collection's ``profile`` retriever; ``None`` before its chunks have vectors."""
        try:
            return Retriever.open(
                self.storage.warehouse,
                self.storage.vectors,
                self.collection,
                self.embedder.get_embedder(),
                profile,
            )
        except IndexMissing:
            return None


@dataclass(frozen=True)
class EstimateStep:
    """One model-calling asset in a dry run: its name, its config class (defaults and task
    overrides) and what it does on the dry run's state, where it may put what it produced
    (``run.outputs[asset]``) for the steps of downstream assets. A defs folder names its steps in
    its ``Domain`` (``defs/domain.py``)."""

    asset: str
    config: type[ModelCallConfig]
    run: Callable[[Any, DryRun], None]
