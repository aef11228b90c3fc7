"""Materialize a collection's assets in this process: for tests, benchmarks and scripts."""

import gc

import dagster as dg
from dagster._core.storage.defs_state.base import set_defs_state_storage

from insight_assets.defs.catalog import ALL_ASSETS, INGESTION_ASSETS
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.stage_assets import load_bundle, op_config

__all__ = [
    "ALL_ASSETS",
    "INGESTION_ASSETS",
    "SMOKE_SETTINGS",
    "materialize_collection",
    "op_config",
    "register_collections",
]

# Settings for a smoke run of every asset with a slow model (the local one on a CPU): the bundle
# ``smoke`` (few questions, short contexts, answers of at most 200 tokens; see
# ``insight_assets/bundles/``). Used with ``SMOKE_CONTEXT_TOKENS`` by the local-model test and
# `python -m bench local --quick`.
SMOKE_CONTEXT_TOKENS = 2048
SMOKE_SETTINGS = load_bundle("smoke", assets=ALL_ASSETS)


def register_collections(instance: dg.DagsterInstance, collections: list[str]) -> None:
    """Add the collections that are not partitions yet."""
    known = set(instance.get_dynamic_partitions(collection_partitions.name))
    new = [name for name in collections if name not in known]
    if new:
        instance.add_dynamic_partitions(collection_partitions.name, new)


def materialize_collection(
    instance: dg.DagsterInstance,
    storage: StorageResource,
    embedder: EmbedderResource,
    collection: str,
    *,
    llm: LLMResource | None = None,
    assets: list | None = None,
    run_config: dict | None = None,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult:
    """Run a collection's assets (by default the ingestion assets; with ``llm``, every asset),
    registering the collection as a partition if new."""
    register_collections(instance, [collection])
    resources = {"storage": storage, "embedder": embedder}
    if llm is not None:
        resources["llm"] = llm
    # Loading the definitions reads the "current" state storage from a context variable that
    # entering an instance sets and exiting it puts back. An instance entered and never exited (a
    # schedule context used without ``with`` enters one) puts back its earlier value only when the
    # garbage collector frees it: at any moment, possibly in the middle of this load, leaving a
    # storage whose instance is gone ("undefined DagsterInstance weakref"). Collect such garbage
    # first, then load with this instance's own storage. (Dagster offers no public way to set it.)
    gc.collect()
    with set_defs_state_storage(instance.defs_state_storage):
        return dg.materialize(
            assets or (ALL_ASSETS if llm is not None else INGESTION_ASSETS),
            partition_key=collection,
            instance=instance,
            resources=resources,
            run_config=run_config,
            raise_on_error=raise_on_error,
        )
