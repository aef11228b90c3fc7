"""The collections' folders as Dagster sees them: an observable source asset whose data version,
per collection, is the folder's signature, so that the UI shows a collection's assets as stale as
soon as a PDF is added, changed or removed; and the signature of a whole build, which the nightly
schedule compares with the last successful build's to rebuild only what changed."""

from __future__ import annotations

import functools
from pathlib import Path

import dagster as dg

from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.core.ingest import fingerprint
from insight_assets.defs.partitions import (
    InvalidCollectionKey,
    collection_partitions,
    validate_collection_key,
)

# On each build run: what it was built from (``build_signature``).
BUILD_SIGNATURE_TAG = "insight_assets/build_signature"
# The source asset's key: what `source_documents` depends on. The asset itself goes into the
# definitions beside the catalog's (defs/catalog.py lists only what the steps build).
COLLECTION_FILES = dg.AssetKey("collection_files")


def folder_signature(folder: Path) -> str:
    """A cheap signature of a folder's inputs (names, sizes, modification times of its PDFs and
    its ``questions.jsonl``): no hashing."""
    entries = sorted(
        f"{p.relative_to(folder).as_posix()}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in folder.rglob("*")
        if p.is_file() and (p.suffix.lower() == ".pdf" or p.name == USER_QUESTIONS_FILE)
    )
    return fingerprint(entries)


def holds_a_pdf(folder: Path) -> bool:
    return any(path.is_file() and path.suffix.lower() == ".pdf" for path in folder.rglob("*"))


def collection_folders(root: Path) -> dict[str, Path]:
    """Folders under ``root`` whose names are valid collection keys."""
    if not root.is_dir():
        return {}
    folders = {}
    for path in sorted(root.iterdir()):
        if not path.is_dir():
            continue
        try:
            folders[validate_collection_key(path.name)] = path
        except InvalidCollectionKey:
            continue
    return folders


@dg.observable_source_asset(
    key=COLLECTION_FILES,
    partitions_def=collection_partitions,
    required_resource_keys={"storage"},
    group_name="ingestion",
)
def collection_files(context) -> dg.DataVersionsByPartition:
    """A collection's folder of PDFs (and its questions.jsonl). Its data version is the folder's
    signature: observed by the folder sensor when it changes, by `insight-assets build`, or from
    the UI ("Observe sources"); a new version shows every asset of that collection as stale."""
    folders = collection_folders(Path(context.resources.storage.collections_root))
    known = context.instance.get_dynamic_partitions(collection_partitions.name)
    return dg.DataVersionsByPartition(
        {name: folder_signature(folders[name]) for name in known if name in folders}
    )


def folder_observation(collection: str, signature: str) -> dg.AssetObservation:
    """An observation of ``collection``'s folder with ``signature`` as its data version."""
    return dg.AssetObservation(
        asset_key=COLLECTION_FILES, partition=collection, tags={"dagster/data_version": signature}
    )


@functools.cache
def _code_versions() -> str:
    """A digest of every asset's code version: a build of other code is another build."""
    from insight_assets.defs.catalog import ALL_ASSETS

    versions = sorted(
        f"{key.to_user_string()}={version}"
        for asset in ALL_ASSETS
        for key, version in asset.code_versions_by_key.items()
    )
    return fingerprint(versions)


def build_signature(folder: Path, llm, embedder) -> str:
    """What a collection's build is made from: its folder's signature, the assets' code versions
    and the models' identities (the ``llm`` and ``embedder`` resources)."""
    return fingerprint(
        [folder_signature(folder), _code_versions(), repr(llm.identity()), repr(embedder.identity())]
    )


def last_built_signature(instance: dg.DagsterInstance, collection: str) -> str | None:
    """The build signature of ``collection``'s last successful build run, if any."""
    runs = instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS], tags={"dagster/partition": collection}),
        limit=20,
    )
    return next((run.tags[BUILD_SIGNATURE_TAG] for run in runs if BUILD_SIGNATURE_TAG in run.tags), None)
