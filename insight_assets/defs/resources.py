"""Resources: where data lives, which embedder and which language model run. Configuration picks
the backend."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import PrivateAttr

from insight_assets.core.embedding.models import Embedder, EmbedderChoice
from insight_assets.core.llm import (
    DEFAULT_API_KEY_ENV,
    Budget,
    CallContext,
    CallLedger,
    CallProgress,
    ConfigurationError,
    LLMClient,
    LLMSettings,
    ResponseCache,
    TaskParams,
)
from insight_assets.core.llm.concurrency import shared_limiter
from insight_assets.core.llm.settings import OFFLINE, CallSettings
from insight_assets.core.runtime.stage_settings import JudgeModel
from insight_assets.core.storage.project import Storage

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import VectorStore, Warehouse


class StorageResource(dg.ConfigurableResource):
    """Paths of the collections, the warehouse, LanceDB (local path or s3:// / gs:// URI), the reports
    and trained adapters.

    The warehouse is the DuckDB file ``warehouse_path``, or, given a PostgreSQL URL in
    ``warehouse_catalog`` (unset: INSIGHT_ASSETS_POSTGRES_URL, read at run time), a DuckLake shared by
    every machine of the deployment: its catalog in that database, its data files under
    ``warehouse_data_path`` (unset: INSIGHT_ASSETS_DATA_PATH, else data/lake). ``lancedb_uri`` unset:
    INSIGHT_ASSETS_LANCEDB_URI, else data/lancedb. See ``core/deployment.py``.

    Relative paths resolve against the working directory (the project root under `dagster dev`).
    """

    collections_root: str = "data/collections"
    warehouse_path: str = "data/warehouse.duckdb"
    warehouse_catalog: str | None = None
    warehouse_data_path: str | None = None
    lancedb_uri: str | None = None
    reports_dir: str = "data/reports"
    adapters_dir: str = "data/adapters"  # trained model adapters, one folder per collection

    def storage(self) -> Storage:
        """The same paths as a plain ``core.storage.project.Storage``."""
        return Storage(**{field.name: getattr(self, field.name) for field in dataclasses.fields(Storage)})

    @property
    def warehouse(self) -> Warehouse:
        return self.storage().warehouse

    @property
    def vectors_uri(self) -> str:
        """LanceDB's location: ``lancedb_uri``, else the deployment's."""
        return self.storage().vectors_uri

    @property
    def vectors(self) -> VectorStore:
        return self.storage().vectors


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

    def run_budget_usd(self) -> float | None:
        """The most a run may spend, in US dollars: the configured budget, else the environment's."""
        return self.budget_usd if self.budget_usd is not None else _budget_from_environment()

    def identity(self) -> dict:
        """What decides the vectors (not the key or the batch size): part of a step's inputs, so a
        step reruns when the embedder changes (see ``reuse.py``)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "precision": self.precision,
        }

    def get_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = EmbedderChoice(
                self.provider, self.model, self.base_url, self.api_key_env, self.batch_size, self.precision
            ).get_embedder()
        return self._embedder


def with_model_choice(settings: LLMSettings, choice: JudgeModel) -> LLMSettings:
    """``settings`` with another provider or model for one piece of work (a judge's). Its key is
    read from ``choice.api_key_env`` (default: the provider's usual variable), unless the provider is
    the resource's own, whose key it then shares."""
    provider = choice.provider or settings.provider
    same = provider == settings.provider
    key_env = choice.api_key_env or (settings.api_key_env if same else DEFAULT_API_KEY_ENV.get(provider))
    if same and not choice.api_key_env:
        api_key = settings.api_key
    else:
        api_key = os.environ.get(key_env) if key_env else None
    return settings.replaced(
        provider=provider,
        model=choice.model or (settings.model if same else None),
        base_url=choice.base_url or (settings.base_url if same else None),
        api_key=api_key or None,
        api_key_env=key_env,
    )


CONTEXT_TOKENS_ENV = "INSIGHT_ASSETS_LLM_CONTEXT_TOKENS"
CONCURRENCY_ENV = "INSIGHT_ASSETS_LLM_CONCURRENCY"
RETRY_FAILED_ENV = "INSIGHT_ASSETS_LLM_RETRY_FAILED"
BUDGET_USD_ENV = "INSIGHT_ASSETS_LLM_BUDGET_USD"
# Where the provider slots that every process of the machine shares live, under the data folder.
SLOTS_DIR = Path("cache") / "provider_slots"


def _concurrency_from_environment() -> int | None:
    value = os.environ.get(CONCURRENCY_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ConfigurationError(f"{CONCURRENCY_ENV} must be a number of calls (1 or more), not {value!r}")
    return int(value)


def _budget_from_environment() -> float | None:
    value = os.environ.get(BUDGET_USD_ENV, "").strip()
    if not value:
        return None
    try:
        budget = float(value)
    except ValueError:
        budget = -1.0
    if budget <= 0:
        raise ConfigurationError(f"{BUDGET_USD_ENV} must be an amount of US dollars above 0, not {value!r}")
    return budget


def _context_tokens_from_environment() -> int | None:
    value = os.environ.get(CONTEXT_TOKENS_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise ConfigurationError(f"{CONTEXT_TOKENS_ENV} must be a number of tokens, not {value!r}")
    return int(value)


class LLMResource(dg.ConfigurableResource, CallSettings):
    """Which model answers the tasks, how hard to try, and what a run may spend.

    ``provider`` is offline (extractive, no network, no key), local (a GGUF model run in-process by
    llama.cpp: ``model`` is the file's path, unset the bundled SmolLM2-135M), openai, anthropic, gemini
    or openai-compatible (any OpenAI-style server at ``base_url``: Ollama, vLLM, llama.cpp). Left
    unset, ``provider``, ``model`` and ``base_url`` are read when a run starts from
    INSIGHT_ASSETS_LLM_PROVIDER, INSIGHT_ASSETS_LLM_MODEL and INSIGHT_ASSETS_LLM_BASE_URL, so switching
    to a hosted model is an environment change, not a code change; without them, offline.
    The key comes from the environment only: give ``api_key`` as ``dg.EnvVar("NAME")`` (in run
    config, ``api_key: {env: NAME}``), or leave it unset and the variable named by ``api_key_env``
    (default: the provider's usual one, e.g. OPENAI_API_KEY) is read when a call is made. It is
    never written to metadata, logs, the cache or the ledger.

    ``budget_usd`` / ``budget_tokens`` limit one run (all its assets, across processes, through the
    ledger): a call that could pass the limit is not sent and the asset fails, saying so; answers
    already paid for stay in the cache, so a rerun with a higher budget resumes where it stopped.
    The cache and the ledger are SQLite files under ``data_dir``/cache.

    The call settings (timeouts, retries, concurrency, context window...) are ``CallSettings``'
    fields, with their defaults. Those left unset here are read from the environment when a run
    starts: ``max_concurrency`` from INSIGHT_ASSETS_LLM_CONCURRENCY, ``retry_failed`` from
    INSIGHT_ASSETS_LLM_RETRY_FAILED=1 (what `insight-assets build --retry-failed` sets),
    ``context_tokens`` from INSIGHT_ASSETS_LLM_CONTEXT_TOKENS, ``budget_usd`` from
    INSIGHT_ASSETS_LLM_BUDGET_USD (what `insight-assets build --budget-usd` sets).
    """

    provider: str | None = None
    api_key: str | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    use_cache: bool = True
    data_dir: str = "data"

    def choice(self) -> tuple[str, str | None, str | None]:
        """(provider, model, base_url): the configured ones, else the environment's (read now, at run
        time, never when the definitions load), else offline."""
        provider = self.provider or os.environ.get("INSIGHT_ASSETS_LLM_PROVIDER", "").strip() or OFFLINE
        model = self.model or os.environ.get("INSIGHT_ASSETS_LLM_MODEL") or None
        base_url = self.base_url or os.environ.get("INSIGHT_ASSETS_LLM_BASE_URL") or None
        return provider, model, base_url

    def run_budget_usd(self) -> float | None:
        """The most a run may spend, in US dollars: the configured budget, else the environment's."""
        return self.budget_usd if self.budget_usd is not None else _budget_from_environment()

    def identity(self) -> dict:
        """What decides the answers (not the key, the limits or the retries): part of a step's
        inputs, so a step reruns when the model changes (see ``reuse.py``)."""
        provider, model, base_url = self.choice()
        if provider == OFFLINE:
            return {"provider": provider}
        return {
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "context_tokens": self.context_tokens or _context_tokens_from_environment(),
        }

    def settings(self, task_overrides: Mapping[str, TaskParams] | None = None) -> LLMSettings:
        """Plain settings for the LLM layer; raises ``ConfigurationError`` with the fix to make."""
        provider, model, base_url = self.choice()
        key_env = self.api_key_env or DEFAULT_API_KEY_ENV.get(provider)
        api_key = self.api_key or (os.environ.get(key_env) if key_env else None)
        return LLMSettings(
            **{
                **self.model_dump(include=set(CallSettings.model_fields)),
                "provider": provider,
                "model": model,
                "base_url": base_url,
                "api_key": api_key or None,
                "api_key_env": key_env,
                "max_concurrency": self.max_concurrency or _concurrency_from_environment(),
                "retry_failed": self.retries_failed(),
                "task_overrides": dict(task_overrides or {}),
                "context_tokens": self.context_tokens or _context_tokens_from_environment(),
            }
        )

    def client(
        self,
        *,
        asset: str,
        partition: str | None,
        run_id: str | None,
        task_overrides: Mapping[str, TaskParams] | None = None,
        max_concurrency: int | None = None,
        logger: logging.Logger | logging.LoggerAdapter | None = None,
        model_choice: JudgeModel | None = None,
        progress: Callable[[CallProgress], None] | None = None,
    ) -> LLMClient:
        """A client for one asset's work on one partition, its calls recorded under that name.
        ``model_choice`` swaps the provider or model (a second judge, say); ``progress`` hears of
        each call answered."""
        settings = self.settings(task_overrides)
        if model_choice is not None:
            settings = with_model_choice(settings, model_choice)
        data_dir = Path(self.data_dir)
        ledger = CallLedger.in_data_dir(data_dir)
        budget = None
        budget_usd = self.run_budget_usd()
        if budget_usd is not None or self.budget_tokens is not None:
            budget = Budget(budget_usd, self.budget_tokens, ledger=ledger, run_id=run_id)
        return LLMClient(
            settings,
            cache=ResponseCache.in_data_dir(data_dir) if self.use_cache else None,
            ledger=ledger,
            budget=budget,
            context=CallContext(asset=asset, partition=partition, run_id=run_id),
            logger=logger,
            progress=progress,
            limiter=shared_limiter(
                settings.provider,
                settings.base_url,
                settings.concurrency,
                # Slots across processes for a server; a local model's lock is its own process's.
                slot_root=data_dir / SLOTS_DIR if settings.is_hosted else None,
            ),
            max_concurrency=max_concurrency,
        )

    def retries_failed(self) -> bool:
        """Whether failed requests are asked again (``retry_failed``, else the environment)."""
        return self.retry_failed or os.environ.get(RETRY_FAILED_ENV, "").strip().lower() in (
            "1",
            "true",
            "yes",
        )
