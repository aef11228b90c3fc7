"""Materialize a collection's assets in this process: for tests, benchmarks and scripts."""

import dagster as dg

from insight_assets.defs import ingestion
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, StorageResource

INGESTION_ASSETS = dg.load_assets_from_modules([ingestion])


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
    run_config: dict | None = None,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult:
    """Run the ingestion assets for one collection, registering it as a partition if new."""
    register_collections(instance, [collection])
    return dg.materialize(
        INGESTION_ASSETS,
        partition_key=collection,
        instance=instance,
        resources={"storage": storage, "embedder": embedder},
        run_config=run_config,
        raise_on_error=raise_on_error,
    )
