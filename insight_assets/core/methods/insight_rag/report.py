"""Insight-RAG's report: the score table, a chart of exact match per method and question kind,
examples and notes, as markdown."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from ...markdown import markdown_table

TABLE_COLUMNS = [
    "kind",
    "method",
    "items",
    "failed",
    "exact_match",
    "f1",
    "context_tokens",
    "doc_hits50",
    "doc_mrr",
    "unit_hits50",
    "unit_mrr",
    "identifier_agreement",
]
CHART_FILE = "insight_rag_scores.png"


def render_chart(rows: Sequence[Mapping]) -> bytes:
    """Exact match (accuracy for matching) per method, one group of bars per question kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(row["kind"] for row in rows))
    methods = list(dict.fromkeys(row["method"] for row in rows))
    value = {(row["kind"], row["method"]): row["exact_match"] or 0.0 for row in rows}
    figure, axis = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(len(methods), 1)
    for n, method in enumerate(methods):
        axis.bar(
            [k + n * width for k in range(len(kinds))],
            [value.get((kind, method), 0.0) for kind in kinds],
            width,
            label=method,
        )
    axis.set_xticks([k + 0.4 - width / 2 for k in range(len(kinds))], kinds)
    axis.set_ylabel("exact match / accuracy")
    axis.set_ylim(0, 1)
    axis.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()


def render_report(
    collection: str, rows: Sequence[Mapping], examples: Sequence[Mapping], notes: Sequence[str]
) -> str:
    lines = [
        f"# Insight-RAG on `{collection}`",
        "",
        (
            "Insight-RAG (insight identifier, insight retriever, response generator) against conventional "
            "RAG with k chunks and no retrieval, on a benchmark built from this collection's triples and "
            "citation graph. `exact_match` is accuracy for `matching`."
        ),
        "",
        markdown_table(list(rows), TABLE_COLUMNS),
        "",
        f"![exact match per method]({CHART_FILE})",
        "",
        "## Notes",
        "",
        *[f"- {note}" for note in notes],
        "",
        "## Examples",
        "",
    ]
    for example in examples:
        lines += [f"**{example['question']}** (gold: {example['gold']})", ""]
        lines += [f"- `{method}`: {text}" for method, text in example["answers"]]
        lines.append("")
    return "\n".join(lines)
