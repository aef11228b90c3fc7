"""The collections' sources as Dagster sees them: an observable source asset whose data version,
per collection, is its source's signature (a folder's PDFs, or a library collection's items,
metadata and notes), so that the UI shows a collection's assets as stale as soon as a paper is
added, changed or removed; and the signature of a whole build, which the sensor and the nightly
schedule compare with the last successful build's to rebuild only what changed (``build_signature``
is the catalog's: it reads every asset's code version)."""

from __future__ import annotations

import dagster as dg

from insight_assets.core.collection_sources import find_sources
from insight_assets.defs.partitions import COLLECTION_FILES, collection_partitions

# On each build run: what it was built from (``build_signature``).
BUILD_SIGNATURE_TAG = "insight_assets/build_signature"
# The source asset goes into the definitions beside the catalog's (defs/catalog.py lists only what
# the steps build); its key, COLLECTION_FILES, is what every asset's settings depend on.


@dg.observable_source_asset(
    key=COLLECTION_FILES,
    partitions_def=collection_partitions,
    required_resource_keys={"storage"},
    group_name="ingestion",
)
def collection_files(context) -> dg.DataVersionsByPartition:
    """A collection's papers as its source holds them: a folder of PDFs (and its side files), or a
    library's collection (its items' PDFs, metadata and notes). Its data version is the source's
    signature: observed by the sensor when it changes, by `insight-assets build`, or from the UI
    ("Observe sources"); a new version shows every asset of that collection as stale."""
    sources = find_sources(context.resources.storage.collections_root).collections
    known = context.instance.get_dynamic_partitions(collection_partitions.name)
    return dg.DataVersionsByPartition({name: sources[name].signature() for name in known if name in sources})


def source_observation(collection: str, signature: str) -> dg.AssetObservation:
    """An observation of ``collection``'s source with ``signature`` as its data version."""
    return dg.AssetObservation(
        asset_key=COLLECTION_FILES, partition=collection, tags={"dagster/data_version": signature}
    )


def last_built_signature(instance: dg.DagsterInstance, collection: str) -> str | None:
    """The build signature of ``collection``'s last successful build run, if any."""
    runs = instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS], tags={"dagster/partition": collection}),
        limit=20,
    )
    return next((run.tags[BUILD_SIGNATURE_TAG] for run in runs if BUILD_SIGNATURE_TAG in run.tags), None)
