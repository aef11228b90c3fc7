"""How collections get built: the main job, a sensor for new or changed folders, a nightly schedule."""

import json
from pathlib import Path

import dagster as dg

from insight_assets.core.curation import USER_QUESTIONS_FILE
from insight_assets.core.ingest import fingerprint
from insight_assets.defs.partitions import (
    InvalidCollectionKey,
    collection_partitions,
    validate_collection_key,
)
from insight_assets.defs.resources import StorageResource

build_collection_job = dg.define_asset_job(
    "build_collection",
    selection=dg.AssetSelection.all(),
    partitions_def=collection_partitions,
    description="Materialize every asset for one collection.",
)


def folder_signature(folder: Path) -> str:
    """A cheap signature of a folder's inputs (names, sizes, modification times of its PDFs and
    its ``questions.jsonl``): no hashing."""
    entries = sorted(
        f"{p.relative_to(folder).as_posix()}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in folder.rglob("*")
        if p.is_file() and (p.suffix.lower() == ".pdf" or p.name == USER_QUESTIONS_FILE)
    )
    return fingerprint(entries)


def _holds_a_pdf(folder: Path) -> bool:
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


@dg.sensor(
    job=build_collection_job, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING
)
def collection_folders_sensor(
    context: dg.SensorEvaluationContext, storage: StorageResource
) -> dg.SensorResult:
    """Registers each new folder under the collections root as a partition and builds it;
    rebuilds a collection whose PDFs were added, changed or removed.

    A new folder without any PDF yet (just created, files still being copied) is left alone until
    one arrives, rather than built into a failed run.
    """
    known = set(context.instance.get_dynamic_partitions(collection_partitions.name))
    folders = {
        name: path
        for name, path in collection_folders(Path(storage.collections_root)).items()
        if name in known or _holds_a_pdf(path)
    }
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    signatures = {name: folder_signature(path) for name, path in folders.items()}
    new = [name for name in folders if name not in known]
    changed = [name for name in folders if name in known and previous.get(name) != signatures[name]]
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(partition_key=name, run_key=f"{name}:{signatures[name]}") for name in new + changed
        ],
        dynamic_partitions_requests=[collection_partitions.build_add_request(new)] if new else [],
        cursor=json.dumps(signatures, sort_keys=True),
    )


@dg.schedule(job=build_collection_job, cron_schedule="0 3 * * *", execution_timezone="UTC")
def nightly_reingest(context: dg.ScheduleEvaluationContext, storage: StorageResource):
    """Re-ingest every collection at 03:00 UTC; unchanged ones reuse everything and finish fast.

    A registered collection whose folder is gone is skipped (and logged) rather than run to fail.
    """
    keys = context.instance.get_dynamic_partitions(collection_partitions.name)
    folders = collection_folders(Path(storage.collections_root))
    missing = [key for key in keys if key not in folders]
    if missing:
        context.log.warning(f"Not re-ingesting collections without a folder: {', '.join(missing)}")
    present = [key for key in keys if key in folders]
    if not present:
        return dg.SkipReason("No registered collection has a folder under the collections root.")
    stamp = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return [dg.RunRequest(partition_key=key, run_key=f"nightly:{stamp}:{key}") for key in present]
