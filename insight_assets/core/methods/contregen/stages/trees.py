"""ConTReGen's trees stage (§2.1): a tree per question, planned top-down and verified."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.citations.paragraphs import collection_paragraphs
from insight_assets.core.curation.stages import QUESTIONS as CURATED_QUESTIONS
from insight_assets.core.curation.stages import questions_of
from insight_assets.core.methods.contregen import (
    PROFILE,
    grow_trees,
    records,
    references,
    report,
    store,
    tasks,
)
from insight_assets.core.methods.contregen.schemas import (
    FAILED,
    KEPT,
    PRUNED_NO_PASSAGE,
    PRUNED_NOT_NEEDED,
    ROOT,
)
from insight_assets.core.methods.contregen.settings import TreesSettings
from insight_assets.core.methods.contregen.tasks import TREE_TASKS
from insight_assets.core.retrieval.citing import Source
from insight_assets.core.runtime.stage import CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import Json, Markdown, StageOutput, preview

if TYPE_CHECKING:
    from insight_assets.core.methods.contregen.schemas import Tree


TREES = Handoff("contregen_trees", store.load_trees)
# The passages the trees retrieved (the reader's notes too, when a retriever offers them).
TREE_SOURCES = Handoff("contregen_tree_sources", store.tree_sources)


@dataclass(frozen=True)
class Grown:
    trees: list[Tree]
    sources: dict[str, Source]  # the passages they retrieved, by chunk id


def trees(scope: CollectionScope, settings: TreesSettings) -> Grown:
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
    return Grown(*grow_trees(scope.client, scope.retriever(PROFILE), asked, settings))


def output(scope: CollectionScope, settings: TreesSettings, result: Grown) -> StageOutput:
    grown = result.trees
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


TREES_STAGE = Stage(
    TREES.name,
    "contregen",
    "Each question's tree (one row per node): sub-questions planned from the passages, kept or "
    "pruned by the two-step verification (with the verdicts and reasons), the rewritten search "
    "queries and the passages each retrieved, with their scores and relevance verdicts.",
    TreesSettings,
    reads=(CURATED_QUESTIONS.name, "chunk_embeddings", "citations"),
    run=trees,
    hands=(TREES.of(lambda grown: grown.trees), TREE_SOURCES.of(lambda grown: grown.sources)),
    output=output,
    tasks=TREE_TASKS,
    kinds=("duckdb", "lancedb"),
    embedder=True,
)
