"""The triples and sentences Insight-RAG's answers search (``Units``): those ``knowledge_triples``
stored (``store.stored_units``), or a dry run's, indexed in memory here as that step would index
them, so that the plan prices the answers on the triples it planned (on a first build none are
stored; on a rebuild the stored ones are the last build's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from insight_assets.core.embedding.models import kept_embedding, one_torch_thread
from insight_assets.core.storage.stores import VectorStore, Warehouse

from ...retrieval import Retriever
from . import retriever
from .retriever import TRIPLES, Sentence, triple_search_text
from .schemas import SENTENCES
from .triples import Triple

# A dry run's index lives in LanceDB's memory store: searched like the stored one, written nowhere.
_MEMORY = "memory://insight-rag-dry-run"


@dataclass(frozen=True)
class Units:
    """The searchable units: a retriever per profile (``TRIPLES``, ``SENTENCES``), each unit's
    chunk (its citable source) and the triples by id."""

    retrievers: dict[str, Retriever]
    chunk_of: dict[str, str]
    triples: dict[str, Triple]


def planned_units(
    warehouse: Warehouse,
    stored: VectorStore,
    collection: str,
    embedder,
    triples: Sequence[Triple],
    sentences: Sequence[Sentence],
) -> Units:
    """A dry run's ``triples`` and ``sentences``, embedded (reusing the vectors ``stored`` holds for
    the same texts) and indexed in memory."""
    with one_torch_thread():
        vectors, _ = retriever.index_vectors(
            stored.read(collection), embedder.variant, triples, sentences, kept_embedding(embedder)
        )
    memory = VectorStore(_MEMORY, kind=stored.kind)
    memory.replace(
        collection, retriever.index_table(collection, embedder.variant, triples, sentences, vectors)
    )
    memory.build_text_index(collection)
    rows = _unit_rows(warehouse, collection, triples, sentences)
    retrievers = {
        profile: retriever.units_retriever(rows[profile], memory, collection, embedder, profile)
        for profile in retriever.UNIT_PROFILES
    }
    chunk_of = {t.triple_id: t.chunk_id for t in triples} | {s.sentence_id: s.chunk_id for s in sentences}
    return Units(retrievers, chunk_of, {t.triple_id: t for t in triples})


def _unit_rows(
    warehouse: Warehouse, collection: str, triples: Sequence[Triple], sentences: Sequence[Sentence]
) -> dict[str, list[dict]]:
    """Each profile's rows as ``retriever.open_units`` reads them from the warehouse, in its order."""
    places = {
        row["chunk_id"]: row
        for row in warehouse.rows(
            """SELECT c.chunk_id, c.chunk_index, c.page_start, c.page_end, d.file,
                      coalesce(nullif(d.title, ''), d.file) AS title
               FROM chunks c JOIN parsed_documents d ON d.collection = c.collection AND d.doc_id = c.doc_id
               WHERE c.collection = ?""",
            [collection],
        )
    }

    def row(unit_id: str, doc_id: str, chunk_id: str, text: str) -> dict:
        place = places[chunk_id]
        return {
            "chunk_id": unit_id,
            "doc_id": doc_id,
            "text": text,
            **{name: place[name] for name in ("chunk_index", "page_start", "page_end", "title")},
        }

    def order(chunk_id: str) -> tuple:
        return places[chunk_id]["file"], places[chunk_id]["chunk_index"]

    # A unit whose chunk is gone from the warehouse cannot be cited: left out, as the join leaves it.
    placed_triples = [t for t in triples if t.chunk_id in places]
    placed_sentences = [s for s in sentences if s.chunk_id in places]
    return {
        TRIPLES: [
            row(t.triple_id, t.doc_id, t.chunk_id, triple_search_text(t))
            for t in sorted(placed_triples, key=lambda t: (*order(t.chunk_id), t.triple_id))
        ],
        SENTENCES: [
            row(s.sentence_id, s.doc_id, s.chunk_id, s.text)
            for s in sorted(placed_sentences, key=lambda s: order(s.chunk_id))
        ],
    }
