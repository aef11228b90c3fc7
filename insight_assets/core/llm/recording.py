"""The cache and ledger side of ``LLMClient``: cached answers read back, every call recorded."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from . import ledger as ledger_rows
from .cache import cache_key
from .errors import InvalidOutputError
from .jsonout import OutputProblem, validate_value
from .ledger import LedgerRow, RunSummary
from .results import FINISHED, Answer
from .spending import tally

if TYPE_CHECKING:
    from .settings import ModelParams
    from .tasks import Task

T = TypeVar("T", bound=BaseModel)


class RecordingClient:
    """``LLMClient``'s memory: the response cache (keys, validated reads) and the ledger rows of
    its calls, summed up by ``summary()``."""

    @property
    def rows(self) -> list[LedgerRow]:
        """The ledger rows of this client's calls."""
        with self._lock:
            return list(self._rows)

    def summary(self) -> RunSummary:
        with self._lock:
            rows, refusals, failed = list(self._rows), self._budget_refusals, self._failed_items
            trimmed, recorded = self._trimmed_items, self._recorded_failures
        return RunSummary.from_rows(
            self.provider_label,
            rows,
            failed_items=failed,
            recorded_failures=min(recorded, failed),
            budget_refusals=refusals,
            trimmed_items=trimmed,
        )

    @staticmethod
    def _cache_key(task: Task[Any], params: ModelParams, prompt: str) -> str:
        return cache_key(
            model_identity=params.identity(),
            task_name=task.name,
            task_version=task.version,
            template_hash=task.template_hash,
            prompt=prompt,
        )

    def _from_cache(
        self, task: Task[T], params: ModelParams, key: str, inputs: Mapping[str, Any]
    ) -> Answer[T] | None:
        """The cached answer to the request ``key``, with its finish reason, recorded as a cache hit;
        ``None`` if none."""
        started = self.clock()
        cached = self._cached_answer(task, key, inputs)
        if cached is not None:
            self._record(task, params.provider, params.model, started=started, cache_hit=True)
        return cached

    def _cached_answer(self, task: Task[T], key: str, inputs: Mapping[str, Any]) -> Answer[T] | None:
        """The cached answer to the request ``key``, valid for ``inputs``; ``None`` if none."""
        if self.cache is None:
            return None
        cached = self.cache.get(key)
        if cached is None:
            return None
        try:
            value = validate_value(
                json.loads(cached.value_json), task.output_model, task.check_output, inputs
            )
        except OutputProblem:
            # The schema changed without a version bump: ask again, and overwrite the entry.
            return None
        return Answer(value, cached.finish_reason or FINISHED)

    def _failure_on_record(self, key: str) -> str | None:
        """Why the request ``key`` failed for good on an earlier build; ``None`` when it did not fail,
        or the settings ask to retry failures."""
        if self.cache is None or self.settings.retry_failed:
            return None
        return self.cache.failure(key)

    def _recorded_failure(self, task: Task[Any], params: ModelParams, key: str) -> InvalidOutputError | None:
        """The error an earlier build's request ``key`` failed with for good, recorded as a cache hit
        (nothing is sent); ``None`` when it did not fail, or the settings ask to retry failures."""
        started = self.clock()
        reason = self._failure_on_record(key)
        if reason is None:
            return None
        message = (
            f"task {task.key} failed the same way when last asked, and it is not asked again "
            f"(rebuild with --retry-failed to ask): {reason}"
        )
        self._record(
            task,
            params.provider,
            params.model,
            started=started,
            cache_hit=True,
            status=ledger_rows.INVALID_OUTPUT,
            error=message,
        )
        with self._lock:
            self._recorded_failures += 1
        return InvalidOutputError(message, task=task.name, problems=reason)

    def _remember_failure(self, task: Task[Any], params: ModelParams, key: str, error: str) -> None:
        """Record that the request ``key`` failed for good, so that the next build does not pay again."""
        if self.cache is None:
            return
        self.cache.put_failure(
            key,
            task=task.name,
            task_version=task.version,
            provider=params.provider,
            model=params.model,
            error=error,
        )
        with self._lock:
            self._recorded_failures += 1

    def _record(
        self,
        task: Task[Any],
        provider: str,
        model: str,
        *,
        started: float,
        purpose: str = ledger_rows.ANSWER,
        status: str = ledger_rows.OK,
        cache_hit: bool = False,
        input_tokens: int = 0,
        output_tokens: int = 0,
        tokens_estimated: bool = False,
        cost_usd: float | None = 0.0,
        attempts: int = 0,
        error: str | None = None,
    ) -> None:
        row = LedgerRow(
            run_id=self.context.run_id,
            asset=self.context.asset,
            partition=self.context.partition,
            task=task.name,
            task_version=str(task.version),
            provider=provider,
            model=model,
            purpose=purpose,
            status=status,
            cache_hit=cache_hit,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tokens_estimated=tokens_estimated,
            latency_s=self.clock() - started,
            cost_usd=cost_usd,
            attempts=attempts,
            error=self.redact(error) if error else None,
            created_at=time.time(),
        )
        with self._lock:
            self._rows.append(row)
        tally(row)
        self.ledger.record(row)
        if status != ledger_rows.OK:
            self.log.warning("task %s on %s: %s", task.key, provider, row.error)
