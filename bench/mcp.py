"""mcp: the MCP server as an assistant meets it: started by its client over stdio, then searched.

Two collections are ingested into a temporary project (the demo's papers, and a 20-paper corpus
collection, ``nlp-embeddings``): enough for ``search`` and ``fetch``. For each, the server is a real
subprocess (``python -m insight_assets.cli mcp --project ...``) driven by the official SDK's client:

- cold: from starting the server to the first ``search`` result, and the part of it before
  ``initialize`` answered (the goal: 5 s on 2 cores);
- warm: ``search`` of 20 distinct queries (k = 10, hybrid, reranked), p50 and p95 (goal: 300 ms);
  and ``fetch`` of each query's first passage;
- bare: the same 20 queries in this process, straight through ``Retriever.search`` and the
  late-interaction rerank, model and collection loaded (the floor a server could reach);
- the reranker's token vectors kept with the build: bytes on disk, and a rerank of 100 candidates
  from them against one that runs the model for them (what every search paid before).

``--quick``: the demo only.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import dagster as dg

from bench.common import collections, print_table, ratio, summary
from bench.pipeline import link_collection, materialize, temp_storage
from insight_assets.defs.resources import EmbedderResource

DEMO = Path(__file__).resolve().parents[1] / "data" / "collections" / "scholarly-docs"
CORPUS_COLLECTION = "nlp-embeddings"
QUERIES = [
    "citation graph of papers",
    "entity linking to a knowledge base",
    "extracting tables from PDF files",
    "author name disambiguation",
    "named entities in scientific text",
    "classifying the sections of a paper",
    "word vectors trained on large corpora",
    "paraphrase detection",
    "a benchmark of sentence similarity",
    "multilingual sentence embeddings",
    "pretraining a transformer encoder",
    "averaging word embeddings into a sentence vector",
    "natural language inference data for training",
    "contrastive learning of representations",
    "document classification with few labels",
    "siamese networks for similarity",
    "evaluation on downstream transfer tasks",
    "the size of the training corpus",
    "limitations of the approach",
    "results compared with the baselines",
]
GOAL_COLD_S = 5.0
GOAL_WARM_P50_S = 0.3
COLUMNS = [
    "collection",
    "papers",
    "passages",
    "initialize_s",
    "cold_first_search_s",
    "warm_p50_ms",
    "warm_p95_ms",
    "fetch_p50_ms",
    "bare_p50_ms",
    "token_vectors_mb",
]


def _server(project: Path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = [sys.executable, "-m", "insight_assets.cli", "mcp", "--project", str(project)]
    environment = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=environment, cwd="/"))


async def _session(project: Path, collection: str) -> dict:
    started = time.perf_counter()
    async with _server(project) as client:
        initialized = time.perf_counter() - started
        first = await client.call_tool("search", {"collection": collection, "query": QUERIES[0]})
        cold = time.perf_counter() - started
        if first.is_error:
            raise RuntimeError(f"the first search failed: {first.content}")
        searches, fetches = [], []
        for query in QUERIES:
            began = time.perf_counter()
            found = await client.call_tool("search", {"collection": collection, "query": query, "k": 10})
            searches.append(time.perf_counter() - began)
            (best, *_) = found.structured_content["results"]
            began = time.perf_counter()
            await client.call_tool("fetch", {"id": best["id"]})
            fetches.append(time.perf_counter() - began)
    return {"initialize_s": initialized, "cold": cold, "searches": searches, "fetches": fetches}


def _bare(storage, collection: str) -> tuple[list[float], float, float]:
    """The 20 queries in this process (model and collection loaded first), and one rerank of 100
    candidates from the kept token vectors and from the model."""
    from insight_assets.core.embedding.models import LocalEmbedder
    from insight_assets.core.retrieval import LateInteraction, Retriever, rerank

    embedder = LocalEmbedder()
    retriever = Retriever.open(storage.warehouse, storage.vectors, collection, embedder)
    kept = LateInteraction.for_collection(storage.vectors_uri, collection, cache_size=0)
    retriever.search(QUERIES[0], k=100)
    seconds = []
    for query in QUERIES:
        began = time.perf_counter()
        rerank(query, retriever.search(query, k=100), top_n=10, late_interaction=kept)
        seconds.append(time.perf_counter() - began)
    candidates = retriever.search(QUERIES[-1], k=100)
    began = time.perf_counter()
    rerank(QUERIES[-1], candidates, top_n=10, late_interaction=kept)
    from_store = time.perf_counter() - began
    began = time.perf_counter()
    rerank(QUERIES[-1], candidates, top_n=10, late_interaction=LateInteraction(cache_size=0))
    from_model = time.perf_counter() - began
    return seconds, from_store, from_model


def _disk_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def _measure(root: Path, collection: str, files: list[Path]) -> tuple[dict, float, float]:
    storage = temp_storage(root / "data")
    link_collection(storage, collection, files)
    print(f"  building {collection} ({len(files)} PDFs): ingestion ...", flush=True)
    with dg.instance_for_test() as instance:
        materialize(instance, storage, EmbedderResource(), collection)
    passages = storage.warehouse.rows(
        "SELECT count(*) AS n FROM chunks WHERE collection = ? AND profile = 'passage'", [collection]
    )[0]["n"]
    measured = anyio.run(_session, root, collection)
    bare, from_store, from_model = _bare(storage, collection)
    tokens = Path(storage.vectors_uri) / f"token_vectors__{collection}.lance"
    row = {
        "collection": collection,
        "papers": len(files),
        "passages": passages,
        "initialize_s": measured["initialize_s"],
        "cold_first_search_s": measured["cold"],
        "warm_p50_ms": statistics.median(measured["searches"]) * 1000,
        "warm_p95_ms": sorted(measured["searches"])[int(0.95 * len(QUERIES)) - 1] * 1000,
        "fetch_p50_ms": statistics.median(measured["fetches"]) * 1000,
        "bare_p50_ms": statistics.median(bare) * 1000,
        "token_vectors_mb": _disk_mb(tokens),
    }
    return row, from_store, from_model


def run(corpus: Path, quick: bool) -> dict:
    sets = {"demo": sorted(DEMO.glob("*.pdf"))}
    if not quick:
        sets[CORPUS_COLLECTION] = collections(corpus)[CORPUS_COLLECTION]
    rows, reranks = [], []
    for name, files in sets.items():
        with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
            row, from_store, from_model = _measure(Path(tmp), name, files)
        rows.append(row)
        reranks.append(
            {
                "collection": name,
                "rerank_100_kept_ms": from_store * 1000,
                "rerank_100_model_ms": from_model * 1000,
            }
        )
    print_table(
        rows,
        COLUMNS,
        title="mcp: a client starts the server over stdio, then searches (k = 10, hybrid, reranked)",
    )
    print_table(
        reranks, ["collection", "rerank_100_kept_ms", "rerank_100_model_ms"], title="rerank of 100 candidates"
    )
    worst_cold = max(row["cold_first_search_s"] for row in rows)
    worst_p50 = max(row["warm_p50_ms"] for row in rows) / 1000
    overhead = ratio(worst_p50 * 1000, max(row["bare_p50_ms"] for row in rows))
    return {
        "summary": summary(
            f"cold first search {worst_cold:.1f} s, warm p50 {worst_p50 * 1000:.0f} ms (bare in-process "
            f"{max(row['bare_p50_ms'] for row in rows):.0f} ms)",
            ratio=overhead,
            target=f"cold <= {GOAL_COLD_S:.0f} s, warm p50 <= {GOAL_WARM_P50_S * 1000:.0f} ms",
            met=worst_cold <= GOAL_COLD_S and worst_p50 <= GOAL_WARM_P50_S,
        ),
        "rows": rows,
        "reranks": reranks,
    }
