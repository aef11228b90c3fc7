"""ConTReGen's stages, one per asset (see ``core/stage.py``): the work the build and the dry run share."""

from __future__ import annotations

from dataclasses import dataclass

from ...citations.paragraphs import collection_paragraphs
from ...curation.answers import reference_answers
from ...curation.stages import answers_of, questions_of
from ...retrieval.citing import Source, load_sources
from ...stage import CollectionScope, NothingToDo
from . import PROFILE, ConTReGenSettings, grow_trees, references, store, write_answers
from .schemas import Answer, Tree
from .scores import ScoredAnswer, score_answers

TREES, ANSWERS = "contregen_trees", "contregen_answers"


def trees(
    scope: CollectionScope,
    settings: ConTReGenSettings,
    which: str,
    max_questions: int | None,
    reference_questions: int,
) -> list[Tree]:
    """§2.1: a tree per question (the first ``max_questions`` of the ``which`` source, then
    ``reference_questions`` reference paragraphs' topics), planned top-down and verified."""
    asked = references.questions_to_explore(
        questions_of(scope),
        which,
        max_questions,
        collection_paragraphs(scope.warehouse, scope.collection),
        reference_questions,
    )
    if not asked:
        raise NothingToDo(f"no {which} question: `generated_questions` holds none to explore.")
    grown, _ = grow_trees(scope.client, scope.retriever(PROFILE), asked, settings)
    scope.plan(TREES, grown)
    return grown


@dataclass(frozen=True)
class Written:
    trees: list[Tree]
    sources: dict[str, Source]  # the collection's passages by chunk id
    answers: list[Answer]  # ConTReGen's and the baselines'


def answers(scope: CollectionScope, settings: ConTReGenSettings, baselines: bool) -> Written:
    """§2.2: each tree synthesized bottom-up into a cited answer; the baselines' beside it."""
    grown = scope.upstream(TREES, lambda: store.load_trees(scope.warehouse, scope.collection))
    if not grown:
        raise NothingToDo("no trees: `contregen_trees` stored none.")
    retriever = scope.retriever(PROFILE)
    sources = load_sources(scope.warehouse, scope.collection, PROFILE)
    written = write_answers(scope.client, retriever, grown, sources, settings, baselines)
    scope.plan(ANSWERS, written)
    return Written(grown, sources, written)


@dataclass(frozen=True)
class Scored:
    trees: list[Tree]
    answers: list[Answer]
    sources: dict[str, Source]
    scored: list[ScoredAnswer]


def score(scope: CollectionScope) -> Scored:
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
