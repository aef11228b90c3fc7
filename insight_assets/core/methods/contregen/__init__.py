"""ConTReGen (Roy et al., EMNLP Findings 2024): tree-structured retrieval and bottom-up synthesis
for long-form answers.

For a question (``tree.py``):

1. *top-down planning and retrieval* (§2.1): the question retrieves its top-k passages (``xsum``
   chunks, k = 5, §4.3); a planner proposes up to 5 sub-questions from the question and those
   passages (Appendix A.1); *two-step verification* (Figure 5): (i) one call judges whether each
   sub-question of the plan is needed and rewrites each needed one as a self-contained search
   query, (ii) the query retrieves its k passages and one call judges each passage's relevance to
   the *original* question; irrelevant passages are dropped, a sub-question left with none is
   pruned. Kept sub-questions are planned again until the planner needs no further plan or the
   depth limit (2, §4.3) is reached. Every decision stays in the tree, with its reason.
2. *bottom-up synthesis* (§2.2): leaves summarize their passages for their sub-question, inner
   nodes merge their children's summaries with their own passages, and the root writes the answer
   (about 300 words). Citations are aliases in each prompt and chunk ids in storage, so they
   survive every level to the root. Each prompt is cut to ``context_tokens`` by token counts.

Planning and verification run at temperature 0, synthesis at 0.3 (the paper gives neither).
``baselines.py`` answers the same questions with RetGen, a budget-matched RetGen and IterRetGen,
``multihop.py`` with Self-Ask, SearChain and DSP, and the two ablations (ConTRe without bottom-up
synthesis, DSP with ConTRe's passages); ``scores.py`` measures recall of the questions' gold documents and has the judge rate the answers.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...chunking import PASSAGE
from ...retrieval.search import RETRIEVAL_MODES
from . import multihop, references, store  # store declares the method's warehouse tables
from .baselines import iterative, one_retrieval, tree_answer
from .schemas import (
    ANSWER_WORDS,
    CONTEXT_TOKENS,
    CONTREGEN,
    ITERATIONS,
    ITERATIVE,
    MAX_DEPTH,
    MAX_SUB_QUESTIONS,
    METHODS,
    NEED_SIMILARITY,
    RELEVANCE_RATIO,
    REPEAT_SIMILARITY,
    RETGEN,
    RETGEN_BUDGET,
    TOP_K,
    Answer,
    Tree,
    TreeQuestion,
)
from .scores import score_answers
from .tasks import JUDGE_TASKS, TREE_TASKS, WRITE_TASKS
from .tree import explore, synthesize

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever
    from ...retrieval.citing import Source

PROFILE = PASSAGE
TASKS = TREE_TASKS + WRITE_TASKS + JUDGE_TASKS
# The smallest prompt budget that holds k passages, five child summaries and the template.
MIN_CONTEXT_TOKENS = 2000


@dataclass(frozen=True)
class ConTReGenSettings:
    """The paper's defaults (k = 5, depth 2, 5 sub-questions, 5 iterations for IterRetGen), the
    issue's where the paper is silent, and the offline verifier's thresholds."""

    top_k: int = TOP_K
    max_depth: int = MAX_DEPTH
    max_sub_questions: int = MAX_SUB_QUESTIONS
    retrieval_mode: str = "dense"
    iterations: int = ITERATIONS
    answer_words: int = ANSWER_WORDS
    context_tokens: int = CONTEXT_TOKENS
    need_similarity: float = NEED_SIMILARITY
    repeat_similarity: float = REPEAT_SIMILARITY
    relevance_ratio: float = RELEVANCE_RATIO

    def __post_init__(self) -> None:
        if self.retrieval_mode not in RETRIEVAL_MODES:
            raise ValueError(
                f"retrieval_mode must be one of {', '.join(RETRIEVAL_MODES)}, not {self.retrieval_mode!r}"
            )
        for name in ("top_k", "max_sub_questions", "iterations", "answer_words"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.max_depth < 0:
            raise ValueError("max_depth must be 0 (no sub-questions) or more")
        if self.context_tokens < MIN_CONTEXT_TOKENS:
            raise ValueError(f"context_tokens must be at least {MIN_CONTEXT_TOKENS}")
        for name in ("need_similarity", "repeat_similarity", "relevance_ratio"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie between -1 and 1")


def grow_trees(
    client: LLMClient,
    retriever: Retriever,
    questions: Sequence[TreeQuestion],
    settings: ConTReGenSettings = ConTReGenSettings(),
) -> tuple[list[Tree], dict[str, Source]]:
    """Stage 1 for every question: its tree, and the retrieved chunks as sources."""
    return explore(client, retriever, questions, settings)


def write_answers(
    client: LLMClient,
    retriever: Retriever,
    trees: Sequence[Tree],
    sources: dict[str, Source],
    settings: ConTReGenSettings = ConTReGenSettings(),
    baselines: bool = True,
) -> list[Answer]:
    """Stage 2 for every tree (its answer), and the baselines' answers to the same questions."""
    planning = multihop.planning_usage(trees)
    questions = [tree.question for tree in trees]
    # ConTReGen's seconds are its synthesis' (the tree's planning ran in the trees' asset).
    answers = _timed(
        lambda: (synthesize(client, trees, sources, settings), [tree_answer(t) for t in trees])[1]
    )
    if baselines:
        budgets = [max(len(tree.retrieved()), settings.top_k) for tree in trees]
        runs = [
            lambda: one_retrieval(
                client, retriever, questions, [settings.top_k] * len(trees), RETGEN, settings, sources
            ),
            lambda: one_retrieval(client, retriever, questions, budgets, RETGEN_BUDGET, settings, sources),
            lambda: iterative(client, retriever, questions, settings, sources),
            lambda: multihop.self_ask(client, retriever, questions, settings, sources),
            lambda: multihop.searchain(client, retriever, questions, settings, sources),
            lambda: multihop.dsp(client, retriever, questions, settings, sources),
            lambda: multihop.contre_no_synthesis(client, trees, planning, settings, sources),
            lambda: multihop.dsp_with_contre(client, trees, planning, settings, sources),
        ]
        for run in runs:
            answers += _timed(run)
    return answers


__all__ = [
    "CONTREGEN",
    "ITERATIVE",
    "METHODS",
    "PROFILE",
    "RETGEN",
    "RETGEN_BUDGET",
    "TASKS",
    "Answer",
    "ConTReGenSettings",
    "Tree",
    "TreeQuestion",
    "grow_trees",
    "references",
    "score_answers",
    "store",
    "write_answers",
]


def _timed(run: Callable[[], list[Answer]]) -> list[Answer]:
    """``run``'s answers, each with the run's wall seconds per answer."""
    started = time.perf_counter()
    answers = run()
    each = round((time.perf_counter() - started) / max(len(answers), 1), 3)
    return [dataclasses.replace(answer, seconds=each) for answer in answers]
