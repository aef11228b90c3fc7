"""What every model-calling asset shares: its client, its scope, metadata, budget stops.

Model-calling assets run in the pool ``llm`` (see ``pools.py``; limit it with ``dagster instance
concurrency set llm N`` or in the UI under Deployment -> Concurrency). However many steps run, the
calls in flight to a provider are bounded by its limit, which every step of every run on the machine
shares (the ``llm`` resource's ``max_concurrency``, see ``core/llm/concurrency.py``); an asset's own
``max_concurrency`` setting caps its batches below that.
"""

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from insight_assets.core.llm import BudgetExceeded, ConfigurationError, LLMClient, LLMError, TaskParams
from insight_assets.core.stage import CollectionScope, Judge
from insight_assets.defs.partitions import collection_folder
from insight_assets.defs.progress import StepProgress
from insight_assets.defs.resources import EmbedderResource, LLMResource, ModelChoice, StorageResource


def model_client(
    context: dg.AssetExecutionContext,
    llm: LLMResource,
    overrides: dict[str, TaskParams],
    max_concurrency: int | None,
    collection: str,
    model_choice: ModelChoice | None = None,
) -> LLMClient:
    """A client whose ledger rows name this asset, partition and run; ``overrides``: the asset's
    settings for its tasks."""
    try:
        return llm.client(
            asset=context.asset_key.to_user_string(),
            partition=collection,
            run_id=context.run_id,
            task_overrides=overrides,
            max_concurrency=max_concurrency,
            logger=context.log,
            model_choice=model_choice,
            progress=StepProgress.of(context).calls,
        )
    except ConfigurationError as error:
        raise dg.Failure(description=f"The llm resource is misconfigured: {error}") from error


def scope_of(
    storage: StorageResource,
    embedder: EmbedderResource | None,
    client: LLMClient,
    collection: str,
    planned: dict[str, Any] | None = None,
    panel: tuple[Judge, ...] = (),
) -> CollectionScope:
    """``collection`` in ``storage``'s stores, with ``client`` (``planned``: a dry run's; ``panel``:
    a judging stage's judges; see ``core/stage.py``)."""
    return CollectionScope(
        warehouse=storage.warehouse,
        vectors=storage.vectors,
        vectors_uri=storage.vectors_uri,
        embedder=embedder.get_embedder() if embedder is not None else None,
        client=client,
        collection=collection,
        folder=collection_folder(storage.collections_root, collection),
        planned=planned,
        panel=panel,
        reports_dir=Path(storage.reports_dir),
        adapters_dir=Path(storage.adapters_dir),
    )


def llm_metadata(client: LLMClient) -> dict[str, Any]:
    """Calls, tokens, cost and cache hits of this asset's client, as asset metadata."""
    metadata: dict[str, Any] = dict(client.summary().as_metadata())
    metadata["llm_cost_usd"] = dg.MetadataValue.float(float(metadata["llm_cost_usd"]))
    return metadata


def _over_budget(client: LLMClient, collection: str, budget_error: BudgetExceeded) -> None:
    """Fail the step cleanly when the run's budget stopped a call: nothing more is sent, and what
    was already answered stays in the cache for the next run."""
    raise dg.Failure(
        description=(
            f"{collection}: stopped by the run's LLM budget before spending more. {budget_error} "
            "Answers already received are cached; rerun with a higher budget_usd / budget_tokens on "
            "the `llm` resource to finish."
        ),
        metadata=llm_metadata(client),
    )


@contextlib.contextmanager
def model_errors_as_failures(clients: list[LLMClient], collection: str) -> Iterator[None]:
    """Turn errors that would fail every item alike (a refused key, an unknown model, the run's
    budget reached) into a step failure that says what to fix, instead of a traceback; close the
    ``clients`` after."""
    try:
        yield
    except BudgetExceeded as error:
        _over_budget(clients[0], collection, error)
    except LLMError as error:
        raise dg.Failure(description=f"{collection}: {error}", metadata=llm_metadata(clients[0])) from error
    finally:
        for client in clients:
            client.close()
