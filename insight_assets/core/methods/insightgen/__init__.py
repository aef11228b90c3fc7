"""InsightGen: related insights for a question-answer pair, from the theme graph (and its baselines).

Given a question, its answer and context passages, a method writes up to five *related insights*:
short notes that add to the answer without repeating it (InsightGen §4.2). The five methods
(§5.1) differ in the context they select and in the prompting:

- ``insightgen``, ``cot`` and ``vector_topk_cot`` use the two-step chain of thought: task
  ``infer_intent`` infers the asker's intent, persona and goals from the question and answer, then
  task ``generate_insights`` writes the insights from question, answer, intent and passages, with
  the seed list of insight types and self-assessed relevance, novelty, usefulness and intent
  alignment (0-5). The prompts are identical across the three, as in the paper.
- ``direct`` and ``vector_topk`` use the single prompt ``direct_insights``, which states the
  requirements (relevance, novelty, diversity, no repetition of the answer).

Otherwise the methods differ only in the passages they read (``contexts.py``): the answer's
theme-graph neighbourhood (``insightgen``), the whole collection spread or truncated to the same
token budget (``direct``, ``cot``), the chunks nearest the question (``vector_topk*``). RQ5's
advanced RAG baselines (``rag_baselines.py``: ``iterative_rag``, ``multi_query_rag``,
``agentic_rag``) choose as many chunks as InsightGen did with decomposition, reformulation, HyDE,
self-refinement and the model's re-rank, and use the chain-of-thought prompts.
Generation uses the paper's settings: temperature 0.7, max_tokens 4000 (Appendix C).

One entry, ``run_insightgen``, does all of it for a batch of pairs: each method's context
(``contexts.py``), then the insights (``runs.py``, through the tasks of ``tasks.py``). The
``insights`` asset, the dry-run estimate and ``insight-assets ask`` all call it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.chunking import SECTION

from ...llm.spending import Spent, spending
from . import store  # declares the method's warehouse tables
from .baseline_documents import BaselineDocuments, documents_read, grouped, of_documents
from .contexts import MethodContext, build_contexts
from .rag_baselines import RAG_METHODS, RAG_TASKS, rag_contexts, with_budgets
from .runs import FAILED, OK, SKIPPED, InsightRun, InsightsOutcome, run_insight_methods
from .schemas import (
    DEFAULT_MAX_INSIGHTS,
    INSIGHT_METHODS,
    INSIGHT_TYPES,
    ContextPassage,
    Insight,
    InsightSet,
    UserIntent,
    insight_text,
    uses_chain_of_thought,
)
from .selection import ClusterIndex
from .settings import InsightsSettings, JudgeSettings
from .tasks import (
    DIRECT_INSIGHTS,
    GENERATE_INSIGHTS,
    INFER_INTENT,
    check_insights,
    direct_insights_inputs,
    generate_insights,
    generate_insights_inputs,
    infer_intent_inputs,
)

if TYPE_CHECKING:
    from insight_assets.core.retrieval.index import CollectionIndex
    from insight_assets.core.startup.lazy import np
    from insight_assets.core.storage.stores import VectorStore, Warehouse

    from ...curation import QAPair
    from ...llm import LLMClient

# The chunk profile InsightGen clusters and reads: about 2,000 tokens a chunk (§4.1).
PROFILE = SECTION
TASKS = (INFER_INTENT, GENERATE_INSIGHTS, DIRECT_INSIGHTS, *RAG_TASKS)


@dataclass(frozen=True)
class InsightGenResult:
    contexts: list[MethodContext]  # one per method and question
    outcome: InsightsOutcome  # the runs (insights or why none), the inferred intents
    # The RAG baselines' retrieval cost per question (``Spent.per``): calls, tokens, seconds.
    retrieval: dict[str, dict[str, float]] = field(default_factory=dict)
    # The documents each question's baselines read (``baseline_documents.py``).
    documents: dict[str, BaselineDocuments] = field(default_factory=dict)


def load_insightgen_index(
    warehouse: Warehouse, vectors: VectorStore, collection: str, variant: str
) -> tuple[CollectionIndex, ClusterIndex]:
    """The collection's InsightGen chunks and vectors, and its theme graph ready for selection;
    raises ``IndexMissing`` saying what to build first."""
    return store.load_theme_index(warehouse, vectors, collection, variant, PROFILE)


def run_insightgen(
    client: LLMClient,
    pairs: Sequence[QAPair],
    index: CollectionIndex,
    cluster_index: ClusterIndex,
    embed: Callable[[list[str]], np.ndarray],
    settings: InsightsSettings,
    earlier: Mapping[str, BaselineDocuments] | None = None,
) -> InsightGenResult:
    """Every method's insights for every pair: each method's context, then its insights, the
    chain-of-thought methods sharing one inferred intent per question. A failed call fails only
    its own (method, question); ``LLMError``s that would fail every call alike are raised.
    ``earlier``: the documents each question's baselines read at the last build
    (``baseline_documents.py``)."""
    # InsightGen's own selection always runs: its chunk count is the RAG baselines' budget.
    local = build_contexts(
        pairs, index.chunks, index.vectors, cluster_index, embed, ["insightgen", *settings.methods], settings
    )
    present = frozenset(chunk.doc_id for chunk in index.chunks)
    read = documents_read(
        pairs,
        {c.question_id: c for c in local if c.method == "insightgen"},
        earlier or {},
        present,
        settings.baseline_documents,
    )
    groups = {
        docs: (members, *of_documents(index.chunks, index.vectors, docs))
        for docs, members in grouped(pairs, read).items()
    }
    by_key = {(c.method, c.question_id): c for c in local}
    for docs, (members, chunks, vectors) in groups.items():
        if docs != present:  # the baselines of unchanged questions read what they read before
            kept = build_contexts(members, chunks, vectors, cluster_index, embed, settings.methods, settings)
            by_key.update({(c.method, c.question_id): c for c in kept if c.method != "insightgen"})
    budgets = with_budgets(local)
    retrieval: dict[str, Spent] = {}

    def retrieve(method: str) -> list[MethodContext]:
        # Each method's own tally: it is charged the calls its retrieval needs.
        found: list[MethodContext] = []
        with spending() as retrieval[method]:
            for members, chunks, vectors in groups.values():
                chosen = [p for p in members if p.question_id in budgets]
                found += rag_contexts(client, chosen, budgets, chunks, vectors, embed, [method])
        return found

    rag_methods = [m for m in settings.methods if m in RAG_METHODS]
    for found in client.side_by_side([lambda method=method: retrieve(method) for method in rag_methods]):
        by_key.update({(c.method, c.question_id): c for c in found})
    contexts = [
        by_key.get((method, pair.question_id)) or MethodContext(method, pair.question_id, (), (), 0)
        for pair in pairs
        for method in settings.methods
    ]
    outcome = run_insight_methods(
        client, pairs, contexts, max_insights=settings.max_insights, source_labels=index.source_labels
    )
    asked = sum(1 for pair in pairs if pair.question_id in budgets)
    return InsightGenResult(
        contexts, outcome, {method: spent.per(asked) for method, spent in retrieval.items()}, read
    )


__all__ = [
    "DEFAULT_MAX_INSIGHTS",
    "DIRECT_INSIGHTS",
    "FAILED",
    "GENERATE_INSIGHTS",
    "INFER_INTENT",
    "INSIGHT_METHODS",
    "INSIGHT_TYPES",
    "OK",
    "PROFILE",
    "SKIPPED",
    "TASKS",
    "ContextPassage",
    "Insight",
    "InsightGenResult",
    "InsightRun",
    "InsightSet",
    "InsightsOutcome",
    "InsightsSettings",
    "JudgeSettings",
    "MethodContext",
    "UserIntent",
    "check_insights",
    "direct_insights_inputs",
    "generate_insights",
    "generate_insights_inputs",
    "infer_intent_inputs",
    "insight_text",
    "load_insightgen_index",
    "run_insightgen",
    "store",
    "uses_chain_of_thought",
]
