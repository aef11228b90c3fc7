"""xsum: what one summary costs, XSum against plain RAG, per target of one collection.

For every target of ``nlp-embeddings`` (evaluation targets first; ``--quick``: three targets), both
methods run end to end: XSum (5 questions per paper, retrieval of 100 chunks and a late-interaction
rerank to 20 per question, one answer per question, the editor) and plain RAG (the topic as the one
query, top 20 chunks by cosine, one summary). Model calls and tokens are what a model provider
would be sent: an estimate-only client renders every prompt and counts its tokens (cl100k), and
takes each task's typical answer length as its output; no model is called. Seconds are this
machine's wall time for the method with the offline (extractive) writer: retrieval, reranking and
prompt building, without any provider's latency.

The built collection comes from ``INSIGHT_ASSETS_BENCH_STORE`` (a data folder where
``insight-assets build -c nlp-embeddings`` ran), else it is built here into a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.common import collections, print_table, ratio, summary
from bench.pipeline import QUIET, link_collection, temp_storage
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import xsum
from insight_assets.core.methods.xsum import load
from insight_assets.core.retrieval import LateInteraction, Retriever
from insight_assets.core.retrieval.citing import load_sources
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.citations import assets as citations
from insight_assets.defs.ingestion import assets as ingestion
from insight_assets.defs.ingestion import embeddings
from insight_assets.defs.insightgen import themes
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import materialize_collection

COLLECTION = "nlp-embeddings"
QUICK_TARGETS = 3


def _store(corpus: Path, workdir: Path) -> tuple[Warehouse, VectorStore]:
    built = os.environ.get("INSIGHT_ASSETS_BENCH_STORE")
    if built:
        return Warehouse(Path(built) / "warehouse.duckdb"), VectorStore(str(Path(built) / "lancedb"))
    import dagster as dg

    storage = temp_storage(workdir)
    link_collection(storage, COLLECTION, collections(corpus)[COLLECTION])
    assets = [
        ingestion.source_documents,
        ingestion.parsed_documents,
        ingestion.chunks,
        embeddings.chunk_embeddings,
        themes.theme_graph,
        citations.citations,
        *assets_named("xsum_questions", "xsum_answers"),
    ]
    with dg.instance_for_test() as instance:
        materialize_collection(
            instance,
            storage,
            EmbedderResource(),
            COLLECTION,
            llm=LLMResource(data_dir=str(workdir)),
            assets=assets,
            run_config=QUIET,
        )
    return storage.warehouse, storage.vectors


def _measure(run) -> tuple[float, LLMClient]:
    client = LLMClient(LLMSettings(), estimate_only=True)
    started = time.perf_counter()
    run(client)
    return time.perf_counter() - started, client


def _costs(client: LLMClient) -> tuple[int, int, int]:
    estimates = client.estimates()
    return (
        sum(e.items for e in estimates),
        sum(e.input_tokens for e in estimates),
        sum(e.output_tokens for e in estimates),
    )


def run(corpus: Path, quick: bool) -> dict:
    with tempfile.TemporaryDirectory() as workdir:
        warehouse, vectors = _store(corpus, Path(workdir))
        targets = sorted(
            xsum.store.load_targets(warehouse, COLLECTION), key=lambda t: (not t.is_evaluation, t.topic)
        )[: QUICK_TARGETS if quick else None]
        retriever = Retriever.open(
            warehouse, vectors, COLLECTION, EmbedderResource().get_embedder(), xsum.PROFILE
        )
        papers = {paper.doc_id: paper for paper in load.load_papers(warehouse, COLLECTION)}
        sources = load_sources(warehouse, COLLECTION, xsum.PROFILE)
        late = LateInteraction()
        late.score("warm up", ["the model loads once, outside the timings"])
        rows = []
        for target in targets:
            xsum_seconds, xsum_client = _measure(
                lambda client, t=target: _xsum(client, retriever, t, papers, sources, late)
            )
            rag_seconds, rag_client = _measure(
                lambda client, t=target: xsum.plain_rag_summaries(client, retriever, [t], xsum.TOP_N, sources)
            )
            for method, seconds, client in (
                ("xsum", xsum_seconds, xsum_client),
                ("plain_rag", rag_seconds, rag_client),
            ):
                calls, input_tokens, output_tokens = _costs(client)
                rows.append(
                    {
                        "target": f"{target.kind}: {target.topic[:48]}",
                        "papers": len(target.doc_ids),
                        "method": method,
                        "calls": calls,
                        "input_tokens": input_tokens,
                        "output_tokens": output_tokens,
                        "seconds": round(seconds, 2),
                    }
                )
    columns = ["target", "papers", "method", "calls", "input_tokens", "output_tokens", "seconds"]
    print_table(rows, columns, title=f"XSum vs plain RAG per target ({COLLECTION})")
    totals = {
        method: {
            c: sum(r[c] for r in rows if r["method"] == method)
            for c in ("calls", "input_tokens", "output_tokens", "seconds")
        }
        for method in ("xsum", "plain_rag")
    }
    n = max(len(targets), 1)
    per_target = [
        {"method": method, **{c: round(v / n, 2) for c, v in values.items()}}
        for method, values in totals.items()
    ]
    print_table(
        per_target, ["method", "calls", "input_tokens", "output_tokens", "seconds"], title="Mean per target"
    )
    token_ratio = ratio(
        totals["xsum"]["input_tokens"] + totals["xsum"]["output_tokens"],
        totals["plain_rag"]["input_tokens"] + totals["plain_rag"]["output_tokens"],
    )
    return {
        "rows": rows,
        "per_target": per_target,
        "summary": summary(
            f"{len(targets)} targets: XSum {per_target[0]['calls']} calls, {per_target[0]['input_tokens']:.0f} input "
            f"tokens per target; plain RAG {per_target[1]['calls']}, {per_target[1]['input_tokens']:.0f}",
            token_ratio,
            "XSum/plain-RAG tokens (reported, no target)",
        ),
    }


def _xsum(client, retriever, target, papers, sources, late) -> None:
    generated = xsum.generate_questions(
        client, [papers[doc] for doc in target.doc_ids], xsum.QUESTIONS_PER_PAPER
    )
    answers = xsum.answer_target_questions(
        client, retriever, [target], generated.questions, xsum.AnswersSettings(), late
    )
    questions = {q.question_id: q.question for q in generated.questions}
    xsum.write_summaries(client, [target], answers, questions, sources)
