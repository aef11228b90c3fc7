"""The insight retriever alone (§5.4, Table 3): given each question's gold subject + relation, does
the retriever's output hold the gold object? Exact match for deeply buried questions (one insight),
recall@10 for multi-document ones (the share of gold objects in ten insights).

Every retriever mode is scored on the same fragments, and the parametric retriever's base model
without its adapter, which shows what continual pre-training added. Nothing is left out of a search:
the question is what the collection holds, not which paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .pipeline import unit_profile
from .schemas import (
    BASE_MODEL,
    BURIED,
    INSIGHT_MAX_TOKENS,
    INSIGHTS_MULTI,
    INSIGHTS_SINGLE,
    MULTI,
    PARAMETRIC,
    RANK_DEPTH,
    insight_method,
)
from .scores import CIRCULAR, exact_match

if TYPE_CHECKING:
    from ...llm import LLMClient
    from .benchmark import BenchmarkItem
    from .causal_lm import CausalLM
    from .retriever import InsightRetriever

MEASURES = {BURIED: "exact match", MULTI: "recall@10"}
TABLE_COLUMNS = ["kind", "mode", "measure", "items", "accuracy", "caveat"]


def asked_items(items: Sequence[BenchmarkItem], max_per_kind: int | None) -> list[BenchmarkItem]:
    """The buried and multi-document items, the first ``max_per_kind`` of each (all for ``None``)."""
    return [item for kind in (BURIED, MULTI) for item in [i for i in items if i.kind == kind][:max_per_kind]]


def score(outputs: Sequence[str], golds: Sequence[str]) -> float:
    """The share of gold objects found in any output (one gold: whether it is)."""
    if not golds:
        return 0.0
    return sum(any(exact_match(text, gold) for text in outputs) for gold in golds) / len(golds)


def retriever_outputs(
    client: LLMClient,
    items: Sequence[BenchmarkItem],
    retriever: InsightRetriever,
    modes: Sequence[str],
    base: CausalLM | None = None,
) -> dict[str, list[list[str]]]:
    """Each mode's outputs for each item's gold fragment; ``BASE_MODEL`` is ``base`` completing
    alone. A mode that cannot run (no adapter, no base model) is absent."""
    fragments = [item.gold_fragment for item in items]
    multi = [item.kind == MULTI for item in items]
    counts = [INSIGHTS_MULTI if flag else INSIGHTS_SINGLE for flag in multi]
    outputs: dict[str, list[list[str]]] = {}
    for mode in modes:
        if mode == BASE_MODEL:
            if base is not None:
                outputs[mode] = base.complete(fragments, counts, INSIGHT_MAX_TOKENS)
        elif mode == PARAMETRIC:
            if retriever.parametric is not None:
                outputs[mode] = retriever.parametric.complete(fragments, counts, INSIGHT_MAX_TOKENS)
        else:
            units = retriever.units[unit_profile(mode)]
            hits = [units.search(text, RANK_DEPTH, retriever.search_mode) for text in fragments]
            found = retriever.retrieve(client, mode, fragments, multi, counts, hits)
            outputs[mode] = [[insight.text for insight in insights] for insights in found]
    return outputs


def accuracy_rows(items: Sequence[BenchmarkItem], outputs: Mapping[str, list[list[str]]]) -> list[dict]:
    """One row per item and mode: the fragment, the outputs, the golds and the score."""
    return [
        {
            "item_id": item.item_id,
            "kind": item.kind,
            "mode": mode,
            "fragment": item.gold_fragment,
            "outputs": list(found[n]),
            "gold_answers": list(item.gold_answers),
            "score": score(found[n], item.gold_answers),
        }
        for mode, found in outputs.items()
        for n, item in enumerate(items)
    ]


def accuracy_table(rows: Sequence[Mapping]) -> list[dict]:
    """Table 3: per question kind and mode, the mean score."""
    table = []
    for kind, mode in dict.fromkeys((row["kind"], row["mode"]) for row in rows):
        mine = [row["score"] for row in rows if row["kind"] == kind and row["mode"] == mode]
        table.append(
            {
                "kind": kind,
                "mode": mode,
                "measure": MEASURES.get(kind, "score"),
                "items": len(mine),
                "accuracy": round(sum(mine) / len(mine), 3),
                "caveat": CIRCULAR.get(insight_method(mode)),
            }
        )
    return table
