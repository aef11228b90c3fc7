"""The context each insight method reads (InsightGen §5.1).

- ``insightgen``: the theme graph's neighbourhood of the answer (``selection.select_context``).
- ``direct``: a fixed token budget spread evenly across all documents, each document's share
  taken from its beginning.
- ``cot``: the global context (every document, in collection order) truncated to the budget.
- ``vector_topk`` / ``vector_topk_cot``: the ``k`` chunks most similar to the question, where
  ``k`` is the number of chunks InsightGen passed for the same question, so that only the choice
  of context differs, not its amount.

All work on the ``insightgen`` chunk profile (about 2,000 tokens a chunk). A chunk cut to fit a
budget keeps its id: an insight drawing on it still points at the right pages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import nearest_rows
from insight_assets.core.retrieval.index import ChunkRecord
from insight_assets.core.startup.lazy import np

from ...text import count_tokens, cut_to_tokens
from .selection import ANSWER_CHUNK_TOKENS, ClusterIndex, answer_pieces, select_context

if TYPE_CHECKING:
    from ...curation import QAPair
    from .settings import InsightsSettings


@dataclass(frozen=True)
class MethodContext:
    """The passages one method reads for one question, and how they were chosen."""

    method: str
    question_id: str
    chunk_ids: tuple[str, ...]
    texts: tuple[str, ...]
    tokens: int
    truncated: bool = False
    answer_clusters: tuple[int, ...] = ()
    related_clusters: tuple[int, ...] = ()


def _take(chunks: Sequence[ChunkRecord], budget: int) -> tuple[list[ChunkRecord], bool]:
    """Chunks in order until ``budget`` tokens, the last one cut to fit; and whether anything was
    left out."""
    taken, used = [], 0
    for position, chunk in enumerate(chunks):
        room = budget - used
        if room <= 0:
            return taken, True
        if chunk.tokens <= room:
            taken.append(chunk)
            used += chunk.tokens
            continue
        text = cut_to_tokens(chunk.text, room)
        taken.append(ChunkRecord(chunk.chunk_id, chunk.doc_id, chunk.index, text, count_tokens(text)))
        return taken, True
    return taken, False


def _context(method: str, question_id: str, chunks: Sequence[ChunkRecord], truncated: bool) -> MethodContext:
    return MethodContext(
        method=method,
        question_id=question_id,
        chunk_ids=tuple(chunk.chunk_id for chunk in chunks),
        texts=tuple(chunk.text for chunk in chunks),
        tokens=sum(chunk.tokens for chunk in chunks),
        truncated=truncated,
    )


def spread_context(
    method: str, question_id: str, chunks: Sequence[ChunkRecord], token_budget: int
) -> MethodContext:
    """``direct``: each document gets an equal share of the budget, from its beginning."""
    by_document: dict[str, list[ChunkRecord]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.doc_id, []).append(chunk)
    share = token_budget // max(len(by_document), 1)
    taken, truncated = [], False
    for document_chunks in by_document.values():
        part, cut = _take(sorted(document_chunks, key=lambda chunk: chunk.index), share)
        taken += part
        truncated = truncated or cut
    return _context(method, question_id, taken, truncated)


def truncated_context(
    method: str, question_id: str, chunks: Sequence[ChunkRecord], token_budget: int
) -> MethodContext:
    """``cot``: the whole collection in order, cut at the budget."""
    taken, truncated = _take(chunks, token_budget)
    return _context(method, question_id, taken, truncated)


def top_k_context(
    method: str,
    question_id: str,
    chunks: Sequence[ChunkRecord],
    chunk_vectors: np.ndarray,
    query_vector: np.ndarray,
    k: int,
) -> MethodContext:
    """``vector_topk``: the ``k`` chunks nearest the query by cosine, nearest first (ties: earlier
    chunk first)."""
    order = nearest_rows(chunk_vectors, query_vector, k)
    return _context(method, question_id, [chunks[position] for position in order], len(order) < len(chunks))


# The methods whose context needs no model call.
_LOCAL = ("insightgen", "direct", "cot", "vector_topk", "vector_topk_cot")


def build_contexts(
    pairs: Sequence[QAPair],
    chunks: Sequence[ChunkRecord],
    chunk_vectors: np.ndarray,
    cluster_index: ClusterIndex,
    embed: Callable[[list[str]], np.ndarray],
    methods: Sequence[str],
    selection: InsightsSettings,
) -> list[MethodContext]:
    """Every §5.1 method's context for every pair (``chunks`` in collection order, ``chunk_vectors``
    their rows); the baselines get InsightGen's number of chunks (vector top-k) or its token
    budget (direct, CoT). The RAG baselines' contexts need the model: ``rag_baselines.py``."""
    pieces = [answer_pieces(pair.answer, ANSWER_CHUNK_TOKENS) for pair in pairs]
    flat = [piece for group in pieces for piece in group]
    vectors = np.asarray(embed(flat + [pair.question for pair in pairs]), dtype=np.float32)
    piece_vectors, question_vectors = vectors[: len(flat)], vectors[len(flat) :]
    contexts, start = [], 0
    for pair, group, question_vector in zip(pairs, pieces, question_vectors, strict=True):
        if not group:  # an empty answer has no themes; every method then reads nothing
            contexts += [
                MethodContext(method, pair.question_id, (), (), 0) for method in methods if method in _LOCAL
            ]
            continue
        selected = select_context(cluster_index, piece_vectors[start : start + len(group)], selection)
        start += len(group)
        insightgen = MethodContext(
            method="insightgen",
            question_id=pair.question_id,
            chunk_ids=tuple(chunk.chunk_id for chunk in selected.chunks),
            texts=tuple(chunk.text for chunk in selected.chunks),
            tokens=selected.tokens,
            truncated=selected.truncated,
            answer_clusters=selected.answer_clusters,
            related_clusters=selected.related_clusters,
        )
        top_k = top_k_context(
            "vector_topk",
            pair.question_id,
            chunks,
            chunk_vectors,
            question_vector,
            len(insightgen.chunk_ids),
        )
        by_method = {
            "insightgen": insightgen,
            "direct": spread_context("direct", pair.question_id, chunks, selection.token_budget),
            "cot": truncated_context("cot", pair.question_id, chunks, selection.token_budget),
            "vector_topk": top_k,
            "vector_topk_cot": dataclasses.replace(top_k, method="vector_topk_cot"),
        }
        contexts += [by_method[method] for method in methods if method in by_method]
    return contexts
