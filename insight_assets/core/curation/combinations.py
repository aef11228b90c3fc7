"""Which papers each question is written over: seeded random combinations of the collection.

SCOpE-QA (Appendix A step 3) samples 50 combinations per collection, of 5 papers when the
collection has at most 15 and of 10 otherwise. A collection smaller than the combination size
gives one combination of all its papers.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from ..stage_settings import StageSettings

# Up to this many possible combinations they are listed and sampled from; beyond it distinct ones
# are drawn at random until there are enough (C(35, 10) is 183 million: never list those).
_ENUMERATE_LIMIT = 10_000


class QuestionSettings(StageSettings):
    """InsightGen §3 / Appendix A, C: the defaults are the paper's."""

    combination_size: int | None = Field(
        default=None,
        ge=2,
        description="Documents per combination; unset: 5 for collections of at most 15 documents, else 10.",
    )
    small_collection_max: int = Field(
        default=15, ge=1, description="The paper's rule: a small collection's size."
    )
    small_combination_size: int = Field(
        default=5, ge=2, description="Documents per combination, small collection."
    )
    large_combination_size: int = Field(
        default=10, ge=2, description="Documents per combination, larger one."
    )
    num_combinations: int = Field(
        default=50, ge=1, description="Document combinations sampled per collection."
    )
    candidates_per_combination: int = Field(
        default=10, ge=1, description="Candidate questions asked per combination."
    )
    target_count: int = Field(
        default=200, ge=1, description="Questions kept per collection (fewer for small ones)."
    )
    min_words: int = Field(default=15, ge=1, description="Shortest question, in words.")
    max_words: int = Field(default=35, ge=1, description="Longest question, in words.")
    duplicate_threshold: float = Field(
        default=0.9, description="Cosine at which a question is a near-duplicate."
    )
    seed: int = Field(default=42, description="Seed of the combination sampling.")
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")
    max_tokens: int | None = Field(default=2000, description="Appendix C: max_tokens 2000.")


@dataclass(frozen=True)
class Combination:
    index: int
    document_ids: tuple[str, ...]


def combination_size_for(n_documents: int, settings: QuestionSettings) -> int:
    """Papers per combination: the configured size, else 5 up to ``small_collection_max`` papers
    and 10 above; never more than the collection has."""
    if settings.combination_size is not None:
        rule = settings.combination_size
    elif n_documents <= settings.small_collection_max:
        rule = settings.small_combination_size
    else:
        rule = settings.large_combination_size
    return max(0, min(rule, n_documents))


def questions_per_combination(settings: QuestionSettings) -> int:
    """How many refined questions each combination contributes: the target spread evenly
    (200 over 50 combinations: 4)."""
    return math.ceil(settings.target_count / max(settings.num_combinations, 1))


def sample_combinations(document_ids: Sequence[str], settings: QuestionSettings) -> list[tuple[str, ...]]:
    """Up to ``num_combinations`` distinct combinations (never more than C(n, k)), in the order
    drawn by ``random.Random(seed)``; each lists its ids in ``document_ids`` order."""
    ids = list(document_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be distinct")
    size = combination_size_for(len(ids), settings)
    possible = math.comb(len(ids), size)
    wanted = min(settings.num_combinations, possible)
    if size == 0 or wanted <= 0:
        return []
    rng = random.Random(settings.seed)
    if possible <= _ENUMERATE_LIMIT:
        drawn = rng.sample(list(itertools.combinations(range(len(ids)), size)), wanted)
    else:
        seen: set[tuple[int, ...]] = set()
        drawn = []
        while len(drawn) < wanted:
            combination = tuple(sorted(rng.sample(range(len(ids)), size)))
            if combination not in seen:
                seen.add(combination)
                drawn.append(combination)
    return [tuple(ids[index] for index in combination) for combination in drawn]
