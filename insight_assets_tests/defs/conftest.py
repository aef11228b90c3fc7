"""A build shared by the tests that only read it: every asset of the demo collection, offline."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets_tests.conftest import DEMO_COLLECTION, add_collection, copy_stores
from insight_assets_tests.defs.helpers import BRIEF_TRAINING, materialize_collection


class DemoBuild:
    """A collection's stores under ``root``, built with the hashing embedder and the offline model."""

    def __init__(self, root: Path):
        self.root = root
        self.storage = StorageResource(
            collections_root=str(root / "collections"),
            warehouse_path=str(root / "warehouse.duckdb"),
            lancedb_uri=str(root / "lancedb"),
            reports_dir=str(root / "reports"),
            adapters_dir=str(root / "adapters"),
        )
        self.llm = LLMResource(data_dir=str(root / "data"))
        self.result: dg.ExecuteInProcessResult | None = None

    def materialize(self, assets=None) -> dg.ExecuteInProcessResult:
        with dg.DagsterInstance.ephemeral() as instance:
            return materialize_collection(
                instance,
                self.storage,
                EmbedderResource(provider="hashing"),
                "demo",
                llm=self.llm,
                assets=assets,
                # Config of the training steps only where they run.
                run_config={"ops": BRIEF_TRAINING} if assets is None else None,
            )

    def copy(self, root: Path) -> DemoBuild:
        """The same stores under another folder, for a test that changes them."""
        copy_stores(self.root, root)
        copied = DemoBuild(root)
        copied.result = self.result
        return copied


@pytest.fixture(scope="session")
def demo_offline(tmp_path_factory) -> DemoBuild:
    """Every asset of the demo built once, offline (briefly trained retriever); read it, or
    ``copy()`` it to change it."""
    build = DemoBuild(tmp_path_factory.mktemp("demo_offline"))
    (build.root / "collections").mkdir()
    add_collection(build.storage, "demo", sorted(DEMO_COLLECTION.glob("*.pdf")))
    build.result = build.materialize()
    return build
