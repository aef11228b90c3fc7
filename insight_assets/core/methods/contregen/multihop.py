"""The multi-hop baselines of ConTReGen's Table 2 and the ablations of its Tables 5 and 8, on the
same retriever, top-k and iteration cap as ConTReGen (``retrieval``: the trees' settings;
``answering``: the answers').

- *Self-Ask* (Press et al., 2023): a follow-up question at a time, each retrieved for and answered
  from its passages (an intermediate answer), until the model asks none or ``iterations`` are
  spent; the final answer is written from the intermediate answers.
- *SearChain* (Xu et al., 2024): a chain of queries; each round the first query is checked against
  retrieval (answered from its passages, which replaces whatever the model assumed) and the model
  refines the rest of the chain in the light of the checked answers; the final answer is written
  from them.
- *DSP* (Khattab et al., 2022): demonstrate (one worked example in each prompt), search (the
  question's passages, then one retrieval per hop the model decomposes the question into),
  predict (reasoning step by step, then the cited answer).
- *ConTRe w/o bottom-up synthesis* (Table 5): the tree's relevant passages, answered once.
- *DSP w/ ConTRe* (Table 8): the tree's relevant passages handed to DSP's predict stage.

Self-RAG needs its fine-tuned reflection-token model; a prompted imitation would be another
method under its name, so it is not built.

Every call is counted (calls, tokens) on its question, as for the other methods (Table 9); the
ablations also carry the tree's planning and verification calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...llm.results import TRUNCATED as CUT_OFF
from ...retrieval.citing import Source, chunk_citations, cited_chunks, passage, strip_citations
from .schemas import (
    CONTRE_NO_SYNTHESIS,
    DSP,
    DSP_WITH_CONTRE,
    FAILED,
    HOP_ANSWER_WORDS,
    NO_INPUT,
    SEARCHAIN,
    SELF_ASK,
    TRUNCATED,
    WRITTEN,
    Answer,
    Tree,
    TreeQuestion,
    Usage,
)
from .tasks import (
    CONTREGEN_ANSWER,
    CONTREGEN_DSP_ANSWER,
    CONTREGEN_DSP_HOPS,
    CONTREGEN_SEARCHAIN,
    CONTREGEN_SELF_ASK,
    CONTREGEN_SUMMARIZE,
)
from .tree import search_each, spend, synthesis_inputs

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever


@dataclass
class _Chain:
    """One question's run of a multi-hop baseline: its hops so far and what they cost."""

    question: TreeQuestion
    usage: Usage = field(default_factory=Usage)
    steps: list[tuple[str, str]] = field(default_factory=list)  # (hop query, answer citing chunk ids)
    retrieved: list[str] = field(default_factory=list)
    latest: list[str] = field(default_factory=list)  # the last retrieval's chunks
    pending: list[str] = field(default_factory=list)  # SearChain: the rest of its chain
    done: bool = False
    error: str | None = None


def _search(
    retriever, chains: Sequence[_Chain], queries: Sequence[str], retrieval, answering, sources
) -> None:
    found = search_each(
        retriever, queries, [retrieval.top_k] * len(queries), retrieval.retrieval_mode, sources
    )
    for chain, hits in zip(chains, found, strict=True):
        chain.latest = [hit.chunk_id for hit in hits]
        chain.retrieved.extend(chain.latest)


def _shown(chain: _Chain, sources) -> dict[str, Any]:
    """What a hop prompt shows: the question, the hops answered so far, the last passages."""
    return {
        "question": chain.question.question,
        "steps": [{"question": q, "answer": strip_citations(a)} for q, a in chain.steps],
        "passages": [passage(i, sources[cid]) for i, cid in enumerate(chain.latest)],
    }


def _answer_hops(
    client, retriever, chains: Sequence[_Chain], queries: Sequence[str], retrieval, answering, sources
) -> None:
    """Retrieve for each chain's hop query and answer it from those passages alone."""
    _search(retriever, chains, queries, retrieval, answering, sources)
    prepared = [
        synthesis_inputs(
            query,
            chain.question.question,
            chain.latest,
            [],
            sources,
            HOP_ANSWER_WORDS,
            answering.context_tokens,
        )
        for chain, query in zip(chains, queries, strict=True)
    ]
    batch = client.run_many(CONTREGEN_SUMMARIZE, [inputs for inputs, _ in prepared])
    for chain, query, (inputs, ids), item in zip(chains, queries, prepared, batch.items, strict=True):
        if not chain.latest:
            chain.steps.append((query, "Nothing was retrieved for this query."))
            continue
        spend(chain.usage, CONTREGEN_SUMMARIZE, inputs, item)
        if not item.ok:
            chain.error, chain.done = item.error or item.status, True
            continue
        chain.steps.append((query, chunk_citations(item.value.text.strip(), ids)))


def _final(client, chains: Sequence[_Chain], method: str, retrieval, answering, sources) -> list[Answer]:
    """Each chain's answer, written from its intermediate answers (their citations as sources)."""
    return _write_once(
        client,
        CONTREGEN_ANSWER,
        method,
        [c.question for c in chains],
        [
            synthesis_inputs(
                None,
                c.question.question,
                [],
                c.steps,
                sources,
                answering.answer_words,
                answering.context_tokens,
            )
            if c.steps
            else None
            for c in chains
        ],
        [c.usage for c in chains],
        [c.retrieved for c in chains],
        [c.error for c in chains],
    )


def _write_once(
    client: LLMClient,
    task,
    method: str,
    questions: Sequence[TreeQuestion],
    prepared: Sequence[tuple[dict[str, Any], dict[str, str]] | None],
    usages: Sequence[Usage],
    retrieved: Sequence[Sequence[str]],
    errors: Sequence[str | None],
) -> list[Answer]:
    """One ``task`` call per question whose inputs are ``prepared`` (``None``: nothing to write
    from), each spent on its question's usage, and the answers."""
    runnable = [i for i, inputs in enumerate(prepared) if inputs is not None]
    batch = client.run_many(task, [prepared[i][0] for i in runnable])
    items = dict(zip(runnable, batch.items, strict=True))
    answers = []
    for index, question in enumerate(questions):
        item = items.get(index)
        inputs, ids = prepared[index] or ({}, {})
        if item is not None:
            spend(usages[index], task, inputs, item)
        answers.append(_answer(question, method, usages[index], retrieved[index], ids, item, errors[index]))
    return answers


def _answer(
    question: TreeQuestion, method: str, usage: Usage, retrieved, ids, item, error: str | None
) -> Answer:
    common: dict[str, Any] = {
        "question_id": question.question_id,
        "method": method,
        "retrieved": tuple(dict.fromkeys(retrieved)),
        "used": tuple(ids.values()),
        "calls": usage.calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }
    if item is None:
        return Answer(
            status=FAILED if error else NO_INPUT, error=error or "no hop retrieved anything", **common
        )
    if not item.ok:
        return Answer(status=FAILED, error=item.error or item.status, **common)
    text = chunk_citations(item.value.text.strip(), ids)
    return Answer(
        status=TRUNCATED if item.finish_reason == CUT_OFF else WRITTEN,
        text=text,
        cited=tuple(cited_chunks(text)),
        finish_reason=item.finish_reason,
        error=f"a hop failed: {error}" if error else None,
        **common,
    )


def self_ask(
    client: LLMClient, retriever: Retriever, questions, retrieval, answering, sources: dict[str, Source]
) -> list[Answer]:
    """Self-Ask: follow-up questions from what was retrieved, intermediate answers, a final answer."""
    chains = [_Chain(q) for q in questions]
    _search(retriever, chains, [q.question for q in questions], retrieval, answering, sources)
    for _ in range(answering.iterations):
        active = [c for c in chains if not c.done]
        if not active:
            break
        inputs = [_shown(c, sources) for c in active]
        batch = client.run_many(CONTREGEN_SELF_ASK, inputs)
        asking, queries = [], []
        for chain, given, item in zip(active, inputs, batch.items, strict=True):
            spend(chain.usage, CONTREGEN_SELF_ASK, given, item)
            if not item.ok:
                chain.error, chain.done = item.error or item.status, True
            elif not item.value.follow_up_needed:
                chain.done = True
            else:
                asking.append(chain)
                queries.append(item.value.follow_up.strip())
        if asking:
            _answer_hops(client, retriever, asking, queries, retrieval, answering, sources)
    return _final(client, chains, SELF_ASK, retrieval, answering, sources)


def searchain(
    client: LLMClient, retriever: Retriever, questions, retrieval, answering, sources: dict[str, Source]
) -> list[Answer]:
    """SearChain: a chain of queries, its first checked against retrieval and the rest refined
    each round, then a final answer from the checked answers."""
    chains = [_Chain(q) for q in questions]
    _search(retriever, chains, [q.question for q in questions], retrieval, answering, sources)
    for _ in range(answering.iterations):
        active = [c for c in chains if not c.done]
        if not active:
            break
        inputs = [{**_shown(c, sources), "max_queries": retrieval.max_sub_questions} for c in active]
        batch = client.run_many(CONTREGEN_SEARCHAIN, inputs)
        checking, queries = [], []
        for chain, given, item in zip(active, inputs, batch.items, strict=True):
            spend(chain.usage, CONTREGEN_SEARCHAIN, given, item)
            if not item.ok:
                chain.error, chain.done = item.error or item.status, True
                continue
            chain.pending = [q.strip() for q in item.value.queries if q.strip()]
            if not chain.pending:
                chain.done = True
                continue
            checking.append(chain)
            queries.append(chain.pending.pop(0))
        if checking:
            _answer_hops(client, retriever, checking, queries, retrieval, answering, sources)
    return _final(client, chains, SEARCHAIN, retrieval, answering, sources)


def _predict(
    client, questions, chunk_ids, usages, retrieved, method: str, retrieval, answering, sources
) -> list[Answer]:
    """DSP's predict stage on each question's ``chunk_ids``."""
    prepared = [
        synthesis_inputs(None, q.question, ids, [], sources, answering.answer_words, answering.context_tokens)
        if ids
        else None
        for q, ids in zip(questions, chunk_ids, strict=True)
    ]
    return _write_once(
        client, CONTREGEN_DSP_ANSWER, method, questions, prepared, usages, retrieved, [None] * len(questions)
    )


def dsp(
    client: LLMClient, retriever: Retriever, questions, retrieval, answering, sources: dict[str, Source]
) -> list[Answer]:
    """DSP: the question's passages, its hops' passages, then reasoning and the cited answer."""
    chains = [_Chain(q) for q in questions]
    _search(retriever, chains, [q.question for q in questions], retrieval, answering, sources)
    own = [list(c.latest) for c in chains]
    # Hops beyond the iteration cap would out-search the other baselines.
    inputs = [{**_shown(c, sources), "max_queries": answering.iterations} for c in chains]
    batch = client.run_many(CONTREGEN_DSP_HOPS, inputs)
    hops: list[list[str]] = []
    for chain, given, item in zip(chains, inputs, batch.items, strict=True):
        spend(chain.usage, CONTREGEN_DSP_HOPS, given, item)
        hops.append([q.strip() for q in item.value.queries if q.strip()] if item.ok else [])
    flat = [(i, query) for i, queries in enumerate(hops) for query in queries]
    found = search_each(
        retriever, [q for _, q in flat], [retrieval.top_k] * len(flat), retrieval.retrieval_mode, sources
    )
    gathered = [list(ids) for ids in own]
    for (index, _), hits in zip(flat, found, strict=True):
        gathered[index].extend(hit.chunk_id for hit in hits)
        chains[index].retrieved.extend(hit.chunk_id for hit in hits)
    # The hops' passages after the question's own, each once; the prompt keeps what fits.
    passages = [list(dict.fromkeys(ids)) for ids in gathered]
    return _predict(
        client,
        questions,
        passages,
        [c.usage for c in chains],
        [c.retrieved for c in chains],
        DSP,
        retrieval,
        answering,
        sources,
    )


def _copy(usage: Usage) -> Usage:
    copy = Usage()
    copy.add(usage.calls, usage.input_tokens, usage.output_tokens)
    return copy


def planning_usage(trees: Sequence[Tree]) -> list[Usage]:
    """A copy of each tree's calls so far: take it before synthesis, for the ablations, which share
    the tree's planning and verification and not its synthesis."""
    return [_copy(tree.usage) for tree in trees]


def contre_no_synthesis(
    client: LLMClient, trees: Sequence[Tree], planning: Sequence[Usage], answering, sources: dict[str, Source]
) -> list[Answer]:
    """The tree's relevant passages, answered once (no bottom-up synthesis); ``planning``: each
    tree's calls before synthesis (``planning_usage``)."""
    prepared = [
        synthesis_inputs(
            None, t.question.question, t.used(), [], sources, answering.answer_words, answering.context_tokens
        )
        if t.used()
        else None
        for t in trees
    ]
    return _write_once(
        client,
        CONTREGEN_ANSWER,
        CONTRE_NO_SYNTHESIS,
        [t.question for t in trees],
        prepared,
        [_copy(usage) for usage in planning],
        [t.retrieved() for t in trees],
        [None] * len(trees),
    )


def dsp_with_contre(
    client: LLMClient,
    trees: Sequence[Tree],
    planning: Sequence[Usage],
    retrieval,
    answering,
    sources: dict[str, Source],
) -> list[Answer]:
    """DSP's predict stage on the tree's relevant passages (``planning`` as above)."""
    return _predict(
        client,
        [t.question for t in trees],
        [t.used() for t in trees],
        [_copy(usage) for usage in planning],
        [t.retrieved() for t in trees],
        DSP_WITH_CONTRE,
        retrieval,
        answering,
        sources,
    )
