"""The passages of a built collection that best match a query: what ``insight-assets search`` prints
and the MCP server's ``search`` tool returns (one code path for both)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# core.retrieval's RETRIEVAL_MODES and RERANKERS, spelled out so that `--help` imports nothing heavy.
SEARCH_MODES = ("dense", "lexical", "hybrid")
SEARCH_RERANKERS = ("late-interaction", "llm", "none")
DEFAULT_CANDIDATES = 100


@dataclass(frozen=True)
class OpenCollection:
    """What searching a collection needs, loaded once: its passages' retriever (chunks, vectors,
    titles) and the reranker with the token vectors kept with its build."""

    collection: str
    retriever: Any
    late_interaction: Any

    @classmethod
    def open(cls, storage: Any, embedder: Any, collection: str) -> OpenCollection:
        """Raises ``IndexMissing`` before the collection's chunks have vectors."""
        from insight_assets.core.retrieval import LateInteraction, Retriever

        retriever = Retriever.open(storage.warehouse, storage.vectors, collection, embedder.get_embedder())
        return cls(collection, retriever, LateInteraction.for_collection(storage.vectors_uri, collection))


def search_passages(
    opened: OpenCollection,
    llm: Any,
    query: str,
    *,
    k: int = 10,
    mode: str = "hybrid",
    reranker: str = "late-interaction",
    candidates: int = DEFAULT_CANDIDATES,
) -> list:
    """The ``k`` best chunks (``core.retrieval.Hit``: title, pages, score, text) of the collection
    for ``query``: a first-stage ``mode`` search for ``candidates`` of them, then ``reranker``.
    Raises ``LLMError`` when the ``llm`` reranker's model fails."""
    from insight_assets.core.retrieval import rerank

    hits = opened.retriever.search(query, k=max(k, candidates) if reranker != "none" else k, mode=mode)
    if reranker != "llm":
        return rerank(query, hits, top_n=k, reranker=reranker, late_interaction=opened.late_interaction)
    with llm.client(asset="search", partition=opened.collection, run_id=None) as client:
        return rerank(query, hits, top_n=k, reranker=reranker, llm=client)


def search_notes(storage: Any, embedder: Any, collection: str, query: str, k: int = 5) -> list:
    """The reader's own notes (``core.reader_notes.NoteHit``) closest to ``query``: kept apart from
    the passages, each labelled "your notes"."""
    from insight_assets.core.reader_notes import search_notes as closest_notes

    return closest_notes(
        storage.warehouse, storage.vectors_uri, embedder.get_embedder(), collection, query, k
    )


def note_json(hit: Any) -> dict:
    """A reader note as the MCP server returns it."""
    return {
        "label": hit.label,
        "source": "your notes",
        "kind": hit.kind,
        "title": hit.title,
        "cite": hit.cite,
        "page": hit.page,
        "page_label": hit.page_label,
        "text": hit.text,
        "comment": hit.comment,
        "score": round(hit.score, 4),
        "doc_id": hit.doc_id,
        "note_id": hit.note_id,
    }
