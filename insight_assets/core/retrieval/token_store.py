"""The late-interaction reranker's token vectors of a collection's passages, kept with the build.

Reranking 100 candidates means running each through the model for its token vectors: 1-2 s a query
on two cores, paid again by every process (a search, the MCP server, the build's XSum answers, the
dry run, the page). ``chunk_embeddings`` computes them once per passage text and keeps them in a
LanceDB table per collection (kind ``token_vectors``), beside the chunk vectors; the reranker reads
them instead (``LateInteraction(stored=...)``) and runs the model only for texts not kept there.

Each token vector is kept as int8 with a float16 scale (its largest component over 127): 386 bytes a
token instead of 768 in float16, and MaxSim scores within 0.01 of the model's own vectors. A row per
text: ``key`` (the text's SHA-256, 32 hex digits), ``count`` (tokens), ``tokens`` and ``scales``
(their bytes).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence

from insight_assets.core.startup.lazy import np, pa, pc
from insight_assets.core.storage.stores import VectorStore

TOKEN_KIND = "token_vectors"
DIMENSION = 384


@functools.cache
def token_vector_schema() -> pa.Schema:
    return pa.schema(
        [
            ("key", pa.string()),
            ("count", pa.int32()),
            ("tokens", pa.binary()),
            ("scales", pa.binary()),
        ]
    )


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def quantize(tokens: np.ndarray) -> tuple[bytes, bytes]:
    """Token vectors (rows) as int8 bytes and one float16 scale per row."""
    rows = tokens.astype(np.float32)
    scales = np.abs(rows).max(axis=1, initial=0.0) / 127.0
    safe = np.where(scales > 0, scales, 1.0)
    quantized = np.clip(np.rint(rows / safe[:, None]), -127, 127).astype(np.int8)
    return quantized.tobytes(), scales.astype(np.float16).tobytes()


def dequantize(tokens: bytes, scales: bytes) -> np.ndarray:
    """The float16 token vectors ``quantize`` kept."""
    rows = np.frombuffer(tokens, dtype=np.int8).reshape(-1, DIMENSION).astype(np.float32)
    return (rows * np.frombuffer(scales, dtype=np.float16).astype(np.float32)[:, None]).astype(np.float16)


class StoredTokens:
    """A collection's kept token vectors, looked up by text."""

    def __init__(self, table: pa.Table):
        self._table = table
        self._row = {key: row for row, key in enumerate(table["key"].to_pylist())}

    def __len__(self) -> int:
        return len(self._row)

    @property
    def nbytes(self) -> int:
        return self._table.nbytes

    def get(self, text: str) -> np.ndarray | None:
        row = self._row.get(text_key(text))
        if row is None:
            return None
        return dequantize(self._table["tokens"][row].as_py(), self._table["scales"][row].as_py())

    @classmethod
    def load(cls, vectors_uri: str, collection: str) -> StoredTokens | None:
        """The collection's kept token vectors; ``None`` before its ``chunk_embeddings`` kept any."""
        table = VectorStore(vectors_uri, TOKEN_KIND).read(collection)
        return None if table is None else cls(table)


def keep_token_vectors(
    vectors_uri: str, collection: str, texts: Sequence[str], encode: Callable[[list[str]], list[np.ndarray]]
) -> dict[str, int]:
    """Make the collection's kept token vectors those of ``texts``: rows of texts still there are
    kept, texts new since are run through ``encode`` (``LateInteraction.token_vectors``), rows of
    texts gone are dropped. Returns counts for the build's metadata; writes nothing when nothing
    changed."""
    store = VectorStore(vectors_uri, TOKEN_KIND)
    wanted = {text_key(text): text for text in texts}
    existing = store.read(collection)
    kept = existing.filter(pc.is_in(existing["key"], pa.array(list(wanted)))) if existing else None
    have = set(kept["key"].to_pylist()) if kept is not None else set()
    missing = [text for key, text in wanted.items() if key not in have]
    dropped = (existing.num_rows if existing is not None else 0) - len(have)
    if missing or dropped:
        encoded = encode(missing)
        packed = [quantize(tokens) for tokens in encoded]
        new_rows = pa.table(
            {
                "key": [text_key(text) for text in missing],
                "count": [len(tokens) for tokens in encoded],
                "tokens": [tokens for tokens, _ in packed],
                "scales": [scales for _, scales in packed],
            },
            schema=token_vector_schema(),
        )
        kept = pa.concat_tables([kept.cast(token_vector_schema()), new_rows]) if kept else new_rows
        store.replace(collection, kept)
    return {
        "token_vector_texts": len(wanted),
        "token_vectors_encoded": len(missing),
        "token_vectors_dropped": dropped,
        "token_vector_bytes": kept.nbytes if kept is not None else 0,
    }
