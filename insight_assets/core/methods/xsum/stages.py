"""XSum's stages, one per asset (see ``core/stage.py``): the work the build and the dry run share.

Each reads its inputs (the warehouse, or in a dry run what the stage before planned), makes the
model calls and returns what its asset writes and reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...jsonl import LineProblem
from ...retrieval import Retriever
from ...retrieval.citing import Source, load_sources
from ...retrieval.rerank import LateInteraction
from ...stage import CollectionScope, NothingToDo
from . import PROFILE, XSumSettings, answer_target_questions, load, scores, store
from .runs import QuestionsOutcome, generate_questions
from .schemas import PaperInput, SummaryRecord, SummaryTarget, XSumAnswerRecord
from .summaries import BaselineSettings, WrittenSummaries, summarize_targets

QUESTIONS, TARGETS, ANSWERS, SUMMARIES = "xsum_questions", "xsum_targets", "xsum_answers", "xsum_summaries"


@dataclass(frozen=True)
class Asked:
    papers: list[PaperInput]  # the papers asked about: those with an abstract or body text
    outcome: QuestionsOutcome


def questions(scope: CollectionScope, questions_per_paper: int, abstract_fallback_tokens: int) -> Asked:
    """§3.2: ``questions_per_paper`` questions about each paper from its title and abstract."""
    papers = load.load_papers(scope.warehouse, scope.collection, abstract_fallback_tokens)
    papers = [paper for paper in papers if paper.abstract]
    if not papers:
        raise NothingToDo("no parsed paper has an abstract or body text to ask questions about.")
    outcome = generate_questions(scope.client, papers, questions_per_paper)
    scope.plan(QUESTIONS, outcome.questions)
    return Asked(papers, outcome)


@dataclass(frozen=True)
class Answered:
    targets: list[SummaryTarget]
    problems: list[LineProblem]  # the unusable lines of the user's summaries.jsonl
    answers: list[XSumAnswerRecord]


def answers(
    scope: CollectionScope, settings: XSumSettings, min_cited: int, max_targets: int | None
) -> Answered:
    """The summary targets, and §3.4's answer to every question of a target's papers."""
    retriever = scope.retriever(PROFILE)
    targets, problems = load.build_targets(
        scope.warehouse,
        scope.collection,
        scope.folder,
        retriever.documents,
        max_papers=settings.max_target_papers,
        min_cited=min_cited,
        max_targets=max_targets,
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


def summaries(scope: CollectionScope, baselines: BaselineSettings | None) -> Summarized:
    """§3.5: the editor's summary of each target from its answers, and the baselines' beside it."""
    warehouse, collection = scope.warehouse, scope.collection
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
class Scored:
    targets: list[SummaryTarget]
    summaries: list[SummaryRecord]  # the written summaries scored
    scored: list[scores.ScoredSummary]


def score(scope: CollectionScope) -> Scored:
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
