import numpy as np
import pytest

from insight_assets.core.methods.insightgen.selection import ClusterIndex, answer_pieces, select_context
from insight_assets.core.methods.insightgen.settings import InsightsSettings
from insight_assets.core.text import count_tokens
from insight_assets.core.themes.clustering import ThemeGraph, build_theme_graph

DIMS = 8


def unit(vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float64)
    return vector / np.linalg.norm(vector)


def toward(similarity: float, axis: int = 1) -> np.ndarray:
    """A unit vector with cosine ``similarity`` to e0, the rest along ``axis``."""
    vector = np.zeros(DIMS)
    vector[0], vector[axis] = similarity, np.sqrt(1 - similarity**2)
    return vector


def make_index(
    centroids: list[np.ndarray], edges: list[tuple[int, int]], chunks: int = 3, tokens: int | list[int] = 100
) -> ClusterIndex:
    """A hand-made graph: ``chunks`` chunks per cluster named ``c<cluster>-<i>``, chunk i at
    distance 0.01 * (i + 1) from its centroid, listed farthest first so the index must sort."""
    k = len(centroids)
    ids = [f"c{c}-{i}" for c in range(k) for i in reversed(range(chunks))]
    assignments = np.array([c for c in range(k) for _ in range(chunks)])
    distances = np.array([0.01 * (i + 1) for _ in range(k) for i in reversed(range(chunks))])
    centre_array = np.array([unit(c) for c in centroids], dtype=np.float32)
    graph = ThemeGraph(
        centroids=centre_array,
        assignments=assignments,
        chunk_ids=tuple(ids),
        labels=tuple(f"theme {c}" for c in range(k)),
        sizes=(chunks,) * k,
        edges=tuple(
            (min(a, b), max(a, b), float(1 - centre_array[a] @ centre_array[b])) for a, b in sorted(edges)
        ),
        method="hand",
        cluster_rule="-",
        distances=distances,
    )
    counts = tokens if isinstance(tokens, list) else [tokens] * len(ids)
    return ClusterIndex(graph, {cid: f"text of {cid}" for cid in ids}, dict(zip(ids, counts)))


def path_index() -> ClusterIndex:
    """0 - 1 - 2 - 3 on the graph, but cluster 3 is the nearest to the answer (e0) after 0."""
    centroids = [toward(1.0), toward(0.5, 1), toward(0.4, 2), toward(0.9, 3)]
    return make_index(centroids, [(0, 1), (1, 2), (2, 3)])


E0 = unit(np.eye(DIMS)[0])


def test_a_cluster_three_hops_away_needs_max_hops_three():
    index = path_index()
    two = select_context(index, E0, InsightsSettings(top_k=10, max_hops=2))
    assert two.answer_clusters == (0,)
    assert two.related_clusters == (1, 2)
    three = select_context(index, E0, InsightsSettings(top_k=10, max_hops=3))
    assert three.related_clusters == (3, 1, 2)  # nearest to the answer first, whatever the hops
    assert {c.cluster: c.hops for c in three.chunks} == {0: 0, 3: 3, 1: 1, 2: 2}
    one = select_context(index, E0, InsightsSettings(top_k=10, max_hops=1))
    assert one.related_clusters == (1,)
    assert select_context(index, E0, InsightsSettings(max_hops=0)).related_clusters == ()


def star_index() -> ClusterIndex:
    """Cluster 0 at e0, linked to clusters 1..8 whose similarity to e0 is scrambled."""
    similarities = [1.0, 0.3, 0.8, 0.5, 0.9, 0.1, 0.7, 0.6, 0.2]
    centroids = [toward(s, 1 + c % (DIMS - 1)) for c, s in enumerate(similarities)]
    return make_index(centroids, [(0, c) for c in range(1, 9)])


@pytest.mark.parametrize(("top_k", "expected"), [(0, ()), (1, (4,)), (3, (4, 2, 6)), (5, (4, 2, 6, 7, 3))])
def test_exactly_top_k_related_clusters_nearest_first(top_k, expected):
    context = select_context(star_index(), E0, InsightsSettings(top_k=top_k))
    assert context.related_clusters == expected
    related = [c.cluster for c in context.chunks if c.role == "related"]
    assert list(dict.fromkeys(related)) == list(expected)


def test_ties_go_to_fewer_hops_then_lower_index():
    # Clusters 1, 2 and 3 are equally far from the answer; 3 is one hop away, 1 and 2 two hops.
    same = toward(0.5, 1)
    centroids = [toward(1.0), toward(0.2, 2), same, same, same]
    index = make_index(centroids, [(0, 1), (0, 4), (1, 2), (1, 3)])
    context = select_context(index, E0, InsightsSettings(top_k=3))
    assert context.related_clusters == (4, 2, 3)


def test_answer_clusters_come_from_every_piece_nearest_first():
    index = path_index()
    blend = unit(0.9 * index.centroids[2] + 0.1 * index.centroids[1])  # nearest 2, but not on it
    pieces = np.stack([blend, index.centroids[1], E0])
    context = select_context(index, pieces, InsightsSettings(top_k=5, max_hops=2))
    assert set(context.answer_clusters) == {0, 1, 2}
    assert context.answer_clusters[-1] == 2  # the exact matches come before the blend
    assert context.related_clusters == (3,)  # answer clusters are never related ones
    roles = {c.cluster: c.role for c in context.chunks}
    assert roles == {0: "answer", 1: "answer", 2: "answer", 3: "related"}


def test_two_pieces_far_apart_on_the_graph_both_count():
    index = path_index()
    context = select_context(index, np.stack([E0, index.centroids[3]]), InsightsSettings(top_k=1, max_hops=1))
    assert set(context.answer_clusters) == {0, 3}
    assert context.related_clusters == (1,)  # 1 (next to 0) is nearer the mean answer than 2 (next to 3)


def test_budget_is_never_exceeded_and_clusters_share_it_round_robin():
    index = make_index([toward(1.0), toward(0.9, 1), toward(0.8, 2)], [(0, 1), (0, 2)], chunks=10)
    for budget in (0, 99, 100, 250, 799, 1500, 2999, 3000, 10_000):
        context = select_context(index, E0, InsightsSettings(token_budget=budget))
        assert context.tokens == sum(c.tokens for c in context.chunks) <= budget
        assert context.truncated == (len(context.chunks) < 30)
        per_cluster = [sum(c.cluster == cluster for c in context.chunks) for cluster in range(3)]
        assert max(per_cluster) - min(per_cluster) <= 1  # fair: no cluster more than one ahead
        assert per_cluster == sorted(per_cluster, reverse=True)  # answer cluster first in a round
    context = select_context(index, E0, InsightsSettings(token_budget=700))
    assert [c.chunk_id for c in context.chunks] == [
        "c0-0", "c0-1", "c0-2", "c1-0", "c1-1", "c2-0", "c2-1"
    ]  # fmt: skip


def test_a_chunk_too_big_for_the_rest_of_the_budget_closes_only_its_cluster():
    # Cluster 0's chunks: 50, 900, 50 tokens; clusters 1 and 2: 100 each.
    tokens = [50, 900, 50][::-1] + [100] * 6  # make_index lists each cluster's chunks farthest first
    index = make_index([toward(1.0), toward(0.9, 1), toward(0.8, 2)], [(0, 1), (0, 2)], tokens=tokens)
    context = select_context(index, E0, InsightsSettings(token_budget=650))
    assert context.chunk_ids() == ["c0-0", "c1-0", "c1-1", "c1-2", "c2-0", "c2-1", "c2-2"]
    assert context.tokens == 650 and context.truncated  # c0-1 left out, and c0-2 behind it


def test_chunks_grouped_by_cluster_nearest_centroid_first_with_their_fields():
    index = path_index()
    context = select_context(index, E0, InsightsSettings(top_k=2))
    assert context.chunk_ids() == ["c0-0", "c0-1", "c0-2", "c1-0", "c1-1", "c1-2", "c2-0", "c2-1", "c2-2"]
    first = context.chunks[0]
    assert (first.role, first.hops, first.text, first.tokens) == ("answer", 0, "text of c0-0", 100)
    assert first.distance == pytest.approx(0.0, abs=1e-6)
    assert first.centroid_distance == pytest.approx(0.01)
    assert context.chunks[3].distance == pytest.approx(0.5, abs=1e-6)
    assert not context.truncated and context.tokens == 900


def test_selection_is_deterministic():
    index = star_index()
    rng = np.random.default_rng(0)
    for _ in range(20):
        pieces = rng.normal(size=(2, DIMS))
        assert select_context(index, pieces) == select_context(index, pieces)


def test_bad_answer_vectors_are_rejected():
    index = path_index()
    with pytest.raises(ValueError):
        select_context(index, np.zeros((0, DIMS)))
    with pytest.raises(ValueError):
        select_context(index, np.ones(DIMS + 1))


def test_index_needs_every_chunk_text():
    index = path_index()
    texts = {cid: "x" for cid in index.graph.chunk_ids[1:]}
    with pytest.raises(KeyError, match="rebuild the theme graph"):
        ClusterIndex(index.graph, texts, dict.fromkeys(index.graph.chunk_ids, 1))


def test_chunk_vectors_reorder_chunks_within_clusters():
    index = path_index()
    graph = index.graph
    # Each cluster lists its stored farthest chunk first; these vectors put that one on the centroid.
    away = np.eye(DIMS)[-1]
    vectors = np.array([graph.centroids[c] + 0.3 * (i % 3) * away for i, c in enumerate(graph.assignments)])
    texts = {cid: cid for cid in graph.chunk_ids}
    reordered = ClusterIndex(graph, texts, dict.fromkeys(graph.chunk_ids, 1), chunk_vectors=vectors)
    assert reordered.members[0][0][0] == "c0-2"
    with pytest.raises(ValueError):
        ClusterIndex(graph, texts, dict.fromkeys(graph.chunk_ids, 1), chunk_vectors=vectors[:, :3])


def test_settings_are_validated():
    with pytest.raises(ValueError):
        InsightsSettings(top_k=-1)
    with pytest.raises(ValueError):
        InsightsSettings(max_hops=-1)


def test_answer_pieces():
    assert answer_pieces("  A short answer. It has two sentences.  ") == [
        "A short answer. It has two sentences."
    ]
    assert answer_pieces("   ") == []
    answer = " ".join(f"Sentence number {i} says something about quantization." for i in range(200))
    pieces = answer_pieces(answer, max_tokens=120)
    assert len(pieces) > 1
    assert all(count_tokens(piece) <= 120 for piece in pieces)
    assert " ".join(pieces).split() == answer.split()
    assert all(piece.endswith(".") for piece in pieces)  # whole sentences


def test_end_to_end_on_a_built_graph():
    rng = np.random.default_rng(3)
    centres = np.array([unit(v) for v in rng.normal(size=(6, 16))])
    vectors = np.repeat(centres, 20, axis=0) + rng.normal(scale=0.03, size=(120, 16))
    ids = [f"chunk-{i}" for i in range(120)]
    graph = build_theme_graph(ids, vectors, [f"topic {i // 20}" for i in range(120)])
    index = ClusterIndex(graph, {cid: cid for cid in ids}, dict.fromkeys(ids, 10), chunk_vectors=vectors)
    context = select_context(index, centres[2])
    answer_cluster = context.answer_clusters[0]
    assert set(graph.assignments[40:60].tolist()) >= {answer_cluster}
    assert len(context.related_clusters) == 5 and len(set(context.chunk_ids())) == len(context.chunks)
