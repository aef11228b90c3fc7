"""theme: building the theme graph and selecting context on it, against brute-force top-k cosine.

Synthetic data, seeded, so no corpus is needed: 20,000 unit vectors of 384 dimensions drawn around
150 random directions (noise 3x the centre's norm per vector, so the blobs overlap as real topics
do), and short texts of 18 words, 12 from the blob's own 30-word vocabulary and 6 shared by all.

Timed once each: ``build_theme_graph`` (K-means, ceil(sqrt(n)) = 142 clusters, seed 42) and the
``ClusterIndex``; ``render_theme_graph_png`` twice, the first call paying for matplotlib's import. Then 200 answers of one or two pieces (each piece
a random chunk's vector plus noise) go through ``select_context`` (default settings: top-5 within
2 hops, 12,000-token budget) and, side by side, through the baseline: brute-force cosine of the
mean answer vector against all 20,000 chunk vectors with numpy and the top m by ``argpartition``,
m being the number of chunks ours selected for that answer (the paper's FAISS baseline gets the
same amount of context). Order alternates per answer. Targets: build <= 10 s, select median <= 20 ms.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.common import print_table, ratio, summary, timed
from insight_assets.core.methods.insightgen.selection import ClusterIndex, select_context
from insight_assets.core.page.graph_plot import render_theme_graph_png
from insight_assets.core.text import count_tokens
from insight_assets.core.themes.clustering import build_theme_graph

CHUNKS, QUICK_CHUNKS = 20_000, 2_000
ANSWERS, QUICK_ANSWERS = 200, 50
DIMS, BLOBS, NOISE = 384, 150, 3.0
VOCABULARY, TOPIC_WORDS = 3_000, 30
BUILD_TARGET_S, SELECT_TARGET_MS = 10.0, 20.0


def synthetic(n: int, seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    blob = rng.integers(0, BLOBS, n)
    centres = rng.normal(size=(BLOBS, DIMS))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = centres[blob] + rng.normal(scale=NOISE / np.sqrt(DIMS), size=(n, DIMS))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    words = np.array([f"term{i}" for i in range(VOCABULARY)])
    topics = rng.permuted(np.tile(np.arange(VOCABULARY), 2)[: BLOBS * TOPIC_WORDS]).reshape(
        BLOBS, TOPIC_WORDS
    )
    shared = words[rng.choice(VOCABULARY, 200, replace=False)]
    texts = [
        " ".join([*words[rng.choice(topics[b], 12)], *rng.choice(shared, 6)]) + "." for b in blob.tolist()
    ]
    return [f"chunk-{i:05d}" for i in range(n)], vectors, texts


def answers(vectors: np.ndarray, count: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    result = []
    for _ in range(count):
        rows = rng.choice(len(vectors), size=int(rng.integers(1, 3)), replace=False)
        pieces = vectors[rows] + rng.normal(scale=0.5 / np.sqrt(DIMS), size=(len(rows), DIMS))
        result.append((pieces / np.linalg.norm(pieces, axis=1, keepdims=True)).astype(np.float32))
    return result


def brute_force(vectors: np.ndarray, pieces: np.ndarray, m: int) -> np.ndarray:
    mean = pieces.mean(axis=0)
    scores = vectors @ (mean / np.linalg.norm(mean))
    top = np.argpartition(-scores, m - 1)[:m] if m < len(scores) else np.arange(len(scores))
    return top[np.argsort(-scores[top])]


def run(corpus: Path, quick: bool) -> dict:
    del corpus  # synthetic data
    n = QUICK_CHUNKS if quick else CHUNKS
    ids, vectors, texts = synthetic(n)
    tokens = {cid: count_tokens(text) for cid, text in zip(ids, texts)}
    build_s, graph = timed(build_theme_graph, ids, vectors, texts)
    index_s, index = timed(ClusterIndex, graph, dict(zip(ids, texts)), tokens)
    plot_cold_s, _ = timed(render_theme_graph_png, graph, vectors)  # pays for importing matplotlib
    plot_s, png = timed(render_theme_graph_png, graph, vectors)

    sides = [
        ("ours", lambda pieces, m: select_context(index, pieces)),
        ("base", lambda pieces, m: brute_force(vectors, pieces, m)),
    ]
    ours_ms, base_ms, overlap, selected = [], [], [], []
    for number, pieces in enumerate(answers(vectors, QUICK_ANSWERS if quick else ANSWERS)):
        context = select_context(index, pieces)  # untimed: tells the baseline how many chunks
        m = max(1, len(context.chunks))
        for side, call in sides if number % 2 == 0 else sides[::-1]:
            started = time.perf_counter()
            result = call(pieces, m)
            (ours_ms if side == "ours" else base_ms).append(1000 * (time.perf_counter() - started))
            if side == "base":
                overlap.append(len({ids[row] for row in result} & set(context.chunk_ids())) / m)
        selected.append(len(context.chunks))

    figures = {
        side: (float(np.median(ms)), float(np.percentile(ms, 95)))
        for side, ms in (("ours", ours_ms), ("base", base_ms))
    }
    print_table(
        [
            {
                "step": "build_theme_graph",
                "seconds": build_s,
                "note": f"{graph.k} clusters, {len(graph.edges)} edges",
            },
            {"step": "ClusterIndex", "seconds": index_s, "note": ""},
            {
                "step": "render_theme_graph_png",
                "seconds": plot_s,
                "note": f"{len(png):,} bytes; first call {plot_cold_s:.2f} s with imports",
            },
        ],
        ["step", "seconds", "note"],
        title=f"theme: {n:,} chunks x {DIMS} dims, {BLOBS} blobs",
    )
    print_table(
        [
            {"side": "ours select_context", "median_ms": figures["ours"][0], "p95_ms": figures["ours"][1]},
            {
                "side": "brute-force top-m cosine",
                "median_ms": figures["base"][0],
                "p95_ms": figures["base"][1],
            },
        ],
        ["side", "median_ms", "p95_ms"],
        title=f"per answer ({len(ours_ms)} answers of 1-2 pieces; {np.mean(selected):.0f} chunks selected on average)",
    )
    print(
        f"share of ours' chunks that brute force also picks: {np.mean(overlap):.2f} "
        "(ours takes the answer's themes and their neighbours, not just the nearest chunks)"
    )
    slower = ratio(figures["ours"][0], figures["base"][0])
    met = build_s <= BUILD_TARGET_S and figures["ours"][0] <= SELECT_TARGET_MS
    return {
        "summary": summary(
            f"build {build_s:.1f} s, select median {figures['ours'][0]:.2f} ms "
            f"(brute force {figures['base'][0]:.2f} ms)",
            slower,
            f"build <= {BUILD_TARGET_S:.0f} s, select <= {SELECT_TARGET_MS:.0f} ms",
            met,
        ),
        "chunks": n,
        "clusters": graph.k,
        "edges": len(graph.edges),
        "build_seconds": build_s,
        "index_seconds": index_s,
        "plot_seconds": plot_s,
        "plot_first_call_seconds": plot_cold_s,
        "select_ms": {"median": figures["ours"][0], "p95": figures["ours"][1]},
        "brute_force_ms": {"median": figures["base"][0], "p95": figures["base"][1]},
        "chunks_selected_mean": float(np.mean(selected)),
        "overlap_with_brute_force": float(np.mean(overlap)),
    }
