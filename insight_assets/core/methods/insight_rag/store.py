"""Insight-RAG's stored rows: its warehouse tables (triples and sentences, whose vectors are in
LanceDB under ``VECTOR_KIND``; the benchmark with every triple's fate; the insight retriever's
adapter record and its accuracy; the identified insights, the answers and their scores), and the
readers that bring them back.

The tables are declared here and added to the warehouse when the method is imported
(``stores.declare_tables``). A reader that finds nothing to read raises ``IndexMissing``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.ingest import load_documents
from insight_assets.core.retrieval.index import IndexMissing
from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.stores import VectorStore, Warehouse, declare_tables

from ...retrieval import Retriever
from ...retrieval.citing import load_sources, render_citations
from . import retriever
from .benchmark import BenchmarkItem
from .causal_lm import CausalLM, base_model_source
from .cpt import read_training
from .pipeline import MethodAnswer, Setup, paper_text
from .retriever import InsightRetriever
from .schemas import PARAMETRIC
from .settings import PROFILE, AnswersSettings
from .triples import Triple
from .units import Units

# The LanceDB tables of the searchable triples and sentences, one per collection.
VECTOR_KIND = "insight_rag_index"
# ``insight_retriever``'s statuses: an adapter trained (or reused), or nothing to train on.
TRAINED = "trained"
SKIPPED = "skipped"

TABLES = {
    "knowledge_triples": """
        collection VARCHAR, triple_id VARCHAR, doc_id VARCHAR, chunk_id VARCHAR, subject VARCHAR,
        relation VARCHAR, object VARCHAR, relation_text VARCHAR, sentence VARCHAR, mentions INTEGER,
        extractor VARCHAR""",
    "insight_rag_sentences": """
        collection VARCHAR, sentence_id VARCHAR, doc_id VARCHAR, chunk_id VARCHAR, position INTEGER,
        sentence VARCHAR""",
    "insight_rag_benchmark": """
        collection VARCHAR, item_id VARCHAR, kind VARCHAR, question VARCHAR, subject VARCHAR,
        relation VARCHAR, relation_text VARCHAR, gold_answers VARCHAR[], gold_doc_ids VARCHAR[],
        triple_ids VARCHAR[], evidence VARCHAR[], paper_a VARCHAR, paper_b VARCHAR, writer VARCHAR""",
    "insight_rag_triple_fates": """
        collection VARCHAR, triple_id VARCHAR, fate VARCHAR, item_id VARCHAR, reason VARCHAR""",
    "insight_rag_insights": """
        collection VARCHAR, item_id VARCHAR, status VARCHAR, insights VARCHAR[], multi_answer BOOLEAN[],
        error VARCHAR, writer VARCHAR""",
    "insight_rag_answers": """
        collection VARCHAR, item_id VARCHAR, kind VARCHAR, method VARCHAR, status VARCHAR,
        answer VARCHAR, rendered VARCHAR, context_tokens INTEGER, insights VARCHAR[],
        passage_chunk_ids VARCHAR[], cited_chunk_ids VARCHAR[], ranked_ids VARCHAR[],
        ranked_doc_ids VARCHAR[], error VARCHAR, writer VARCHAR""",
    "insight_retriever": """
        collection VARCHAR, status VARCHAR, reason VARCHAR, adapter_key VARCHAR, adapter_path VARCHAR,
        base_model VARCHAR, base_model_setting VARCHAR, base_parameters BIGINT, device VARCHAR, epochs INTEGER, texts INTEGER,
        training_tokens BIGINT, final_loss DOUBLE, seconds DOUBLE""",
    "insight_retriever_accuracy": """
        collection VARCHAR, item_id VARCHAR, kind VARCHAR, mode VARCHAR, fragment VARCHAR,
        outputs VARCHAR[], gold_answers VARCHAR[], score DOUBLE""",
    "insight_rag_scores": """
        collection VARCHAR, item_id VARCHAR, kind VARCHAR, method VARCHAR, status VARCHAR,
        exact_match DOUBLE, f1 DOUBLE, context_tokens INTEGER, doc_hits50 DOUBLE, doc_mrr DOUBLE,
        unit_hits50 DOUBLE, unit_mrr DOUBLE""",
}
declare_tables(TABLES)


def unit_vectors(lancedb_uri: str) -> VectorStore:
    """The searchable triples' and sentences' vectors (written by ``knowledge_triples``)."""
    return VectorStore(lancedb_uri, kind=VECTOR_KIND)


def triple_chunks(warehouse: Warehouse, collection: str) -> list[dict]:
    """The chunks triples are read from, in reading order."""
    return warehouse.rows(
        """SELECT c.doc_id, c.chunk_id, c.text FROM chunks c JOIN parsed_documents d USING (collection, doc_id)
           WHERE c.collection = ? AND c.profile = ? ORDER BY d.file, c.chunk_index""",
        [collection, PROFILE],
    )


def load_triples(warehouse: Warehouse, collection: str) -> list[Triple]:
    fields = Triple.__dataclass_fields__
    return [
        Triple(**{k: row[k] for k in fields})
        for row in warehouse.rows(
            "SELECT * FROM knowledge_triples WHERE collection = ? ORDER BY doc_id, chunk_id, triple_id",
            [collection],
        )
    ]


def load_benchmark(warehouse: Warehouse, collection: str) -> list[BenchmarkItem]:
    fields = BenchmarkItem.__dataclass_fields__
    return [
        BenchmarkItem(**{k: tuple(v) if isinstance(v, list) else v for k, v in row.items() if k in fields})
        for row in warehouse.rows(
            "SELECT * FROM insight_rag_benchmark WHERE collection = ? ORDER BY kind, item_id", [collection]
        )
    ]


def load_answers(warehouse: Warehouse, collection: str) -> list[MethodAnswer]:
    fields = MethodAnswer.__dataclass_fields__
    return [
        MethodAnswer(**{k: tuple(v) if isinstance(v, list) else v for k, v in row.items() if k in fields})
        for row in warehouse.rows("SELECT * FROM insight_rag_answers WHERE collection = ?", [collection])
    ]


def sentence_ids(warehouse: Warehouse, collection: str) -> dict[tuple[str, str], str]:
    """Each stored sentence's id, by (document, sentence)."""
    return {
        (row["doc_id"], row["sentence"]): row["sentence_id"]
        for row in warehouse.rows(
            "SELECT doc_id, sentence, sentence_id FROM insight_rag_sentences WHERE collection = ?",
            [collection],
        )
    }


def identified_fragments(warehouse: Warehouse, collection: str) -> list[dict]:
    """The identifier's insights per item (``item_id``, ``insights``)."""
    return warehouse.rows(
        "SELECT item_id, insights FROM insight_rag_insights WHERE collection = ?", [collection]
    )


def stored_adapter(warehouse: Warehouse, collection: str) -> dict | None:
    """The collection's insight retriever as ``insight_retriever`` recorded it: trained (with its
    adapter's folder) or skipped (with the reason); ``None`` before it is built."""
    rows = warehouse.rows("SELECT * FROM insight_retriever WHERE collection = ?", [collection])
    return rows[0] if rows else None


def load_adapter(warehouse: Warehouse, collection: str) -> dict:
    """``stored_adapter``, raising ``IndexMissing`` before it is built."""
    adapter = stored_adapter(warehouse, collection)
    if adapter is None:
        raise IndexMissing("no insight retriever: build `insight_retriever` for the parametric mode")
    return adapter


def writer_of(warehouse: Warehouse, table: str, collection: str) -> str | None:
    """The model that wrote ``table``'s rows for ``collection`` (its first row's ``writer``: one
    run writes them all); ``None`` when it holds none."""
    rows = warehouse.rows(f"SELECT writer FROM {table} WHERE collection = ? LIMIT 1", [collection])
    return rows[0]["writer"] if rows else None


def open_parametric(warehouse: Warehouse, collection: str) -> tuple[CausalLM | None, str]:
    """The collection's adapted model, or ``None`` and why there is none."""
    try:
        stored = load_adapter(warehouse, collection)
    except IndexMissing as error:
        return None, str(error)
    if stored["status"] != TRAINED:
        return None, stored["reason"]
    folder = Path(stored["adapter_path"])
    if read_training(folder) is None:
        return None, f"its adapter {folder} is gone: rebuild `insight_retriever`"
    return CausalLM.open(base_model_source(stored["base_model_setting"]), folder), ""


def load_retriever_accuracy(warehouse: Warehouse, collection: str) -> list[dict]:
    return warehouse.rows(
        "SELECT * FROM insight_retriever_accuracy WHERE collection = ? ORDER BY kind, item_id, mode",
        [collection],
    )


def stored_units(warehouse: Warehouse, store: VectorStore, collection: str, embedder) -> Units:
    """The units ``knowledge_triples`` stored (``IndexMissing`` before they have vectors)."""
    retrievers = {
        profile: retriever.open_units(warehouse, store, collection, embedder, profile)
        for profile in retriever.UNIT_PROFILES
    }
    chunk_of = {
        row["id"]: row["chunk_id"]
        for row in warehouse.rows(
            """SELECT triple_id AS id, chunk_id FROM knowledge_triples WHERE collection = ?
               UNION ALL SELECT sentence_id, chunk_id FROM insight_rag_sentences WHERE collection = ?""",
            [collection, collection],
        )
    }
    return Units(retrievers, chunk_of, {t.triple_id: t for t in load_triples(warehouse, collection)})


def open_setup(
    warehouse: Warehouse,
    lancedb_uri: str,
    embedder,
    collection: str,
    settings: AnswersSettings,
    units: Units | None = None,
) -> Setup:
    """Retrieval over chunks, triples and sentences (``units``, else those stored), the papers'
    texts and matching's offline rule, and the adapted model when a mode needs it. Raises
    ``IndexMissing`` before the collection's chunks, triples and sentences have vectors."""
    chunks = Retriever.open(warehouse, VectorStore(lancedb_uri), collection, embedder, PROFILE)
    if units is None:
        units = stored_units(warehouse, unit_vectors(lancedb_uri), collection, embedder)
    documents = load_documents(warehouse, collection)
    papers = {d.doc_id: paper_text(d.title, d.abstract, d.text[: d.body_end]) for d in documents}
    centres = {}
    for doc_id in papers:
        rows = [n for n, chunk in enumerate(chunks.index.chunks) if chunk.doc_id == doc_id]
        if rows:
            centres[doc_id] = normalize_rows(chunks.index.vectors[rows].mean(axis=0))

    def similarity(a: str, b: str) -> float:
        return float(centres[a] @ centres[b]) if a in centres and b in centres else 0.0

    parametric, missing = (
        open_parametric(warehouse, collection)
        if PARAMETRIC in settings.retriever_modes
        else (None, "not asked for")
    )
    ids = sorted(centres)
    pairs = [similarity(a, b) for n, a in enumerate(ids) for b in ids[n + 1 :]]
    return Setup(
        chunks=chunks,
        insights=InsightRetriever(
            units.retrievers[retriever.TRIPLES],
            units.retrievers[retriever.SENTENCES],
            units.chunk_of,
            units.triples,
            settings.insight_search_mode,
            parametric,
            missing,
        ),
        sources=load_sources(warehouse, collection, PROFILE),
        modes=tuple(settings.retriever_modes),
        rag_ks=tuple(settings.rag_ks),
        rag_mode=settings.rag_mode,
        papers=papers,
        similarity=similarity,
        threshold=statistics.median(pairs) if pairs else 0.0,
    )


__all__ = ["TABLES", "VECTOR_KIND", "IndexMissing"]


def answer_tables(
    collection: str,
    identified: Sequence,
    answers: Sequence[MethodAnswer],
    sources,
    identifier: str,
    writer: str,
) -> dict[str, pa.Table]:
    """``insight_rag_insights`` (the identifier's insights per item) and ``insight_rag_answers``
    (each method's answer, its citations rendered against ``sources``)."""
    return {
        "insight_rag_insights": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "item_id": i.item_id,
                    "status": i.status,
                    "insights": [x.insight for x in i.insights],
                    "multi_answer": [x.multi_answer for x in i.insights],
                    "error": i.error,
                    "writer": identifier,
                }
                for i in identified
            ]
        ),
        "insight_rag_answers": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    **{k: list(v) if isinstance(v, tuple) else v for k, v in a.__dict__.items()},
                    "rendered": render_citations(a.answer, sources) if a.answer else None,
                    "writer": writer,
                }
                for a in answers
            ]
        ),
    }


def triple_tables(
    collection: str, triples: Sequence[Triple], sentences: Sequence, extractor: str
) -> dict[str, pa.Table]:
    """``knowledge_triples`` and ``insight_rag_sentences`` (every whole sentence read, in order)."""
    return {
        "knowledge_triples": pa.Table.from_pylist(
            [
                {"collection": collection, "triple_id": t.triple_id, **t.__dict__, "extractor": extractor}
                for t in triples
            ]
        ),
        "insight_rag_sentences": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "sentence_id": s.sentence_id,
                    "doc_id": s.doc_id,
                    "chunk_id": s.chunk_id,
                    "position": n,
                    "sentence": s.text,
                }
                for n, s in enumerate(sentences)
            ]
        ),
    }


def benchmark_tables(
    collection: str, items: Sequence[BenchmarkItem], fates: dict[str, tuple], writer: str
) -> dict[str, pa.Table]:
    """``insight_rag_benchmark`` (the items) and ``insight_rag_triple_fates`` (each triple's item,
    or why it was dropped)."""
    return {
        "insight_rag_benchmark": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    **{k: v for k, v in item.__dict__.items() if k not in ("status", "error")},
                    "writer": writer,
                }
                for item in items
            ]
        ),
        "insight_rag_triple_fates": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "triple_id": triple_id,
                    "fate": fate,
                    "item_id": item_id,
                    "reason": reason,
                }
                for triple_id, (fate, item_id, reason) in fates.items()
            ]
        ),
    }
