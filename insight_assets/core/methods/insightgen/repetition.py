"""Insights that say what their answer already says (the check ``insights_do_not_repeat_the_answer``).

An insight is compared with each sentence of its answer, not with the whole answer: a short insight
that restates one sentence of a long answer is far from the answer as a whole (the demo's closest
insight was at 0.76 to its whole answer, 0.84 to the sentence it restated).

The threshold was measured on the corpus, with the bundled embedder (all-MiniLM-L6-v2), on pairs
written by the papers' own authors: 30 *restatements* (a paper's main contribution stated twice in
its own words, "We present X, ..." and "In this paper, we propose X, ...") and 186 *additions*
(that contribution beside one of the paper's result sentences). At 0.75 a sentence-level cosine
catches 43% of the restatements with 0.5% false alarms; at 0.80, 33% and none; at 0.70, 50% and
1.1%; the paper's 0.9 line for redundant answers (§3), 10% (and none at all against whole answers).
Restatements by a model that copies the answer score higher than an author's rewording, so 0.75
catches most of those; an addition is rarely mistaken for one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

from ...text import sentence_texts

REPEATS_ANSWER_COSINE = 0.75


@dataclass(frozen=True)
class Repetition:
    """An insight (its index in the list checked) at ``cosine`` to ``sentence`` of its answer."""

    index: int
    cosine: float
    sentence: str


def repeating_insights(
    embed: Callable[[list[str]], np.ndarray],
    insights: Sequence[tuple[str, str]],
    answers: Mapping[str, str],
    threshold: float = REPEATS_ANSWER_COSINE,
) -> list[Repetition]:
    """The ``insights`` ((question id, text) each) at cosine >= ``threshold`` to a sentence of
    their question's answer (or to the whole answer)."""
    if not insights:
        return []
    units = {question_id: [answer, *sentence_texts(answer)] for question_id, answer in answers.items()}
    texts = [text for _, text in insights] + [unit for found in units.values() for unit in found]
    vectors = normalize_rows(embed(texts))
    offsets, position = {}, len(insights)
    for question_id, found in units.items():
        offsets[question_id] = (position, position + len(found))
        position += len(found)
    repeated = []
    for index, (question_id, _) in enumerate(insights):
        start, end = offsets[question_id]
        cosines = vectors[start:end] @ vectors[index]
        best = int(np.argmax(cosines))
        if float(cosines[best]) >= threshold:
            repeated.append(Repetition(index, float(cosines[best]), units[question_id][best]))
    return repeated
