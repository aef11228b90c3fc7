"""One partition per collection: a folder of PDFs under the collections root."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

collection_partitions = dg.DynamicPartitionsDefinition(name="collection")


def asset_settings(group: str) -> dict:
    """What every asset of a collection shares: its partitions, its group, and a single-run
    backfill policy, so one run may build several collections (`dagster asset materialize
    --partition-range a...c` from a shell; sensors and schedules still request one per collection)."""
    return {
        "partitions_def": collection_partitions,
        "group_name": group,
        "backfill_policy": dg.BackfillPolicy.single_run(),
    }


class InvalidCollectionKey(ValueError):
    """A partition key that cannot name a folder under the collections root."""


def validate_collection_key(key: str) -> str:
    """Refuse keys that could escape the collections root or name no folder."""
    problem = None
    if not key or not key.strip():
        problem = "it is empty"
    elif "/" in key or "\\" in key:
        problem = "it contains a path separator"
    elif key in {".", ".."} or ".." in key:
        problem = "it contains '..'"
    elif Path(key).is_absolute() or (len(key) > 1 and key[1] == ":"):
        problem = "it is an absolute path"
    elif key.startswith("."):
        problem = "it starts with '.' (hidden folders are not collections)"
    if problem:
        raise InvalidCollectionKey(
            f"Collection key {key!r} is refused: {problem}. A collection is the name of one folder "
            "directly under the collections root, e.g. 'scholarly-docs'."
        )
    return key


def collection_folder(root: str | Path, key: str) -> Path:
    """The folder of collection ``key``, after validating the key."""
    return Path(root) / validate_collection_key(key)


def existing_collection_folder(root: str | Path, key: str) -> Path:
    """The folder of collection ``key``; a step fails, saying why, when the key is refused or the
    folder is missing."""
    try:
        folder = collection_folder(root, key)
    except InvalidCollectionKey as error:
        raise dg.Failure(description=str(error)) from error
    if not folder.is_dir():
        raise dg.Failure(
            description=(
                f"Collection {key!r} has no folder at {folder.resolve()}. Create it and put PDFs "
                "in it, or remove the partition."
            )
        )
    return folder
