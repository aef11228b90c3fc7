"""retrieval: recall of the shared retrieval layer on the collections' own question-answer pairs, and
its latency at 20,000 chunks.

Gold answers come from the curation assets: each kept question was written for a known combination
of papers (``generated_answers.doc_ids``: the gold documents), and its answer quotes sentences of
those papers, each tagged with its paper's title (the gold chunks: the ``xsum`` chunks that hold a
quoted sentence). For every question, over its whole collection (no filter), we measure recall@5,
@20 and @100 of the gold documents (the documents of the top k chunks) and of the gold chunks, for
``dense``, ``lexical`` and ``hybrid`` search, each as it is and reranked by late interaction (100
candidates, XSum's first stage, reordered; recall@100 cannot change).

Latency: one collection of 20,000 ``xsum`` chunks, the corpus's own chunks repeated under new ids
until there are 20,000 (vectors and texts as stored), searched with every question of the corpus:
p50/p95 of a whole ``Retriever.search`` call, query embedding included, and with the late-interaction
rerank, of the search for 100 candidates plus their rerank to 20 (cold: nothing cached). Recall and
latency print as one table.

The built stores come from ``INSIGHT_ASSETS_BENCH_STORE`` (a folder with ``warehouse.duckdb`` and
``lancedb/`` where the corpus collections were built with ``insight-assets build``), else the corpus
collections are built here into a temporary folder (ingestion and question-answer curation, offline:
about 15 minutes). ``--quick``: one collection, 10 questions, no 20k latency run.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow as pa

from bench.common import BAD, collections, print_table, summary
from bench.pipeline import QUIET, link_collection, temp_storage
from insight_assets.core.citations import fold
from insight_assets.core.embedding.models import LocalEmbedder, one_torch_thread
from insight_assets.core.retrieval import LateInteraction, Retriever, rerank
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import INGESTION_ASSETS, materialize_collection

KS = (5, 20, 100)
MODES = ("dense", "lexical", "hybrid")
CANDIDATES = 100
LATENCY_CHUNKS = 20_000
RERANK_LATENCY_QUERIES = 50
QUICK_QUESTIONS = 10
_QUOTE = re.compile(r"(.+?)\s*\[([^\]]+)\]")
_QUOTED_TITLE = re.compile(r"[\"“][^\"”]{3,}[\"”]")
# The generated questions name their papers' titles in quotes, which favours word matching; the
# second variant asks the same questions with the quoted titles taken out.
QUERIES = {
    "as written": lambda question: question,
    "titles removed": lambda question: " ".join(_QUOTED_TITLE.sub(" ", question).split()),
}


def run(corpus: Path, quick: bool) -> dict:
    store = os.environ.get("INSIGHT_ASSETS_BENCH_STORE")
    if store:
        return measure(Path(store), quick)
    folders = {name: files for name, files in collections(corpus).items() if name != BAD}
    if quick:
        name = min(folders, key=lambda n: sum(p.stat().st_size for p in folders[n]))
        folders = {name: folders[name]}
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        for name, files in folders.items():
            link_collection(storage, name, files)
            print(f"  building {name} ...", flush=True)
            materialize_collection(
                instance, storage, EmbedderResource(), name, llm=LLMResource(),
                assets=[*INGESTION_ASSETS, *assets_named("compressed_documents", "generated_questions", "generated_answers")], run_config=QUIET,
            )  # fmt: skip
        return measure(Path(tmp), quick)


def measure(root: Path, quick: bool) -> dict:
    warehouse, vectors = Warehouse(root / "warehouse.duckdb"), VectorStore(str(root / "lancedb"))
    embedder = LocalEmbedder()
    late = LateInteraction(cache_size=50_000)
    names = [
        row["collection"]
        for row in warehouse.rows("SELECT DISTINCT collection FROM generated_answers ORDER BY 1")
    ]
    if quick:
        names = names[:1]
    totals: dict[tuple[str, str], dict[str, list[float]]] = {}
    questions = []
    for name in names:
        retriever = Retriever.open(warehouse, vectors, name, embedder, "passage")
        gold = gold_sets(warehouse, name)[: QUICK_QUESTIONS if quick else None]
        questions += [question for question, _, _ in gold]
        started = time.perf_counter()
        for query, rewrite in QUERIES.items():
            asked = [rewrite(question) for question, _, _ in gold]
            for mode in MODES:
                results = retriever.search_many(asked, k=CANDIDATES, mode=mode)
                for text, (_, docs, chunks), hits in zip(asked, gold, results, strict=True):
                    record(totals, (query, mode, "none"), hits, docs, chunks)
                    reranked = rerank(text, hits, top_n=CANDIDATES, late_interaction=late)
                    record(totals, (query, mode, "late-interaction"), reranked, docs, chunks)
        print(f"  {name}: {len(gold)} questions, {len(retriever.index.chunks):,} chunks, "
              f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip

    rows = [
        {"query": query, "mode": mode, "rerank": reranker, "questions": len(values["doc@5"]),
         **{key: statistics.fmean(value) for key, value in values.items()}}
        for (query, mode, reranker), values in totals.items()
    ]  # fmt: skip
    columns = ["query", "mode", "rerank", "questions", *(f"doc@{k}" for k in KS), *(f"chunk@{k}" for k in KS)]
    latency = {} if quick else latency_at_scale(warehouse, vectors, embedder, questions)
    for row in rows:
        if row["query"] == "as written" and (row["mode"], row["rerank"]) in latency:
            timing = latency[(row["mode"], row["rerank"])]
            row.update(p50_ms=timing["p50_ms"], p95_ms=timing["p95_ms"])
    columns += ["p50_ms", "p95_ms"]
    print_table(rows, columns, title=(
        f"retrieval over {len(names)} collections: recall (gold: each question's papers; the chunks holding its "
        f"answer's quoted sentences) and latency per query at {LATENCY_CHUNKS:,} chunks (query embedding included; "
        f"with rerank: 100 candidates to 20, cold, {RERANK_LATENCY_QUERIES} queries)"))  # fmt: skip
    if latency:
        embed = latency["embed query"]
        print(f"embedding a query alone: p50 {embed['p50_ms']:.1f} ms, p95 {embed['p95_ms']:.1f} ms")
    by = {(row["query"], row["mode"], row["rerank"]): row for row in rows}
    dense = by[("as written", "dense", "none")]["chunk@20"]
    best = by[("as written", "hybrid", "late-interaction")]["chunk@20"]
    hybrid_p50 = latency.get(("hybrid", "none"), {}).get("p50_ms")
    return {
        "summary": summary(
            f"chunk recall@20: hybrid+rerank {best:.3f} vs dense {dense:.3f}"
            + (f"; hybrid p50 {hybrid_p50:.0f} ms at 20k chunks" if hybrid_p50 else ""),
            ratio=best / dense if dense else None,
            target="hybrid p50 <= 50 ms",
            met=None if hybrid_p50 is None else hybrid_p50 <= 50,
        ),
        "recall": rows,
        "latency": {
            " / ".join(key) if isinstance(key, tuple) else key: value for key, value in latency.items()
        },
    }


def gold_sets(warehouse: Warehouse, collection: str) -> list[tuple[str, set[str], set[str]]]:
    """``(question, gold document ids, gold chunk ids)`` of each kept question with gold chunks."""
    titles = {
        row["title"]: row["doc_id"]
        for row in warehouse.rows(
            "SELECT doc_id, title FROM parsed_documents WHERE collection = ?", [collection]
        )
    }
    chunks: dict[str, list[tuple[str, str]]] = {}
    for row in warehouse.rows(
        "SELECT doc_id, chunk_id, text FROM chunks WHERE collection = ? AND profile = 'passage'", [collection]
    ):
        chunks.setdefault(row["doc_id"], []).append((row["chunk_id"], fold(row["text"])))
    gold = []
    for row in warehouse.rows(
        "SELECT question, answer, doc_ids FROM generated_answers WHERE collection = ? AND status = 'kept' "
        "ORDER BY position",
        [collection],
    ):
        quoted = set()
        for sentence, title in _QUOTE.findall(row["answer"]):
            doc_id, folded = titles.get(title.strip()), fold(sentence)
            if not doc_id or len(folded) < 20:
                continue
            # A sentence that straddles two overlapping chunks is held, in part, by both.
            halves = (folded[: len(folded) // 2], folded[len(folded) // 2 :])
            holding = {chunk_id for chunk_id, text in chunks.get(doc_id, []) if folded in text}
            quoted |= holding or {
                chunk_id for chunk_id, text in chunks.get(doc_id, []) if any(half in text for half in halves)
            }
        if quoted:
            gold.append((row["question"], set(row["doc_ids"]), quoted))
    return gold


def record(totals: dict, key: tuple[str, str], hits, docs: set[str], chunks: set[str]) -> None:
    values = totals.setdefault(key, {})
    for k in KS:
        top = hits[:k]
        values.setdefault(f"doc@{k}", []).append(len(docs & {hit.doc_id for hit in top}) / len(docs))
        values.setdefault(f"chunk@{k}", []).append(len(chunks & {hit.chunk_id for hit in top}) / len(chunks))


def latency_at_scale(warehouse: Warehouse, vectors: VectorStore, embedder, questions: list[str]) -> dict:
    """p50/p95 per query on one collection of ``LATENCY_CHUNKS`` chunks: ``"embed query"`` and
    ``(mode, reranker)`` for every mode, without rerank and with the late-interaction one."""
    chunk_rows = warehouse.rows(
        """SELECT c.chunk_id, c.doc_id, c.chunk_index, c.text, c.token_count, c.page_start, c.page_end,
                  c.text_sha, c.char_start, c.char_end, d.title, d.file
           FROM chunks c JOIN parsed_documents d USING (collection, doc_id)
           WHERE c.profile = 'passage' ORDER BY c.collection, c.chunk_id"""
    )
    stored = {}
    for name in {row["collection"] for row in warehouse.rows("SELECT DISTINCT collection FROM chunks")}:
        table = vectors.read(name, ["chunk_id", "profile", "vector"])
        if table is not None:
            for chunk_id, profile, vector in zip(
                *(table[c].to_pylist() for c in ("chunk_id", "profile", "vector")), strict=True
            ):
                if profile == "passage":
                    stored[chunk_id] = vector
    chunk_rows = [row for row in chunk_rows if row["chunk_id"] in stored]
    copies = []
    for copy in range(-(-LATENCY_CHUNKS // len(chunk_rows))):
        copies += [{**row, "chunk_id": f"{row['chunk_id']}~{copy}", "doc_id": f"{row['doc_id']}~{copy}",
                    "original": row["chunk_id"]} for row in chunk_rows]  # fmt: skip
    copies = copies[:LATENCY_CHUNKS]
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        big_warehouse, big_vectors = (
            Warehouse(Path(tmp) / "w.duckdb"),
            VectorStore(str(Path(tmp) / "lancedb")),
        )
        name = "latency-20k"
        documents = {row["doc_id"]: row for row in copies}
        big_warehouse.replace_partition(name, {
            "parsed_documents": pa.Table.from_pylist([
                {"collection": name, "doc_id": doc, "file": f"{row['file']}~{doc}", "title": row["title"]}
                for doc, row in documents.items()]),
            "chunks": pa.Table.from_pylist([
                {"collection": name, "profile": "passage", **{k: row[k] for k in (
                    "chunk_id", "doc_id", "chunk_index", "text", "token_count", "page_start", "page_end", "text_sha")}}
                for row in copies]),
        })  # fmt: skip
        matrix = np.asarray([stored[row["original"]] for row in copies], dtype=np.float32)
        big_vectors.replace(name, pa.table({
            "collection": [name] * len(copies), "profile": ["passage"] * len(copies),
            "chunk_id": [row["chunk_id"] for row in copies], "doc_id": [row["doc_id"] for row in copies],
            "variant": [embedder.variant] * len(copies), "text": [row["text"] for row in copies],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1]),
        }))  # fmt: skip
        big_vectors.build_text_index(name)
        retriever = Retriever.open(big_warehouse, big_vectors, name, embedder, "passage")
        retriever.search(questions[0], k=20, mode="hybrid")  # warm-up: model and index loaded
        seconds = []
        for question in questions:
            started = time.perf_counter()
            with one_torch_thread():  # as Retriever.search embeds a single query
                embedder.embed([question])
            seconds.append(time.perf_counter() - started)
        latency = {"embed query": percentiles(seconds)}
        for mode in MODES:
            seconds = []
            for question in questions:
                started = time.perf_counter()
                retriever.search(question, k=20, mode=mode)
                seconds.append(time.perf_counter() - started)
            latency[(mode, "none")] = percentiles(seconds)
            # XSum's two stages: 100 candidates reranked to 20, nothing cached (a rerank's worst case).
            cold, seconds = LateInteraction(cache_size=0), []
            for question in questions[:RERANK_LATENCY_QUERIES]:
                started = time.perf_counter()
                hits = retriever.search(question, k=CANDIDATES, mode=mode)
                rerank(question, hits, top_n=20, late_interaction=cold)
                seconds.append(time.perf_counter() - started)
            latency[(mode, "late-interaction")] = percentiles(seconds)
    return latency


def percentiles(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    return {"queries": len(ordered), "p50_ms": 1000 * statistics.median(ordered),
            "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}  # fmt: skip
