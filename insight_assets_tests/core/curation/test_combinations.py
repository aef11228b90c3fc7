"""Which papers each question spans: the paper's size rule, distinct seeded draws."""

from __future__ import annotations

import math
import time

import pytest

from insight_assets.core.curation import QuestionSettings, combination_size_for, sample_combinations


def ids(count: int) -> list[str]:
    return [f"doc-{number:02d}" for number in range(count)]


@pytest.mark.parametrize(
    ("documents", "size"), [(1, 1), (3, 3), (5, 5), (10, 5), (15, 5), (16, 10), (35, 10)]
)
def test_size_rule_five_up_to_fifteen_papers_ten_above_all_when_fewer(documents: int, size: int):
    assert combination_size_for(documents, QuestionSettings()) == size


def test_a_configured_size_overrides_the_rule():
    assert combination_size_for(20, QuestionSettings(combination_size=3)) == 3
    assert combination_size_for(2, QuestionSettings(combination_size=3)) == 2


def test_combinations_are_distinct_sorted_in_collection_order_and_seeded():
    documents = ids(12)
    settings = QuestionSettings()
    drawn = sample_combinations(documents, settings)

    assert len(drawn) == 50 and len(set(drawn)) == 50
    assert all(len(combination) == 5 for combination in drawn)
    assert all(list(combination) == sorted(combination, key=documents.index) for combination in drawn)
    assert sample_combinations(documents, settings) == drawn
    assert sample_combinations(documents, QuestionSettings(seed=7)) != drawn


def test_capped_at_the_number_of_possible_combinations():
    assert len(sample_combinations(ids(6), QuestionSettings())) == math.comb(6, 5)
    assert sample_combinations(ids(4), QuestionSettings()) == [tuple(ids(4))]
    assert sample_combinations([], QuestionSettings()) == []


def test_large_collections_are_sampled_without_listing_every_combination():
    started = time.perf_counter()
    drawn = sample_combinations(ids(35), QuestionSettings())
    assert time.perf_counter() - started < 1.0  # C(35, 10) is 183 million
    assert len(set(drawn)) == 50 and all(len(combination) == 10 for combination in drawn)
    assert sample_combinations(ids(35), QuestionSettings()) == drawn


def test_repeated_ids_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        sample_combinations(["a", "b", "a"], QuestionSettings())
