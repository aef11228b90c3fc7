"""The retrieval layer every method shares: first-stage search, then an optional rerank.

``Retriever.open(warehouse, vectors, collection, embedder, profile)`` reads a collection's chunks of
one profile; ``search(query, k, mode, documents=..., exclude=...)`` returns ``Hit``s (chunk id,
document id, title, page span, text, score, and the mode that found each) by ``dense``,
``lexical`` or ``hybrid`` search; ``rerank(query, hits, top_n, reranker)`` reorders them by
``late-interaction``, ``llm`` or ``none``. ``retrieve(...)`` is one query in one call.
"""

from .rerank import DEFAULT_RERANKER, RERANKERS, LateInteraction, RerankError, rerank
from .search import DEFAULT_PROFILE, RETRIEVAL_MODES, Hit, RetrievalError, Retriever, retrieve

__all__ = [
    "DEFAULT_PROFILE",
    "DEFAULT_RERANKER",
    "RERANKERS",
    "RETRIEVAL_MODES",
    "Hit",
    "LateInteraction",
    "RerankError",
    "RetrievalError",
    "Retriever",
    "rerank",
    "retrieve",
]
