"""One partition per collection: a folder of PDFs under the collections root."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

collection_partitions = dg.DynamicPartitionsDefinition(name="collection")


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
