"""The offline judge: TF-IDF measures of each method's insights (see the package docstring)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insight_assets.core.startup.lazy import np

from ....extractive import terms, tfidf
from ....text import split_sentences
from .schemas import CRITERIA_SET, CRITERIA_SINGLE, MethodScore, SetJudgement

_FULLY_RELEVANT = 0.3
_DEPTH_TERMS = 15
_DEPTH_NEW_TERMS = 5


@dataclass(frozen=True)
class OfflineMeasures:
    """The offline judge's scores for one method, and the similarities they come from."""

    novelty: float
    diversity: float
    relevance: float
    depth: float
    answer_similarity: float  # mean over insights of the highest cosine to an answer sentence
    question_similarity: float
    pairwise_similarity: float | None  # None for a single insight
    terms: float  # mean distinct content words per insight
    new_terms: float  # mean of those in neither question nor answer

    def overall(self, criteria: Sequence[str]) -> float:
        """The mean of ``criteria``: the offline judge has no overall view of its own."""
        return statistics.fmean(getattr(self, name) for name in criteria)

    def rationale(self, count: int) -> str:
        pairwise = "n/a" if self.pairwise_similarity is None else f"{self.pairwise_similarity:.2f}"
        return (
            f"Offline TF-IDF measures over {count} insight(s): mean highest cosine to an answer "
            f"sentence {self.answer_similarity:.2f}, mean cosine to the question "
            f"{self.question_similarity:.2f}, mean pairwise cosine {pairwise}, {self.terms:.1f} "
            f"content words per insight, {self.new_terms:.1f} of them in neither question nor answer."
        )


def offline_measures(
    question: str, answer: str, sets: Mapping[str, Sequence[str]]
) -> dict[str, OfflineMeasures]:
    """The offline judge's measures (module docstring) for each key of ``sets``."""
    answer_sentences = [answer[start:end] for start, end in split_sentences(answer)]
    texts = [text for insights in sets.values() for text in insights]
    vectors, _ = tfidf(texts + answer_sentences + [question])
    insight_vectors = vectors[: len(texts)]
    answer_vectors = vectors[len(texts) : len(texts) + len(answer_sentences)]
    question_vector = vectors[-1]
    known = set(terms(question)) | set(terms(answer))
    measures, start = {}, 0
    for key, insights in sets.items():
        own = insight_vectors[start : start + len(insights)]
        start += len(insights)
        to_answer = float((own @ answer_vectors.T).max(axis=1).mean()) if answer_sentences else 0.0
        to_question = float((own @ question_vector).mean())
        pairwise = None
        if len(insights) > 1:
            similarity = own @ own.T
            pairwise = float(similarity[np.triu_indices(len(insights), k=1)].mean())
        term_sets = [set(terms(text)) for text in insights]
        term_counts = [len(found) for found in term_sets]
        new_counts = [len(found - known) for found in term_sets]
        depth = statistics.fmean(
            0.5 * min(1.0, count / _DEPTH_TERMS) + 0.5 * min(1.0, new / _DEPTH_NEW_TERMS)
            for count, new in zip(term_counts, new_counts, strict=True)
        )
        measures[key] = OfflineMeasures(
            novelty=_clip05(5 * (1 - to_answer)),
            diversity=0.0 if pairwise is None else _clip05(5 * (1 - pairwise)),
            relevance=_clip05(5 * min(1.0, to_question / _FULLY_RELEVANT)),
            depth=_clip05(5 * depth),
            answer_similarity=to_answer,
            question_similarity=to_question,
            pairwise_similarity=pairwise,
            terms=statistics.fmean(term_counts),
            new_terms=statistics.fmean(new_counts),
        )
    return measures


def _clip05(value: float) -> float:
    return round(min(5.0, max(0.0, value)), 3)


def judge_sets_offline(question: str, answer: str, sets: Sequence[Mapping[str, Any]]) -> SetJudgement:
    measures = offline_measures(question, answer, {shown["label"]: shown["insights"] for shown in sets})
    return SetJudgement(
        scores=[
            MethodScore(
                label=shown["label"],
                rationale=measures[shown["label"]].rationale(len(shown["insights"])),
                overall=measures[shown["label"]].overall(CRITERIA_SET),
                **{name: getattr(measures[shown["label"]], name) for name in CRITERIA_SET},
            )
            for shown in sets
        ]
    )


def judge_single_offline(question: str, answer: str, insights: Sequence[Mapping[str, Any]]) -> SetJudgement:
    measures = offline_measures(question, answer, {shown["label"]: [shown["insight"]] for shown in insights})
    return SetJudgement(
        scores=[
            MethodScore(
                label=shown["label"],
                rationale=measures[shown["label"]].rationale(1),
                overall=measures[shown["label"]].overall(CRITERIA_SINGLE),
                **{name: getattr(measures[shown["label"]], name) for name in CRITERIA_SINGLE},
            )
            for shown in insights
        ]
    )
