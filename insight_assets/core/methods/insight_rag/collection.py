"""What Insight-RAG reads from a collection with a model: the triples of its chunks' sentences
(§3, Figure 2 step 1) and the benchmark's questions (phrased about each item's object). The assets
and the dry-run estimate both call these, so a dry run prices exactly what a build runs."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...extractive import is_whole_sentence
from ...text import sentence_texts
from .benchmark import Benchmark, BenchmarkItem, contains
from .retriever import Sentence
from .schemas import MATCHING, MULTI
from .tasks import INSIGHT_RAG_QUESTION, INSIGHT_RAG_TRIPLES
from .triples import Triple, deduplicate, from_extracted

if TYPE_CHECKING:
    from ...llm import ItemResult, LLMClient


@dataclass(frozen=True)
class ChunkTriples:
    """A collection's whole sentences (each once per paper), the triples read in them, and the
    extraction calls that failed."""

    sentences: list[Sentence]
    triples: list[Triple]
    chunks_read: int
    failed: list[ItemResult]


def sentence_id(doc_id: str, sentence: str) -> str:
    return hashlib.sha256(f"{doc_id}\x1f{sentence}".encode()).hexdigest()[:24]


def first_chunks(rows: Sequence[Mapping[str, str]], per_paper: int | None) -> list[Mapping[str, str]]:
    """The first ``per_paper`` of each paper's chunks (all of them when ``None``)."""
    if per_paper is None:
        return list(rows)
    taken: dict[str, int] = {}
    kept = []
    for row in rows:
        taken[row["doc_id"]] = taken.get(row["doc_id"], 0) + 1
        if taken[row["doc_id"]] <= per_paper:
            kept.append(row)
    return kept


def read_triples(client: LLMClient, chunks: Sequence[Mapping[str, str]]) -> ChunkTriples:
    """The triples of ``chunks`` (rows with ``doc_id``, ``chunk_id`` and ``text``, in reading order).
    Only whole sentences are read; a sentence that overlapping chunks share is read once."""
    sentences: list[Sentence] = []
    per_chunk: list[tuple[Mapping[str, str], list[str]]] = []
    seen: set[tuple[str, str]] = set()
    for row in chunks:
        fresh = [
            s for s in sentence_texts(row["text"]) if is_whole_sentence(s) and (row["doc_id"], s) not in seen
        ]
        for text in fresh:
            seen.add((row["doc_id"], text))
            sentences.append(Sentence(sentence_id(row["doc_id"], text), row["doc_id"], row["chunk_id"], text))
        if fresh:
            per_chunk.append((row, fresh))
    if not per_chunk:
        return ChunkTriples([], [], 0, [])
    batch = client.run_many(INSIGHT_RAG_TRIPLES, [{"sentences": fresh} for _, fresh in per_chunk])
    extracted = [
        triple
        for (row, fresh), item in zip(per_chunk, batch.items, strict=True)
        if item.ok
        for triple in from_extracted(row["doc_id"], row["chunk_id"], fresh, item.value.triples)
    ]
    failed = [item for item in batch.items if not item.ok]
    return ChunkTriples(sentences, deduplicate(extracted), len(per_chunk), failed)


def phrase_questions(
    client: LLMClient, benchmark: Benchmark, triples: Sequence[Triple]
) -> list[BenchmarkItem]:
    """The benchmark's buried and multi-document items with their questions phrased, then its
    matching pairs. An item whose phrasing failed, or whose question contains its gold answer, is
    dropped, its triples with that reason."""
    questions = [item for item in benchmark.items if item.kind != MATCHING]
    batch = client.run_many(
        INSIGHT_RAG_QUESTION,
        [
            {
                "subject": item.subject,
                "relation_text": item.relation_text,
                "multi": item.kind == MULTI,
                "objects": list(item.gold_answers),
            }
            for item in questions
        ],
    )
    by_triple = {t.triple_id: t for t in triples}
    items = []
    for item, result in zip(questions, batch.items, strict=True):
        reason = None
        if not result.ok:
            reason = f"question phrasing failed: {result.error or result.status}"
        elif any(contains(result.value.question, gold) for gold in item.gold_answers):
            reason = "the question contains its gold answer"
        if reason:
            for triple_id in item.triple_ids:
                benchmark.drop(by_triple[triple_id], reason)
            continue
        items.append(BenchmarkItem(**{**item.__dict__, "question": result.value.question.strip()}))
    return items + [item for item in benchmark.items if item.kind == MATCHING]
