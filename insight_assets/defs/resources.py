"""Resources: where data lives and which embedder runs. Configuration picks the backend."""

from __future__ import annotations

import os

import dagster as dg
from pydantic import PrivateAttr

from insight_assets.core.embedding import Embedder, create_embedder
from insight_assets.core.stores import VectorStore, Warehouse


class StorageResource(dg.ConfigurableResource):
    """Paths of the collections, the DuckDB warehouse and LanceDB (local path or s3:// / gs:// URI).

    Relative paths resolve against the working directory (the project root under `dagster dev`).
    """

    collections_root: str = "data/collections"
    warehouse_path: str = "data/warehouse.duckdb"
    lancedb_uri: str = "data/lancedb"

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse(self.warehouse_path)

    @property
    def vectors(self) -> VectorStore:
        return VectorStore(self.lancedb_uri)


class EmbedderResource(dg.ConfigurableResource):
    """The embedding model: the bundled all-MiniLM-L6-v2 by default.

    ``provider`` is one of local, openai, openai-compatible (Ollama, vLLM, llama.cpp: set
    ``base_url``) or gemini. The API key is read at run time from the environment variable named by
    ``api_key_env``, so it never sits in run config, logs or metadata.
    """

    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    batch_size: int | None = None  # None: the provider's default (16 local, 128 OpenAI, 100 Gemini)
    precision: str = "auto"  # local model only: auto (bf16 where the CPU has it natively), fp32 or bf16

    _embedder: Embedder | None = PrivateAttr(default=None)

    def get_embedder(self) -> Embedder:
        if self._embedder is None:
            api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
            self._embedder = create_embedder(
                self.provider,
                model=self.model,
                api_key=api_key,
                base_url=self.base_url,
                batch_size=self.batch_size,
                precision=self.precision,
            )
        return self._embedder
