"""Insight-RAG's measures (§4, §5.4): exact match (the gold appears in the answer), token F1,
both averaged over the gold answers of a multi-document question, accuracy on matching, Hits@50
and MRR of the gold documents in a method's retrieval ranking (averaged over a multi-document
question's papers, the paper's A-Hits and A-MRR), and the same of the gold unit (the chunk holding
the evidence sentence, the gold triple, the evidence sentence) since a collection of 20 papers
makes document Hits@50 trivially 1.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import lazy_regex

from ...retrieval.citing import strip_citations
from .benchmark import BenchmarkItem, normalised_text
from .schemas import FAILED, INDEX, LLM, MATCHING, RANK_DEPTH, insight_method

if TYPE_CHECKING:
    from .pipeline import MethodAnswer

_ARTICLES = lazy_regex(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans({char: " " for char in string.punctuation})


def normalise_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, punctuation and articles removed, whitespace collapsed."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(response: str, gold: str) -> float:
    """1.0 when the normalised gold appears in the normalised response on word boundaries."""
    needle = normalise_answer(gold)
    return float(bool(needle) and f" {needle} " in f" {normalise_answer(response)} ")


def token_f1(response: str, gold: str) -> float:
    predicted, wanted = normalise_answer(response).split(), normalise_answer(gold).split()
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def averaged(metric, response: str, golds: Sequence[str]) -> float:
    """``metric`` averaged over the gold answers (one gold: the metric itself)."""
    return sum(metric(response, gold) for gold in golds) / len(golds) if golds else 0.0


def hits_at(ranked: Sequence[str], gold: str, k: int = RANK_DEPTH) -> float:
    return float(gold in ranked[:k])


def reciprocal_rank(ranked: Sequence[str], gold: str) -> float:
    """1 / the rank of the first occurrence of ``gold`` (0 when absent)."""
    for rank, found in enumerate(ranked, start=1):
        if found == gold:
            return 1.0 / rank
    return 0.0


def retrieval_scores(ranked: Sequence[str], golds: Sequence[str]) -> tuple[float, float]:
    """(Hits@50, MRR) averaged over ``golds``; any of them counts for a unit (one fact, several copies)."""
    if not golds:
        return 0.0, 0.0
    return (
        sum(hits_at(ranked, gold) for gold in golds) / len(golds),
        sum(reciprocal_rank(ranked, gold) for gold in golds) / len(golds),
    )


def unit_scores(ranked: Sequence[str], golds: set[str]) -> tuple[float, float]:
    """(Hits@50, reciprocal rank) of the best-ranked of ``golds`` (interchangeable units)."""
    for rank, found in enumerate(ranked[:RANK_DEPTH], start=1):
        if found in golds:
            return 1.0, 1.0 / rank
    return 0.0, 0.0


def score_answer(answer: MethodAnswer, item: BenchmarkItem, gold_units: set[str]) -> dict:
    text = strip_citations(answer.answer)
    if item.kind == MATCHING:  # accuracy per item; F1 is a measure of the set (``matching_f1``)
        em, f1 = float(answer.status != FAILED and text.strip().lower() == item.gold_answers[0].lower()), None
    else:
        em, f1 = averaged(exact_match, text, item.gold_answers), averaged(token_f1, text, item.gold_answers)
    ranked = bool(answer.ranked_ids) and item.kind != MATCHING  # a pair's own papers are never retrieved
    hits, mrr = retrieval_scores(answer.ranked_doc_ids, item.gold_doc_ids)
    unit_hits, unit_rr = unit_scores(answer.ranked_ids, gold_units)
    return {
        "item_id": item.item_id,
        "kind": item.kind,
        "method": answer.method,
        "status": answer.status,
        "exact_match": em,
        "f1": f1,
        "context_tokens": answer.context_tokens,
        "doc_hits50": hits if ranked else None,
        "doc_mrr": mrr if ranked else None,
        "unit_hits50": unit_hits if ranked else None,
        "unit_mrr": unit_rr if ranked else None,
    }


def _mean(values) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 3) if kept else None


# Where a method's numbers cannot be read as a result: it searches the very triples the benchmark's
# questions and gold answers were made from, so a triple found is the gold answer.
CIRCULAR = {
    insight_method(INDEX): "circular: searches the triples the benchmark was built from",
    insight_method(LLM): "circular: searches the triples the benchmark was built from",
}


def method_table(
    scored: Sequence[Mapping], agreement: Mapping[str, float], gold_labels: Mapping[str, str]
) -> list[dict]:
    """One row per (kind, method): items, failures, EM (accuracy for matching), F1 (for matching,
    the F1 of "Yes" over the set: ``gold_labels`` by item), context tokens, retrieval Hits@50 and
    MRR, the identifier's agreement for Insight-RAG rows, and what makes a row's numbers no result
    (``caveat``: a circular mode). A method that failed every item of a kind has no scores (None);
    what holds for the whole table is ``table_caveats``'."""
    rows = []
    for kind, method in dict.fromkeys((s["kind"], s["method"]) for s in scored):
        mine = [s for s in scored if s["kind"] == kind and s["method"] == method]
        failed = sum(s["status"] == FAILED for s in mine)
        # A method that answered nothing has no score: empty cells, not the 0.0 of its empty answers.
        measured = mine if failed < len(mine) else []
        rows.append(
            {
                "kind": kind,
                "method": method,
                "items": len(mine),
                "failed": failed,
                "exact_match": _mean(s["exact_match"] for s in measured),
                "f1": (
                    matching_f1(measured, gold_labels)
                    if kind == MATCHING
                    else _mean(s["f1"] for s in measured)
                )
                if measured
                else None,
                "context_tokens": _mean(s["context_tokens"] for s in measured),
                "doc_hits50": _mean(s["doc_hits50"] for s in mine),
                "doc_mrr": _mean(s["doc_mrr"] for s in mine),
                "unit_hits50": _mean(s["unit_hits50"] for s in mine),
                "unit_mrr": _mean(s["unit_mrr"] for s in mine),
                "identifier_agreement": agreement.get(kind) if method.startswith("insight") else None,
                "caveat": CIRCULAR.get(method),
            }
        )
    return rows


def table_caveats(rows: Sequence[Mapping], papers: int) -> list[str]:
    """What holds for every row of the table that has the measure, said once beside it rather
    than in each row: document Hits@50 is 1 by construction with ``papers`` no more than 50."""
    if papers <= RANK_DEPTH and any(row["doc_hits50"] is not None for row in rows):
        return [f"doc_hits50 is 1 by construction here: {papers} papers, the top {RANK_DEPTH} ranked"]
    return []


def matching_f1(scored: Sequence[Mapping], gold_labels: Mapping[str, str]) -> float | None:
    """F1 of the answer "Yes" (the pair cite each other) over a method's matching items: a right
    answer is the gold label, a wrong one the other label, a failed one neither."""
    true_yes = false_yes = missed_yes = 0
    for score in scored:
        gold_yes = gold_labels[score["item_id"]].lower() == "yes"
        answered = score["status"] != FAILED
        right = bool(score["exact_match"])
        true_yes += gold_yes and right
        missed_yes += gold_yes and not right
        false_yes += answered and not gold_yes and not right
    if not scored:
        return None
    return round(2 * true_yes / (2 * true_yes + false_yes + missed_yes), 3) if true_yes else 0.0


def gold_units(
    item: BenchmarkItem, sources: Mapping, sentence_ids: Mapping[tuple[str, str], str]
) -> set[str]:
    """The units that hold an item's evidence: its triples, its sentences, the chunks holding them."""
    evidence = [normalised_text(sentence) for sentence in item.evidence]
    chunks = {
        chunk_id
        for chunk_id, source in sources.items()
        if source.doc_id in item.gold_doc_ids and any(e in normalised_text(source.text) for e in evidence)
    }
    sentences = {
        sentence_ids[(doc, s)] for doc in item.gold_doc_ids for s in item.evidence if (doc, s) in sentence_ids
    }
    return set(item.triple_ids) | sentences | chunks


def identifier_agreement(
    identified: Sequence[Mapping], items: Mapping[str, BenchmarkItem], embed
) -> dict[str, float]:
    """Per question kind: the mean cosine between each identified fragment (rows of ``item_id``,
    ``insights``) and the gold fragment; matching items have none."""
    rows = [row for row in identified if row["item_id"] in items and items[row["item_id"]].kind != MATCHING]
    if not rows:
        return {}
    texts = [" ".join(row["insights"]) or "-" for row in rows] + [
        items[row["item_id"]].gold_fragment for row in rows
    ]
    vectors = normalize_rows(embed(texts))
    cosines = (vectors[: len(rows)] * vectors[len(rows) :]).sum(axis=1)
    by_kind: dict[str, list[float]] = {}
    for row, cosine in zip(rows, cosines, strict=True):
        by_kind.setdefault(items[row["item_id"]].kind, []).append(float(cosine) if row["insights"] else 0.0)
    return {kind: round(sum(values) / len(values), 3) for kind, values in by_kind.items()}
