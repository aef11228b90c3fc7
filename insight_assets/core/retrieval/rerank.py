"""Second-stage reranking of retrieved chunks: ``rerank(query, hits, top_n, reranker)``.

- ``late-interaction`` (the offline default): ColBERT's MaxSim rule (Khattab and Zaharia, 2020) on
  the token vectors of the bundled all-MiniLM-L6-v2. Query and candidates go through the model in one
  batched pass; every token vector is normalised; a candidate's score is the mean over the query's
  content tokens (punctuation and stopwords left out) of the best cosine with any of the
  candidate's tokens. This is *not* ColBERTv2, which a summarization paper we implement uses
  and which cannot be had offline: it is the same scoring rule on a model trained for
  pooled sentence vectors, not for late interaction.
- ``llm``: the ``rate_passages`` task rates each candidate 0-5 for the query, in batches; meant for
  hosted models. Offline, its extractive stand-in rates by the share of the query's content words a
  passage contains, so the mode runs (and is tested) without a provider but is no better than words.
- ``none``: the first stage's order, cut to ``top_n``.

A cross-encoder is not offered: no package on the registry ships a cross-encoder's weights, and
nothing may be downloaded at run time (FlashRank, for one, fetches its model on first use).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from insight_assets.core.embedding.memo import VectorMemo
from insight_assets.core.embedding.models import token_rows
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import LazyModel, np

from ..extractive import STOPWORDS, terms
from ..llm import LLMClient, Task, register_task
from .token_store import StoredTokens

if TYPE_CHECKING:
    from .search import Hit

RERANKERS = ("late-interaction", "llm", "none")
DEFAULT_RERANKER = "late-interaction"
LLM_BATCH_SIZE = 10


class RerankError(ValueError):
    """A rerank that cannot run as configured."""


def rerank(
    query: str,
    hits: Sequence[Hit],
    top_n: int,
    reranker: str = DEFAULT_RERANKER,
    *,
    late_interaction: LateInteraction | None = None,
    llm: LLMClient | None = None,
) -> list[Hit]:
    """``hits`` reordered by ``reranker``, the best ``top_n`` first; each keeps its first-stage score
    as ``retrieval_score``. Ties keep the first stage's order. Pass one ``late_interaction`` to every
    call of a run, so its cache of token vectors serves them all."""
    if reranker not in RERANKERS:
        raise RerankError(f"unknown reranker {reranker!r}; choose one of {', '.join(RERANKERS)}")
    if reranker == "none" or not hits:
        return list(hits[: max(top_n, 0)])
    if reranker == "late-interaction":
        scores = (late_interaction or LateInteraction()).score(query, [hit.text for hit in hits])
    else:
        if llm is None:
            raise RerankError("the llm reranker needs a model client (the llm resource)")
        scores = rate_with_llm(llm, query, hits)
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[: max(top_n, 0)]
    return [
        dataclasses.replace(hits[i], score=float(scores[i]), retrieval_score=hits[i].score, reranker=reranker)
        for i in order
    ]


class LateInteraction:
    """MaxSim over the bundled model's token vectors.

    One departure from ColBERT: the query's punctuation and stopword pieces are left out. ColBERT's
    query encoder learns what its query tokens should match; MiniLM's stopword vectors match
    anything, and on the retrieval benchmark leaving them out lifted hybrid+rerank chunk recall@20
    from 0.324 to 0.363 (three collections, 95 questions).

    Token vectors of candidate texts are kept (float16, up to ``cache_size`` texts, least recently
    used dropped first), so the many queries of one collection do not run the same chunks through
    the model again. The cache is the process's, shared by every instance of the same precision and
    cache size: a build's steps (XSum's answers, its pipeline baselines, the collection's page)
    rerank the same chunks one after another. ``stored``, a collection's token vectors kept with its
    build (``token_store``), is read before the model runs for a text.
    """

    variant = "maxsim:all-MiniLM-L6-v2"
    _caches: ClassVar[dict[tuple[str, int], VectorMemo]] = {}

    def __init__(
        self,
        *,
        batch_size: int = 16,
        cache_size: int = 2000,
        precision: str = "auto",
        stored: StoredTokens | None = None,
    ):
        from insight_assets.core.embedding.models import LocalEmbedder

        self._embedder = LocalEmbedder(batch_size=batch_size, precision=precision)
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.stored = stored
        self._cache = self._caches.setdefault((precision, cache_size), VectorMemo(cache_size))

    @classmethod
    def for_collection(cls, vectors_uri: str, collection: str, **options) -> LateInteraction:
        """A reranker that reads ``collection``'s token vectors kept with its build."""
        return cls(stored=StoredTokens.load(vectors_uri, collection), **options)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Each text's MaxSim score for ``query``: in [-1, 1], higher is more relevant."""
        known = self._cache.known(texts)
        if self.stored is not None:
            for text in texts:
                if text not in known and (tokens := self.stored.get(text)) is not None:
                    known[text] = tokens
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        query_tokens = self.token_vectors([query], content_only=True)[0].astype(np.float32)
        encoded = dict(zip(missing, self.token_vectors(missing), strict=True))
        known.update(encoded)
        self._cache.remember(encoded)  # the kept ones are read again as cheaply
        scores = []
        for text in texts:
            tokens = known[text]
            if not len(query_tokens) or not len(tokens):
                scores.append(0.0)
                continue
            similarity = query_tokens @ tokens.astype(np.float32).T
            scores.append(float(similarity.max(axis=1).mean()))
        return scores

    def token_vectors(self, texts: Sequence[str], *, content_only: bool = False) -> list[np.ndarray]:
        """Unit token vectors (float16) of each text, without [CLS], [SEP] and padding; texts are
        cut at the model's 256 word pieces, as ColBERT cuts documents. The model runs at the
        embedder's precision (bfloat16 weights where the CPU has native bf16). ``content_only`` also drops
        punctuation and stopword pieces (the query's, see the class docstring)."""
        if not texts:  # a paper only left: loading the model for nothing would take seconds
            return []
        import torch

        model = self._embedder.model
        result: list[np.ndarray | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # little padding per batch
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = model.encode([texts[i] for i in batch])
            with torch.inference_mode():
                tokens = model.hidden_states(encoded.input_ids, encoded.attention_mask).float()
            for position, i in enumerate(batch):
                pieces = encoded.pieces[position]
                rows = list(range(1, len(pieces) - 1))
                content = [row for row in rows if _is_content(pieces[row])] if content_only else []
                result[i] = (
                    normalize_rows(tokens[position, content].numpy()).astype(np.float16)
                    if content
                    else token_rows(tokens[position], len(pieces))
                )
        return result

    def shares_model_with(self, embedder: Any) -> bool:
        """Whether ``embedder`` runs this reranker's model at its precision, so that its forward
        passes give these token vectors too (``LocalEmbedder.embed_with_token_vectors``)."""
        from insight_assets.core.embedding.models import LocalEmbedder

        mine = self._embedder
        return isinstance(embedder, LocalEmbedder) and (embedder.device, embedder.precision) == (
            mine.device,
            mine.precision,
        )


def _is_content(piece: str) -> bool:
    """A word piece that carries meaning: letters or digits, not a stopword."""
    word = piece.removeprefix("##")
    return word.isalnum() and word.lower() not in STOPWORDS


class PassageRating(LazyModel):
    id: str
    relevance: int = Field(ge=0, le=5, description="0 unrelated ... 5 answers the query directly")


class PassageRatings(LazyModel):
    ratings: list[PassageRating]


def _format_passages(inputs: Mapping[str, Any]) -> dict[str, str]:
    return {
        "query": str(inputs["query"]),
        "passages": "\n\n".join(f"[{p['id']}] {' '.join(p['text'].split())}" for p in inputs["passages"]),
    }


def _check_ratings(output: PassageRatings, inputs: Mapping[str, Any]) -> list[str]:
    shown = [passage["id"] for passage in inputs["passages"]]
    given = [rating.id for rating in output.ratings]
    missing = [passage for passage in shown if passage not in given]
    unknown = sorted(set(given) - set(shown))
    problems = []
    if missing:
        problems.append(f"no rating for {', '.join(missing)}")
    if unknown:
        problems.append(f"ratings name {', '.join(unknown)}, which were not shown")
    if len(given) != len(set(given)):
        problems.append("more than one rating for a passage")
    return problems + ([f"rate exactly these ids once each: {', '.join(shown)}"] if problems else [])


def rate_offline(query: str, passages: Sequence[Mapping[str, str]]) -> PassageRatings:
    """Extractive stand-in: 5 times the share of the query's content words in the passage, rounded."""
    wanted = set(terms(query))
    ratings = []
    for passage in passages:
        share = len(wanted & set(terms(passage["text"]))) / len(wanted) if wanted else 0.0
        ratings.append(PassageRating(id=passage["id"], relevance=round(5 * share)))
    return PassageRatings(ratings=ratings)


RATE_PASSAGES = register_task(
    Task(
        name="rate_passages",
        version=1,
        template="rate_passages.v1.txt",
        output_model=PassageRatings,
        offline=rate_offline,
        format_inputs=_format_passages,
        check_output=_check_ratings,
        max_tokens=400,
        expected_output_tokens=150,
        description="Rate retrieved passages 0-5 for relevance to a query (the llm reranker).",
    )
)


def rate_with_llm(
    llm: LLMClient, query: str, hits: Sequence[Hit], batch_size: int = LLM_BATCH_SIZE
) -> list[float]:
    """0-5 ratings of each hit, ``batch_size`` passages per call. A batch whose call failed rates its
    passages -1, below every rated one, so they sink but are not lost."""
    batches = [hits[start : start + batch_size] for start in range(0, len(hits), batch_size)]
    inputs = [
        {
            "query": query,
            "passages": [{"id": f"P{number}", "text": hit.text} for number, hit in enumerate(batch, 1)],
        }
        for batch in batches
    ]
    outcome = llm.run_many(RATE_PASSAGES, inputs)
    scores: list[float] = []
    for batch, value in zip(batches, outcome.values, strict=True):
        rated = {rating.id: rating.relevance for rating in value.ratings} if value is not None else {}
        scores += [float(rated.get(f"P{number}", -1)) for number in range(1, len(batch) + 1)]
    return scores
