"""What ConTReGen's stages keep (see ``core/runtime/stage_output.py``): the tables each writes, and its report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from insight_assets.core.ingestion.ingest import paper_count
from insight_assets.core.page.headlines import Headline, headline_table, played_offline
from insight_assets.core.runtime.stage_output import (
    CheckOutcome,
    Json,
    Markdown,
    StageOutput,
    judge_note,
    preview,
    standin_note,
    write_report,
)
from insight_assets.core.startup.lazy import pa

from ...retrieval.citing import citation_problems, render_citations
from . import records, report, scores, tasks
from .schemas import CONTREGEN, FAILED, KEPT, METHODS, PRUNED_NO_PASSAGE, PRUNED_NOT_NEEDED, ROOT, TRUNCATED

if TYPE_CHECKING:
    from insight_assets.core.runtime.stage import CollectionScope

    from .schemas import Tree
    from .settings import AnswersSettings, ScoresSettings, TreesSettings
    from .stages import Scored, Written

CITE_RETRIEVED = "answers_cite_retrieved_passages"
NOT_TRUNCATED = "answers_not_truncated"


def trees(scope: CollectionScope, settings: TreesSettings, grown: list[Tree]) -> StageOutput:
    writer = scope.client.writer_label(tasks.CONTREGEN_PLAN)
    nodes = [node for tree in grown for node in tree.nodes.values()]
    counts = {
        status: sum(node.status == status for node in nodes)
        for status in (ROOT, KEPT, PRUNED_NOT_NEEDED, PRUNED_NO_PASSAGE, FAILED)
    }
    example = max(grown, key=lambda tree: len(tree.nodes))
    per_question = [_tree_row(tree) for tree in grown]
    failed = [n for n in nodes if n.error]
    return StageOutput(
        tables={"contregen_trees": records.tree_rows(scope.collection, grown, writer)},
        metadata={
            "dagster/row_count": len(nodes),
            "questions": len(grown),
            "nodes": Json(counts),
            "pruned_sub_questions": counts[PRUNED_NOT_NEEDED] + counts[PRUNED_NO_PASSAGE],
            "mean_calls_per_question": round(sum(t.usage.calls for t in grown) / len(grown), 2),
            "mean_tokens_per_question": round(
                sum(t.usage.input_tokens + t.usage.output_tokens for t in grown) / len(grown), 1
            ),
            "per_question": preview(per_question, list(per_question[0])),
            "example_tree": Markdown(f"**{example.question.question}**\n\n{report.tree_mermaid(example)}"),
            "node_failures": preview(
                [{"node": f"{n.question_id[:10]}/{n.node_id}", "error": n.error} for n in failed[:20]],
                ["node", "error"],
                empty="None.",
            ),
            "writer": writer,
        },
    )


def _tree_row(tree) -> dict:
    """One tree's size, pruning, passages and cost."""
    return {
        "question": tree.question.question,
        "nodes": len(tree.nodes),
        "kept": len(tree.kept_nodes()) - 1,
        "pruned": sum(not n.kept for n in tree.nodes.values()),
        "passages": len(tree.retrieved()),
        "calls": tree.usage.calls,
        "input_tokens": tree.usage.input_tokens,
        "output_tokens": tree.usage.output_tokens,
    }


def answers(scope: CollectionScope, settings: AnswersSettings, result: Written) -> StageOutput:
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


def scores_output(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
    grown, found, sources, scored = result.trees, result.answers, result.sources, result.scored
    collection = scope.collection
    questions = [tree.question for tree in grown]
    collection_size = paper_count(scope.warehouse, collection)
    judge = scope.client.writer_label(tasks.CONTREGEN_JUDGE_ANSWER)
    rows = scores.method_table(scored, questions, collection_size)
    answer_writers = scope.warehouse.writers("contregen_answers", scope.collection)
    notes = _score_notes(scope, judge, answer_writers, collection_size)
    example = max(grown, key=lambda tree: len(tree.nodes))
    files = write_report(
        scope,
        "contregen_report.md",
        report.render_report(collection, rows, example, _examples(example, found, sources), notes),
        report.CHART_FILE,
        report.render_chart(rows),
        "recall per method",
        Headline(
            tables=(
                headline_table("Retrieval and answers", rows, report.headline_columns(played_offline(judge))),
            ),
            notes=tuple(notes),
            writer=answer_writers,
            judge=judge,
        ),
    )
    return StageOutput(
        tables={"contregen_scores": pa.Table.from_pylist(records.score_rows(collection, scored, judge))},
        metadata={
            "dagster/row_count": len(scored),
            "scores": preview(rows, report.TABLE_COLUMNS),
            "judge": judge,
            **files,
        },
    )


def _score_notes(scope, judge: str, answer_writers: str, collection_size: int) -> list[str]:
    roles = {
        "planner": scope.warehouse.writers("contregen_trees", scope.collection),
        "writer": answer_writers,
        "judge": judge,
    }
    return [
        report.measured_line(played_offline(judge)),
        judge_note(
            judge,
            answer_writers,
            "coverage and relevance here are lexical stand-ins, not a model's judgement",
        ),
        *filter(None, [standin_note(roles)]),
        *report.method_notes(collection_size),
    ]


def _examples(tree, found, sources) -> list[dict]:
    """Every method's answer to ``tree``'s question, its citations rendered."""
    by_method = {a.method: a for a in found if a.question_id == tree.question.question_id and a.text}
    return [
        {"method": method, "text": render_citations(by_method[method].text, sources)}
        for method in METHODS
        if method in by_method
    ]
