"""Vectors for a collection's chunks, each piece of text sent to the model once.

Chunk profiles cover the same text at different sizes. The fine profile's chunks (``passage``, 150
tokens) fit the model whole, so they are embedded; a coarse chunk (``section``, about 2,000
tokens) is then the mean of the fine vectors covering its span, weighted by how much of each it
holds, instead of being read by the model a second time. A coarse chunk the fine chunks do not cover
(its collection built without the fine profile, say) is embedded directly, in windows.

Model vectors are reused by the sha256 of their text and the embedder variant; pooled vectors cost
no model call and are recomputed on every run.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from insight_assets.core.embedding.models import PartialEmbedding
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.chunking import PASSAGE
from insight_assets.core.startup.lazy import np, pa

if TYPE_CHECKING:
    from insight_assets.core.embedding.models import Embedder

DEFAULT_POOL_SOURCE = PASSAGE
# A coarse chunk is pooled only when fine chunks cover at least this share of its characters.
MIN_POOL_COVERAGE = 0.95


@dataclass
class VectorOutcome:
    table: pa.Table
    embedded: int = 0
    reused: int = 0
    pooled: int = 0
    words_embedded: int = 0
    seconds: float = 0.0
    per_profile: dict[str, int] = field(default_factory=dict)
    # Chunks left without a vector because their batch failed (profile, chunk_id, doc_id, text_sha,
    # error): not in ``table``, so the next run embeds exactly these again.
    failures: list[dict] = field(default_factory=list)
    # With ``with_token_vectors``: the token vectors of the texts embedded whole, by text.
    token_vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def words_per_second(self) -> float:
        return self.words_embedded / self.seconds if self.seconds else 0.0


def pooling_plan(
    coarse: dict, fine_by_doc: dict[str, list[dict]], fine_starts: dict[str, list[int]]
) -> list[tuple[int, float]] | None:
    """``(fine row position, weight)`` pairs whose weighted mean stands for ``coarse``, or None.

    A fine chunk's weight is its token count times the share of its characters inside the coarse
    span. None when the fine chunks cover less than ``MIN_POOL_COVERAGE`` of the span.
    """
    rows = fine_by_doc.get(coarse["doc_id"])
    if not rows:
        return None
    start, end = coarse["char_start"], coarse["char_end"]
    # Fine chunks are sorted by start and at most a few hundred characters long: step back a little
    # from the first one starting inside the span to catch one that straddles its start.
    first = max(0, bisect.bisect_left(fine_starts[coarse["doc_id"]], start) - 2)
    plan, covered_until, covered = [], start, 0
    for position in range(first, len(rows)):
        fine = rows[position]
        if fine["char_start"] >= end:
            break
        inside = min(end, fine["char_end"]) - max(start, fine["char_start"])
        if inside <= 0:
            continue
        plan.append(
            (fine["_position"], fine["token_count"] * inside / (fine["char_end"] - fine["char_start"]))
        )
        new_from = max(covered_until, fine["char_start"], start)
        covered += max(0, min(end, fine["char_end"]) - new_from)
        covered_until = max(covered_until, min(end, fine["char_end"]))
    return plan if plan and covered >= MIN_POOL_COVERAGE * (end - start) else None


def vectorize_chunks(
    collection: str,
    chunk_rows: Sequence[dict],
    embedder: Embedder,
    existing: pa.Table | None,
    *,
    pool_from: str | None = DEFAULT_POOL_SOURCE,
    with_token_vectors: bool = False,
) -> VectorOutcome:
    """A vector table for ``chunk_rows`` (dicts with profile, chunk_id, doc_id, text, text_sha,
    char_start, char_end, token_count), reusing ``existing`` model vectors of this variant.
    ``with_token_vectors``: the local model's token vectors of what it embeds come back too (see
    ``LocalEmbedder.embed_with_token_vectors``)."""
    known = _reusable_vectors(existing, embedder.variant)
    fine_by_doc: dict[str, list[dict]] = {}
    for position, row in enumerate(chunk_rows):
        if row["profile"] == pool_from:
            fine_by_doc.setdefault(row["doc_id"], []).append({**row, "_position": position})
    for rows in fine_by_doc.values():
        rows.sort(key=lambda row: row["char_start"])
    fine_starts = {doc: [row["char_start"] for row in rows] for doc, rows in fine_by_doc.items()}

    plans: dict[int, list[tuple[int, float]]] = {}
    for position, row in enumerate(chunk_rows):
        if row["profile"] != pool_from:
            plan = pooling_plan(row, fine_by_doc, fine_starts)
            if plan is not None:
                plans[position] = plan

    pending: dict[str, str] = {}
    for position, row in enumerate(chunk_rows):
        if position not in plans and row["text_sha"] not in known:
            pending.setdefault(row["text_sha"], row["text"])
    started = time.perf_counter()
    errors: dict[str, str] = {}  # text sha -> why its batch failed
    token_vectors: dict[str, np.ndarray] = {}
    if pending:
        outcome, token_vectors = _embed(embedder, list(pending.values()), with_token_vectors)
        for index, (sha, vector) in enumerate(zip(pending, outcome.vectors, strict=True)):
            if vector is None:
                errors[sha] = outcome.errors[index]
            else:
                known[sha] = vector
    seconds = time.perf_counter() - started

    # A chunk whose text failed has no vector, and neither has a coarse chunk pooled from one.
    failed: dict[int, str] = {
        position: errors[row["text_sha"]]
        for position, row in enumerate(chunk_rows)
        if position not in plans and row["text_sha"] in errors
    }
    for position, plan in plans.items():
        lost = next((source for source, _ in plan if source in failed), None)
        if lost is not None:
            failed[position] = (
                f"pooled from {pool_from} chunk {chunk_rows[lost]['chunk_id']}, which failed: {failed[lost]}"
            )

    dimension = len(next(iter(known.values()))) if known else embedder.dimension
    matrix = np.zeros((len(chunk_rows), dimension), dtype=np.float32)
    for position, row in enumerate(chunk_rows):
        if position not in plans and position not in failed:
            matrix[position] = known[row["text_sha"]]
    pooled = [position for position in plans if position not in failed]
    for position in pooled:
        sources, weights = zip(*plans[position])
        matrix[position] = np.asarray(weights, dtype=np.float32) @ matrix[list(sources)]
    if pooled:
        matrix[pooled] = normalize_rows(matrix[pooled])

    per_profile: dict[str, int] = {}
    for row in chunk_rows:
        per_profile[row["profile"]] = per_profile.get(row["profile"], 0) + 1
    direct = [row for position, row in enumerate(chunk_rows) if position not in plans]
    stored = [position for position in range(len(chunk_rows)) if position not in failed]
    pooled_set = set(pooled)
    return VectorOutcome(
        table=_vector_table(
            collection,
            [chunk_rows[position] for position in stored],
            embedder.variant,
            matrix[stored],
            {row for row, position in enumerate(stored) if position in pooled_set},
            pool_from or "",
        ),
        embedded=len(pending) - len(errors),
        reused=sum(1 for row in direct if row["text_sha"] not in pending),
        pooled=len(pooled),
        words_embedded=sum(len(text.split()) for sha, text in pending.items() if sha not in errors),
        seconds=seconds,
        per_profile=per_profile,
        token_vectors=token_vectors,
        failures=[
            {
                "profile": chunk_rows[position]["profile"],
                "chunk_id": chunk_rows[position]["chunk_id"],
                "doc_id": chunk_rows[position]["doc_id"],
                "text_sha": chunk_rows[position]["text_sha"],
                "error": reason,
            }
            for position, reason in sorted(failed.items())
        ],
    )


def _embed(
    embedder: Embedder, texts: list[str], with_token_vectors: bool
) -> tuple[PartialEmbedding, dict[str, np.ndarray]]:
    """``embedder.embed_partial(texts)``, and with ``with_token_vectors`` the token vectors of those
    the local model read whole, by text (only the local model has them)."""
    embed_with_token_vectors = getattr(embedder, "embed_with_token_vectors", None)
    if not with_token_vectors or embed_with_token_vectors is None:
        return embedder.embed_partial(texts), {}
    vectors, tokens = embed_with_token_vectors(texts)
    kept = {text: rows for text, rows in zip(texts, tokens, strict=True) if rows is not None}
    return PartialEmbedding(list(vectors), {}), kept


def _reusable_vectors(existing: pa.Table | None, variant: str) -> dict[str, np.ndarray]:
    """Model vectors of ``variant`` from an earlier run, by text sha (pooled ones are not reused)."""
    if existing is None or not existing.num_rows:
        return {}
    pooled = (
        existing.column("pooled_from").to_pylist()
        if "pooled_from" in existing.column_names
        else [""] * existing.num_rows
    )
    vectors = existing.column("vector").to_numpy(zero_copy_only=False)
    return {
        sha: vector
        for sha, row_variant, source, vector in zip(
            existing.column("text_sha").to_pylist(), existing.column("variant").to_pylist(), pooled, vectors
        )
        if row_variant == variant and not source
    }


def _vector_table(
    collection: str,
    chunk_rows: Sequence[dict],
    variant: str,
    matrix: np.ndarray,
    pooled: set[int],
    pool_from: str,
) -> pa.Table:
    """The LanceDB rows: ``matrix[i]`` is ``chunk_rows[i]``'s vector, pooled when ``i in pooled``."""
    count = len(chunk_rows)
    return pa.table(
        {
            "collection": pa.array([collection] * count, pa.string()),
            "profile": pa.array([row["profile"] for row in chunk_rows], pa.string()),
            "chunk_id": pa.array([row["chunk_id"] for row in chunk_rows], pa.string()),
            "doc_id": pa.array([row["doc_id"] for row in chunk_rows], pa.string()),
            "text_sha": pa.array([row["text_sha"] for row in chunk_rows], pa.string()),
            "variant": pa.array([variant] * count, pa.string()),
            # Which profile's vectors a row was pooled from; empty when the model read its text.
            "pooled_from": pa.array([pool_from if i in pooled else "" for i in range(count)], pa.string()),
            # The chunk's text, for LanceDB's full-text index (lexical and hybrid retrieval).
            "text": pa.array([row["text"] for row in chunk_rows], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(matrix.reshape(-1), pa.float32()), max(matrix.shape[1], 1)
            ),
        }
    )
