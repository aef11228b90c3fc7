"""XSum's questions stage (§3.2): broad questions about each paper, from its title and abstract."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.methods.xsum import load, store
from insight_assets.core.methods.xsum import tasks as xsum_tasks
from insight_assets.core.methods.xsum.runs import QuestionsOutcome, generate_questions
from insight_assets.core.methods.xsum.schemas import PaperInput
from insight_assets.core.methods.xsum.settings import QuestionsSettings
from insight_assets.core.runtime.stage import CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import Json, StageOutput, preview, table

QUESTIONS = Handoff("xsum_questions", store.load_questions)
# What a question stands in for the papers the build asks about: those of its one topic.
PAPER_CHOICE = Handoff[list[PaperInput]]("xsum_papers_asked_about")


@dataclass(frozen=True)
class Asked:
    papers: list[PaperInput]  # the papers asked about: those with an abstract or body text
    outcome: QuestionsOutcome


def questions(scope: CollectionScope, settings: QuestionsSettings) -> Asked:
    """§3.2: ``questions_per_paper`` questions about each paper from its title and abstract."""
    papers = scope.stood_in(PAPER_CHOICE)
    if papers is None:
        papers = load.load_papers(scope.warehouse, scope.collection, settings.abstract_fallback_tokens)
    papers = [paper for paper in papers if paper.abstract]
    if not papers:
        raise NothingToDo("no parsed paper has an abstract or body text to ask questions about.")
    return Asked(papers, generate_questions(scope.client, papers, settings.questions_per_paper))


def output(scope: CollectionScope, settings: QuestionsSettings, asked: Asked) -> StageOutput:
    papers, outcome = asked.papers, asked.outcome
    writer = scope.client.writer_label(xsum_tasks.XSUM_QUESTIONS)
    by_doc = {paper.doc_id: paper for paper in papers}
    rows = [
        {
            "doc_id": q.doc_id,
            "question_id": q.question_id,
            "position": q.position,
            "question": q.question,
            "abstract_source": by_doc[q.doc_id].abstract_source,
            "status": "ok",
            "writer": writer,
        }
        for q in outcome.questions
    ]
    rows += [
        {"doc_id": doc_id, "status": "failed", "error": error, "writer": writer}
        for doc_id, error in outcome.failures.items()
    ]
    fallbacks = sorted(p.title for p in papers if p.abstract_source != "abstract")
    return StageOutput(
        tables={"xsum_questions": table(scope.collection, rows)},
        metadata={
            "dagster/row_count": len(outcome.questions),
            "papers": len(papers),
            "papers_failed": len(outcome.failures),
            "abstract_fallbacks": Json(fallbacks),
            "preview": preview([{"question": q.question} for q in outcome.questions], ["question"]),
        },
    )


QUESTIONS_STAGE = Stage(
    QUESTIONS.name,
    "xsum",
    "Broad questions about each paper, from its title and abstract (or, without an abstract, the "
    "first ~300 tokens of its body, recorded in `abstract_source`).",
    QuestionsSettings,
    reads=("parsed_documents",),
    run=questions,
    hands=(QUESTIONS.of(lambda asked: asked.outcome.questions),),
    output=output,
    tasks=(xsum_tasks.XSUM_QUESTIONS,),
)
