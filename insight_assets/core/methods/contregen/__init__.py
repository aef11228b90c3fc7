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
import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.chunking import PASSAGE

from . import multihop, references, store  # store declares the method's warehouse tables
from .baselines import iterative, one_retrieval, tree_answer
from .schemas import CONTREGEN, ITERATIVE, METHODS, RETGEN, RETGEN_BUDGET, Answer, Tree, TreeQuestion
from .scores import score_answers
from .settings import AnswersSettings, TreesSettings
from .tasks import JUDGE_TASKS, TREE_TASKS, WRITE_TASKS
from .tree import explore, synthesize

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever
    from ...retrieval.citing import Source

PROFILE = PASSAGE
TASKS = TREE_TASKS + WRITE_TASKS + JUDGE_TASKS


def grow_trees(
    client: LLMClient,
    retriever: Retriever,
    questions: Sequence[TreeQuestion],
    settings: TreesSettings,
) -> tuple[list[Tree], dict[str, Source]]:
    """Stage 1 for every question: its tree, and the retrieved chunks as sources."""
    return explore(client, retriever, questions, settings)


def write_answers(
    client: LLMClient,
    retriever: Retriever,
    trees: Sequence[Tree],
    sources: dict[str, Source],
    retrieval: TreesSettings,
    answers: AnswersSettings,
) -> list[Answer]:
    """Stage 2 for every tree (its answer), and with ``answers.baselines`` the baselines' answers to
    the same questions, retrieving as the trees were built to (``retrieval``)."""
    planning = multihop.planning_usage(trees)
    questions = [tree.question for tree in trees]
    # ConTReGen's seconds are its synthesis' (the tree's planning ran in the trees' asset).
    written = _timed(
        lambda: (synthesize(client, trees, sources, answers), [tree_answer(t) for t in trees])[1]
    )
    if answers.baselines:
        budgets = [max(len(tree.retrieved()), retrieval.top_k) for tree in trees]
        top_k = [retrieval.top_k] * len(trees)
        runs = [
            lambda: one_retrieval(client, retriever, questions, top_k, RETGEN, retrieval, answers, sources),
            lambda: one_retrieval(
                client, retriever, questions, budgets, RETGEN_BUDGET, retrieval, answers, sources
            ),
            lambda: iterative(client, retriever, questions, retrieval, answers, sources),
            lambda: multihop.self_ask(client, retriever, questions, retrieval, answers, sources),
            lambda: multihop.searchain(client, retriever, questions, retrieval, answers, sources),
            lambda: multihop.dsp(client, retriever, questions, retrieval, answers, sources),
            lambda: multihop.contre_no_synthesis(client, trees, planning, answers, sources),
            lambda: multihop.dsp_with_contre(client, trees, planning, retrieval, answers, sources),
        ]
        # The baselines do not read each other's answers (what they retrieve only adds to
        # ``sources``): they are written side by side, each timed on its own.
        for answers_of_one in client.side_by_side([functools.partial(_timed, run) for run in runs]):
            written += answers_of_one
    return written


__all__ = [
    "CONTREGEN",
    "ITERATIVE",
    "METHODS",
    "PROFILE",
    "RETGEN",
    "RETGEN_BUDGET",
    "TASKS",
    "Answer",
    "AnswersSettings",
    "Tree",
    "TreeQuestion",
    "TreesSettings",
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
