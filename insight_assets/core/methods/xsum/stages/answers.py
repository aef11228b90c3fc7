"""XSum's answers stage (§3.4): the summary targets, and every target question's answer from its
reranked chunks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from insight_assets.core.citations import citation_links
from insight_assets.core.methods.xsum import PROFILE, answer_target_questions, load, store
from insight_assets.core.methods.xsum import tasks as xsum_tasks
from insight_assets.core.methods.xsum.load import USER_TARGETS_FILE, why_no_evaluation_targets
from insight_assets.core.methods.xsum.schemas import (
    ABSTAINED,
    ANSWERED,
    FAILED,
    TARGET_KINDS,
    SummaryTarget,
    XSumAnswerRecord,
)
from insight_assets.core.methods.xsum.settings import AnswersSettings
from insight_assets.core.methods.xsum.stages.questions import QUESTIONS
from insight_assets.core.retrieval.rerank import LateInteraction
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, Json, StageOutput, preview, skipped, table
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.jsonl import LineProblem


TARGETS = Handoff("xsum_targets", store.load_targets)
ANSWERS = Handoff("xsum_answers", store.load_answers)
# What a question stands in for the build's summary targets: its one topic over its papers.
TARGET_CHOICE = Handoff[tuple[list[SummaryTarget], list]]("xsum_targets_summarised")


@dataclass(frozen=True)
class Answered:
    targets: list[SummaryTarget]
    problems: list[LineProblem]  # the unusable lines of the user's summaries.jsonl
    answers: list[XSumAnswerRecord]


def answers(scope: CollectionScope, settings: AnswersSettings) -> Answered:
    """The summary targets, and §3.4's answer to every question of a target's papers."""
    retriever = scope.retriever(PROFILE)
    chosen = scope.stood_in(TARGET_CHOICE)
    targets, problems = chosen or load.build_targets(
        scope.warehouse,
        scope.collection,
        scope.folder,
        retriever.documents,
        max_papers=settings.max_target_papers,
        min_cited=settings.min_cited_for_evaluation,
        max_targets=settings.max_targets,
    )
    if not targets:
        raise NothingToDo("no summary target: no theme cluster, user target or evaluation target has papers.")
    asked = scope.upstream(QUESTIONS)
    reranker = LateInteraction.for_collection(retriever.store.uri, retriever.collection)
    answered = answer_target_questions(scope.client, retriever, targets, asked, settings, reranker)
    if not answered:
        raise NothingToDo("no target paper has questions: `xsum_questions` kept none for them.")
    return Answered(targets, problems, answered)


TARGETS_READABLE = "summary_targets_readable"


def output(scope: CollectionScope, settings: AnswersSettings, answered: Answered) -> StageOutput:
    targets, problems, found = answered.targets, answered.problems, answered.answers
    writer = scope.client.writer_label(xsum_tasks.XSUM_ANSWER)
    left_out = {}
    if not any(t.is_evaluation for t in targets):
        links = citation_links(scope.warehouse, scope.collection)
        left_out["evaluation targets"] = why_no_evaluation_targets(links, settings.min_cited_for_evaluation)
    return StageOutput(
        tables=_answer_tables(scope.collection, targets, problems, found, writer),
        metadata={**_answers_metadata(targets, problems, found, settings), **skipped(left_out)},
        checks=[
            CheckOutcome(
                TARGETS_READABLE,
                passed=not problems,
                warning=True,
                metadata={"bad_lines": len(problems), "file": str(Path(scope.folder) / USER_TARGETS_FILE)},
            )
        ],
    )


def _answers_metadata(targets, problems, found, settings: AnswersSettings) -> dict:
    """Targets per kind and listed, answers per status, the retrieval used, the summaries.jsonl problems."""
    counts = {status: sum(a.status == status for a in found) for status in (ANSWERED, ABSTAINED, FAILED)}
    return {
        "dagster/row_count": len(found),
        "targets": Json({kind: sum(t.kind == kind for t in targets) for kind in TARGET_KINDS}),
        "answers": Json(counts),
        "retrieval": f"{settings.retrieval_mode} top {settings.candidates} -> {settings.reranker} top {settings.top_n}, scope {settings.retrieval_scope}",
        "target_list": preview(
            [{"kind": t.kind, "topic": t.topic, "papers": len(t.doc_ids)} for t in targets],
            ["kind", "topic", "papers"],
        ),
        "summary_target_problems": preview(
            [p.__dict__ for p in problems], ["line", "message"], empty="None."
        ),
    }


def _answer_tables(collection, targets, problems, found, writer) -> dict[str, pa.Table]:
    return {
        "xsum_targets": table(
            collection,
            [
                {
                    "target_id": t.target_id,
                    "kind": t.kind,
                    "topic": t.topic,
                    "doc_ids": list(t.doc_ids),
                    "reference": t.reference or None,
                    "reference_doc_id": t.reference_doc_id,
                    "reference_section": t.reference_section or None,
                }
                for t in targets
            ],
        ),
        "xsum_target_problems": table(
            collection,
            [{"line": p.line, "message": p.message} for p in problems],
            schema=pa.schema([("collection", pa.string()), ("line", pa.int32()), ("message", pa.string())]),
        ),
        "xsum_answers": table(
            collection,
            [
                {
                    "target_id": a.target_id,
                    "question_id": a.question_id,
                    "doc_id": a.doc_id,
                    "status": a.status,
                    "answer": a.text or None,
                    "cited_chunk_ids": list(a.cited),
                    "passage_chunk_ids": list(a.passages),
                    "scope_doc_ids": list(a.scope_doc_ids),
                    "error": a.error,
                    "writer": writer,
                }
                for a in found
            ],
        ),
    }


ANSWERS_STAGE = Stage(
    ANSWERS.name,
    "xsum",
    "The summary targets (theme clusters, the whole collection when small, the user's "
    "summaries.jsonl, evaluation targets from the citation graph), and every target question's "
    "answer from its 20 reranked chunks, or an explicit abstention.",
    AnswersSettings,
    reads=(QUESTIONS.name, "chunk_embeddings", "theme_graph", "citations"),
    run=answers,
    hands=(TARGETS.of(lambda done: done.targets), ANSWERS.of(lambda done: done.answers)),
    output=output,
    tasks=(xsum_tasks.XSUM_ANSWER, xsum_tasks.XSUM_REFINE),
    checks=(Check(TARGETS_READABLE, "Every line of the collection's summaries.jsonl is usable."),),
    kinds=("duckdb", "lancedb"),
    embedder=True,
)
