"""Trees as rows (one per node) and back, and answers as rows: what the assets store and read."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from insight_assets.core.startup.lazy import pa

from ...retrieval.citing import Source, render_citations
from .schemas import Answer, Tree, TreeNode, TreePassage, TreeQuestion, Usage


@functools.cache
def tree_schema() -> pa.Schema:
    return pa.schema(
        [
            ("collection", pa.string()),
            ("question_id", pa.string()),
            ("query", pa.string()),
            ("question_source", pa.string()),
            ("gold_doc_ids", pa.list_(pa.string())),
            ("node_id", pa.string()),
            ("parent_id", pa.string()),
            ("depth", pa.int32()),
            ("sub_question", pa.string()),
            ("search_query", pa.string()),
            ("status", pa.string()),
            ("reason", pa.string()),
            ("expansion", pa.string()),
            ("expansion_reason", pa.string()),
            ("passage_chunk_ids", pa.list_(pa.string())),
            ("passage_doc_ids", pa.list_(pa.string())),
            ("passage_scores", pa.list_(pa.float64())),
            ("passage_relevant", pa.list_(pa.bool_())),
            ("passage_reasons", pa.list_(pa.string())),
            ("error", pa.string()),
            ("calls", pa.int32()),
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("writer", pa.string()),
        ]
    )


def tree_rows(collection: str, trees: Iterable[Tree], writer: str) -> pa.Table:
    """One row per node; the question's gold and its calls and tokens so far on the root's row."""
    rows = []
    for tree in trees:
        for node in tree.nodes.values():
            is_root = node.parent_id is None
            rows.append(
                {
                    "collection": collection,
                    "question_id": node.question_id,
                    "query": tree.question.question,
                    "question_source": tree.question.source,
                    "gold_doc_ids": list(tree.question.gold) if is_root else None,
                    "node_id": node.node_id,
                    "parent_id": node.parent_id,
                    "depth": node.depth,
                    "sub_question": node.question,
                    "search_query": node.search_query,
                    "status": node.status,
                    "reason": node.reason or None,
                    "expansion": node.expansion or None,
                    "expansion_reason": node.expansion_reason or None,
                    "passage_chunk_ids": [p.chunk_id for p in node.passages],
                    "passage_doc_ids": [p.doc_id for p in node.passages],
                    "passage_scores": [p.score for p in node.passages],
                    "passage_relevant": [p.relevant for p in node.passages],
                    "passage_reasons": [p.reason for p in node.passages],
                    "error": node.error,
                    "calls": tree.usage.calls if is_root else None,
                    "input_tokens": tree.usage.input_tokens if is_root else None,
                    "output_tokens": tree.usage.output_tokens if is_root else None,
                    "writer": writer,
                }
            )
    return pa.Table.from_pylist(rows, schema=tree_schema())


def _node(row: Mapping[str, Any]) -> TreeNode:
    passages = [
        TreePassage(chunk_id, doc_id, score, relevant, reason or "")
        for chunk_id, doc_id, score, relevant, reason in zip(
            row["passage_chunk_ids"],
            row["passage_doc_ids"],
            row["passage_scores"],
            row["passage_relevant"],
            row["passage_reasons"],
            strict=True,
        )
    ]
    return TreeNode(
        question_id=row["question_id"],
        node_id=row["node_id"],
        parent_id=row["parent_id"],
        depth=row["depth"],
        question=row["sub_question"],
        search_query=row["search_query"],
        status=row["status"],
        reason=row["reason"] or "",
        expansion=row["expansion"] or "",
        expansion_reason=row["expansion_reason"] or "",
        passages=passages,
        error=row["error"],
    )


def trees_from_rows(rows: Sequence[Mapping[str, Any]]) -> list[Tree]:
    """The trees ``tree_rows`` stored (rows in any order), in order of first appearance."""
    trees: dict[str, Tree] = {}
    ordered = sorted(rows, key=lambda r: (r["depth"], [int(p) for p in r["node_id"].split(".")]))
    for row in ordered:
        node = _node(row)
        if node.parent_id is None:
            question = TreeQuestion(
                row["question_id"], row["query"], tuple(row["gold_doc_ids"] or ()), row["question_source"]
            )
            usage = Usage(row["calls"] or 0, row["input_tokens"] or 0, row["output_tokens"] or 0)
            trees[node.question_id] = Tree(question, {node.node_id: node}, usage)
            continue
        tree = trees[node.question_id]
        tree.nodes[node.node_id] = node
        tree.nodes[node.parent_id].children.append(node.node_id)
    order = list(dict.fromkeys(row["question_id"] for row in rows))
    return [trees[question_id] for question_id in order if question_id in trees]


def answer_rows(
    collection: str, answers: Iterable[Answer], sources: Mapping[str, Source], writer: str
) -> list[dict[str, Any]]:
    return [
        {
            "collection": collection,
            "question_id": a.question_id,
            "method": a.method,
            "status": a.status,
            "answer": a.text or None,
            "rendered": render_citations(a.text, sources) if a.text else None,
            "cited_chunk_ids": list(a.cited),
            "retrieved_chunk_ids": list(a.retrieved),
            "used_chunk_ids": list(a.used),
            "calls": a.calls,
            "input_tokens": a.input_tokens,
            "output_tokens": a.output_tokens,
            "finish_reason": a.finish_reason,
            "error": a.error,
            "writer": writer,
            "seconds": a.seconds,
        }
        for a in answers
    ]


def answers_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Answer]:
    return [
        Answer(
            question_id=row["question_id"],
            method=row["method"],
            status=row["status"],
            text=row["answer"] or "",
            cited=tuple(row["cited_chunk_ids"]),
            retrieved=tuple(row["retrieved_chunk_ids"]),
            used=tuple(row["used_chunk_ids"]),
            calls=row["calls"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            error=row["error"],
            finish_reason=row["finish_reason"],
            seconds=row.get("seconds"),
        )
        for row in rows
    ]


def node_summary_rows(collection: str, trees: Iterable[Tree]) -> list[dict]:
    """Each kept node's summary (or why it has none)."""
    return [
        {
            "collection": collection,
            "question_id": tree.question.question_id,
            "node_id": node.node_id,
            "status": node.summary_status or None,
            "summary": node.summary or None,
            "error": node.error,
        }
        for tree in trees
        for node in tree.nodes.values()
        if node.kept
    ]


def score_rows(collection: str, scored: Iterable[Any], judge: str) -> list[dict]:
    """Each answer's scores, with the judge that gave them."""
    return [
        {
            "collection": collection,
            **{k: v for k, v in s.__dict__.items() if k != "errors"},
            "errors": list(s.errors),
            "judge": judge,
        }
        for s in scored
    ]
