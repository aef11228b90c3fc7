"""One partition per collection: a folder of PDFs under the collections root, or a collection of
a registered library (``core/collection_sources.py``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from insight_assets.core.collection_sources import (
    CollectionSource,
    InvalidCollectionKey,
    collection_source,
)
from insight_assets.core.library import LibraryError

collection_partitions = dg.DynamicPartitionsDefinition(name="collection")
# The collections' source asset (``defs/sources.py``): what every asset of a collection is made from.
COLLECTION_FILES = dg.AssetKey("collection_files")


def asset_settings(group: str, deps: Sequence = ()) -> dict:
    """What every asset of a collection shares: its partitions, its group, a single-run backfill
    policy, so one run may build several collections (`dagster asset materialize --partition-range
    a...c` from a shell; sensors and schedules still request one per collection), and its ``deps``
    after the collection's source asset.

    Dagster judges an asset stale by its direct inputs only: each depends on the folder's source
    asset, so that a folder observed with new content shows all of them stale, not only the first."""
    return {
        "deps": [COLLECTION_FILES, *deps],
        "partitions_def": collection_partitions,
        "group_name": group,
        "backfill_policy": dg.BackfillPolicy.single_run(),
    }


def collection_check(name: str, asset: str, description: str | None = None) -> dg.AssetCheckSpec:
    """A check of ``asset`` whose result belongs to the collection it was run for (its partition),
    so that one collection's later success does not hide another's failure in the UI."""
    with warnings.catch_warnings():
        # A partitioned check is a preview in this Dagster; it is what the UI needs, warned or not.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.AssetCheckSpec(
            name, asset=asset, description=description, partitions_def=collection_partitions
        )


def collection_folder(root: str | Path, key: str) -> Path:
    """The folder of collection ``key``'s side files (its PDFs too, for a folder collection), after
    validating the key; it may not exist."""
    try:
        return collection_source(root, key).folder
    except LibraryError:
        return Path(root) / key


def existing_collection_source(root: str | Path, key: str) -> CollectionSource:
    """Where collection ``key``'s papers come from (a folder, or a library's collection); a step
    fails, saying why, when the key is refused or there is no such collection."""
    try:
        return collection_source(root, key)
    except (InvalidCollectionKey, LibraryError) as error:
        raise dg.Failure(description=str(error)) from error


def existing_collection_folder(root: str | Path, key: str) -> Path:
    """The folder of collection ``key``'s side files (``questions.jsonl``...): see
    ``existing_collection_source``."""
    return existing_collection_source(root, key).folder
