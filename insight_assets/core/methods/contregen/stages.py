"""ConTReGen's stages, one per asset (see ``core/runtime/stage.py``): the work the build, the dry run and
``ask`` share, and their declarations (``STAGES``); their settings models are in ``settings.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.runtime.stage import Check, CollectionScope, NothingToDo, Stage

from ...citations.paragraphs import collection_paragraphs
from ...curation.answers import reference_answers
from ...curation.records import USER, Question, question_id
from ...curation.stages import ANSWERS as CURATED_ANSWERS
from ...curation.stages import QUESTIONS as CURATED_QUESTIONS
from ...curation.stages import answers_of, questions_of
from ...retrieval.citing import Source, load_sources
from . import (
    PROFILE,
    grow_trees,
    outputs,
    references,
    store,
    write_answers,
)
from .scores import ScoredAnswer, score_answers
from .settings import AnswersSettings, ScoresSettings, TreesSettings
from .tasks import JUDGE_TASKS, TREE_TASKS, WRITE_TASKS

if TYPE_CHECKING:
    from .schemas import Answer, Tree

TREES, ANSWERS, SCORES = "contregen_trees", "contregen_answers", "contregen_scores"
# The passages the trees retrieved (the reader's notes too, when a retriever offers them).
TREE_SOURCES = "contregen_tree_sources"


def trees(scope: CollectionScope, settings: TreesSettings) -> list[Tree]:
    """§2.1: a tree per question (the first ``max_questions`` of the ``questions`` source, then
    ``reference_questions`` reference paragraphs' topics), planned top-down and verified."""
    asked = references.questions_to_explore(
        questions_of(scope),
        settings.questions,
        settings.max_questions,
        collection_paragraphs(scope.warehouse, scope.collection),
        settings.reference_questions,
    )
    if not asked:
        raise NothingToDo(f"no {settings.questions} question: `generated_questions` holds none to explore.")
    grown, found = grow_trees(scope.client, scope.retriever(PROFILE), asked, settings)
    scope.plan(TREE_SOURCES, found)
    scope.plan(TREES, grown)
    return grown


@dataclass(frozen=True)
class Written:
    trees: list[Tree]
    sources: dict[str, Source]  # the collection's passages by chunk id
    answers: list[Answer]  # ConTReGen's and the baselines'


def answers(scope: CollectionScope, settings: AnswersSettings) -> Written:
    """§2.2: each tree synthesized bottom-up into a cited answer; the baselines' beside it,
    retrieving as the trees were built to."""
    grown = scope.upstream(TREES, lambda: store.load_trees(scope.warehouse, scope.collection))
    if not grown:
        raise NothingToDo("no trees: `contregen_trees` stored none.")
    retriever = scope.retriever(PROFILE)
    sources = {
        **load_sources(scope.warehouse, scope.collection, PROFILE),
        **scope.upstream(TREE_SOURCES, dict),
    }
    built = scope.built_settings(TREES, TreesSettings)
    written = write_answers(scope.client, retriever, grown, sources, built, settings)
    if not any(answer.text for answer in written):
        raise NothingToDo(f"no answer was written: {written[0].error if written else 'no trees'}")
    scope.plan(ANSWERS, written)
    return Written(grown, sources, written)


def answer_for(scope: CollectionScope, question: str) -> Written:
    """ConTReGen for one question: the trees and answers stages on a scope given it, with the
    settings the collection was built with (its own answer, no baselines or reference paragraphs)."""
    asked = Question(question_id(question, ()), question, (), None, USER)
    scope.give(CURATED_QUESTIONS, [asked])
    built = scope.built_settings(TREES, TreesSettings)
    trees(
        scope, built.model_copy(update={"questions": "all", "max_questions": None, "reference_questions": 0})
    )
    return answers(
        scope, scope.built_settings(ANSWERS, AnswersSettings).model_copy(update={"baselines": False})
    )


@dataclass(frozen=True)
class Scored:
    trees: list[Tree]
    answers: list[Answer]
    sources: dict[str, Source]
    scored: list[ScoredAnswer]


def score(scope: CollectionScope, settings: ScoresSettings) -> Scored:
    """Each answer scored against the collection's reference answers, related-work paragraphs and
    passage themes."""
    warehouse, collection = scope.warehouse, scope.collection
    grown = scope.upstream(TREES, lambda: store.load_trees(warehouse, collection))
    written = scope.upstream(ANSWERS, lambda: store.load_answers(warehouse, collection))
    if not written or not grown:
        raise NothingToDo("no answers to score: `contregen_answers` stored none.")
    sources = load_sources(warehouse, collection, PROFILE)
    scored = score_answers(
        scope.client,
        [tree.question for tree in grown],
        written,
        {chunk_id: source.doc_id for chunk_id, source in sources.items()},
        reference_answers(answers_of(scope)),
        references.reference_texts(collection_paragraphs(warehouse, collection)),
        references.passage_themes(warehouse, collection),
    )
    return Scored(grown, written, sources, scored)


STAGES = (
    Stage(
        TREES,
        "contregen",
        "Each question's tree (one row per node): sub-questions planned from the passages, kept or "
        "pruned by the two-step verification (with the verdicts and reasons), the rewritten search "
        "queries and the passages each retrieved, with their scores and relevance verdicts.",
        TreesSettings,
        reads=(CURATED_QUESTIONS, "chunk_embeddings", "citations"),
        run=trees,
        output=outputs.trees,
        tasks=TREE_TASKS,
        kinds=("duckdb", "lancedb"),
        embedder=True,
    ),
    Stage(
        ANSWERS,
        "contregen",
        "Each tree synthesized bottom-up into a cited long-form answer (citations rendered as title "
        "and pages), and the baselines' answers to the same questions, with the passages each method "
        "retrieved and its model calls and tokens.",
        AnswersSettings,
        reads=(TREES,),
        run=answers,
        output=outputs.answers,
        tasks=WRITE_TASKS,
        checks=(
            Check(
                outputs.CITE_RETRIEVED,
                "Every citation of every answer is a passage its writer was given; an invented alias, or a "
                "writer rejected for citing sources it was not given, fails it.",
            ),
            Check(
                outputs.NOT_TRUNCATED,
                "No answer was cut off at max_tokens (after one retry with twice the room).",
            ),
        ),
        embedder=True,
    ),
    Stage(
        SCORES,
        "contregen",
        "Retrieval recall of each question's gold documents (its combination) for ConTReGen (the "
        "whole tree) and the baselines, with chance; facet coverage of the gold papers' themes; the "
        "judge's coverage and relevance; for reference questions ROUGE-L and NLI entailment and "
        "contradiction against the paragraph; model calls, tokens and seconds per question. Table, "
        "chart and data/reports/<collection>/contregen_report.md.",
        ScoresSettings,
        reads=(ANSWERS, CURATED_ANSWERS, "theme_graph"),
        run=score,
        output=outputs.scores_output,
        tasks=JUDGE_TASKS,
        judges=ScoresSettings.panel,
    ),
)
