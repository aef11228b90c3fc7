"""rerun: wall time of a no-change rerun of the four ingestion assets against the first run.

One collection (scholarly-document-processing) is symlinked into temporary stores and materialized
twice in one process with the real local embedder: the first run parses, chunks and embeds
everything; the immediate rerun should find every document and vector by content and redo almost
nothing (``documents_parsed`` and ``chunks_embedded`` must be 0). The model is loaded before the
first run and its load time reported on its own, so neither run is charged for it; each run still
pays Dagster's per-run overhead, which bounds how small the ratio can get. Target: rerun < 5% of the
first run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import dagster as dg

from bench.common import pdfs, print_table, ratio, smallest, summary, timed
from bench.pipeline import link_collection, materialize, metadata, temp_storage
from insight_assets.core.embedding import LocalEmbedder
from insight_assets.defs.resources import EmbedderResource

COLLECTION = "scholarly-document-processing"
QUICK_FILES = 1
TARGET = 0.05
# What each run did or reused: (asset, metadata key, column).
COUNTERS = [
    ("parsed_documents", "documents_parsed", "parsed"),
    ("parsed_documents", "documents_reused", "parse_reused"),
    ("parsed_documents", "parse_seconds", "parse_s"),
    ("chunks", "dagster/row_count", "chunks"),
    ("chunks", "chunk_seconds", "chunk_s"),
    ("chunk_embeddings", "chunks_embedded", "embedded"),
    ("chunk_embeddings", "chunks_reused", "embed_reused"),
    ("chunk_embeddings", "embed_seconds", "embed_s"),
]


def run(corpus: Path, quick: bool) -> dict:
    files = pdfs(corpus / COLLECTION)
    if quick:
        files = smallest(files, QUICK_FILES)
    load_s, _ = timed(lambda: LocalEmbedder().model)  # cached per process: later runs reuse it

    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        link_collection(storage, COLLECTION, files)
        seconds, reports = {}, {}
        for name in ("first", "rerun"):
            seconds[name], result = timed(materialize, instance, storage, EmbedderResource(), COLLECTION)
            reports[name] = metadata(result)

    rows = [
        {
            "run": name,
            "seconds": seconds[name],
            **{column: reports[name].get(asset, {}).get(key) for asset, key, column in COUNTERS},
        }
        for name in ("first", "rerun")
    ]
    print_table(
        rows,
        ["run", "seconds"] + [column for _, _, column in COUNTERS],
        title=f"rerun: {COLLECTION}, {len(files)} PDFs, model loaded beforehand in {load_s:.1f} s",
    )
    share = ratio(seconds["rerun"], seconds["first"])
    rerun = rows[1]
    nothing_redone = rerun["parsed"] == 0 and rerun["embedded"] == 0
    print(f"rerun/first = {share:.3f}; nothing re-parsed or re-embedded: {'yes' if nothing_redone else 'NO'}")
    return {
        "summary": summary(
            f"first {seconds['first']:.1f} s, rerun {seconds['rerun']:.2f} s "
            f"(parsed {rerun['parsed']}, embedded {rerun['embedded']})",
            share,
            f"< {TARGET}",
            share is not None and share < TARGET and nothing_redone,
        ),
        "collection": COLLECTION,
        "files": [path.name for path in files],
        "model_load_s": load_s,
        "runs": rows,
        "metadata": reports,
    }
