"""Answering the benchmark (§2, §5): Insight-RAG with each retriever mode, conventional RAG with
k chunks, and no retrieval at all, on the same items.

Insight-RAG: the identifier turns the question (or the matching task) into fragments; the
retriever completes each (1 insight for a single answer, 10 for several); the generator answers from
the question and the insights, citing their chunks. RAG: the question retrieves k ``xsum`` chunks
(k = 1, 3, 5, 10) and the same generator answers from them. Every method's retrieval ranking (its
top 50) is kept for Hits@50 and MRR. Matching pairs are decided with no context, with the one chunk
the pair retrieves (the paper's RAG for matching) and with each mode's insights; the pair's own
papers are left out of every retrieval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...retrieval.citing import Source, alias, chunk_citations, cited_chunks, format_passages
from ...text import count_tokens, cut_to_tokens
from .retriever import SENTENCES, TRIPLES, InsightRetriever, RetrievedInsight
from .schemas import (
    FAILED,
    INSIGHTS_MULTI,
    INSIGHTS_SINGLE,
    MATCHING,
    NO_INSIGHT,
    OK,
    PARAMETRIC,
    RANK_DEPTH,
    VANILLA,
    IdentifiedInsight,
    insight_method,
    rag_method,
)
from .tasks import INSIGHT_RAG_ANSWER, INSIGHT_RAG_IDENTIFY, INSIGHT_RAG_MATCH

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Hit, Retriever
    from .benchmark import BenchmarkItem

# A matching paper is shown as its title and abstract, within this many tokens.
PAPER_TOKENS = 300
MATCHING_TASK = (
    "Determine whether Paper-A and Paper-B are relevant enough to be cited by the other.\n"
    "Paper-A:\n{a}\nPaper-B:\n{b}"
)


@dataclass(frozen=True)
class Identification:
    item_id: str
    status: str  # OK, NO_INSIGHT or FAILED
    insights: tuple[IdentifiedInsight, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class MethodAnswer:
    """One method's answer to one item, what it was given, and what its retrieval ranked."""

    item_id: str
    kind: str
    method: str
    status: str
    answer: str = ""  # citations as [chunk id]
    context_tokens: int = 0
    passage_chunk_ids: tuple[str, ...] = ()
    cited_chunk_ids: tuple[str, ...] = ()
    ranked_ids: tuple[str, ...] = ()  # chunks (RAG), triples or sentences (Insight-RAG), best first
    ranked_doc_ids: tuple[str, ...] = ()
    insights: tuple[str, ...] = ()  # Insight-RAG: the retrieved insights' texts
    error: str | None = None


@dataclass(frozen=True)
class Setup:
    """What the answers are given: retrieval, the retriever modes and k values, the papers."""

    chunks: Retriever
    insights: InsightRetriever
    sources: Mapping[str, Source]
    modes: Sequence[str]
    rag_ks: Sequence[int]
    rag_mode: str = "dense"
    papers: Mapping[str, str] = field(default_factory=dict)  # doc id -> title and abstract
    similarity: Callable[[str, str], float] | None = None  # matching's offline rule
    threshold: float = 0.0


@dataclass
class _Context:
    """A method's context for an item, before the generator runs."""

    item: BenchmarkItem
    method: str
    passages: list[RetrievedInsight]
    ranked: list[Hit]
    skip: str | None = None


def paper_text(title: str, abstract: str, body: str) -> str:
    return cut_to_tokens(f"{title}\n{abstract or body}".strip(), PAPER_TOKENS)


def identify(client: LLMClient, items: Sequence[BenchmarkItem], setup: Setup) -> list[Identification]:
    """The identifier on each item's question (or matching task); a failed call is a failed row."""
    tasks = [
        MATCHING_TASK.format(a=setup.papers[item.paper_a], b=setup.papers[item.paper_b])
        if item.kind == MATCHING
        else item.question
        for item in items
    ]
    batch = client.run_many(INSIGHT_RAG_IDENTIFY, [{"task": task} for task in tasks])
    found = []
    for item, result in zip(items, batch.items, strict=True):
        if not result.ok:
            found.append(Identification(item.item_id, FAILED, error=result.error or result.status))
            continue
        insights = tuple(i for i in result.value.root if i.insight.strip())
        found.append(Identification(item.item_id, OK if insights else NO_INSIGHT, insights))
    return found


def answer(
    client: LLMClient,
    items: Sequence[BenchmarkItem],
    identified: Sequence[Identification],
    setup: Setup,
    baselines: bool = True,
) -> list[MethodAnswer]:
    """Every method's answer to every item (questions and matching pairs); only Insight-RAG's
    (each of ``setup.modes``) without ``baselines``."""
    by_item = {i.item_id: i for i in identified}
    contexts = _insight_contexts(client, items, by_item, setup)
    if baselines:
        contexts += _rag_contexts(items, setup) + [_Context(item, VANILLA, [], []) for item in items]
    questions = [c for c in contexts if c.item.kind != MATCHING]
    pairs = [c for c in contexts if c.item.kind == MATCHING]
    return _generate(client, questions, setup) + _decide(client, pairs, setup)


def _exclude(item: BenchmarkItem) -> tuple[str, ...]:
    return (item.paper_a, item.paper_b) if item.kind == MATCHING else ()


def _rag_contexts(items: Sequence[BenchmarkItem], setup: Setup) -> list[_Context]:
    contexts = []
    for item in items:
        query = (
            f"{setup.papers[item.paper_a]}\n{setup.papers[item.paper_b]}"
            if item.kind == MATCHING
            else item.question
        )
        ranked = setup.chunks.search(query, RANK_DEPTH, setup.rag_mode, exclude=_exclude(item))
        for k in (1,) if item.kind == MATCHING else setup.rag_ks:
            passages = [
                RetrievedInsight("", hit.text, hit.chunk_id, hit.doc_id, hit.score) for hit in ranked[:k]
            ]
            contexts.append(_Context(item, rag_method(k), passages, ranked))
    return contexts


def _insight_contexts(
    client: LLMClient, items: Sequence[BenchmarkItem], by_item: Mapping[str, Identification], setup: Setup
) -> list[_Context]:
    fragments = [(item, insight) for item in items for insight in by_item[item.item_id].insights]
    texts = [insight.insight for _, insight in fragments]
    multi = [insight.multi_answer for _, insight in fragments]
    counts = [INSIGHTS_MULTI if flag else INSIGHTS_SINGLE for flag in multi]
    excludes = [_exclude(item) for item, _ in fragments]
    rankings = {
        profile: [
            setup.insights.units[profile].search(
                text, RANK_DEPTH, setup.insights.search_mode, exclude=exclude
            )
            for text, exclude in zip(texts, excludes, strict=True)
        ]
        for profile in {unit_profile(mode) for mode in setup.modes if mode != PARAMETRIC}
    }
    positions: dict[str, list[int]] = {item.item_id: [] for item in items}
    for position, (item, _) in enumerate(fragments):
        positions[item.item_id].append(position)
    skips = {item.item_id: _skip_reason(by_item[item.item_id]) for item in items}
    contexts = []
    for mode in setup.modes:
        if mode == PARAMETRIC and setup.insights.parametric is None:
            reason = f"no parametric insight retriever: {setup.insights.parametric_missing}"
            contexts += [_Context(item, insight_method(mode), [], [], reason) for item in items]
            continue
        if mode == PARAMETRIC:
            found, ranking = setup.insights.complete(texts, counts, excludes)
        else:
            ranking = rankings[unit_profile(mode)]
            found = setup.insights.retrieve(client, mode, texts, multi, counts, ranking)
        for item in items:
            mine = positions[item.item_id]
            passages = list({p.text: p for n in mine for p in found[n]}.values())
            ranked = ranking[mine[0]] if mine else []
            contexts.append(_Context(item, insight_method(mode), passages, ranked, skips[item.item_id]))
    return contexts


def unit_profile(mode: str) -> str:
    """What a retriever mode searches: sentences, or triples (``index`` and ``llm``)."""
    return SENTENCES if mode == SENTENCES else TRIPLES


def _skip_reason(identification: Identification) -> str | None:
    if identification.status == FAILED:
        return f"the insight identifier failed: {identification.error}"
    if identification.status == NO_INSIGHT:
        return "the insight identifier found no insight to retrieve"
    return None


def _passages(context: _Context, setup: Setup) -> tuple[list[dict[str, str]], dict[str, str]]:
    shown, ids = [], {}
    for position, found in enumerate(context.passages):
        source = setup.sources.get(found.chunk_id)
        shown.append(
            {"id": alias(position), "source": source.label if source else found.chunk_id, "text": found.text}
        )
        ids[alias(position)] = found.chunk_id
    return shown, ids


def _record(context: _Context, status: str, text: str, shown, ids, error: str | None) -> MethodAnswer:
    stored = chunk_citations(text, ids) if text else ""
    return MethodAnswer(
        item_id=context.item.item_id,
        kind=context.item.kind,
        method=context.method,
        status=status,
        answer=stored,
        context_tokens=count_tokens(format_passages(shown)) if shown else 0,
        passage_chunk_ids=tuple(p.chunk_id for p in context.passages),
        cited_chunk_ids=tuple(cited_chunks(stored)),
        ranked_ids=tuple(hit.chunk_id for hit in context.ranked),
        ranked_doc_ids=tuple(hit.doc_id for hit in context.ranked),
        insights=tuple(p.text for p in context.passages) if context.method.startswith("insight") else (),
        error=error,
    )


def _run(
    client: LLMClient,
    task,
    contexts: Sequence[_Context],
    setup: Setup,
    inputs: Callable[[_Context, list[dict[str, str]]], dict],
    reply: Callable,
) -> list[MethodAnswer]:
    """``task`` on every context not skipped (``inputs`` of the context and its passages as shown,
    ``reply`` the answer's text), recorded; a skipped context is a failed row with its reason."""
    ready = [c for c in contexts if c.skip is None]
    prepared = [_passages(c, setup) for c in ready]
    batch = client.run_many(task, [inputs(c, shown) for c, (shown, _) in zip(ready, prepared, strict=True)])
    answers = [
        _record(c, OK, reply(r.value), shown, ids, None)
        if r.ok
        else _record(c, FAILED, "", shown, ids, r.error)
        for c, (shown, ids), r in zip(ready, prepared, batch.items, strict=True)
    ]
    return answers + [_record(c, FAILED, "", [], {}, c.skip) for c in contexts if c.skip is not None]


def _generate(client: LLMClient, contexts: Sequence[_Context], setup: Setup) -> list[MethodAnswer]:
    return _run(
        client,
        INSIGHT_RAG_ANSWER,
        contexts,
        setup,
        lambda c, shown: {"question": c.item.question, "passages": shown},
        lambda value: value.answer,
    )


def _decide(client: LLMClient, contexts: Sequence[_Context], setup: Setup) -> list[MethodAnswer]:
    def inputs(c: _Context, _shown) -> dict:
        a, b = c.item.paper_a, c.item.paper_b
        return {
            "paper_a": setup.papers[a],
            "paper_b": setup.papers[b],
            "insights": [p.text for p in c.passages],
            "similarity": setup.similarity(a, b) if setup.similarity else 0.0,
            "threshold": setup.threshold,
        }

    return _run(client, INSIGHT_RAG_MATCH, contexts, setup, inputs, lambda value: value.answer)
