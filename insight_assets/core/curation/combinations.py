"""Which papers each question is written over: seeded random combinations of the collection.

SCOpE-QA (Appendix A step 3) samples 50 combinations per collection, of 5 papers when the
collection has at most 15 and of 10 otherwise. A collection smaller than the combination size
gives one combination of all its papers. The sample is stable under change (``sample_combinations``):
a paper added to a built collection replaces its share of the combinations, not the whole sample,
so the questions, answers and insights of the others are not bought again.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import Field

from insight_assets.core.runtime.stage_settings import StageSettings

# Up to this many possible combinations they are listed and sampled from; beyond it distinct ones
# are drawn at random until there are enough (C(35, 10) is 183 million: never list those).
_ENUMERATE_LIMIT = 10_000


class QuestionsSettings(StageSettings):
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


def combination_size_for(n_documents: int, settings: QuestionsSettings) -> int:
    """Papers per combination: the configured size, else 5 up to ``small_collection_max`` papers
    and 10 above; never more than the collection has."""
    if settings.combination_size is not None:
        rule = settings.combination_size
    elif n_documents <= settings.small_collection_max:
        rule = settings.small_combination_size
    else:
        rule = settings.large_combination_size
    return max(0, min(rule, n_documents))


def questions_per_combination(settings: QuestionsSettings) -> int:
    """How many refined questions each combination contributes: the target spread evenly
    (200 over 50 combinations: 4)."""
    return math.ceil(settings.target_count / max(settings.num_combinations, 1))


def sample_combinations(
    document_ids: Sequence[str],
    settings: QuestionsSettings,
    previous: Sequence[Sequence[str]] = (),
) -> list[tuple[str, ...]]:
    """Up to ``num_combinations`` distinct combinations (never more than C(n, k)); each lists its
    ids in ``document_ids`` order.

    Every possible combination has a rank, a hash of the seed and its papers, and a collection built
    from scratch gets the lowest-ranked ones. ``previous`` are the combinations of the collection's
    last build: the sample is kept stable under change, so what was asked of it is not asked again.
    Those whose papers are all still there and of the size in force are kept; papers in none of them
    (added since) get their share of the sample, ``num_combinations`` times their share of the
    papers and at least one combination, taken from the highest-ranked kept ones; combinations lost
    with a removed paper are made up from the lowest-ranked others.
    """
    ids = list(document_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be distinct")
    size = combination_size_for(len(ids), settings)
    possible = math.comb(len(ids), size)
    wanted = min(settings.num_combinations, possible)
    if size == 0 or wanted <= 0:
        return []
    order = {document_id: position for position, document_id in enumerate(ids)}

    def arranged(combination: Sequence[str]) -> tuple[str, ...]:
        return tuple(sorted(combination, key=order.__getitem__))

    kept = list(
        dict.fromkeys(
            arranged(combination)
            for combination in previous
            if len(set(combination)) == size and all(document_id in order for document_id in combination)
        )
    )
    seen_before = {document_id for combination in previous for document_id in combination}
    added = [document_id for document_id in ids if document_id not in seen_before] if previous else []
    share = max(1, round(wanted * len(added) / len(ids))) if added else 0
    # The kept ones to give up for the added papers' share: the highest-ranked go first.
    keep = sorted(kept, key=lambda c: _rank(settings.seed, c))[: max(0, min(len(kept), wanted - share))]
    room = wanted - len(keep)
    with_added = _first(
        (c for c in _lowest_ranked(ids, size, settings.seed) if not set(c).isdisjoint(added)),
        min(share, room),
        exclude=set(keep),
    )
    drawn = with_added + _first(
        _lowest_ranked(ids, size, settings.seed), room - len(with_added), exclude={*keep, *with_added}
    )
    still = set(keep)
    return [combination for combination in kept if combination in still] + drawn


def _first(
    combinations: Iterator[tuple[str, ...]], count: int, *, exclude: set[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    """The first ``count`` of ``combinations`` not in ``exclude`` (fewer if they run out)."""
    found: list[tuple[str, ...]] = []
    if count <= 0:
        return found
    for combination in combinations:
        if combination not in exclude:
            found.append(combination)
            if len(found) == count:
                break
    return found


def _rank(seed: int, combination: Sequence[str]) -> str:
    """A combination's place in the seeded order: a hash of the seed and its papers."""
    text = "\x1f".join([str(seed), *sorted(combination)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lowest_ranked(ids: list[str], size: int, seed: int) -> Iterator[tuple[str, ...]]:
    """Every combination of ``size`` of ``ids`` (in ``ids`` order), lowest rank first; beyond
    ``_ENUMERATE_LIMIT`` possible ones, distinct random ones, seeded by the seed and the papers."""
    if math.comb(len(ids), size) <= _ENUMERATE_LIMIT:
        every = itertools.combinations(ids, size)
        yield from sorted(every, key=lambda combination: _rank(seed, combination))
        return
    rng = random.Random(_rank(seed, ids))
    seen: set[tuple[int, ...]] = set()
    while True:
        combination = tuple(sorted(rng.sample(range(len(ids)), size)))
        if combination not in seen:
            seen.add(combination)
            yield tuple(ids[index] for index in combination)
