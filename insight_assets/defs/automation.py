"""How collections get built: the main job, a sensor for new or changed collections (folders and
libraries' collections), a nightly schedule that rebuilds only what changed."""

import json

import dagster as dg

from insight_assets.core.collection_sources import find_sources
from insight_assets.defs.catalog import build_signature
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.sources import (
    BUILD_SIGNATURE_TAG,
    last_built_signature,
    source_observation,
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
    """Registers each new collection (a folder under the collections root, or a new collection in a
    registered library) as a partition and builds it; rebuilds a collection whose papers were
    added, changed or removed, or whose library metadata or notes changed. Each new or changed
    collection is observed (`collection_files`), so the UI shows its assets stale until it is built.

    A collection the sensor has not seen before (its first tick, a new Dagster home) is compared
    with its last successful build, not with nothing: an unchanged collection is not built again.
    A new collection without any PDF yet (files still being copied) is left alone until one arrives.
    """
    known = set(context.instance.get_dynamic_partitions(collection_partitions.name))
    found = find_sources(storage.collections_root)
    for name, reason in found.unreadable.items():
        context.log.warning(f"{name}: {reason}")
    sources = {
        name: source for name, source in found.collections.items() if name in known or source.holds_a_pdf()
    }
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    signatures = {name: source.signature() for name, source in sources.items()}
    build_signatures = {}
    new, changed = [], []
    for name, source in sources.items():
        if name not in known:
            new.append(name)
        elif name in previous:
            if previous[name] != signatures[name]:
                changed.append(name)
        else:
            build_signatures[name] = build_signature(source, llm, embedder)
            if last_built_signature(context.instance, name) != build_signatures[name]:
                changed.append(name)
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                partition_key=name,
                run_key=f"{name}:{signatures[name]}",
                tags={
                    BUILD_SIGNATURE_TAG: build_signatures.get(name)
                    or build_signature(sources[name], llm, embedder)
                },
            )
            for name in new + changed
        ],
        dynamic_partitions_requests=[collection_partitions.build_add_request(new)] if new else [],
        asset_events=[source_observation(name, signatures[name]) for name in new + changed],
        cursor=json.dumps(signatures, sort_keys=True),
    )


@dg.schedule(job=build_collection_job, cron_schedule="0 3 * * *", execution_timezone="UTC")
def nightly_reingest(
    context: dg.ScheduleEvaluationContext,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
):
    """At 03:00 UTC, rebuild each collection whose papers, library metadata, assets' code or models
    changed since its last successful build (or that has none); the others are left as they are.

    A registered collection whose folder or library collection is gone is skipped (and logged)
    rather than run to fail.
    """
    keys = context.instance.get_dynamic_partitions(collection_partitions.name)
    sources = find_sources(storage.collections_root).collections
    missing = [key for key in keys if key not in sources]
    if missing:
        context.log.warning(f"Not re-ingesting collections without a folder or library: {', '.join(missing)}")
    present = [key for key in keys if key in sources]
    if not present:
        return dg.SkipReason("No registered collection has a folder or a library collection.")
    signatures = {key: build_signature(sources[key], llm, embedder) for key in present}
    changed = [key for key in present if last_built_signature(context.instance, key) != signatures[key]]
    if not changed:
        return dg.SkipReason(
            "Every collection is as last built: no paper, library entry, asset code or model changed since its last successful build."
        )
    stamp = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return [
        dg.RunRequest(
            partition_key=key, run_key=f"nightly:{stamp}:{key}", tags={BUILD_SIGNATURE_TAG: signatures[key]}
        )
        for key in changed
    ]
