"""Themes carried from one build to the next (core/themes/theme_updates.py): what a new paper's chunks touch
changes, the rest stays exactly as it was, and removing them again restores the earlier graph."""

import numpy as np
import pytest

from insight_assets.core.methods.insightgen.store import load_theme_graph
from insight_assets.core.storage.stores import Warehouse
from insight_assets.core.themes import graph_archive
from insight_assets.core.themes.clustering import (
    ThemeGraph,
    ThemeGraphSettings,
    build_theme_graph,
    cluster_count,
)

from .test_clustering import blobs, texts_for


def members(graph: ThemeGraph) -> dict[frozenset[str], int]:
    """Each theme's chunk set, with its number."""
    grouped: dict[int, set[str]] = {}
    for chunk, theme in zip(graph.chunk_ids, graph.assignments, strict=True):
        grouped.setdefault(int(theme), set()).add(chunk)
    return {frozenset(chunks): theme for theme, chunks in grouped.items()}


def _nearest_first(graph: ThemeGraph, theme: int) -> list[str]:
    members = np.flatnonzero(graph.assignments == theme)
    return [graph.chunk_ids[i] for i in members[np.argsort(graph.distances[members], kind="stable")]]


def build(ids, vectors, texts, previous=None, embedder="model-a", **settings) -> ThemeGraph:
    return build_theme_graph(
        list(ids), vectors, list(texts), ThemeGraphSettings(**settings), previous=previous, embedder=embedder
    )


@pytest.fixture
def collection():
    """Eight topics of 14 chunks; the last 6 chunks of topic 0 are the new paper's."""
    vectors, truth = blobs(8, 14, 24, 0.05, seed=3)
    ids = np.array([f"chunk-{i}" for i in range(len(vectors))])
    texts = np.array(texts_for(truth))
    new = np.zeros(len(vectors), dtype=bool)
    new[8:14] = True
    return ids, vectors, texts, new


def test_a_new_papers_chunks_join_the_nearest_themes_and_every_other_theme_stays_as_it_was(collection):
    ids, vectors, texts, new = collection
    assert cluster_count(int((~new).sum()), "sqrt") == cluster_count(len(ids), "sqrt")
    before = build(ids[~new], vectors[~new], texts[~new])
    after = build(ids, vectors, texts, previous=before)

    assert "carried over" in after.account and "6 chunks joined" in after.account
    assert after.k == before.k
    kept_ids = set(ids[~new])
    for chunks, theme in members(after).items():
        old = chunks & kept_ids
        assert members(before)[frozenset(old)] == theme  # every kept chunk keeps its theme
    touched = {int(after.assignments[list(after.chunk_ids).index(chunk)]) for chunk in ids[new]}
    # Every theme keeps the centroid it was fitted with, so its old chunks keep their order.
    assert np.array_equal(after.centroids, before.centroids)
    for theme in range(after.k):
        old = [chunk for chunk in _nearest_first(after, theme) if chunk in kept_ids]
        assert old == _nearest_first(before, theme)
    for theme in set(range(after.k)) - touched:
        assert after.labels[theme] == before.labels[theme]
    # The new chunks sit where topic 0's other chunks are.
    topic_zero = {int(after.assignments[list(after.chunk_ids).index(chunk)]) for chunk in ids[:8]}
    assert touched <= topic_zero
    assert not after.fitted[new].any() and after.fitted[~new].all()


def test_removing_the_new_chunks_again_restores_the_earlier_graph(collection):
    ids, vectors, texts, new = collection
    before = build(ids[~new], vectors[~new], texts[~new])
    grown = build(ids, vectors, texts, previous=before)
    back = build(ids[~new], vectors[~new], texts[~new], previous=grown)

    assert np.array_equal(back.assignments, before.assignments)
    assert np.array_equal(back.centroids, before.centroids)
    assert back.labels == before.labels
    assert back.edges == before.edges
    assert back.fitted.all() and back.fit_size == before.fit_size


def test_a_collection_changed_by_more_than_the_refit_share_is_fitted_afresh(collection):
    ids, vectors, texts, new = collection
    before = build(ids[~new], vectors[~new], texts[~new])
    after = build(ids, vectors, texts, previous=before, refit_share=0.04)  # 6 of 112 is 5%

    assert after.account.startswith("fitted afresh") and "refit_share" in after.account
    assert after.fitted.all() and after.fit_size == len(ids)
    fresh = build(ids, vectors, texts)
    assert np.array_equal(after.assignments, fresh.assignments)


def test_changes_add_up_from_the_last_fit_not_from_the_last_build(collection):
    ids, vectors, texts, new = collection
    first_half = new & (np.arange(len(ids)) < 11)
    base = build(ids[~new], vectors[~new], texts[~new])
    step = ~new | first_half
    one = build(ids[step], vectors[step], texts[step], previous=base, refit_share=0.04)
    assert "carried over" in one.account  # 3 of 109 changed: under 4%
    two = build(ids, vectors, texts, previous=one, refit_share=0.04)
    assert two.account.startswith("fitted afresh")  # 6 of 112 since the fit: over 4%


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"random_state": 7}, "settings or the embedder"),
        ({"embedder": "model-b"}, "settings or the embedder"),
        ({"keep_themes": False}, "keep_themes is off"),
    ],
)
def test_other_clustering_settings_or_another_embedder_fit_afresh(collection, change, reason):
    ids, vectors, texts, new = collection
    before = build(ids[~new], vectors[~new], texts[~new])
    after = build(ids, vectors, texts, previous=before, **change)
    assert after.account.startswith("fitted afresh") and reason in after.account


def test_label_and_edge_settings_keep_the_themes_and_are_applied():
    vectors, truth = blobs(4, 10, 16, 0.05, seed=5)
    ids = [f"c{i}" for i in range(len(vectors))]
    before = build(ids, vectors, texts_for(truth))
    assert any(", " in label for label in before.labels)
    after = build(ids, vectors, texts_for(truth), previous=before, label_terms=1, edge_neighbours=0)
    assert "carried over" in after.account
    assert np.array_equal(after.assignments, before.assignments)
    assert not any(", " in label for label in after.labels)  # labelled again with one term
    assert len(after.edges) == after.k - 1  # the spanning tree alone


def test_a_grown_count_splits_the_most_spread_theme():
    vectors, truth = blobs(6, 20, 16, 0.05, seed=11)
    extra, extra_truth = blobs(6, 4, 16, 0.05, seed=11)  # the same six topics, 24 more chunks
    ids = [f"c{i}" for i in range(len(vectors))]
    more = [f"n{i}" for i in range(len(extra))]
    assert cluster_count(120, "sqrt") == 11 and cluster_count(144, "sqrt") == 12
    before = build(ids, vectors, texts_for(truth))
    after = build(
        ids + more,
        np.vstack([vectors, extra]),
        texts_for(truth) + texts_for(extra_truth),
        previous=before,
    )
    assert "carried over" in after.account and "1 themes split" in after.account
    assert after.k == 12
    kept = [theme for theme in range(11) if np.array_equal(after.centroids[theme], before.centroids[theme])]
    assert len(kept) == 10  # the split theme's halves have their members' means, the rest are held
    old = members(before)
    unchanged = [chunks for chunks in members(after) if chunks in old]
    assert unchanged, "a theme the new chunks did not touch and the split did not take is unchanged"


def test_a_grown_count_splits_a_theme_the_new_chunks_joined_and_leaves_the_others_as_they_were():
    """A loose topic is the most spread theme of all, but the new chunks join a tight one: the
    count rule's extra theme is split from what they joined, not from the theme they never touched."""
    vectors, truth = blobs(6, 20, 16, 0.02, seed=11)
    rng = np.random.default_rng(5)
    loose = truth == 5
    vectors[loose] += rng.normal(scale=0.35, size=(int(loose.sum()), 16))
    extra = blobs(6, 24, 16, 0.02, seed=11)[0][:24]  # 24 more chunks of topic 0
    ids = [f"c{i}" for i in range(len(vectors))]
    more = [f"n{i}" for i in range(len(extra))]
    before = build(ids, vectors, texts_for(truth))
    after = build(
        ids + more,
        np.vstack([vectors, extra]),
        texts_for(truth) + texts_for(np.zeros(24, dtype=int)),
        previous=before,
    )
    assert "carried over" in after.account and "1 themes split" in after.account and after.k == before.k + 1
    joined = {int(theme) for theme in after.assignments[len(ids) :]}
    old = members(before)
    for chunks, theme in members(after).items():
        if not chunks & set(more) and theme not in joined:
            assert chunks in old, f"theme {theme}, which no new chunk joined, changed"
    loose_themes = {int(theme) for theme in before.assignments[loose]}
    assert all(chunks in old for chunks, theme in members(after).items() if theme in loose_themes)


def test_a_theme_that_loses_every_chunk_is_dropped():
    vectors, truth = blobs(5, 9, 16, 0.02, seed=2)
    ids = np.array([f"c{i}" for i in range(len(vectors))])
    texts = np.array(texts_for(truth))
    before = build(ids, vectors, texts, cluster_count="n/5", refit_share=0.5)  # 9 themes of 45
    gone = before.assignments == before.assignments[0]
    after = build(
        ids[~gone], vectors[~gone], texts[~gone], previous=before, cluster_count="n/5", refit_share=0.5
    )
    assert "carried over" in after.account
    assert after.k == before.k - 1
    assert sorted(members(after)) == sorted(
        chunks for chunks in members(before) if not chunks & set(ids[gone])
    )


def test_the_fit_survives_the_warehouse_tables(collection):
    ids, vectors, texts, new = collection
    before = build(ids[~new], vectors[~new], texts[~new])
    grown = build(ids, vectors, texts, previous=before)
    stored = ThemeGraph.from_tables(*grown.to_tables("demo").values())
    assert stored.fit_key == grown.fit_key and stored.fit_size == int((~new).sum())
    assert np.array_equal(stored.fitted, grown.fitted)
    again = build(ids, vectors, texts, previous=stored)
    assert np.array_equal(again.assignments, grown.assignments)
    assert again.labels == grown.labels


def _graph_equal(one: ThemeGraph, other: ThemeGraph) -> bool:
    return (
        one.chunk_ids == other.chunk_ids
        and np.array_equal(one.assignments, other.assignments)
        and np.array_equal(one.centroids, other.centroids)
        and one.labels == other.labels
        and one.edges == other.edges
        and np.array_equal(one.fitted, other.fitted)
        and one.fit_size == other.fit_size
    )


def test_a_collection_back_at_an_earlier_state_gets_that_states_graph_back(collection, tmp_path):
    """100 chunks make 10 themes (the count rule's ceiling of sqrt), 112 make 11: the paper's chunks
    are carried in and a theme is split; removed again, carrying alone does not undo the split (the
    halves keep their members' means). The archive gives the first graph back."""
    ids, vectors, texts, _ = collection
    paper = np.arange(len(ids)) >= 100
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    settings = ThemeGraphSettings()

    def build_and_keep(chosen: np.ndarray, previous: ThemeGraph | None) -> tuple[ThemeGraph, bool]:
        inputs = graph_archive.built_from(list(ids[chosen]), list(texts[chosen]), settings, "model-a", "2")
        kept = graph_archive.kept_graph(warehouse, "demo", inputs)
        graph = kept[0] if kept else build(ids[chosen], vectors[chosen], texts[chosen], previous=previous)
        warehouse.replace_partition("demo", graph.to_tables("demo"))
        graph_archive.keep_graph(warehouse, "demo", inputs, graph.to_tables("demo"))
        return graph, kept is not None

    first, _ = build_and_keep(~paper, None)
    grown, restored = build_and_keep(np.ones(len(ids), dtype=bool), first)
    assert not restored and grown.k == first.k + 1 and "carried over" in grown.account
    carried = build(ids[~paper], vectors[~paper], texts[~paper], previous=grown)
    assert not _graph_equal(carried, first)  # what carrying alone gives: the history shows
    back, restored = build_and_keep(~paper, grown)
    assert restored and _graph_equal(back, first)
    assert _graph_equal(load_theme_graph(warehouse, "demo"), first)


def test_the_archive_tells_other_settings_and_texts_apart_and_keeps_the_last_graphs(collection, tmp_path):
    ids, vectors, texts, _ = collection
    key = graph_archive.built_from(list(ids), list(texts), ThemeGraphSettings(), "model-a", "2")
    assert key != graph_archive.built_from(
        list(ids), list(texts), ThemeGraphSettings(label_terms=5), "model-a", "2"
    )
    assert key != graph_archive.built_from(list(ids), list(texts), ThemeGraphSettings(), "model-b", "2")
    assert key != graph_archive.built_from(
        list(ids), [*texts[:-1], "another text"], ThemeGraphSettings(), "model-a", "2"
    )
    assert key != graph_archive.built_from(list(ids), list(texts), ThemeGraphSettings(), "model-a", "3")

    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    graph = build(ids, vectors, texts)
    keys = [f"inputs-{n}" for n in range(graph_archive.KEEP_GRAPHS + 2)]
    for inputs in keys:
        warehouse.replace_partition("demo", graph.to_tables("demo"))
        graph_archive.keep_graph(warehouse, "demo", inputs, graph.to_tables("demo"))
    kept = [row["inputs_key"] for row in warehouse.rows("SELECT inputs_key FROM kept_builds")]
    assert sorted(kept) == sorted(keys[-graph_archive.KEEP_GRAPHS :])
    assert graph_archive.kept_graph(warehouse, "demo", keys[0]) is None
    assert graph_archive.kept_graph(warehouse, "other", keys[-1]) is None
