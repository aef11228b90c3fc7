"""ConTReGen for people: a tree as mermaid and as indented text, the score table, the chart and
the report file."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from insight_assets.core.page.headlines import measured_note
from insight_assets.core.page.markdown import markdown_table

from .schemas import KEPT, ROOT, Tree, TreeNode
from .scores import CHANCE, JUDGED_COLUMNS, SCORE_COLUMNS

if TYPE_CHECKING:
    from ...retrieval.citing import Source

CHART_FILE = "contregen_recall.png"
TABLE_COLUMNS = ["method", "questions", "with_gold", *SCORE_COLUMNS]


def measured_line(offline_judge: bool) -> str:
    """Which of the table's numbers are measured, and which a judge model gives (placeholders when
    the offline judge gave them)."""
    return measured_note(
        [column for column in SCORE_COLUMNS if column not in JUDGED_COLUMNS],
        JUDGED_COLUMNS,
        "the offline judge's lexical stand-ins; entailment and contradiction need a model's NLI"
        if offline_judge
        else None,
    )


def headline_columns(offline_judge: bool) -> list[str]:
    """The table's columns on the collection page, which shows no placeholder (the report keeps them)."""
    return [column for column in TABLE_COLUMNS if not (offline_judge and column in JUDGED_COLUMNS)]


def _status(node: TreeNode) -> str:
    if node.status in (ROOT, KEPT):
        return node.status
    return f"{node.status}: {node.reason}"


def _mermaid_text(text: str, limit: int = 80) -> str:
    short = text if len(text) <= limit else text[: limit - 3] + "..."
    return short.replace('"', "'").replace("[", "(").replace("]", ")")


def tree_mermaid(tree: Tree) -> str:
    """The tree as a mermaid flowchart: kept nodes with their passage counts, pruned ones dashed."""
    lines = ["```mermaid", "graph TD"]
    for node in tree.nodes.values():
        name = "n" + node.node_id.replace(".", "_")
        kept = len(node.relevant_passages) if node.kept else 0
        label = f"{node.node_id}: {_mermaid_text(node.question)}<br/>{kept} passages"
        if not node.kept:
            label = f"{node.node_id}: {_mermaid_text(node.question)}<br/>{node.status}"
        lines.append(f'  {name}["{label}"]')
        if node.parent_id is not None:
            arrow = "-->" if node.kept else "-.->"
            lines.append(f"  n{node.parent_id.replace('.', '_')} {arrow} {name}")
        if not node.kept:
            lines.append(f"  style {name} stroke-dasharray: 4 4,color:#888")
    lines.append("```")
    return "\n".join(lines)


def tree_text(tree: Tree, sources: Mapping[str, Source]) -> str:
    """The tree indented, one node per line with its sources, for a terminal."""
    lines: list[str] = []

    def visit(node: TreeNode, indent: int) -> None:
        pad = "  " * indent
        query = f'  [searched: "{node.search_query}"]' if node.depth and node.search_query else ""
        lines.append(f"{pad}- {node.question}  ({_status(node)}){query}")
        if node.kept:
            labels = dict.fromkeys(
                sources[p.chunk_id].label for p in node.relevant_passages if p.chunk_id in sources
            )
            for label in labels:
                lines.append(f"{pad}    · {label}")
        for child in node.children:
            visit(tree.nodes[child], indent + 1)

    visit(tree.root, 0)
    return "\n".join(lines)


def render_chart(rows: Sequence[Mapping[str, object]]) -> bytes:
    """Recall per method, chance as a dashed line; PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    methods = [r for r in rows if r["method"] != CHANCE and r.get("recall") is not None]
    chance = next((r["recall"] for r in rows if r["method"] == CHANCE), None)
    figure = Figure(figsize=(8, 3.8), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    names = [str(r["method"]) for r in methods]
    axes.bar(names, [float(r["recall"]) for r in methods], color="#4C72B0", label="recall (retrieved)")
    used = [float(r["recall_used"]) if r.get("recall_used") is not None else 0.0 for r in methods]
    axes.scatter(names, used, color="#DD8452", zorder=3, label="recall (reached synthesis)")
    if chance is not None:
        axes.axhline(float(chance), color="#555555", linestyle="--", linewidth=1, label="chance")
    axes.set_ylim(0, 1.05)
    axes.tick_params(axis="x", labelrotation=30, labelsize=7)
    axes.set_ylabel("gold-document recall")
    axes.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def render_report(
    collection: str,
    rows: Sequence[Mapping[str, object]],
    example: Tree | None,
    example_answers: Sequence[Mapping[str, str]],
    notes: Sequence[str],
) -> str:
    parts = [
        f"# ConTReGen on `{collection}`",
        "",
        (
            "Retrieval recall of the questions' gold documents, the judge's coverage and relevance (1-5), "
            "and model calls and tokens per question, for ConTReGen and its baselines on the same questions."
        ),
        "",
        markdown_table(rows, TABLE_COLUMNS),
        "",
        *(f"- {note}" for note in notes),
    ]
    if example is not None:
        parts += ["", f"## One tree: {example.question.question}", "", tree_mermaid(example)]
    for answer in example_answers:
        parts += ["", f"### {answer['method']}", "", answer["text"]]
    return "\n".join(parts) + "\n"


def method_notes(collection_size: int) -> list[str]:
    """What the report's columns and methods mean, for its notes."""
    return [
        f"collection: {collection_size} papers; chance = a question's gold documents / the collection's papers",
        (
            "recall: gold documents holding a passage the method retrieved (ConTReGen: every node of the "
            "tree); recall_used: only the passages that reached the answer (ConTReGen: kept nodes' "
            "relevant passages)"
        ),
        "retgen_budget retrieves as many passages as the question's tree retrieved in all",
        (
            "iterretgen refines its previous answer with each round's passages (5 rounds); self_ask, "
            "searchain and dsp: the paper's multi-hop baselines on the same retriever, top-k and "
            "iteration cap, prompted with one worked example; contre_no_synthesis: the tree's relevant "
            "passages answered once (Table 5); dsp_with_contre: those passages given to DSP's "
            "reasoning answer (Table 8); the two ablations' calls include the tree's planning and verification"
        ),
        "Self-RAG is not built: it needs its fine-tuned reflection-token model, and a prompted imitation would be another method",
        (
            "calls and tokens: per question, tokens counted with our tokenizer on prompts and replies (repairs "
            "not counted); seconds: the method's wall time per question (contregen: its synthesis; its tree was "
            "grown in contregen_trees)"
        ),
        (
            "rouge_l, entailment, contradiction: reference questions only (the topic of a collection paper's "
            "related-work section that cites collection papers), against that section: ROUGE-L F1, and the "
            "shares of answer sentences it entails or contradicts by NLI by the judge model (no NLI model "
            "ships here; offline a lexical stand-in that cannot see a contradiction)"
        ),
        (
            "facet_coverage: a question's facets are the themes of its gold papers' sections; covered when a "
            "retrieved passage lies in the theme (Table 7)"
        ),
    ]
