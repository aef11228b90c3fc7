"""ConTReGen's stages, one per asset (see ``core/stage.py``): their settings, the work the build,
the dry run and ``ask`` share, and their declarations (``STAGES``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from ...citations.paragraphs import collection_paragraphs
from ...curation.answers import reference_answers
from ...curation.records import GENERATED, USER, Question, question_id
from ...curation.stages import ANSWERS as CURATED_ANSWERS
from ...curation.stages import QUESTIONS as CURATED_QUESTIONS
from ...curation.stages import answers_of, questions_of
from ...retrieval.citing import Source, load_sources
from ...retrieval.search import RETRIEVAL_MODES
from ...stage import Check, CollectionScope, JudgedSettings, NothingToDo, Stage, StageSettings
from . import (
    MIN_CONTEXT_TOKENS,
    PROFILE,
    ConTReGenSettings,
    grow_trees,
    outputs,
    references,
    schemas,
    store,
    write_answers,
)
from .scores import ScoredAnswer, score_answers
from .tasks import JUDGE_TASKS, TREE_TASKS, WRITE_TASKS

if TYPE_CHECKING:
    from .schemas import Answer, Tree

TREES, ANSWERS, SCORES = "contregen_trees", "contregen_answers", "contregen_scores"
# The passages the trees retrieved (the reader's notes too, when a retriever offers them).
TREE_SOURCES = "contregen_tree_sources"
QUESTION_SOURCES = ("all", GENERATED, USER)


class TreesSettings(StageSettings):
    """§2.1 with §4.3's and Appendix A.1's defaults: depth 2, 5 sub-questions per plan; planning
    and verification at temperature 0. The thresholds are the offline verifier's. The retrieval
    (``top_k``, ``retrieval_mode``) is also the answers' and the baselines'."""

    top_k: int = Field(default=schemas.TOP_K, ge=1, description="§4.3: passages per retrieval (k = 5).")
    retrieval_mode: str = Field(default="dense", description=f"One of {', '.join(RETRIEVAL_MODES)}.")
    questions: str = Field(default="all", description=f"Which questions: {', '.join(QUESTION_SOURCES)}.")
    max_questions: int | None = Field(
        default=20, ge=1, description="Only the first N questions (cost control); null for all."
    )
    max_depth: int = Field(default=schemas.MAX_DEPTH, ge=0, description="§4.3: depth 2.")
    max_sub_questions: int = Field(
        default=schemas.MAX_SUB_QUESTIONS, ge=1, description="Appendix A.1: 5 per plan."
    )
    need_similarity: float = Field(
        default=schemas.NEED_SIMILARITY,
        ge=-1.0,
        le=1.0,
        description="Offline: a sub-question's least cosine with the question to be needed.",
    )
    repeat_similarity: float = Field(
        default=schemas.REPEAT_SIMILARITY,
        ge=-1.0,
        le=1.0,
        description="Offline: the cosine with an explored question at which a sub-question repeats it.",
    )
    relevance_ratio: float = Field(
        default=schemas.RELEVANCE_RATIO,
        ge=-1.0,
        le=1.0,
        description="Offline: a passage is relevant at this share of the question's best passage's cosine.",
    )
    reference_questions: int = Field(
        default=3, ge=0, description="Also ask this many reference paragraphs' topics, scored against them."
    )

    @model_validator(mode="after")
    def _valid(self) -> TreesSettings:
        if self.questions not in QUESTION_SOURCES:
            raise ValueError(f"questions must be one of {', '.join(QUESTION_SOURCES)}")
        self.method()
        return self

    def method(self, answers: AnswersSettings | None = None) -> ConTReGenSettings:
        """The method's settings: this tree's, and the answers' (their defaults when not given)."""
        answers = answers or AnswersSettings()
        return ConTReGenSettings(
            top_k=self.top_k,
            max_depth=self.max_depth,
            max_sub_questions=self.max_sub_questions,
            retrieval_mode=self.retrieval_mode,
            iterations=answers.iterations,
            answer_words=answers.answer_words,
            context_tokens=answers.context_tokens,
            need_similarity=self.need_similarity,
            repeat_similarity=self.repeat_similarity,
            relevance_ratio=self.relevance_ratio,
        )


class AnswersSettings(StageSettings):
    """§2.2: synthesis at temperature 0.3, a ~300-word root answer, prompts cut to
    ``context_tokens``; the baselines RetGen, budget-matched RetGen and IterRetGen (5 iterations),
    retrieving as the trees did."""

    baselines: bool = Field(default=True, description="Also answer with the three baselines.")
    iterations: int = Field(default=schemas.ITERATIONS, ge=1, description="IterRetGen's rounds.")
    answer_words: int = Field(default=schemas.ANSWER_WORDS, ge=50, description="The answer's length.")
    context_tokens: int = Field(
        default=schemas.CONTEXT_TOKENS,
        ge=MIN_CONTEXT_TOKENS,
        description="Each synthesis prompt's budget for passages and summaries, in tokens.",
    )


class ScoresSettings(JudgedSettings):
    """The judge may be another model than the generator's."""


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
    grown, found = grow_trees(scope.client, scope.retriever(PROFILE), asked, settings.method())
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
    method = scope.built_settings(TREES, TreesSettings).method(settings)
    written = write_answers(scope.client, retriever, grown, sources, method, settings.baselines)
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
