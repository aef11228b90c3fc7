"""scale: the shared deployment (PostgreSQL, DuckLake, a Dask cluster) against the embedded default.

Everything runs on this machine, so the figures are the engines' overheads, not a cluster's speed-up:

1. **warehouse**: replace one collection's chunks (rows of a real build) and read them back, in a
   DuckDB file and in DuckLake with its catalog in a throwaway PostgreSQL; milliseconds per call.
2. **ingest**: the four ingestion assets with the bundled embedder on one corpus collection, in this
   process, into the embedded stores and into the shared ones; seconds, and the seconds per paper of
   parsing and embedding that the README's scale plan extrapolates from.
3. **dask**: ingestion plus InsightGen (offline) of several collections, one after another in this
   process, against all of them at once on a ``LocalCluster`` of two single-thread workers, each run
   a ``dagster asset materialize`` of its own (the hashing embedder, so that model loading does not
   dominate); seconds.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa
import yaml

from bench.common import pdfs, print_table, ratio, smallest, summary, timed
from bench.pipeline import QUIET, link_collection, materialize, metadata, temp_storage
from insight_assets.app.instance import ensure_instance_config
from insight_assets.core.deployment import (
    DASK_SCHEDULER_ENV,
    DATA_PATH_ENV,
    LANCEDB_URI_ENV,
    POSTGRES_URL_ENV,
)
from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.core.storage.lake import LakeWarehouse
from insight_assets.core.storage.stores import Warehouse
from insight_assets.defs.pools import POOLS
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import register_collections
from insight_assets_tests.servers import PostgresServer, free_port, materialize_from_shell

INGESTED = "nlp-embeddings"
# Small collections for the Dask comparison: several runs at once, each a few papers.
DASK_COLLECTIONS = ["scholarly-document-processing", "nlp-information-extraction", "nlp-text-classification"]
DASK_PAPERS = 3
WAREHOUSE_CALLS = 20


def _warehouse_figures(chunks: pa.Table, catalog: str, root: Path) -> list[dict]:
    rows = []
    for name, warehouse in (
        ("DuckDB file", Warehouse(root / "warehouse.duckdb")),
        ("DuckLake", LakeWarehouse(catalog, root / "lake")),
    ):
        warehouse.rows("SELECT 1")  # the schema made, the lake attached
        writes, reads = [], []
        for call in range(WAREHOUSE_CALLS):
            collection = f"c{call % 5}"
            renamed = chunks.set_column(0, "collection", pa.array([collection] * chunks.num_rows))
            writes.append(timed(warehouse.replace_partition, collection, {"chunks": renamed})[0])
            reads.append(
                timed(
                    warehouse.rows,
                    "SELECT * FROM chunks WHERE collection = ? ORDER BY chunk_id",
                    [collection],
                )[0]
            )
        rows.append(
            {
                "warehouse": name,
                "rows": chunks.num_rows,
                "replace_ms": statistics.median(writes) * 1000,
                "read_ms": statistics.median(reads) * 1000,
            }
        )
    for row in rows:
        row["replace_x"] = ratio(row["replace_ms"], rows[0]["replace_ms"])
        row["read_x"] = ratio(row["read_ms"], rows[0]["read_ms"])
    return rows


def _ingest(instance: dg.DagsterInstance, storage, collection: str) -> tuple[float, dict]:
    seconds, result = timed(materialize, instance, storage, EmbedderResource(), collection)
    return seconds, metadata(result)


def _instance(home: Path, url: str) -> dg.DagsterInstance:
    os.environ[POSTGRES_URL_ENV] = url
    try:
        ensure_instance_config(home, environ={POSTGRES_URL_ENV: url})
        return dg.DagsterInstance.from_config(str(home))
    finally:
        del os.environ[POSTGRES_URL_ENV]


def _materialize_on_cluster(root: Path, environment: dict, collection: str, selection: list[str]) -> float:
    started = time.perf_counter()
    completed = materialize_from_shell(
        selection, collection, root / "run_config.yaml", {**os.environ, **environment}
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{collection} failed on the cluster:\n{completed.stderr[-3000:]}")
    return time.perf_counter() - started


def _dask_figures(corpus: Path, server: PostgresServer, root: Path, quick: bool) -> list[dict]:
    from distributed import LocalCluster

    from insight_assets_tests.defs.helpers import assets_up_to

    selection_assets = assets_up_to("method_report")
    selection = sorted({key.to_user_string() for asset in selection_assets for key in asset.keys})
    names = DASK_COLLECTIONS[:2] if quick else DASK_COLLECTIONS
    papers = 1 if quick else DASK_PAPERS

    embedded = temp_storage(root / "embedded")
    for name in names:
        link_collection(embedded, name, smallest(pdfs(corpus / name), papers))
    hashing, llm = EmbedderResource(provider="hashing"), LLMResource(data_dir=str(root / "embedded" / "data"))
    with dg.instance_for_test() as instance:
        started = time.perf_counter()
        for name in names:
            register_collections(instance, [name])
            dg.materialize(
                selection_assets,
                partition_key=name,
                instance=instance,
                resources={"storage": embedded, "embedder": hashing, "llm": llm},
                run_config=QUIET,
            )
        one_by_one = time.perf_counter() - started

    shared_root = root / "shared"
    storage = temp_storage(shared_root)
    for name in names:
        link_collection(storage, name, smallest(pdfs(corpus / name), papers))
    port = free_port()
    environment = {
        POSTGRES_URL_ENV: server.new_database("dask"),
        DATA_PATH_ENV: str(shared_root / "lake"),
        LANCEDB_URI_ENV: str(shared_root / "lancedb"),
        DASK_SCHEDULER_ENV: f"tcp://127.0.0.1:{port}",
        "DAGSTER_HOME": str(shared_root / "home"),
    }
    (shared_root / "run_config.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": {
                    "storage": {"config": {"collections_root": storage.collections_root}},
                    "embedder": {"config": {"provider": "hashing"}},
                    "llm": {"config": {"data_dir": str(shared_root / "data")}},
                },
                **QUIET,
            }
        )
    )
    with (
        _instance(shared_root / "home", environment[POSTGRES_URL_ENV]) as instance,
        LocalCluster(
            host="127.0.0.1",
            scheduler_port=port,
            n_workers=2,
            threads_per_worker=1,
            resources=dict.fromkeys(POOLS, 1),
            dashboard_address=":0",
            env=environment,
        ),
    ):
        register_collections(instance, names)
        seconds: dict[str, float] = {}
        runs = [
            threading.Thread(
                target=lambda name=name: seconds.__setitem__(
                    name, _materialize_on_cluster(shared_root, environment, name, selection)
                )
            )
            for name in names
        ]
        started = time.perf_counter()
        for thread in runs:
            thread.start()
        for thread in runs:
            thread.join()
        at_once = time.perf_counter() - started
    if len(seconds) != len(names):
        raise RuntimeError("a run on the cluster did not finish")
    steps = len(selection_assets) * len(names)
    return [
        {
            "execution": "in process, one after another",
            "collections": len(names),
            "steps": steps,
            "seconds": one_by_one,
        },
        {
            "execution": "Dask, 2 workers, all at once",
            "collections": len(names),
            "steps": steps,
            "seconds": at_once,
        },
    ]


def run(corpus: Path, quick: bool) -> dict:
    files = pdfs(corpus / INGESTED)
    if quick:
        files = smallest(files, 2)
    load_s, _ = timed(lambda: LocalEmbedder().model)
    server = PostgresServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
            root = Path(tmp)
            embedded = temp_storage(root / "embedded-ingest")
            link_collection(embedded, INGESTED, files)
            with dg.instance_for_test() as instance:
                embedded_s, embedded_meta = _ingest(instance, embedded, INGESTED)
            catalog = server.new_database("ingest")
            shared = temp_storage(root / "shared-ingest")
            shared = shared.model_copy(
                update={
                    "warehouse_catalog": catalog,
                    "warehouse_data_path": str(root / "shared-ingest" / "lake"),
                }
            )
            link_collection(shared, INGESTED, files)
            with _instance(root / "home", catalog) as instance:
                shared_s, shared_meta = _ingest(instance, shared, INGESTED)
            chunks = embedded.warehouse.query("SELECT * FROM chunks WHERE collection = ?", [INGESTED])
            warehouse_rows = _warehouse_figures(chunks, server.new_database("ops"), root / "ops")
            dask_rows = _dask_figures(corpus, server, root / "dask", quick)
    finally:
        server.stop()

    papers = len(files)
    ingest_rows = []
    for name, seconds, meta in (("embedded", embedded_s, embedded_meta), ("shared", shared_s, shared_meta)):
        ingest_rows.append(
            {
                "stores": name,
                "papers": papers,
                "seconds": seconds,
                "x_embedded": ratio(seconds, embedded_s),
                "parse_s_per_paper": meta["parsed_documents"].get("parse_seconds", 0) / papers,
                "embed_s_per_paper": meta["chunk_embeddings"].get("embed_seconds", 0) / papers,
                "chunks": meta["chunks"].get("dagster/row_count"),
            }
        )
    for row in dask_rows:
        row["x_in_process"] = ratio(row["seconds"], dask_rows[0]["seconds"])
    print(f"Embedding model loaded once beforehand in {load_s:.1f} s.")
    print_table(
        warehouse_rows,
        ["warehouse", "rows", "replace_ms", "replace_x", "read_ms", "read_x"],
        f"Warehouse calls, median of {WAREHOUSE_CALLS} (x: against the DuckDB file)",
    )
    print_table(
        ingest_rows,
        ["stores", "papers", "chunks", "seconds", "x_embedded", "parse_s_per_paper", "embed_s_per_paper"],
        f"Ingestion of {INGESTED} in this process (bundled embedder)",
    )
    print_table(
        dask_rows,
        ["execution", "collections", "steps", "seconds", "x_in_process"],
        "Ingestion + InsightGen offline (hashing embedder), several collections",
    )
    return {
        "warehouse": warehouse_rows,
        "ingest": ingest_rows,
        "dask": dask_rows,
        "summary": summary(
            f"shared stores {ingest_rows[1]['x_embedded']:.2f}x the embedded ingest; "
            f"Dask {dask_rows[1]['x_in_process']:.2f}x in process",
            ingest_rows[1]["x_embedded"],
        ),
    }
