"""Which documents each question's baselines read, so that a paper added to the collection does not
change the prompts of questions it has nothing to do with.

Direct spreads its budget over every document of the collection and CoT reads the collection from
its first file (§5.1), so by their definition one more paper changes every Direct and CoT prompt,
and the judges, who compare all methods' insights of a question at once (Appendix D), judge every
question again. The paper describes one build of a fixed collection; a living collection is
rebuilt. With ``baseline_documents: kept`` (the default) a question whose question, answer and
InsightGen context are what they were at the last build keeps the documents its baselines read
then: its baselines' contexts, insights and judgements are those of that build, all from the cache.
Every other question (new, changed, or whose kept documents are no longer all in the collection)
reads the collection as it is now, as does every question with ``baseline_documents: current``.

The documents a question's baselines read are stored per question (``insight_pools``), with what
decides whether it is unchanged: a digest of its question and answer and InsightGen's chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.documents import sha256_text

if TYPE_CHECKING:
    from insight_assets.core.retrieval.index import ChunkRecord
    from insight_assets.core.startup.lazy import np

    from ...curation import QAPair
    from .contexts import MethodContext

KEPT = "kept"


@dataclass(frozen=True)
class BaselineDocuments:
    """What a question's baselines read at a build, and what it was asked with."""

    pair_digest: str  # of its question and answer
    insightgen_chunk_ids: tuple[str, ...]
    doc_ids: frozenset[str]


def pair_digest(pair: QAPair) -> str:
    return sha256_text(f"{pair.question}\n{pair.answer}")[:32]


def documents_read(
    pairs: Sequence[QAPair],
    insightgen: Mapping[str, MethodContext],
    earlier: Mapping[str, BaselineDocuments],
    present: frozenset[str],
    mode: str,
) -> dict[str, BaselineDocuments]:
    """Per question, the documents its baselines read now: those of ``earlier`` (the last build's)
    when ``mode`` is ``kept``, the question is unchanged and they are all still ``present``; else
    every present document."""
    read = {}
    for pair in pairs:
        chunk_ids = insightgen[pair.question_id].chunk_ids if pair.question_id in insightgen else ()
        now = BaselineDocuments(pair_digest(pair), chunk_ids, present)
        before = earlier.get(pair.question_id)
        unchanged = (
            before is not None
            and (before.pair_digest, before.insightgen_chunk_ids)
            == (now.pair_digest, now.insightgen_chunk_ids)
            and before.doc_ids <= present
        )
        read[pair.question_id] = before if mode == KEPT and unchanged else now
    return read


def of_documents(
    chunks: Sequence[ChunkRecord], vectors: np.ndarray, doc_ids: frozenset[str]
) -> tuple[list[ChunkRecord], np.ndarray]:
    """The chunks of ``doc_ids`` (in collection order) and their vectors' rows."""
    rows = [position for position, chunk in enumerate(chunks) if chunk.doc_id in doc_ids]
    return [chunks[position] for position in rows], vectors[rows]


def grouped(
    pairs: Sequence[QAPair], read: Mapping[str, BaselineDocuments]
) -> dict[frozenset[str], list[QAPair]]:
    """The pairs by the documents their baselines read."""
    groups: dict[frozenset[str], list[QAPair]] = {}
    for pair in pairs:
        groups.setdefault(read[pair.question_id].doc_ids, []).append(pair)
    return groups


def rows(collection: str, read: Mapping[str, BaselineDocuments]) -> list[dict]:
    return [
        {
            "collection": collection,
            "question_id": question_id,
            "pair_digest": documents.pair_digest,
            "insightgen_chunk_ids": list(documents.insightgen_chunk_ids),
            "doc_ids": sorted(documents.doc_ids),
        }
        for question_id, documents in sorted(read.items())
    ]


def from_rows(stored: Sequence[Mapping]) -> dict[str, BaselineDocuments]:
    return {
        row["question_id"]: BaselineDocuments(
            row["pair_digest"], tuple(row["insightgen_chunk_ids"]), frozenset(row["doc_ids"])
        )
        for row in stored
    }
