"""What every model-calling asset shares: per-asset overrides, the client, metadata, budget stops.

Model-calling assets run in the pool ``llm`` (see ``pools.py``; limit it with ``dagster instance
concurrency set llm N`` or in the UI under Deployment -> Concurrency), so a backfill over many
collections does not open hundreds of provider connections at once; inside an asset, calls run
concurrently up to ``max_concurrency``.
"""

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import dagster as dg
from pydantic import Field

from insight_assets.core.index import IndexMissing
from insight_assets.core.llm import BudgetExceeded, ConfigurationError, LLMClient, LLMError, Task, TaskParams
from insight_assets.core.stage import CollectionScope, NothingToDo
from insight_assets.defs.metadata import nothing_to_do
from insight_assets.defs.partitions import collection_folder
from insight_assets.defs.progress import StepProgress
from insight_assets.defs.resources import EmbedderResource, LLMResource, ModelChoice, StorageResource

# A smoke run's answer length (see ``defs/runs.py``): a slow model writes 200 tokens at most.
SMOKE_ANSWERS = {"max_tokens": 200}


class ModelCallConfig(dg.Config):
    """Overrides of the `llm` resource for this asset's tasks; unset values keep the resource's
    (or the task's own default)."""

    model: str | None = Field(default=None, description="Model for this asset's tasks.")
    temperature: float | None = Field(default=None, description="Sampling temperature.")
    top_p: float | None = Field(default=None, description="Nucleus sampling: the probability mass kept.")
    max_tokens: int | None = Field(default=None, description="Longest answer, in tokens.")
    timeout_s: float | None = Field(default=None, description="Seconds to wait for one answer.")
    max_concurrency: int | None = Field(default=None, description="Calls at once inside this asset.")

    # The tasks the asset runs; each subclass names its own.
    TASKS: ClassVar[tuple[Task[Any], ...]] = ()

    def task_overrides(self) -> dict[str, TaskParams]:
        """These values for every task of the asset."""
        params = TaskParams(
            model=self.model,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
        )
        return {task.name: params for task in self.TASKS}

    def stage(self, scope: CollectionScope) -> Any:
        """The asset's model-calling work on one collection with these settings (a stage of
        ``core/methods/<method>/stages.py``): what the asset runs before it writes, and what the dry
        run runs on its estimate-only client. Every model-calling asset's config names its own."""
        raise NotImplementedError(f"{type(self).__name__} names no stage")


class JudgeCallConfig(ModelCallConfig):
    """A judging asset's config: the judge may be another model than the generator's."""

    judge_provider: str | None = Field(
        default=None, description="Judge provider; unset: the `llm` resource's."
    )
    judge_model: str | None = Field(default=None, description="Judge model; unset: the provider's default.")
    judge_base_url: str | None = Field(default=None, description="Judge server (openai-compatible).")
    judge_api_key_env: str | None = Field(
        default=None, description="Environment variable of the judge's key."
    )

    def judge_choice(self) -> ModelChoice:
        return ModelChoice(self.judge_provider, self.judge_model, self.judge_base_url, self.judge_api_key_env)


class JudgeModel(dg.Config):
    """One judge: a name for the report and, optionally, another provider or model than the `llm`
    resource's (its key from `api_key_env`, by default the provider's usual variable)."""

    name: str
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None

    def choice(self) -> ModelChoice:
        return ModelChoice(self.provider, self.model, self.base_url, self.api_key_env)


def model_client(
    context: dg.AssetExecutionContext,
    llm: LLMResource,
    config: ModelCallConfig,
    collection: str,
    model_choice: ModelChoice | None = None,
) -> LLMClient:
    """A client whose ledger rows name this asset, partition and run."""
    try:
        return llm.client(
            asset=context.asset_key.to_user_string(),
            partition=collection,
            run_id=context.run_id,
            task_overrides=config.task_overrides(),
            max_concurrency=config.max_concurrency,
            logger=context.log,
            model_choice=model_choice,
            progress=StepProgress.of(context).calls,
        )
    except ConfigurationError as error:
        raise dg.Failure(description=f"The llm resource is misconfigured: {error}") from error


def collection_scope(
    context: dg.AssetExecutionContext,
    storage: StorageResource,
    llm: LLMResource,
    config: ModelCallConfig,
    collection: str,
    embedder: EmbedderResource | None = None,
    model_choice: ModelChoice | None = None,
) -> CollectionScope:
    """The collection as this asset's stage sees it, with a client whose ledger rows name the asset."""
    client = model_client(context, llm, config, collection, model_choice)
    return scope_of(storage, embedder, client, collection)


def scope_of(
    storage: StorageResource,
    embedder: EmbedderResource | None,
    client: LLMClient,
    collection: str,
    planned: dict[str, Any] | None = None,
) -> CollectionScope:
    """``collection`` in ``storage``'s stores, with ``client`` (``planned``: a dry run's, see
    ``core/stage.py``)."""
    return CollectionScope(
        warehouse=storage.warehouse,
        vectors=storage.vectors,
        vectors_uri=storage.vectors_uri,
        embedder=embedder.get_embedder() if embedder is not None else None,
        client=client,
        collection=collection,
        folder=collection_folder(storage.collections_root, collection),
        planned=planned,
    )


def run_stage(config: ModelCallConfig, scope: CollectionScope) -> Any:
    """The config's stage on ``scope`` in a build: missing inputs, and errors that would fail every
    model call alike, become a step failure that says what to fix (see ``model_errors_as_failures``)."""
    with model_errors_as_failures(scope.client, scope.collection):
        try:
            return config.stage(scope)
        except (NothingToDo, IndexMissing) as error:
            raise nothing_to_do(scope.collection, str(error)) from error


def llm_metadata(client: LLMClient) -> dict[str, Any]:
    """Calls, tokens, cost and cache hits of this asset's client, as asset metadata."""
    metadata: dict[str, Any] = dict(client.summary().as_metadata())
    metadata["llm_cost_usd"] = dg.MetadataValue.float(float(metadata["llm_cost_usd"]))
    return metadata


def stop_if_over_budget(
    client: LLMClient, collection: str, budget_error: str | BudgetExceeded | None
) -> None:
    """Fail the step cleanly when the run's budget stopped a call: nothing more is sent, and what
    was already answered stays in the cache for the next run."""
    if budget_error is None:
        return
    raise dg.Failure(
        description=(
            f"{collection}: stopped by the run's LLM budget before spending more. {budget_error} "
            "Answers already received are cached; rerun with a higher budget_usd / budget_tokens on "
            "the `llm` resource to finish."
        ),
        metadata=llm_metadata(client),
    )


@contextlib.contextmanager
def model_errors_as_failures(client: LLMClient, collection: str) -> Iterator[None]:
    """Turn errors that would fail every item alike (a refused key, an unknown model) into a step
    failure that says what to fix, instead of a traceback."""
    try:
        yield
    except BudgetExceeded as error:
        stop_if_over_budget(client, collection, error)
    except LLMError as error:
        raise dg.Failure(description=f"{collection}: {error}", metadata=llm_metadata(client)) from error
    finally:
        client.close()
