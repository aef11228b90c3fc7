"""How collections get built: the main job, a sensor for new or changed folders, a nightly schedule
that rebuilds only what changed."""

import json
from pathlib import Path

import dagster as dg

from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.sources import (
    BUILD_SIGNATURE_TAG,
    build_signature,
    collection_folders,
    folder_observation,
    folder_signature,
    holds_a_pdf,
    last_built_signature,
)

build_collection_job = dg.define_asset_job(
    "build_collection",
    selection=dg.AssetSelection.all(),
    partitions_def=collection_partitions,
    description="Materialize every asset for one collection.",
)


@dg.sensor(
    job=build_collection_job, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING
)
def collection_folders_sensor(
    context: dg.SensorEvaluationContext,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.SensorResult:
    """Registers each new folder under the collections root as a partition and builds it;
    rebuilds a collection whose PDFs were added, changed or removed. Each new or changed folder is
    observed (`collection_files`), so the UI shows that collection's assets stale until it is built.

    A new folder without any PDF yet (just created, files still being copied) is left alone until
    one arrives, rather than built into a failed run.
    """
    known = set(context.instance.get_dynamic_partitions(collection_partitions.name))
    folders = {
        name: path
        for name, path in collection_folders(Path(storage.collections_root)).items()
        if name in known or holds_a_pdf(path)
    }
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    signatures = {name: folder_signature(path) for name, path in folders.items()}
    new = [name for name in folders if name not in known]
    changed = [name for name in folders if name in known and previous.get(name) != signatures[name]]
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                partition_key=name,
                run_key=f"{name}:{signatures[name]}",
                tags={BUILD_SIGNATURE_TAG: build_signature(folders[name], llm, embedder)},
            )
            for name in new + changed
        ],
        dynamic_partitions_requests=[collection_partitions.build_add_request(new)] if new else [],
        asset_events=[folder_observation(name, signatures[name]) for name in new + changed],
        cursor=json.dumps(signatures, sort_keys=True),
    )


@dg.schedule(job=build_collection_job, cron_schedule="0 3 * * *", execution_timezone="UTC")
def nightly_reingest(
    context: dg.ScheduleEvaluationContext,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
):
    """At 03:00 UTC, rebuild each collection whose folder, assets' code or models changed since its
    last successful build (or that has none); the others are left as they are.

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
    signatures = {key: build_signature(folders[key], llm, embedder) for key in present}
    changed = [key for key in present if last_built_signature(context.instance, key) != signatures[key]]
    if not changed:
        return dg.SkipReason(
            "Every collection is as last built: no folder, asset code or model changed since its last successful build."
        )
    stamp = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return [
        dg.RunRequest(
            partition_key=key, run_key=f"nightly:{stamp}:{key}", tags={BUILD_SIGNATURE_TAG: signatures[key]}
        )
        for key in changed
    ]
