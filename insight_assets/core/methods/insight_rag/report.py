"""Insight-RAG's report: the score table, a chart of exact match per method and question kind,
examples and notes, as markdown."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from insight_assets.core.page.markdown import markdown_table

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
    "caveat",
]
CHART_FILE = "insight_rag_scores.png"
TRAINING_CHART_FILE = "insight_retriever_training.png"


def chart_bars(rows: Sequence[Mapping]) -> tuple[list[str], list[str], dict[tuple[str, str], float]]:
    """The chart's groups (question kinds), its bars and legend (methods) and their heights: a
    method that answered no item of a kind has no bar there, and none in the legend if it answered
    nothing at all."""
    scored = [row for row in rows if row["exact_match"] is not None]
    kinds = list(dict.fromkeys(row["kind"] for row in scored))
    methods = list(dict.fromkeys(row["method"] for row in scored))
    return kinds, methods, {(row["kind"], row["method"]): row["exact_match"] for row in scored}


def render_chart(rows: Sequence[Mapping]) -> bytes:
    """Exact match (accuracy for matching) per method, one group of bars per question kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds, methods, value = chart_bars(rows)
    figure, axis = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(len(methods), 1)
    for n, method in enumerate(methods):
        axis.bar(
            [k + n * width for k in range(len(kinds))],
            [value.get((kind, method), float("nan")) for kind in kinds],  # no bar where it has no score
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


def report_notes(generator: str, identifier: str, retriever: Mapping | None) -> list[str]:
    """What a reader needs to weigh the tables: who wrote, how each measure is taken, what is near
    circular, and what the parametric retriever is (``retriever``: its ``insight_retriever`` row)."""
    offline = generator.startswith("offline")
    notes = [
        f"generator: {generator}"
        + (
            " — a rule-based reader (triples of the context matched to the question's fragment), not a model"
            if offline
            else ""
        ),
        "exact_match: the gold appears in the answer (§4), averaged over a multi-document question's gold answers; f1: SQuAD token F1, averaged the same way; for matching, exact_match is the accuracy and f1 the F1 of the answer Yes over the items",
        "doc_hits50 / doc_mrr: the gold papers in the method's retrieval ranking (top 50; averaged over a multi-document question's papers, the paper's A-Hits and A-MRR); with a collection of 50 papers or fewer doc_hits50 is 1 by construction (a note says so below)",
        "a method that failed every item of a kind has empty cells: it has no score there (the failed column counts them)",
        "unit_hits50 / unit_mrr: the gold unit in the ranking — the chunk holding the evidence sentence (RAG), the gold triple (index, llm), the evidence sentence (sentences, parametric: the sentence its insight is attributed to)",
        "index and llm modes search the very triples the benchmark was built from: a found triple is the gold answer, so their rows are circular (the caveat column says so) and are no result; sentences and parametric modes search no triple",
        "identifier_agreement: mean cosine (our embedder) between the identified fragment and the gold subject + relation — an embedding similarity, not the paper's GPT-4o-mini 0/0.5/1 judge",
        "matching offline: the papers' similarity above the collection's median pair; the rule reads no context, so every matching method answers alike offline",
        "buried questions: subject and object each once in the paper's full text (the paper: its abstract)",
        "not built: Self-RAG",
    ]
    if identifier.startswith("offline"):
        notes.append(
            "identifier offline: it inverts the question templates the offline benchmark was phrased with, so its "
            "fragment is the gold subject + relation almost by construction; its agreement says little"
        )
    if retriever and retriever["status"] == "trained":
        notes.append(
            f"parametric retriever: {retriever['base_model']} ({retriever['base_parameters'] / 1e6:.1f} M parameters) "
            f"continually pre-trained with LoRA for {retriever['epochs']} epochs on {retriever['texts']} texts "
            f"({retriever['training_tokens']} tokens, {retriever['seconds']:.0f} s on {retriever['device']}); the paper: "
            "Llama-3.2 3B, 30 epochs, about 7 hours on 8 A100s. Its insights are completions from memory, each "
            "attributed to the collection's sentence that states it best, which it cites"
        )
    else:
        reason = retriever["reason"] if retriever else "`insight_retriever` not built"
        notes.append(f"parametric retriever: none ({reason})")
    return notes


def render_report(
    collection: str,
    rows: Sequence[Mapping],
    examples: Sequence[Mapping],
    notes: Sequence[str],
    accuracy: Sequence[Mapping] = (),
    training_chart: bool = False,
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
        "## Retriever accuracy (Table 3)",
        "",
        (
            "Each insight retriever alone, given the gold subject + relation of every deeply buried and "
            "multi-document question: does its output hold the gold object? Exact match for buried "
            "questions (one insight), recall@10 for multi-document ones (ten). `base model` is the "
            "parametric retriever's base model without its adapter."
        ),
        "",
        markdown_table(
            list(accuracy), ["kind", "mode", "measure", "items", "accuracy", "caveat"], empty="Not measured."
        ),
        "",
        *([f"![loss and recalled facts per epoch]({TRAINING_CHART_FILE})", ""] if training_chart else []),
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


def render_training_chart(training) -> bytes:
    """The insight retriever's training: mean loss per epoch, and the share of probed facts its
    completion recalls (before training, then after each epoch)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, loss_axis = plt.subplots(figsize=(6, 3.2))
    epochs = list(range(1, len(training.epoch_losses) + 1))
    loss_axis.plot(epochs, training.epoch_losses, marker="o", color="tab:blue", label="loss")
    loss_axis.set_xlabel("epoch")
    loss_axis.set_ylabel("mean training loss", color="tab:blue")
    if training.probe_accuracy:
        recall_axis = loss_axis.twinx()
        recall_axis.plot(
            range(len(training.probe_accuracy)), training.probe_accuracy, marker="s", color="tab:orange"
        )
        recall_axis.set_ylabel("probed facts recalled", color="tab:orange")
        recall_axis.set_ylim(0, 1)
    loss_axis.set_title(f"LoRA on {training.base_model} ({training.device})", fontsize=9)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()
