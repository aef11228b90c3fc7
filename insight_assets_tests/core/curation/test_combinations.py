"""Which papers each question spans: the paper's size rule, distinct seeded draws."""

from __future__ import annotations

import math
import time

import pytest

from insight_assets.core.curation import QuestionsSettings, combination_size_for, sample_combinations


def ids(count: int) -> list[str]:
    return [f"doc-{number:02d}" for number in range(count)]


@pytest.mark.parametrize(
    ("documents", "size"), [(1, 1), (3, 3), (5, 5), (10, 5), (15, 5), (16, 10), (35, 10)]
)
def test_size_rule_five_up_to_fifteen_papers_ten_above_all_when_fewer(documents: int, size: int):
    assert combination_size_for(documents, QuestionsSettings()) == size


def test_a_configured_size_overrides_the_rule():
    assert combination_size_for(20, QuestionsSettings(combination_size=3)) == 3
    assert combination_size_for(2, QuestionsSettings(combination_size=3)) == 2


def test_combinations_are_distinct_sorted_in_collection_order_and_seeded():
    documents = ids(12)
    settings = QuestionsSettings()
    drawn = sample_combinations(documents, settings)

    assert len(drawn) == 50 and len(set(drawn)) == 50
    assert all(len(combination) == 5 for combination in drawn)
    assert all(list(combination) == sorted(combination, key=documents.index) for combination in drawn)
    assert sample_combinations(documents, settings) == drawn
    assert sample_combinations(documents, QuestionsSettings(seed=7)) != drawn


def test_capped_at_the_number_of_possible_combinations():
    assert len(sample_combinations(ids(6), QuestionsSettings())) == math.comb(6, 5)
    assert sample_combinations(ids(4), QuestionsSettings()) == [tuple(ids(4))]
    assert sample_combinations([], QuestionsSettings()) == []


def test_large_collections_are_sampled_without_listing_every_combination():
    started = time.perf_counter()
    drawn = sample_combinations(ids(35), QuestionsSettings())
    assert time.perf_counter() - started < 1.0  # C(35, 10) is 183 million
    assert len(set(drawn)) == 50 and all(len(combination) == 10 for combination in drawn)
    assert sample_combinations(ids(35), QuestionsSettings()) == drawn


def test_repeated_ids_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        sample_combinations(["a", "b", "a"], QuestionsSettings())


def test_an_added_paper_replaces_its_share_of_the_combinations_not_the_sample():
    before = sample_combinations(ids(10), QuestionsSettings())
    papers = ids(10) + ["doc-new"]

    after = sample_combinations(papers, QuestionsSettings(), previous=before)

    assert len(after) == 50 and len(set(after)) == 50
    new = [combination for combination in after if combination not in before]
    # Its share: 50 combinations times 1 paper in 11, every one of them with the new paper.
    assert len(new) == round(50 / 11)
    assert all("doc-new" in combination for combination in new)
    assert all(list(c) == sorted(c, key=papers.index) for c in after)
    # Nothing changed since: the same sample again.
    assert sample_combinations(papers, QuestionsSettings(), previous=after) == after


def test_a_removed_paper_takes_its_combinations_and_the_rest_stay():
    before = sample_combinations(ids(11), QuestionsSettings())
    papers = ids(11)[1:]

    after = sample_combinations(papers, QuestionsSettings(), previous=before)

    survivors = [combination for combination in before if "doc-00" not in combination]
    assert len(after) == 50 and len(set(after)) == 50
    assert after[: len(survivors)] == survivors
    assert all("doc-00" not in combination for combination in after)


def test_a_collection_built_from_scratch_gets_the_seeded_sample_whatever_came_before():
    assert sample_combinations(ids(12), QuestionsSettings(), previous=()) == sample_combinations(
        ids(12), QuestionsSettings()
    )
    # A size rule that changed (a sixteenth paper: combinations of 10) makes every old one invalid.
    before = sample_combinations(ids(15), QuestionsSettings())
    after = sample_combinations(ids(16), QuestionsSettings(), previous=before)
    assert len(after) == 50 and all(len(combination) == 10 for combination in after)
