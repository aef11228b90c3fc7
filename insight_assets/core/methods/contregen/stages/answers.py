"""ConTReGen's answers stage (§2.2): each tree synthesized bottom-up into a cited answer, the
baselines' beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.methods.contregen import PROFILE, records, store, tasks, write_answers
from insight_assets.core.methods.contregen.schemas import CONTREGEN, TRUNCATED
from insight_assets.core.methods.contregen.settings import AnswersSettings, TreesSettings
from insight_assets.core.methods.contregen.stages.trees import TREE_SOURCES, TREES
from insight_assets.core.methods.contregen.tasks import WRITE_TASKS
from insight_assets.core.retrieval.citing import Source, citation_problems, load_sources, render_citations
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import CheckOutcome, Json, Markdown, StageOutput, preview
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.methods.contregen.schemas import Answer, Tree


ANSWERS = Handoff("contregen_answers", store.load_answers)


@dataclass(frozen=True)
class Written:
    trees: list[Tree]
    sources: dict[str, Source]  # the collection's passages by chunk id
    answers: list[Answer]  # ConTReGen's and the baselines'


def answers(scope: CollectionScope, settings: AnswersSettings) -> Written:
    """§2.2: each tree synthesized bottom-up into a cited answer; the baselines' beside it,
    retrieving as the trees were built to."""
    grown = scope.upstream(TREES)
    if not grown:
        raise NothingToDo("no trees: `contregen_trees` stored none.")
    retriever = scope.retriever(PROFILE)
    sources = {
        **load_sources(scope.warehouse, scope.collection, PROFILE),
        **scope.upstream(TREE_SOURCES),
    }
    built = scope.built_settings(TREES.name, TreesSettings)
    written = write_answers(scope.client, retriever, grown, sources, built, settings)
    if not any(answer.text for answer in written):
        raise NothingToDo(f"no answer was written: {written[0].error if written else 'no trees'}")
    return Written(grown, sources, written)


CITE_RETRIEVED = "answers_cite_retrieved_passages"
NOT_TRUNCATED = "answers_not_truncated"


def output(scope: CollectionScope, settings: AnswersSettings, result: Written) -> StageOutput:
    grown, sources, found = result.trees, result.sources, result.answers
    writer = scope.client.writer_label(tasks.CONTREGEN_ANSWER)
    written = [a for a in found if a.text]
    statuses = {
        method: {
            s: sum(a.method == method and a.status == s for a in found) for s in {a.status for a in found}
        }
        for method in dict.fromkeys(a.method for a in found)
    }
    example = next((a for a in written if a.method == CONTREGEN), written[0])
    questions = {tree.question.question_id: tree.question.question for tree in grown}
    failures = [
        {"method": a.method, "question": questions[a.question_id], "error": a.error} for a in found if a.error
    ]
    return StageOutput(
        tables={
            "contregen_answers": pa.Table.from_pylist(
                records.answer_rows(scope.collection, found, sources, writer)
            ),
            "contregen_node_summaries": pa.Table.from_pylist(
                records.node_summary_rows(scope.collection, grown)
            ),
        },
        metadata={
            "dagster/row_count": len(written),
            "answers": Json(statuses),
            "example": Markdown(
                f"**{questions[example.question_id]}** ({example.method})\n\n"
                + render_citations(example.text, sources)
            ),
            "failures": preview(failures, ["method", "question", "error"], empty="None."),
            "writer": writer,
        },
        checks=[_cite_retrieved_passages(found, len(written)), _not_truncated(found)],
    )


def _cite_retrieved_passages(found, written: int) -> CheckOutcome:
    problems = [
        f"{a.method} answer to {a.question_id[:10]} {problem}"
        for a in found
        for problem in citation_problems(a.text, a.used, a.error)
    ]
    return CheckOutcome(
        CITE_RETRIEVED,
        passed=not problems,
        metadata={"answers_checked": written, "problems": "; ".join(problems[:10]) or "none"},
    )


def _not_truncated(found) -> CheckOutcome:
    truncated = [a for a in found if a.status == TRUNCATED]
    return CheckOutcome(
        NOT_TRUNCATED,
        passed=not truncated,
        metadata={"truncated": "; ".join(f"{a.method}: {a.question_id[:10]}" for a in truncated) or "none"},
    )


ANSWERS_STAGE = Stage(
    ANSWERS.name,
    "contregen",
    "Each tree synthesized bottom-up into a cited long-form answer (citations rendered as title "
    "and pages), and the baselines' answers to the same questions, with the passages each method "
    "retrieved and its model calls and tokens.",
    AnswersSettings,
    reads=(TREES.name,),
    run=answers,
    hands=(ANSWERS.of(lambda written: written.answers),),
    output=output,
    tasks=WRITE_TASKS,
    checks=(
        Check(
            CITE_RETRIEVED,
            "Every citation of every answer is a passage its writer was given; an invented alias, or a "
            "writer rejected for citing sources it was not given, fails it.",
        ),
        Check(
            NOT_TRUNCATED,
            "No answer was cut off at max_tokens (after one retry with twice the room).",
        ),
    ),
    embedder=True,
)
