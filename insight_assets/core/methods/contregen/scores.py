"""Retrieval recall against known documents, and the judge's coverage and relevance, per method.

A generated question's gold documents are its combination (the papers it was written from); a
user question's are the documents it names, if any. Recall is the share of the gold documents
that hold at least one passage the method retrieved: for ConTReGen every passage any node of the
tree retrieved (``recall``), and, beside it, only the passages that reached synthesis
(``recall_used``: kept nodes' relevant passages). *Chance* is the gold's share of the collection;
``chance_at_docs`` is what a method would recall by picking as many documents as it reached at
random (documents reached / collection size), the fairer floor for a method that reaches many.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...retrieval.citing import strip_citations
from .references import answer_sentences, facet_coverage, nli_shares, rouge_l
from .schemas import METHODS, Answer, TreeQuestion
from .tasks import CONTREGEN_JUDGE_ANSWER, CONTREGEN_NLI

if TYPE_CHECKING:
    from ...llm import LLMClient

CHANCE = "chance"
# The scores a judge model gives: coverage and relevance (1-5), and entailment and contradiction
# by its NLI; the others are measured (retrieval against the gold papers, ROUGE-L, costs).
JUDGED_COLUMNS = ("coverage", "relevance", "entailment", "contradiction")
SCORE_COLUMNS = (
    "recall",
    "recall_used",
    "chance_at_docs",
    "facet_coverage",
    "docs_retrieved",
    "passages_retrieved",
    "coverage",
    "relevance",
    "rouge_l",
    "entailment",
    "contradiction",
    "calls",
    "input_tokens",
    "output_tokens",
    "seconds",
)


@dataclass(frozen=True)
class ScoredAnswer:
    question_id: str
    method: str
    gold: int
    recall: float | None
    recall_used: float | None
    docs_retrieved: int
    passages_retrieved: int
    coverage: float | None
    relevance: float | None
    calls: int
    input_tokens: int
    output_tokens: int
    errors: tuple[str, ...] = field(default=())
    facet_coverage: float | None = None
    rouge_l: float | None = None
    entailment: float | None = None
    contradiction: float | None = None
    seconds: float | None = None


def recall(chunk_ids: Sequence[str], chunk_docs: Mapping[str, str], gold: Sequence[str]) -> float | None:
    """The share of ``gold`` documents holding one of ``chunk_ids``; None without gold."""
    if not gold:
        return None
    found = {chunk_docs[c] for c in chunk_ids if c in chunk_docs}
    return len(found & set(gold)) / len(set(gold))


def score_answers(
    client: LLMClient,
    questions: Sequence[TreeQuestion],
    answers: Sequence[Answer],
    chunk_docs: Mapping[str, str],
    references: Mapping[str, str],
    paragraphs: Mapping[str, str] | None = None,
    themes: tuple[Mapping[str, int], Mapping[str, set[int]]] | None = None,
) -> list[ScoredAnswer]:
    """Every answer's recall, facet coverage and the judge's ratings (none for an answer without
    text); for a question with a reference paragraph (``paragraphs``, by question id), ROUGE-L and
    NLI entailment and contradiction against it (``references.py``). ``themes``: each passage's
    theme and each paper's themes (``references.passage_themes``)."""
    paragraphs = paragraphs or {}
    by_id = {q.question_id: q for q in questions}
    judged = [a for a in answers if a.text and a.question_id in by_id]
    nli_inputs = [
        (a, {"reference": paragraphs[a.question_id], "sentences": answer_sentences(a.text)})
        for a in judged
        if a.question_id in paragraphs
    ]
    nli_inputs = [(a, inputs) for a, inputs in nli_inputs if inputs["sentences"]]
    nli = client.run_many(CONTREGEN_NLI, [inputs for _, inputs in nli_inputs])
    verdicts = {(a.question_id, a.method): item for (a, _), item in zip(nli_inputs, nli.items, strict=True)}
    batch = client.run_many(
        CONTREGEN_JUDGE_ANSWER,
        [
            {
                "question": by_id[a.question_id].question,
                "answer": strip_citations(a.text),
                "reference": paragraphs.get(a.question_id) or references.get(a.question_id, ""),
            }
            for a in judged
        ],
    )
    ratings = {(a.question_id, a.method): item for a, item in zip(judged, batch.items, strict=True)}
    scored = []
    for answer in answers:
        question = by_id.get(answer.question_id)
        if question is None:
            continue
        item = ratings.get((answer.question_id, answer.method))
        errors = [answer.error] if answer.error else []
        if item is not None and not item.ok:
            errors.append(f"judge: {item.error or item.status}")
        rating = item.value if item is not None and item.ok else None
        generation = _generation(answer, paragraphs.get(answer.question_id), verdicts, errors)
        scored.append(
            ScoredAnswer(
                question_id=answer.question_id,
                method=answer.method,
                gold=len(set(question.gold)),
                recall=recall(answer.retrieved, chunk_docs, question.gold),
                recall_used=recall(answer.used, chunk_docs, question.gold),
                docs_retrieved=len({chunk_docs[c] for c in answer.retrieved if c in chunk_docs}),
                passages_retrieved=len(answer.retrieved),
                coverage=rating.coverage if rating else None,
                relevance=rating.relevance if rating else None,
                calls=answer.calls,
                input_tokens=answer.input_tokens,
                output_tokens=answer.output_tokens,
                errors=tuple(errors),
                facet_coverage=facet_coverage(question.gold, answer.retrieved, *themes) if themes else None,
                seconds=answer.seconds,
                **generation,
            )
        )
    return scored


def _generation(
    answer: Answer, paragraph: str | None, verdicts, errors: list[str]
) -> dict[str, float | None]:
    """ROUGE-L and NLI shares of an answer against its question's reference paragraph, if any."""
    if paragraph is None or not answer.text:
        return {}
    found: dict[str, float | None] = {"rouge_l": rouge_l(paragraph, answer.text)}
    item = verdicts.get((answer.question_id, answer.method))
    if item is None:
        found["entailment"], found["contradiction"] = 0.0, 0.0  # no sentence of three words or more
    elif item.ok:
        found["entailment"], found["contradiction"] = nli_shares(item.value.verdicts)
    else:
        errors.append(f"nli: {item.error or item.status}")
    return found


def _mean(values: Sequence[float | int | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 3) if present else None


def method_table(
    scored: Sequence[ScoredAnswer], questions: Sequence[TreeQuestion], collection_size: int
) -> list[dict[str, object]]:
    """One row per method (means over its questions), and the chance row."""
    rows: list[dict[str, object]] = []
    for method in METHODS:
        mine = [s for s in scored if s.method == method]
        if not mine:
            continue
        values = {column: _mean([getattr(s, column, None) for s in mine]) for column in SCORE_COLUMNS}
        if collection_size:
            values["chance_at_docs"] = _mean(
                [min(1.0, s.docs_retrieved / collection_size) for s in mine if s.recall is not None]
            )
        rows.append(
            {
                "method": method,
                "questions": len(mine),
                "with_gold": sum(s.recall is not None for s in mine),
                **values,
            }
        )
    with_gold = [q for q in questions if q.gold]
    if with_gold and collection_size:
        rows.append(
            {
                "method": CHANCE,
                "questions": len(with_gold),
                "with_gold": len(with_gold),
                "recall": _mean([len(set(q.gold)) / collection_size for q in with_gold]),
            }
        )
    return rows
