"""Context selection on the theme graph (InsightGen §4.2): the answer's themes and their neighbours.

For a question-answer pair:

1. The answer is split into pieces of about 2,000 tokens (``answer_pieces``), each embedded like
   the document chunks. Each piece's nearest centroid is an *answer cluster*; the answer clusters
   are the union, nearest first (by the distance of the nearest piece that chose it).
2. *Related clusters*: among the clusters at most ``max_hops`` hops from some answer cluster on the
   graph (answer clusters excluded), the ``top_k`` nearest to the answer, by cosine distance
   between the centroid and the normalised mean of the piece vectors; ties go to fewer hops, then
   the lower index.
3. *Context*: the chunks of those clusters, each cluster's chunks nearest its centroid first, taken
   round-robin (one chunk per cluster per round, answer clusters first, then related clusters in
   rank order) so one big cluster cannot spend the whole ``token_budget``. A cluster whose next
   chunk no longer fits is closed (taking a farther chunk instead would break its order); the
   others go on. ``truncated`` says some chunk of a selected cluster was left out. The chosen
   chunks are returned grouped by cluster, in that same cluster order, so a prompt can present
   answer context and related context apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.chunking import ChunkProfile, chunk_text
from insight_assets.core.startup.lazy import np

from .settings import InsightsSettings

if TYPE_CHECKING:
    from insight_assets.core.themes.clustering import ThemeGraph

ANSWER = "answer"
RELATED = "related"
# §4.1: an answer is embedded in pieces of the insightgen chunk size.
ANSWER_CHUNK_TOKENS = 2000


@dataclass(frozen=True)
class ContextChunk:
    """One chunk of the context. ``hops`` is its cluster's graph distance from the nearest answer
    cluster (0 for answer clusters); ``distance`` the cosine distance from its cluster's centroid
    to the answer (the related clusters' ranking key); ``centroid_distance`` the chunk's own
    distance to its centroid (its order within the cluster)."""

    chunk_id: str
    cluster: int
    role: str
    text: str
    tokens: int
    hops: int
    distance: float
    centroid_distance: float


@dataclass(frozen=True)
class SelectedContext:
    answer_clusters: tuple[int, ...]
    related_clusters: tuple[int, ...]
    chunks: tuple[ContextChunk, ...]
    tokens: int
    truncated: bool

    def chunk_ids(self) -> list[str]:
        return [chunk.chunk_id for chunk in self.chunks]


class ClusterIndex:
    """What selection needs from a theme graph, prepared once so each question is cheap: the
    graph's adjacency lists, and per cluster its chunks as ``(chunk_id, text, tokens,
    centroid_distance)``, nearest the centroid first (ties: input order).

    ``chunk_texts`` and ``chunk_tokens`` must cover every chunk of the graph. ``chunk_vectors``
    (rows in ``graph.chunk_ids`` order) are needed only if the order within clusters should come
    from other vectors than the graph's stored distances, e.g. a graph read back from tables whose
    vectors have since been recomputed.
    """

    def __init__(
        self,
        graph: ThemeGraph,
        chunk_texts: Mapping[str, str],
        chunk_tokens: Mapping[str, int],
        chunk_vectors: np.ndarray | None = None,
    ) -> None:
        missing = [cid for cid in graph.chunk_ids if cid not in chunk_texts or cid not in chunk_tokens]
        if missing:
            raise KeyError(
                f"{len(missing)} chunk(s) of the theme graph have no text or token count, e.g. {missing[0]!r}; "
                "rebuild the theme graph from the current chunks"
            )
        self.graph = graph
        self.centroids = np.asarray(graph.centroids, dtype=np.float32)
        self.adjacency = tuple(tuple(b for b, _ in pairs) for pairs in graph.adjacency)
        distances = np.asarray(graph.distances, dtype=np.float64)
        if chunk_vectors is not None:
            vectors = np.asarray(chunk_vectors, dtype=np.float32)
            if vectors.shape != (len(graph.chunk_ids), self.centroids.shape[1]):
                raise ValueError(f"chunk_vectors must be ({len(graph.chunk_ids)}, d); got {vectors.shape}")
            vectors = normalize_rows(vectors)
            distances = 1.0 - np.einsum("ij,ij->i", vectors, self.centroids[graph.assignments])
        assignments = np.asarray(graph.assignments)
        order = np.lexsort((np.arange(len(assignments)), distances, assignments))
        bounds = np.searchsorted(assignments[order], np.arange(graph.k + 1))
        ids = graph.chunk_ids
        self.members: tuple[tuple[tuple[str, str, int, float], ...], ...] = tuple(
            tuple(
                (ids[row], chunk_texts[ids[row]], int(chunk_tokens[ids[row]]), float(distances[row]))
                for row in order[bounds[cluster] : bounds[cluster + 1]]
            )
            for cluster in range(graph.k)
        )

    def hops_from(self, sources: tuple[int, ...], max_hops: int) -> dict[int, int]:
        """Breadth-first hop counts from the nearest of ``sources``, for clusters within ``max_hops``."""
        hops = dict.fromkeys(sources, 0)
        frontier = list(sources)
        for depth in range(1, max_hops + 1):
            following = []
            for cluster in frontier:
                for neighbour in self.adjacency[cluster]:
                    if neighbour not in hops:
                        hops[neighbour] = depth
                        following.append(neighbour)
            frontier = following
        return hops


def answer_pieces(answer: str, max_tokens: int = 2000) -> list[str]:
    """The answer in pieces of at most ``max_tokens`` tokens, whole sentences where possible (the
    insightgen chunker with another target); a short answer is one piece, a blank one none."""
    return [answer[start:end] for start, end, _ in chunk_text(answer, ChunkProfile("answer", max_tokens))]


def select_context(
    index: ClusterIndex, answer_vectors: np.ndarray, settings: InsightsSettings | None = None
) -> SelectedContext:
    """The context for an answer embedded as ``answer_vectors`` (one row per piece); see the
    module docstring for the rules."""
    settings = settings or InsightsSettings()
    pieces = np.atleast_2d(np.asarray(answer_vectors, dtype=np.float32))
    if pieces.shape[0] == 0 or pieces.shape[1] != index.centroids.shape[1]:
        raise ValueError(f"need one {index.centroids.shape[1]}-d vector per answer piece; got {pieces.shape}")
    pieces = normalize_rows(pieces)
    piece_distances = 1.0 - pieces @ index.centroids.T
    nearest = piece_distances.argmin(axis=1)
    chosen_by: dict[int, float] = {}
    for piece, cluster in enumerate(nearest.tolist()):
        chosen_by[cluster] = min(chosen_by.get(cluster, 2.0), float(piece_distances[piece, cluster]))
    answer_clusters = tuple(sorted(chosen_by, key=lambda c: (chosen_by[c], c)))

    mean = pieces.mean(axis=0)
    norm = np.linalg.norm(mean)
    mean = mean / norm if norm > 1e-6 else pieces[0]  # pieces pointing opposite ways cancel out
    answer_distances = (1.0 - index.centroids @ mean).tolist()
    hops = index.hops_from(answer_clusters, settings.max_hops)
    candidates = [cluster for cluster, hop in hops.items() if hop > 0]
    candidates.sort(key=lambda c: (answer_distances[c], hops[c], c))
    related_clusters = tuple(candidates[: settings.top_k])

    clusters = [(c, ANSWER) for c in answer_clusters] + [(c, RELATED) for c in related_clusters]
    taken, tokens, truncated = _round_robin(index, [c for c, _ in clusters], settings.token_budget)
    chunks = tuple(
        ContextChunk(chunk_id, cluster, role, text, count, hops[cluster], answer_distances[cluster], own)
        for (cluster, role), count_taken in zip(clusters, taken)
        for chunk_id, text, count, own in index.members[cluster][:count_taken]
    )
    return SelectedContext(answer_clusters, related_clusters, chunks, tokens, truncated)


def _round_robin(index: ClusterIndex, clusters: list[int], budget: int) -> tuple[list[int], int, bool]:
    """How many chunks to take from the front of each cluster: one per cluster per round, a
    cluster closing when its next chunk would pass ``budget``. Returns the counts, the tokens
    taken and whether any chunk was left out."""
    taken = [0] * len(clusters)
    open_ = [slot for slot, cluster in enumerate(clusters) if index.members[cluster]]
    tokens = 0
    truncated = False
    while open_:
        still_open = []
        for slot in open_:
            members = index.members[clusters[slot]]
            size = members[taken[slot]][2]
            if tokens + size > budget:
                truncated = True
                continue
            tokens += size
            taken[slot] += 1
            if taken[slot] < len(members):
                still_open.append(slot)
        open_ = still_open
    return taken, tokens, truncated
