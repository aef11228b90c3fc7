"""InsightGen's RQ5 baselines (Table 4): advanced RAG pipelines that choose the context for the
same insight prompts, at InsightGen's chunk budget (as many ``section`` chunks as InsightGen's
neighbourhood selection passed for the question), so that only the retrieval differs.

The paper builds them from the core components of published pipelines; so do we:

- ``iterative_rag``: query decomposition, then multi-pass self-refinement (Asai et al., 2023;
  Chen et al., 2025): the sub-queries retrieve, the model reads what was found and writes queries
  for what is missing, those retrieve; ``REFINE_PASSES`` passes.
- ``multi_query_rag``: query reformulations (Ma et al., 2023), each retrieving, the union re-ranked
  by the model (``rate_passages``).
- ``agentic_rag``: all of them in one pipeline: a HyDE-style hypothetical passage embedded as a
  query (Gao et al., 2023), reformulations (Jagerman et al., 2023), decomposition (Ammann et al.,
  2025), one refinement pass, and the model's re-rank.

Retrieval is cosine over the section chunks' vectors, ``PER_QUERY`` chunks a query; merged lists
keep each query's order, round-robin, so every query contributes. Every model call is a task with
an offline stand-in (key phrases of the question and answer, the answer itself as the hypothetical
passage), so the baselines run, labelled, without a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from insight_assets.core.embedding.vectors import nearest_rows
from insight_assets.core.startup.lazy import LazyModel, np

from ...extractive import terms
from ...keyphrases import rake_keyphrases
from ...llm import LLMClient, Task, list_problems, narrowed, register_task
from ...retrieval import Hit
from ...retrieval.rerank import rerank
from .contexts import MethodContext

if TYPE_CHECKING:
    from insight_assets.core.retrieval.index import ChunkRecord

    from ...curation import QAPair

ITERATIVE_RAG, MULTI_QUERY_RAG, AGENTIC_RAG = "iterative_rag", "multi_query_rag", "agentic_rag"
RAG_METHODS = (ITERATIVE_RAG, MULTI_QUERY_RAG, AGENTIC_RAG)
MAX_QUERIES = 3  # sub-queries, reformulations or refined queries per call
PER_QUERY = 5  # chunks each query retrieves before merging
REFINE_PASSES = 2  # iterative_rag: decomposition's pass, then one refinement pass
PASSAGE_PREVIEW_WORDS = 60  # of each found passage, shown to the refinement prompt


class Queries(LazyModel):
    queries: list[str] = Field(default_factory=list, max_length=MAX_QUERIES * 2)


class HypotheticalPassage(LazyModel):
    text: str = Field(min_length=1)


def _phrase_queries(question: str, answer: str, max_queries: int, exclude: Sequence[str] = ()) -> Queries:
    """Offline: the question's and answer's key phrases, each with the question's topic."""
    asked = set(terms(question))
    phrases = rake_keyphrases(f"{question} {answer}", limit=max_queries * 3, exclude=set(exclude))
    found = [p for p in phrases if set(terms(p)) - asked] or phrases
    return Queries(queries=[f"{phrase} {question}" for phrase in found[:max_queries]])


def _decompose_offline(question: str, answer: str, max_queries: int) -> Queries:
    return _phrase_queries(question, answer, max_queries)


def _reformulate_offline(question: str, answer: str, max_queries: int) -> Queries:
    phrases = rake_keyphrases(question, limit=max_queries) or [question]
    return Queries(
        queries=[" ".join(phrases[i:] + phrases[:i]) for i in range(min(max_queries, len(phrases)))]
    )


def _hypothetical_offline(question: str, answer: str) -> HypotheticalPassage:
    return HypotheticalPassage(text=answer or question)


def _refine_offline(question: str, answer: str, passages: Sequence[str], max_queries: int) -> Queries:
    seen = [t for text in passages for t in terms(text)]
    return _phrase_queries(question, answer, max_queries, exclude=seen)


def _check_queries(output: Queries, inputs: Mapping[str, Any]) -> list[str]:
    return list_problems(output.queries, inputs["max_queries"], "query")


def _query_task(name: str, template: str, offline: Callable[..., Queries], description: str) -> Task[Queries]:
    return register_task(
        Task(
            name=name,
            version=1,
            template=template,
            output_model=Queries,
            offline=offline,
            input_defaults={"max_queries": MAX_QUERIES},
            format_inputs=lambda inputs: {
                "question": str(inputs["question"]),
                "answer": str(inputs["answer"]),
                "max_queries": str(inputs["max_queries"]),
                "passages": "\n\n".join(f"- {p}" for p in inputs.get("passages", ())) or "(none)",
            },
            check_output=_check_queries,
            decoding_schema=lambda inputs: narrowed(
                Queries.model_json_schema(), queries={"maxItems": int(inputs["max_queries"])}
            ),
            temperature=0.0,
            max_tokens=300,
            expected_output_tokens=80,
            description=description,
        )
    )


RAG_DECOMPOSE = _query_task(
    "rag_decompose", "rag_decompose.v1.txt", _decompose_offline, "RAG baselines: the question as sub-queries."
)
RAG_REFORMULATE = _query_task(
    "rag_reformulate",
    "rag_reformulate.v1.txt",
    _reformulate_offline,
    "RAG baselines: the question reformulated as other queries.",
)
RAG_REFINE = _query_task(
    "rag_refine_query",
    "rag_refine_query.v1.txt",
    _refine_offline,
    "RAG baselines: queries for what the passages found so far miss (self-refinement).",
)
RAG_HYPOTHETICAL = register_task(
    Task(
        name="rag_hypothetical_passage",
        version=1,
        template="rag_hypothetical_passage.v1.txt",
        output_model=HypotheticalPassage,
        offline=_hypothetical_offline,
        text_field="text",
        temperature=0.0,
        max_tokens=200,
        expected_output_tokens=120,
        description="Agentic RAG: a hypothetical passage answering the question, embedded as a query (HyDE).",
    )
)
RAG_TASKS = (RAG_DECOMPOSE, RAG_REFORMULATE, RAG_REFINE, RAG_HYPOTHETICAL)


def _merge(rankings: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Round-robin over the rankings, each chunk once, up to ``limit``."""
    merged: list[int] = []
    for position in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if position < len(ranking) and ranking[position] not in merged:
                merged.append(ranking[position])
    return merged[:limit]


class _Searcher:
    """Cosine search over the section chunks, queries embedded in batches."""

    def __init__(
        self, chunks: Sequence[ChunkRecord], vectors: np.ndarray, embed: Callable[[list[str]], np.ndarray]
    ):
        self.chunks, self.vectors, self.embed = chunks, vectors, embed

    def search(self, queries: Sequence[str]) -> list[list[int]]:
        if not queries:
            return []
        query_vectors = np.asarray(self.embed(list(queries)), dtype=np.float32)
        return [list(nearest_rows(self.vectors, vector, PER_QUERY)) for vector in query_vectors]

    def hits(self, positions: Sequence[int]) -> list[Hit]:
        return [
            Hit(
                chunk_id=self.chunks[i].chunk_id,
                doc_id=self.chunks[i].doc_id,
                title="",
                page_start=self.chunks[i].page_start,
                page_end=self.chunks[i].page_end,
                text=self.chunks[i].text,
                score=0.0,
                mode="dense",
                found_by=("dense",),
            )
            for i in positions
        ]


def _queries(client: LLMClient, task: Task[Queries], inputs: list[dict[str, Any]]) -> list[list[str]]:
    """Each input's queries; a failed call gives none (the question itself still retrieves)."""
    batch = client.run_many(task, inputs)
    return [[q.strip() for q in item.value.queries if q.strip()] if item.ok else [] for item in batch.items]


def _context(
    method: str, pair: QAPair, chunks: Sequence[ChunkRecord], positions: Sequence[int]
) -> MethodContext:
    chosen = [chunks[i] for i in positions]
    return MethodContext(
        method=method,
        question_id=pair.question_id,
        chunk_ids=tuple(c.chunk_id for c in chosen),
        texts=tuple(c.text for c in chosen),
        tokens=sum(c.tokens for c in chosen),
        truncated=len(chosen) < len(chunks),
    )


def _reranked(
    client: LLMClient, searcher: _Searcher, question: str, positions: Sequence[int], k: int
) -> list[int]:
    """``positions`` re-ranked by the model for ``question``, the best ``k``."""
    hits = rerank(question, searcher.hits(positions), k, "llm", llm=client)
    index = {chunk.chunk_id: i for i, chunk in enumerate(searcher.chunks)}
    return [index[hit.chunk_id] for hit in hits]


def _each_reranked(
    client: LLMClient,
    searcher: _Searcher,
    pairs: Sequence[QAPair],
    pools: Sequence[Sequence[int]],
    budgets: Mapping[str, int],
) -> list[list[int]]:
    """Each pair's pool re-ranked for its question (``_reranked``), the pairs' rankings side by side."""
    return client.side_by_side(
        [
            lambda pair=pair, pool=pool: _reranked(
                client, searcher, pair.question, pool, budgets[pair.question_id]
            )
            for pair, pool in zip(pairs, pools, strict=True)
        ]
    )


def rag_contexts(
    client: LLMClient,
    pairs: Sequence[QAPair],
    budgets: Mapping[str, int],
    chunks: Sequence[ChunkRecord],
    vectors: np.ndarray,
    embed: Callable[[list[str]], np.ndarray],
    methods: Sequence[str],
) -> list[MethodContext]:
    """Each of ``methods`` (of ``RAG_METHODS``)'s context for each pair, ``budgets[question_id]``
    chunks (InsightGen's count for the question)."""
    searcher = _Searcher(chunks, vectors, embed)
    asked = [{"question": p.question, "answer": p.answer} for p in pairs]
    wanted = set(methods)
    decomposed = _queries(client, RAG_DECOMPOSE, asked) if wanted & {ITERATIVE_RAG, AGENTIC_RAG} else []
    reformulated = _queries(client, RAG_REFORMULATE, asked) if wanted & {MULTI_QUERY_RAG, AGENTIC_RAG} else []
    hypothetical = []
    if AGENTIC_RAG in wanted:
        batch = client.run_many(RAG_HYPOTHETICAL, asked)
        hypothetical = [[item.value.text] if item.ok else [] for item in batch.items]
    contexts: dict[tuple[str, str], MethodContext] = {}
    if ITERATIVE_RAG in wanted:
        found = [
            _merge(searcher.search([p.question, *qs]), len(chunks))
            for p, qs in zip(pairs, decomposed, strict=True)
        ]
        for _ in range(REFINE_PASSES - 1):
            refined = _queries(client, RAG_REFINE, _refine_inputs(pairs, found, chunks))
            found = [
                _merge([f, *searcher.search(qs)], len(chunks)) for f, qs in zip(found, refined, strict=True)
            ]
        for pair, positions in zip(pairs, found, strict=True):
            contexts[(ITERATIVE_RAG, pair.question_id)] = _context(
                ITERATIVE_RAG, pair, chunks, positions[: budgets[pair.question_id]]
            )
    if MULTI_QUERY_RAG in wanted:
        pools = [
            _merge(searcher.search([p.question, *qs]), len(chunks))
            for p, qs in zip(pairs, reformulated, strict=True)
        ]
        for pair, chosen in zip(pairs, _each_reranked(client, searcher, pairs, pools, budgets), strict=True):
            contexts[(MULTI_QUERY_RAG, pair.question_id)] = _context(MULTI_QUERY_RAG, pair, chunks, chosen)
    if AGENTIC_RAG in wanted:
        first = [
            _merge(searcher.search([p.question, *h, *r, *d]), len(chunks))
            for p, h, r, d in zip(pairs, hypothetical, reformulated, decomposed, strict=True)
        ]
        refined = _queries(client, RAG_REFINE, _refine_inputs(pairs, first, chunks))
        merged = [
            _merge([pool, *searcher.search(qs)], len(chunks)) for pool, qs in zip(first, refined, strict=True)
        ]
        for pair, chosen in zip(pairs, _each_reranked(client, searcher, pairs, merged, budgets), strict=True):
            contexts[(AGENTIC_RAG, pair.question_id)] = _context(AGENTIC_RAG, pair, chunks, chosen)
    return [contexts[(method, pair.question_id)] for pair in pairs for method in methods]


def _refine_inputs(
    pairs, found: Sequence[Sequence[int]], chunks: Sequence[ChunkRecord]
) -> list[dict[str, Any]]:
    return [
        {
            "question": pair.question,
            "answer": pair.answer,
            "passages": [
                " ".join(chunks[i].text.split()[:PASSAGE_PREVIEW_WORDS]) for i in positions[: PER_QUERY * 2]
            ],
        }
        for pair, positions in zip(pairs, found, strict=True)
    ]


def with_budgets(contexts: Sequence[MethodContext]) -> dict[str, int]:
    """InsightGen's chunk count per question that it read anything for: the baselines' budget (a
    question with an empty answer has no neighbourhood, and its baselines read nothing either)."""
    return {c.question_id: len(c.chunk_ids) for c in contexts if c.method == "insightgen" and c.chunk_ids}


__all__ = ["RAG_METHODS", "RAG_TASKS", "rag_contexts", "with_budgets"]
