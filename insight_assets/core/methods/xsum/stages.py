"""XSum's stages, one per asset (see ``core/runtime/stage.py``): the work the build, the dry run and ``ask``
share, and their declarations (``STAGES``); each stage's settings model is in ``settings.py``.

Each reads its inputs (the warehouse, or in a dry run what the stage before planned), makes the
model calls and returns what ``outputs.py`` keeps of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.runtime.stage import Check, CollectionScope, NothingToDo, Stage

from ...retrieval.citing import Source, load_sources
from ...retrieval.rerank import LateInteraction
from . import PROFILE, answer_target_questions, load, outputs, scores, store
from . import tasks as xsum_tasks
from .runs import QuestionsOutcome, generate_questions
from .schemas import (
    PaperInput,
    SummaryRecord,
    SummaryTarget,
    XSumAnswerRecord,
)
from .settings import AnswersSettings, QuestionsSettings, ScoresSettings, SummariesSettings
from .summaries import WrittenSummaries, summarize_targets

if TYPE_CHECKING:
    from ...jsonl import LineProblem
    from ...retrieval import Retriever

QUESTIONS, TARGETS, ANSWERS, SUMMARIES = "xsum_questions", "xsum_targets", "xsum_answers", "xsum_summaries"
SCORES = "xsum_scores"
# Stand-ins an ask gives for what the build reads of the collection: the papers asked about, the
# targets summarised (one topic over the papers that match it).
PAPER_CHOICE, TARGET_CHOICE = "xsum_papers_asked_about", "xsum_targets_summarised"


@dataclass(frozen=True)
class Asked:
    papers: list[PaperInput]  # the papers asked about: those with an abstract or body text
    outcome: QuestionsOutcome


def questions(scope: CollectionScope, settings: QuestionsSettings) -> Asked:
    """§3.2: ``questions_per_paper`` questions about each paper from its title and abstract."""
    papers = scope.upstream(
        PAPER_CHOICE,
        lambda: load.load_papers(scope.warehouse, scope.collection, settings.abstract_fallback_tokens),
    )
    papers = [paper for paper in papers if paper.abstract]
    if not papers:
        raise NothingToDo("no parsed paper has an abstract or body text to ask questions about.")
    outcome = generate_questions(scope.client, papers, settings.questions_per_paper)
    scope.plan(QUESTIONS, outcome.questions)
    return Asked(papers, outcome)


@dataclass(frozen=True)
class Answered:
    targets: list[SummaryTarget]
    problems: list[LineProblem]  # the unusable lines of the user's summaries.jsonl
    answers: list[XSumAnswerRecord]


def answers(scope: CollectionScope, settings: AnswersSettings) -> Answered:
    """The summary targets, and §3.4's answer to every question of a target's papers."""
    retriever = scope.retriever(PROFILE)
    targets, problems = scope.upstream(
        TARGET_CHOICE,
        lambda: load.build_targets(
            scope.warehouse,
            scope.collection,
            scope.folder,
            retriever.documents,
            max_papers=settings.max_target_papers,
            min_cited=settings.min_cited_for_evaluation,
            max_targets=settings.max_targets,
        ),
    )
    if not targets:
        raise NothingToDo("no summary target: no theme cluster, user target or evaluation target has papers.")
    asked = scope.upstream(QUESTIONS, lambda: store.load_questions(scope.warehouse, scope.collection))
    reranker = LateInteraction.for_collection(retriever.store.uri, retriever.collection)
    answered = answer_target_questions(scope.client, retriever, targets, asked, settings, reranker)
    if not answered:
        raise NothingToDo("no target paper has questions: `xsum_questions` kept none for them.")
    scope.plan(TARGETS, targets)
    scope.plan(ANSWERS, answered)
    return Answered(targets, problems, answered)


@dataclass(frozen=True)
class Summarized:
    targets: list[SummaryTarget]
    sources: dict[str, Source]  # the collection's XSum chunks by id
    written: WrittenSummaries


def summaries(scope: CollectionScope, settings: SummariesSettings) -> Summarized:
    """§3.5: the editor's summary of each target from its answers, and the baselines' beside it."""
    warehouse, collection = scope.warehouse, scope.collection
    baselines = settings if settings.baselines else None
    targets = scope.upstream(TARGETS, lambda: store.load_targets(warehouse, collection))
    if not targets:
        raise NothingToDo("no summary targets: `xsum_answers` found none.")
    answered = scope.upstream(ANSWERS, lambda: store.load_answers(warehouse, collection))
    asked = scope.upstream(QUESTIONS, lambda: store.load_questions(warehouse, collection))
    sources = load_sources(warehouse, collection, PROFILE)
    papers = {paper.doc_id: paper for paper in load.load_papers(warehouse, collection)}
    retriever: Retriever | None = scope.retriever(PROFILE) if baselines else None
    written = summarize_targets(
        scope.client,
        targets,
        answered,
        {q.question_id: q.question for q in asked},
        sources,
        baselines=baselines,
        retriever=retriever,
        papers=papers,
    )
    if not any(record.text for record in written.records):
        first = written.records[0].error if written.records else "no targets"
        raise NothingToDo(f"no summary was written: {first}")
    scope.plan(SUMMARIES, [record for record in written.records if record.text])
    return Summarized(targets, sources, written)


@dataclass(frozen=True)
class TopicSummary:
    questions: list  # the questions asked of the topic's papers (``XSumQuestion``)
    answers: list[XSumAnswerRecord]
    summarized: Summarized


def summary_for(scope: CollectionScope, topic: str, doc_ids: list[str]) -> TopicSummary:
    """XSum's summary of one ``topic`` over the papers ``doc_ids``: the questions, answers and
    summaries stages on a scope given that target, with the settings the collection was built with
    (the editor's summary alone, no baselines)."""
    asking = scope.built_settings(QUESTIONS, QuestionsSettings)
    papers = load.load_papers(scope.warehouse, scope.collection, asking.abstract_fallback_tokens)
    target = SummaryTarget("ask", "user", topic, tuple(doc_ids))
    scope.give(PAPER_CHOICE, [paper for paper in papers if paper.doc_id in doc_ids])
    scope.give(TARGET_CHOICE, ([target], []))
    asked = questions(scope, asking)
    answered = answers(scope, scope.built_settings(ANSWERS, AnswersSettings))
    editor_only = scope.built_settings(SUMMARIES, SummariesSettings).model_copy(update={"baselines": False})
    return TopicSummary(asked.outcome.questions, answered.answers, summaries(scope, editor_only))


@dataclass(frozen=True)
class Scored:
    targets: list[SummaryTarget]
    summaries: list[SummaryRecord]  # the written summaries scored
    scored: list[scores.ScoredSummary]


def score(scope: CollectionScope, settings: ScoresSettings) -> Scored:
    """§4.2's metrics for every written summary, against its target's reference."""
    warehouse, collection = scope.warehouse, scope.collection
    targets = scope.upstream(TARGETS, lambda: store.load_targets(warehouse, collection))
    written = scope.upstream(SUMMARIES, lambda: store.load_written_summaries(warehouse, collection))
    if not written:
        raise NothingToDo("no summaries to score: `xsum_summaries` wrote none.")
    sources = load_sources(warehouse, collection, PROFILE)
    abstracts = {paper.doc_id: paper.abstract for paper in load.load_papers(warehouse, collection)}
    chunk_docs = {chunk_id: source.doc_id for chunk_id, source in sources.items()}
    scored = scores.score_summaries(scope.client, targets, written, chunk_docs, scope.embed, abstracts)
    if not scored:
        raise NothingToDo("no summary has a reference to be scored against.")
    return Scored(targets, written, scored)


STAGES = (
    Stage(
        QUESTIONS,
        "xsum",
        "Broad questions about each paper, from its title and abstract (or, without an abstract, the "
        "first ~300 tokens of its body, recorded in `abstract_source`).",
        QuestionsSettings,
        reads=("parsed_documents",),
        run=questions,
        output=outputs.questions,
        tasks=(xsum_tasks.XSUM_QUESTIONS,),
    ),
    Stage(
        ANSWERS,
        "xsum",
        "The summary targets (theme clusters, the whole collection when small, the user's "
        "summaries.jsonl, evaluation targets from the citation graph), and every target question's "
        "answer from its 20 reranked chunks, or an explicit abstention.",
        AnswersSettings,
        reads=(QUESTIONS, "chunk_embeddings", "theme_graph", "citations"),
        run=answers,
        output=outputs.answers,
        tasks=(xsum_tasks.XSUM_ANSWER, xsum_tasks.XSUM_REFINE),
        checks=(
            Check(outputs.TARGETS_READABLE, "Every line of the collection's summaries.jsonl is usable."),
        ),
        kinds=("duckdb", "lancedb"),
        embedder=True,
    ),
    Stage(
        SUMMARIES,
        "xsum",
        "One summary per target by the editor from its answers, citations kept as chunk ids and "
        "rendered as (Title, pp. a-b); with the baselines beside it: SurveySum's Pipeline 1 and "
        "Pipeline 2 (the paper's Table 1), plain RAG and abstracts only.",
        SummariesSettings,
        reads=(ANSWERS,),
        run=summaries,
        output=outputs.summaries,
        tasks=(xsum_tasks.XSUM_EDITOR, xsum_tasks.XSUM_TOPIC_SUMMARY),
        checks=(
            Check(
                outputs.CITATIONS_IN_TARGET,
                "Every citation of every summary is a chunk its writer was given, of one of its target's "
                "papers; an invented alias, or a writer rejected for citing sources it was not given, fails it.",
            ),
            Check(
                outputs.NOT_TRUNCATED,
                "No summary was cut off at max_tokens (after one retry with twice the room).",
            ),
        ),
        embedder=True,
    ),
    Stage(
        SCORES,
        "xsum",
        "ROUGE-1/2/L recall, Ref-F1 (precision, recall, F1), a semantic recall with the embedder, "
        "G-Eval coverage and CheckEval for XSum and both baselines: on evaluation targets against the "
        "related-work section, on the others against the papers' abstracts. Table, chart and "
        "data/reports/<collection>/xsum_report.md.",
        ScoresSettings,
        reads=(SUMMARIES,),
        run=score,
        output=outputs.scores_output,
        tasks=xsum_tasks.JUDGE_TASKS,
        embedder=True,
        judges=ScoresSettings.panel,
    ),
)
