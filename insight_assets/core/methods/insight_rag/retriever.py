"""The insight retriever (§2), as an interface with four modes, over a collection's triples and
sentences indexed like chunks (vectors in LanceDB, BM25 on their text, the shared ``Retriever``).

- ``parametric``, the paper's: a causal LM continually pre-trained with LoRA on the collection's
  triples and text (``cpt.py``; the paper: Llama-3.2 3B, here the bundled SmolLM2-135M by default)
  completes the fragment from what it memorised, greedily (one insight, or ten from the ten
  likeliest first tokens), within 100 tokens. A memorised insight has no source of its own: it is attributed to the
  collection's sentence that states it best (hybrid search with the insight), whose chunk it cites.
- ``index``: hybrid search of the triples with the fragment; each of the top triples is an
  insight, shown with the sentence it was read in and cited by its chunk. On a benchmark built from
  the same triples this is close to circular: a triple that is found *is* the gold answer.
- ``sentences``: the same search over the collection's sentences, no triples; the insight is the
  fragment completed by the text of the best sentences that continues it (within the paper's 100
  tokens).
- ``llm``: the configured model completes the fragment given the top triples as context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.retrieval.index import CollectionIndex, index_from_rows, read_vectors
from insight_assets.core.startup.lazy import np, pa

from ...retrieval import Hit, Retriever
from ...text import count_tokens, cut_to_tokens
from .offline import ABSTAIN, completion
from .schemas import INDEX, INSIGHT_MAX_TOKENS, LLM, RANK_DEPTH, SENTENCES
from .tasks import INSIGHT_RAG_COMPLETE

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import VectorStore, Warehouse

    from ...llm import LLMClient
    from .causal_lm import CausalLM
    from .triples import Triple

TRIPLES = "triples"
UNIT_PROFILES = (TRIPLES, SENTENCES)
# The LLM mode's context: the top triples of the fragment's search.
LLM_FACTS = 10


@dataclass(frozen=True)
class Sentence:
    sentence_id: str
    doc_id: str
    chunk_id: str
    text: str


@dataclass(frozen=True)
class RetrievedInsight:
    """What the retriever returns for one fragment: the text the generator sees, and its source."""

    fragment: str
    text: str
    chunk_id: str
    doc_id: str
    score: float


def triple_search_text(triple: Triple) -> str:
    """What a triple is found by: the triple, then its sentence (BM25 reads both)."""
    return f"{triple.text}. {triple.sentence}"


def index_table(
    collection: str,
    variant: str,
    triples: Sequence[Triple],
    sentences: Sequence[Sentence],
    vectors,
) -> pa.Table:
    """LanceDB rows for the triples and sentences (``vectors``: one per triple, then per sentence).
    A triple's vector embeds the triple alone; its text for BM25 holds its sentence too."""
    units = [(TRIPLES, t.triple_id, t.doc_id, triple_search_text(t)) for t in triples] + [
        (SENTENCES, s.sentence_id, s.doc_id, s.text) for s in sentences
    ]
    return pa.table(
        {
            "collection": [collection] * len(units),
            "profile": [unit[0] for unit in units],
            "chunk_id": [unit[1] for unit in units],
            "doc_id": [unit[2] for unit in units],
            "text": [unit[3] for unit in units],
            "variant": [variant] * len(units),
            "vector": pa.array(
                [list(map(float, row)) for row in vectors], pa.list_(pa.float32(), len(vectors[0]))
            ),
        }
    )


def embedding_texts(triples: Sequence[Triple], sentences: Sequence[Sentence]) -> list[str]:
    return [t.text for t in triples] + [s.text for s in sentences]


def index_vectors(
    stored: pa.Table | None,
    variant: str,
    triples: Sequence[Triple],
    sentences: Sequence[Sentence],
    embed: Callable[[list[str]], Sequence[Sequence[float]]],
) -> tuple[list[list[float]], int]:
    """A unit vector per triple, then per sentence, for ``index_table``: the ``stored`` one (an
    earlier ``index_table``) where the same unit with the same text was embedded by ``variant``,
    else embedded now; and how many were embedded now."""
    keys = [(TRIPLES, t.triple_id, triple_search_text(t)) for t in triples] + [
        (SENTENCES, s.sentence_id, s.text) for s in sentences
    ]
    known = {}
    if stored is not None:
        for profile, unit_id, text, unit_variant, vector in zip(
            *(
                stored.column(name).to_pylist()
                for name in ("profile", "chunk_id", "text", "variant", "vector")
            ),
            strict=True,
        ):
            if unit_variant == variant:
                known[(profile, unit_id, text)] = vector
    texts = embedding_texts(triples, sentences)
    new = [n for n, key in enumerate(keys) if key not in known]
    fresh = normalize_rows(embed([texts[n] for n in new])) if new else []
    found = dict(zip(new, fresh, strict=True))
    return [list(found[n]) if n in found else known[key] for n, key in enumerate(keys)], len(new)


def open_units(
    warehouse: Warehouse, store: VectorStore, collection: str, embedder, profile: str
) -> Retriever:
    """A retriever over the collection's triples or sentences (raises ``IndexMissing`` before they
    have vectors; over no triple, when the extractor found none, it finds nothing)."""
    if profile == TRIPLES:
        sql = """SELECT t.triple_id AS chunk_id, t.doc_id, t.subject || ' ' || t.relation_text || ' ' || t.object
                        || '. ' || t.sentence AS text, c.chunk_index, c.page_start, c.page_end,
                        coalesce(nullif(d.title, ''), d.file) AS title
                 FROM knowledge_triples t JOIN chunks c USING (collection, chunk_id)
                 JOIN parsed_documents d ON d.collection = t.collection AND d.doc_id = t.doc_id
                 WHERE t.collection = ? ORDER BY d.file, c.chunk_index, t.triple_id"""
    else:
        sql = """SELECT s.sentence_id AS chunk_id, s.doc_id, s.sentence AS text, c.chunk_index, c.page_start,
                        c.page_end, coalesce(nullif(d.title, ''), d.file) AS title
                 FROM insight_rag_sentences s JOIN chunks c USING (collection, chunk_id)
                 JOIN parsed_documents d ON d.collection = s.collection AND d.doc_id = s.doc_id
                 WHERE s.collection = ? ORDER BY d.file, c.chunk_index, s.position"""
    return units_retriever(warehouse.rows(sql, [collection]), store, collection, embedder, profile)


def units_retriever(
    rows: Sequence[dict], store: VectorStore, collection: str, embedder, profile: str
) -> Retriever:
    """A retriever over the triples or sentences ``rows`` (``index_from_rows``'s, less the token
    counts) that have a vector in ``store``."""
    rows = [{**row, "token_count": count_tokens(row["text"])} for row in rows]
    if profile == TRIPLES and not rows:  # the extractor found none: every search finds nothing
        empty = CollectionIndex(profile, [], np.zeros((0, embedder.dimension), dtype=np.float32), {}, {})
        return Retriever(collection, empty, store, embedder.embed, embedder.variant)
    found = read_vectors(store, collection, profile, embedder.variant)
    index = index_from_rows(rows, found, profile, embedder.variant, "knowledge_triples")
    return Retriever(collection, index, store, embedder.embed, embedder.variant)


class InsightRetriever:
    """Completes identified fragments from a collection, in one of ``RETRIEVER_MODES``.

    ``chunk_of`` maps a triple's or sentence's id to its chunk (the citable source); ``triples``
    maps a triple's id to the triple. ``parametric`` is the adapted model, or ``None`` with
    ``parametric_missing`` saying why there is none.
    """

    def __init__(
        self,
        triples: Retriever,
        sentences: Retriever,
        chunk_of: dict[str, str],
        triples_by_id: dict[str, Triple],
        search_mode: str = "hybrid",
        parametric: CausalLM | None = None,
        parametric_missing: str = "the insight retriever was not opened",
    ):
        self.units = {TRIPLES: triples, SENTENCES: sentences}
        self.chunk_of = chunk_of
        self.triples = triples_by_id
        self.search_mode = search_mode
        self.parametric = parametric
        self.parametric_missing = parametric_missing

    def complete(
        self, fragments: Sequence[str], counts: Sequence[int], excludes: Sequence[tuple[str, ...]] = ()
    ) -> tuple[list[list[RetrievedInsight]], list[list[Hit]]]:
        """``parametric`` mode: the adapted model's ``counts[i]`` completions of each fragment, each
        attributed to the sentence that states it best; and each fragment's ranking of sentences
        (its first completion's search). ``excludes[i]``: papers left out of the attribution."""
        if self.parametric is None:
            raise ValueError(f"no parametric retriever: {self.parametric_missing}")
        completed = self.parametric.complete(fragments, counts, INSIGHT_MAX_TOKENS)
        excludes = excludes or [()] * len(fragments)
        sentences = self.units[SENTENCES]
        every = [text for texts in completed for text in texts]
        vectors = iter(sentences.embed(every) if every else [])  # one batch
        insights, rankings = [], []
        for fragment, texts, exclude in zip(fragments, completed, excludes, strict=True):
            mine, first = [], []
            for text in texts:
                ranked = sentences.search(
                    text, RANK_DEPTH, self.search_mode, exclude=exclude, query_vector=next(vectors)
                )
                first = first or ranked
                if ranked:
                    mine.append(self._insight(fragment, ranked[0], cut_to_tokens(text, INSIGHT_MAX_TOKENS)))
            insights.append(mine)
            rankings.append(first)
        return insights, rankings

    def retrieve(
        self,
        client: LLMClient,
        mode: str,
        fragments: Sequence[str],
        multi: Sequence[bool],
        counts: Sequence[int],
        hits: Sequence[list[Hit]],
    ) -> list[list[RetrievedInsight]]:
        """The insights for each fragment: ``counts[i]`` of them from ``hits[i]`` (the fragment's
        ranked triples, or sentences in ``sentences`` mode)."""
        if mode == INDEX:
            return [
                [self._insight(fragment, hit, self._triple_insight(hit)) for hit in found[:count]]
                for fragment, found, count in zip(fragments, hits, counts, strict=True)
            ]
        if mode == SENTENCES:
            return [
                [
                    self._insight(
                        fragment, hit, cut_to_tokens(completion(fragment, hit.text), INSIGHT_MAX_TOKENS)
                    )
                    for hit in found[:count]
                ]
                for fragment, found, count in zip(fragments, hits, counts, strict=True)
            ]
        if mode == LLM:
            batch = client.run_many(
                INSIGHT_RAG_COMPLETE,
                [
                    {
                        "fragment": fragment,
                        "multi": is_multi,
                        "facts": [self._fact(hit) for hit in found[:LLM_FACTS]],
                    }
                    for fragment, is_multi, found in zip(fragments, multi, hits, strict=True)
                ],
            )
            results = []
            for fragment, found, item in zip(fragments, hits, batch.items, strict=True):
                if not item.ok or not found or item.value.text.strip() == ABSTAIN:
                    results.append([])
                    continue
                results.append([self._insight(fragment, found[0], f"{fragment} {item.value.text.strip()}")])
            return results
        raise ValueError(f"unknown retriever mode {mode!r}")

    def _insight(self, fragment: str, hit: Hit, text: str) -> RetrievedInsight:
        return RetrievedInsight(fragment, text, self.chunk_of[hit.chunk_id], hit.doc_id, hit.score)

    def _triple_insight(self, hit: Hit) -> str:
        """A triple's insight: the triple, then the sentence it was read in (within 100 tokens)."""
        found = self.triples[hit.chunk_id]
        return cut_to_tokens(f"{found.text} (\u201c{found.sentence}\u201d)", INSIGHT_MAX_TOKENS)

    def _fact(self, hit: Hit) -> str:
        """A triple as the ``llm`` mode's prompt lists it: subject | relation | object ("sentence")."""
        found = self.triples[hit.chunk_id]
        return f"{found.subject} | {found.relation_text} | {found.object} (\u201c{found.sentence}\u201d)"
