"""The chunk_embeddings asset: every chunk's vector in LanceDB, under a full-text index."""

import functools
import time
from collections import Counter

import dagster as dg

from insight_assets.core.embedding.models import EmbeddingError
from insight_assets.core.embedding.vectorize import vectorize_chunks
from insight_assets.core.ingestion import ingest, ingest_store
from insight_assets.core.retrieval import LateInteraction
from insight_assets.core.startup import imports
from insight_assets.core.startup.lazy import np, pa, prefetch
from insight_assets.defs.ingestion.assets import chunks
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, nothing_to_do
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.pools import EMBEDDING_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, StorageResource

_VECTOR_KEY = ["profile", "chunk_id", "text_sha", "variant", "pooled_from"]
# Columns a stored vector table must have to be reused as it is (``text`` feeds the full-text index).
_VECTOR_COLUMNS = {*_VECTOR_KEY, "text", "vector"}


@functools.cache
def _embedding_errors_schema() -> "pa.Schema":
    return pa.schema(
        [
            (name, pa.string())
            for name in ("collection", "variant", "profile", "chunk_id", "doc_id", "text_sha", "error")
        ]
    )


def _same_rows(existing, table) -> bool:
    """Whether a stored vector table holds exactly ``table``'s rows, by key."""
    if (
        existing is None
        or existing.num_rows != table.num_rows
        or not _VECTOR_COLUMNS <= set(existing.column_names)
    ):
        return False
    # As multisets of keys: LanceDB does not promise to read rows back in the order they were written.
    return _vector_keys(existing) == _vector_keys(table)


def _vector_keys(table) -> Counter:
    return Counter(zip(*(table.column(name).to_pylist() for name in _VECTOR_KEY), strict=True))


@dg.asset(
    kinds={"lancedb"},
    code_version="4",
    **pooled(EMBEDDING_POOL),
    check_specs=[collection_check("embedding_per_chunk", "chunk_embeddings")],
    **asset_settings("ingestion", deps=[chunks]),
)
def chunk_embeddings(
    context: dg.AssetExecutionContext, storage: StorageResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    """Unit vectors for every chunk in LanceDB, keyed by (collection, profile, chunk_id), with the
    chunk text under a full-text (BM25) index for lexical and hybrid retrieval.

    The model reads each piece of text once: xsum chunks are embedded (only those without a vector
    from the configured embedder yet), and insightgen chunks are pooled from the xsum vectors they cover.
    """
    return materialize_each(
        context,
        storage,
        lambda collection: _chunk_embeddings(context, storage, embedder, collection),
        outputs_present=storage.vectors.exists,
    )


def _chunk_embeddings(
    context: dg.AssetExecutionContext, storage: StorageResource, embedder: EmbedderResource, collection: str
) -> CollectionReport:
    with storage.warehouse.session() as db:
        chunk_rows = ingest_store.chunks_to_embed(db, collection)
        stored_errors = ingest_store.embedding_error_count(db, collection)
    if not chunk_rows:
        raise nothing_to_do(collection, "nothing to embed: `chunks` holds no chunks.")
    model = embedder.get_embedder()
    vectors = storage.vectors
    existing = vectors.read(collection)
    # LanceDB takes most of a second to import: let it load while the model computes (a first build
    # has no table to read before, and reads none without it).
    prefetch(imports.lancedb)
    reranker = LateInteraction()
    try:
        outcome = vectorize_chunks(
            collection, chunk_rows, model, existing, with_token_vectors=reranker.shares_model_with(model)
        )
    except EmbeddingError as error:  # a refused key, an unknown model: every batch would fail
        raise nothing_to_do(collection, f"no chunk could be embedded: {error}") from error
    write_seconds = _record_failures(storage, collection, model.variant, outcome.failures, stored_errors)
    if outcome.failures and not outcome.table.num_rows:
        raise nothing_to_do(
            collection,
            f"no chunk could be embedded: all {len(outcome.failures)} failed ({outcome.failures[0]['error']}). "
            "Rerun when the embedding service answers.",
        )
    stored, vector_write_seconds, text_index_seconds = _store_vectors(
        vectors, collection, existing, outcome.table, outcome.embedded
    )
    token_vectors = (
        {"token_vectors": "not kept: a smoke-test embedder runs no model"}
        if getattr(model, "smoke_test", False)
        else _keep_token_vectors(storage, collection, chunk_rows, reranker, outcome.token_vectors)
    )
    context.log.info(
        f"{collection}: embedded {outcome.embedded} chunk texts, reused {outcome.reused}, pooled {outcome.pooled}"
        + (f", {len(outcome.failures)} failed" if outcome.failures else "")
    )
    return CollectionReport(
        metadata={
            **_embedding_metadata(outcome, vector_write_seconds, write_seconds, text_index_seconds),
            "variant": model.variant,
            "table": vectors.table_name(collection),
            **token_vectors,
        },
        checks=[_embedding_per_chunk(chunk_rows, stored, len(outcome.failures))],
        data_version=ingest.fingerprint([model.variant] + [row["chunk_id"] for row in chunk_rows]),
        incomplete=f"{len(outcome.failures)} chunk(s) without a vector" if outcome.failures else None,
    )


def _embedding_metadata(
    outcome, vector_write_seconds: float, write_seconds: float, text_index_seconds: float
) -> dict:
    """What the embedding did: counts, speeds and the time its writes took."""
    return {
        "dagster/row_count": outcome.table.num_rows,
        "chunks_embedded": outcome.embedded,
        "chunks_reused": outcome.reused,
        "chunks_pooled": outcome.pooled,
        "chunks_failed": len(outcome.failures),
        "words_embedded": outcome.words_embedded,
        "embed_seconds": round(outcome.seconds, 3),
        "words_per_second": round(outcome.words_per_second, 1),
        "vector_write_seconds": round(vector_write_seconds, 3),
        "write_seconds": round(write_seconds, 3),
        "text_index": "rebuilt" if text_index_seconds else "unchanged",
        "text_index_seconds": round(text_index_seconds, 3),
        **{f"{profile}_vectors": count for profile, count in sorted(outcome.per_profile.items())},
        "failures": dg.MetadataValue.md(
            markdown_table(outcome.failures, ["profile", "chunk_id", "error"], empty="None.")
        ),
    }


def _keep_token_vectors(
    storage: StorageResource,
    collection: str,
    chunk_rows: list[dict],
    reranker: LateInteraction,
    computed: "dict[str, np.ndarray]",
) -> dict:
    """The reranker's token vectors of the passages, kept with the build (``core.retrieval.token_store``):
    the build's reranks, the MCP server and searches read them instead of running the model. Those
    the embedding's forward passes gave (``computed``, by text) are not computed again."""
    from insight_assets.core.ingestion.chunking import PASSAGE
    from insight_assets.core.retrieval.token_store import keep_token_vectors

    def encode(texts: list[str]) -> list[np.ndarray]:
        fresh = dict(
            zip(rest := [text for text in texts if text not in computed], reranker.token_vectors(rest))
        )
        return [computed[text] if text in computed else fresh[text] for text in texts]

    started = time.perf_counter()
    texts = [row["text"] for row in chunk_rows if row["profile"] == PASSAGE]
    kept = keep_token_vectors(storage.vectors_uri, collection, texts, encode)
    return {**kept, "token_vector_seconds": round(time.perf_counter() - started, 3)}


def _record_failures(
    storage, collection: str, variant: str, failures: list[dict], stored_errors: int
) -> float:
    """A batch that failed after the SDK's retries leaves its chunks without vectors: they are error
    rows now, and the next run embeds exactly them again. The seconds writing them took."""
    started = time.perf_counter()
    if failures or stored_errors:
        rows = [{"collection": collection, "variant": variant, **row} for row in failures]
        storage.warehouse.replace_partition(
            collection, {"embedding_errors": pa.Table.from_pylist(rows, schema=_embedding_errors_schema())}
        )
    return time.perf_counter() - started


def _store_vectors(vectors, collection: str, existing, table: "pa.Table", embedded: int):
    """Write ``table`` unless it holds what is stored already, and index its text where needed:
    what LanceDB holds then, and the seconds writing and indexing took."""
    # Pooled vectors are recomputed from the same stored vectors, so same keys mean the same table.
    stored = existing
    rewritten = bool(embedded) or not _same_rows(existing, table)
    vector_write_seconds = 0.0
    if rewritten:
        started = time.perf_counter()
        vectors.replace(collection, table)
        vector_write_seconds = time.perf_counter() - started
        stored = vectors.read(collection)  # read back: the check is about what LanceDB holds
    # A rewritten table needs its full-text index again; an unchanged one keeps it (nothing written).
    text_index_seconds = 0.0
    if rewritten or not vectors.has_text_index(collection):
        started = time.perf_counter()
        vectors.build_text_index(collection)
        text_index_seconds = time.perf_counter() - started
    return stored, vector_write_seconds, text_index_seconds


def _embedding_per_chunk(chunk_rows: list[dict], stored, failed: int) -> dg.AssetCheckResult:
    stored_keys = (
        set(zip(stored.column("profile").to_pylist(), stored.column("chunk_id").to_pylist(), strict=True))
        if stored
        else set()
    )
    missing = sum(1 for row in chunk_rows if (row["profile"], row["chunk_id"]) not in stored_keys)
    return dg.AssetCheckResult(
        check_name="embedding_per_chunk",
        passed=missing == 0,
        metadata={"chunks_without_vector": missing, "chunks_failed": failed},
        description="Every chunk has a vector; a chunk whose batch failed is in `embedding_errors`.",
    )
