"""Materialize the ingestion assets for one collection, as a run would, and read what they reported."""

from __future__ import annotations

import dagster as dg

from insight_assets.defs import ingestion
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, StorageResource

INGESTION_ASSETS = dg.load_assets_from_modules([ingestion])


def materialize_collection(
    instance: dg.DagsterInstance,
    storage: StorageResource,
    embedder: EmbedderResource,
    collection: str,
    *,
    run_config: dict | None = None,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult:
    if collection not in instance.get_dynamic_partitions(collection_partitions.name):
        instance.add_dynamic_partitions(collection_partitions.name, [collection])
    return dg.materialize(
        INGESTION_ASSETS,
        partition_key=collection,
        instance=instance,
        resources={"storage": storage, "embedder": embedder},
        run_config=run_config,
        raise_on_error=raise_on_error,
    )


def metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    """The metadata values of ``asset``'s materialization in ``result``."""
    (materialization,) = result.asset_materializations_for_node(asset)
    return {key: value.value for key, value in materialization.metadata.items()}


def check(result: dg.ExecuteInProcessResult, name: str) -> dg.AssetCheckEvaluation:
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    return evaluation
