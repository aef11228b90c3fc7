"""contregen: gold-document recall of ConTReGen against every baseline and ablation of the paper
(``contregen.METHODS``) and chance, with model calls and tokens per question, on collections where a question's gold (its
5-paper combination) is a real subset of the collection.

Each collection's generated questions (the first 20; ``--quick``: 5 of one collection) run twice:
as written, and with their quoted titles removed, because the offline template questions quote
their papers' titles and a title in the query finds its paper by word match. Both in the default
dense retrieval and in lexical (BM25) retrieval, where a title's words weigh most. Everything runs
offline (the extractive planner, similarity-threshold verifier and extractive writer): these are
the offline method's numbers, not a model's.

The built collections come from ``INSIGHT_ASSETS_BENCH_STORE`` (a data folder where
``insight-assets build`` ran for them), else they are built here into a temporary folder.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

from bench.common import collections, print_table, ratio, summary
from bench.pipeline import QUIET, link_collection, temp_storage
from insight_assets.core.curation import load_questions
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import contregen
from insight_assets.core.methods.contregen import references, scores
from insight_assets.core.retrieval import Retriever
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets.defs.catalog import assets_named
from insight_assets.defs.ingestion import assets as ingestion
from insight_assets.defs.ingestion import embeddings
from insight_assets.defs.insightgen import themes
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import materialize_collection

COLLECTIONS = ("nlp-qa-nli", "dl-transformers-llm")
QUESTIONS, QUICK_QUESTIONS = 20, 5
QUOTED = re.compile(r"[\"“][^\"”]+[\"”]")


def _store(corpus: Path, workdir: Path, names: tuple[str, ...]) -> tuple[Warehouse, VectorStore]:
    built = os.environ.get("INSIGHT_ASSETS_BENCH_STORE")
    if built:
        return Warehouse(Path(built) / "warehouse.duckdb"), VectorStore(str(Path(built) / "lancedb"))
    import dagster as dg

    storage = temp_storage(workdir)
    assets = [
        ingestion.source_documents,
        ingestion.parsed_documents,
        ingestion.chunks,
        embeddings.chunk_embeddings,
        themes.theme_graph,
        *assets_named("compressed_documents", "generated_questions"),
    ]
    with dg.instance_for_test() as instance:
        for name in names:
            link_collection(storage, name, collections(corpus)[name])
            materialize_collection(
                instance,
                storage,
                EmbedderResource(),
                name,
                llm=LLMResource(data_dir=str(workdir)),
                assets=assets,
                run_config=QUIET,
            )
    return storage.warehouse, storage.vectors


def without_titles(question: str) -> str:
    """The question with its quoted titles replaced by "the paper"."""
    return " ".join(QUOTED.sub("the paper", question).split())


def _measure(warehouse, vectors, embedder, collection, questions, mode) -> tuple[list[dict], float]:
    retriever = Retriever.open(warehouse, vectors, collection, embedder, contregen.PROFILE)
    settings = contregen.TreesSettings(retrieval_mode=mode)
    client = LLMClient(LLMSettings())
    started = time.perf_counter()
    trees, sources = contregen.grow_trees(client, retriever, questions, settings)
    answers = contregen.write_answers(
        client, retriever, trees, sources, settings, contregen.AnswersSettings()
    )
    seconds = time.perf_counter() - started
    chunk_docs = {
        r["chunk_id"]: r["doc_id"]
        for r in warehouse.rows(
            "SELECT chunk_id, doc_id FROM chunks WHERE collection = ? AND profile = ?",
            [collection, contregen.PROFILE],
        )
    }
    size = len(retriever.documents)
    scored = [
        s
        for s in scores.score_answers(
            client,
            questions,
            answers,
            chunk_docs,
            {},
            themes=references.passage_themes(warehouse, collection),
        )
        if s.recall is not None
    ]
    return scores.method_table(scored, questions, size), seconds


def run(corpus: Path, quick: bool) -> dict:
    names = COLLECTIONS[:1] if quick else COLLECTIONS
    limit = QUICK_QUESTIONS if quick else QUESTIONS
    embedder = EmbedderResource().get_embedder()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        warehouse, vectors = _store(corpus, Path(workdir), names)
        for collection in names:
            asked = [
                contregen.TreeQuestion(q.question_id, q.question, q.document_ids, q.source)
                for q in load_questions(warehouse, collection)
                if q.document_ids
            ][:limit]
            for variant, questions in (
                ("as written", asked),
                (
                    "titles removed",
                    [
                        contregen.TreeQuestion(q.question_id, without_titles(q.question), q.gold)
                        for q in asked
                    ],
                ),
            ):
                for mode in ("dense", "lexical"):
                    table, seconds = _measure(warehouse, vectors, embedder, collection, questions, mode)
                    for row in table:
                        rows.append(
                            {
                                "collection": collection,
                                "query_form": variant,
                                "mode": mode,
                                **row,
                                "run_seconds": round(seconds, 1),
                            }
                        )
    columns = [
        "collection", "query_form", "mode", "method", "recall", "recall_used", "chance_at_docs",
        "facet_coverage", "docs_retrieved", "passages_retrieved", "calls", "input_tokens", "output_tokens",
    ]  # fmt: skip
    print_table(rows, columns, title="Gold-document recall per method (offline planner, verifier and writer)")
    main = {
        (r["collection"], r["method"]): r["recall"]
        for r in rows
        if r["query_form"] == "as written" and r["mode"] == "dense"
    }
    tree = [main[(c, contregen.CONTREGEN)] for c in names]
    iterative = [main[(c, contregen.ITERATIVE)] for c in names]
    return {
        "rows": rows,
        "summary": summary(
            "dense, as written: "
            + "; ".join(
                f"{c} ConTReGen {main[(c, contregen.CONTREGEN)]:.2f} / RetGen {main[(c, contregen.RETGEN)]:.2f} / "
                f"budget-matched {main[(c, contregen.RETGEN_BUDGET)]:.2f} / IterRetGen {main[(c, contregen.ITERATIVE)]:.2f}"
                for c in names
            ),
            ratio(sum(tree), sum(iterative)),
            "ConTReGen/IterRetGen recall (reported, no target)",
        ),
    }
