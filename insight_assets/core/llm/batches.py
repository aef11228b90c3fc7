"""The batch and concurrency side of ``LLMClient``: batches run with a concurrency limit, independent
batches and independent pieces of work at once, and each request holding a slot of its provider's
limiter (``concurrency.py``). A thread runs its item in a copy of the context that handed it over,
so what the caller's context holds (the tallies of ``spending.py``) follows the work."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from .concurrency import ProviderLimiter, shared_limiter
from .errors import BudgetExceeded, LLMError, TransientProviderError
from .results import BatchResult, ItemResult

if TYPE_CHECKING:
    from .providers import ChatProvider, Completion, Message
    from .settings import ModelParams
    from .tasks import Task

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


def side_by_side(works: Sequence[Callable[[], R]], *, at_once: bool) -> list[R]:
    """Each of ``works`` called, all at once in threads of their own (``at_once``) or one after
    another; their results in order. The first work that raised raises, once all have ended."""
    if not at_once or len(works) < 2:
        return [work() for work in works]
    with ThreadPoolExecutor(max_workers=len(works)) as pool:
        futures = [pool.submit(contextvars.copy_context().run, work) for work in works]
        return [future.result() for future in futures]


class BatchingClient:
    """``LLMClient``'s batches and the provider's limit on calls in flight."""

    def run_many(
        self,
        task: Task[T],
        inputs: Sequence[Mapping[str, Any]],
        *,
        max_concurrency: int | None = None,
    ) -> BatchResult[T]:
        """Run ``task`` on each mapping of ``inputs`` with at most ``max_concurrency`` calls at
        once (default: the client's cap, else the provider's limit, which every client of the
        provider shares; the limit wins where it is lower). A failed item is recorded in its ``ItemResult``. When the
        budget is reached, items not yet started are skipped and ``budget_error`` is set. Fatal
        errors (bad key, unknown model, wrong inputs) stop the batch and are raised."""
        limit = min(
            max_concurrency or self.max_concurrency or self.settings.concurrency, self.settings.concurrency
        )
        if self.settings.is_local and not self.estimate_only:
            # One model in this process answers one call at a time: more threads would only queue
            # on its lock (and their waits would count as the calls' latency).
            limit = 1
        self._plan(len(inputs))
        stop = threading.Event()
        budget_errors: list[BudgetExceeded] = []
        fatal_errors: list[LLMError] = []

        def work(index: int, item: Mapping[str, Any]) -> ItemResult[T]:
            if stop.is_set():
                reason = budget_errors[0] if budget_errors else "the batch stopped"
                return ItemResult(index, "skipped", error=f"not run: {reason}")
            try:
                answer = self._counted_run(task, item)
                return ItemResult(
                    index,
                    "ok",
                    value=answer.value,
                    finish_reason=answer.finish_reason,
                    trimmed=answer.trimmed,
                    guessed=answer.guessed,
                )
            except BudgetExceeded as error:
                stop.set()
                budget_errors.append(error)
                return ItemResult(index, "skipped", error=str(error))
            except LLMError as error:
                if error.fatal:
                    stop.set()
                    fatal_errors.append(error)
                return ItemResult(index, "failed", error=str(error))

        with ThreadPoolExecutor(max_workers=max(1, min(limit, len(inputs)))) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, work, index, item)
                for index, item in enumerate(inputs)
            ]
            results = [future.result() for future in futures]
        if fatal_errors:
            raise fatal_errors[0]
        return BatchResult(tuple(results), budget_errors[0] if budget_errors else None)

    def run_together(
        self, batches: Sequence[tuple[Task[Any], Sequence[Mapping[str, Any]]]]
    ) -> list[BatchResult[Any]]:
        """``run_many`` on each of several independent batches, all at once: their calls draw
        from the provider's one limit, so a small batch does not leave it idle while it waits."""
        return self.side_by_side(
            [lambda task=task, inputs=inputs: self.run_many(task, inputs) for task, inputs in batches]
        )

    def side_by_side(self, works: Sequence[Callable[[], R]]) -> list[R]:
        """Independent pieces of work that call this client (the baselines of one method, say), all
        at once, so that one's waits overlap the others'; their results in order. Offline, local and
        in a dry run one after another (nothing waits; the plan stays in order)."""
        return side_by_side(works, at_once=self.settings.is_hosted and not self.estimate_only)

    @property
    def limiter(self) -> ProviderLimiter:
        """The limiter of this client's provider endpoint."""
        if self._limiter is None:
            self._limiter = shared_limiter(
                self.settings.provider, self.settings.base_url, self.settings.concurrency
            )
        return self._limiter

    def _limited_complete(
        self, provider: ChatProvider, messages: Sequence[Message], params: ModelParams
    ) -> Completion:
        """One attempt, holding a slot of the provider's limiter, which hears how it went."""
        limiter = self.limiter
        with limiter.slot():
            try:
                completion = provider.complete(messages, params)
            except TransientProviderError as error:
                if error.status == 429:
                    limiter.rate_limited(error.rate_limit)
                raise
        limiter.succeeded(completion.rate_limit)
        return completion
