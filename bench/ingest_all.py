"""ingest_all: wall time and peak memory of ingesting every collection of the corpus, one after another.

Each top-level corpus folder, bad/ included, becomes a collection in the same temporary stores and is
materialized in one process with the real local embedder, as a nightly re-ingest of a fresh
deployment would. Per collection: documents, pages, chunks per profile, problems (errors and
warnings), stage seconds from the assets' metadata, and wall seconds. Peak memory is
``getrusage().ru_maxrss`` of this process (``python -m bench`` gives each benchmark a fresh one).
``RUSAGE_CHILDREN`` is reported too, but the only children are Dagster's compute-log tailers, and a
forked child's peak counts the pages it shared with this process before it exec'd. The model is
loaded first and timed on its own. With ``--quick``: only the smallest PDF of the smallest
collection.
"""

from __future__ import annotations

import resource
import tempfile
from pathlib import Path

import dagster as dg

from bench.common import BAD, collections, print_table, smallest, summary, timed
from bench.pipeline import link_collection, materialize, metadata, temp_storage
from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.defs.resources import EmbedderResource

QUICK_FILES = 1
COLUMNS = [
    "collection",
    "files",
    "documents",
    "pages",
    "section",
    "passage",
    "errors",
    "warnings",
    "parse_s",
    "chunk_s",
    "embed_s",
    "seconds",
]


def peak_rss_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def run(corpus: Path, quick: bool) -> dict:
    folders = collections(corpus)
    if quick:
        name = min((n for n in folders if n != BAD), key=lambda n: sum(p.stat().st_size for p in folders[n]))
        folders = {name: smallest(folders[name], QUICK_FILES)}
    load_s, _ = timed(lambda: LocalEmbedder().model)

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        for name, files in folders.items():
            link_collection(storage, name, files)
            seconds, result = timed(materialize, instance, storage, EmbedderResource(), name)
            report = metadata(result)
            parsed, chunks = report["parsed_documents"], report["chunks"]
            rows.append(
                {
                    "collection": name,
                    "files": len(files),
                    "documents": parsed["dagster/row_count"],
                    "pages": parsed["pages"],
                    "section": chunks.get("section_chunks", 0),
                    "passage": chunks.get("passage_chunks", 0),
                    "errors": report["every_file_parsed"]["errors"],
                    "warnings": report["every_file_parsed"]["warnings"],
                    "parse_s": parsed["parse_seconds"],
                    "chunk_s": chunks["chunk_seconds"],
                    "embed_s": report["chunk_embeddings"]["embed_seconds"],
                    "seconds": seconds,
                }
            )
            print(f"  {name}: {seconds:.1f} s", flush=True)

    total = {column: sum(row[column] for row in rows) for column in COLUMNS[1:]}
    total["collection"] = "total"
    peak = {
        "self_mib": peak_rss_mib(resource.RUSAGE_SELF),
        "child_mib": peak_rss_mib(resource.RUSAGE_CHILDREN),
    }
    print_table(
        rows + [total],
        COLUMNS,
        title=f"ingest_all: {len(rows)} collections, model loaded first in {load_s:.1f} s",
    )
    print(
        f"peak RSS: this process {peak['self_mib']:,.0f} MiB; largest child {peak['child_mib']:,.0f} MiB "
        "(Dagster's log tailers, forked from this process: mostly shared pages)"
    )
    return {
        "summary": summary(
            f"{total['documents']} docs, {total['pages']:,} pages, {total['section'] + total['passage']:,} "
            f"chunks in {total['seconds']:.1f} s; peak RSS {peak['self_mib']:,.0f} MiB"
        ),
        "model_load_s": load_s,
        "collections": rows,
        "total": total,
        "peak_rss": peak,
    }
