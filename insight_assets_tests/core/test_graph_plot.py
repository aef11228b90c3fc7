import io

import numpy as np

from insight_assets.core.page.graph_plot import render_theme_graph_png
from insight_assets.core.themes.clustering import build_theme_graph

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    header = io.BytesIO(data[16:24])
    return int.from_bytes(header.read(4), "big"), int.from_bytes(header.read(4), "big")


def test_small_graph_renders_a_png():
    rng = np.random.default_rng(0)
    vectors = np.repeat(rng.normal(size=(4, 12)), 15, axis=0) + rng.normal(scale=0.05, size=(60, 12))
    graph = build_theme_graph(
        [str(i) for i in range(60)], vectors, [f"topic{i // 15} words" for i in range(60)]
    )
    data = render_theme_graph_png(graph, vectors)
    assert data.startswith(PNG_SIGNATURE)
    assert png_size(data) == (900, 700)
    assert render_theme_graph_png(graph).startswith(PNG_SIGNATURE)  # centroids only


def test_one_cluster_and_degenerate_input_render():
    graph = build_theme_graph(["only"], np.ones((1, 4)), ["lonely"])
    assert graph.k == 1
    assert render_theme_graph_png(graph, np.ones((1, 4))).startswith(PNG_SIGNATURE)
    same = np.ones((5, 4))  # every point equal: nothing for PCA to find
    graph = build_theme_graph(list("abcde"), same, ["x"] * 5)
    assert render_theme_graph_png(graph, same).startswith(PNG_SIGNATURE)


def test_large_graphs_are_subsampled_and_the_picture_differs_with_the_sample():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(3000, 8))
    graph = build_theme_graph([str(i) for i in range(3000)], vectors, ["x"] * 3000)
    small = render_theme_graph_png(graph, vectors, max_points=200)
    assert small.startswith(PNG_SIGNATURE)
    assert small != render_theme_graph_png(graph, vectors, max_points=200, random_state=7)
