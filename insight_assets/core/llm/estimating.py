"""The dry-run side of ``LLMClient``: tokens, cost and time of tasks, tallied without calling a model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from .dry_run import DryRunEstimate, EstimateTally
from .errors import InvalidOutputError
from .pricing import estimate_cost, unpriced_note
from .providers import Message
from .results import Answer

if TYPE_CHECKING:
    from .tasks import Task

T = TypeVar("T", bound=BaseModel)


class EstimatingClient:
    """``LLMClient``'s estimates: ``dry_run`` prices one task's inputs; an ``estimate_only``
    client tallies every run (``_run_estimate``) for ``estimates()``."""

    def dry_run(self, task: Task[T], inputs: Sequence[Mapping[str, Any]]) -> DryRunEstimate:
        """Tokens and cost of running ``task`` on ``inputs``, without calling any provider (and
        without needing an API key)."""
        tally, counted = EstimateTally(), set()
        for item in inputs:
            self._tally(tally, task, task.complete_inputs(item), counted)
        return self._estimate(task, tally)

    def estimates(self) -> list[DryRunEstimate]:
        """What an ``estimate_only`` client's runs would have cost, one entry per task, in the
        order the tasks were first run."""
        with self._lock:
            tallies = dict(self._estimates)
        return [self._estimate(task, tally) for task, tally in tallies.values()]

    def _run_estimate(self, task: Task[T], inputs: Mapping[str, Any]) -> Answer[T]:
        """The answer the chain goes on with: the cached one where the prompt was asked before (so a
        rebuild's plan follows the answers it will get: as many sub-questions, insights, passages
        as they hold), else the offline one, marked ``guessed``. A request that failed for good
        fails here too."""
        with self._lock:
            _, tally = self._estimates.setdefault(task.name, (task, EstimateTally()))
        known = self._tally(tally, task, inputs, self._planned_keys)
        if isinstance(known, InvalidOutputError):
            raise known
        if known is None:
            return Answer(self._offline_answer(task, inputs), guessed=True)
        return Answer(known)

    def _tally(
        self, tally: EstimateTally, task: Task[T], inputs: Mapping[str, Any], counted: set[str]
    ) -> T | InvalidOutputError | None:
        """Count one request; what a build would get without a call: the cached answer, the recorded
        failure, or None (it would be asked). A request already ``counted`` as a call to make counts
        as cached: the build asks it once and reads it again from the cache."""
        params = self._params(task, inputs)
        prompt = task.render(inputs)
        # Without a cache (or offline) nothing is known, and a build pays for every ask.
        key = (
            None if self.cache is None or self.settings.is_offline else self._cache_key(task, params, prompt)
        )
        known = self._known_answer(task, key, inputs)
        cached = known is not None or self._counted_before(key, counted)
        tokens = 0 if cached else self._message_tokens(params, [Message("user", prompt)])
        with self._lock:
            tally.items += 1
            tally.cached_items += cached
            tally.input_tokens += tokens
            tally.max_output_tokens += 0 if cached else params.max_tokens
        return known

    def _counted_before(self, key: str | None, counted: set[str]) -> bool:
        if key is None:
            return False
        with self._lock:
            seen = key in counted
            counted.add(key)
        return seen

    def _known_answer(
        self, task: Task[T], key: str | None, inputs: Mapping[str, Any]
    ) -> T | InvalidOutputError | None:
        if key is None:
            return None
        cached = self._cached_answer(task, key, inputs)
        if cached is not None:
            return cached.value
        reason = self._failure_on_record(key)
        if reason is None:
            return None
        return InvalidOutputError(
            f"task {task.key} failed for good when last asked: {reason}", task=task.name, problems=reason
        )

    def _estimate(self, task: Task[Any], tally: EstimateTally) -> DryRunEstimate:
        params = self.settings.params_for(task)
        to_run = tally.items - tally.cached_items
        max_output = tally.max_output_tokens
        typical = min(task.expected_output_tokens or params.max_tokens, params.max_tokens)
        note = expected = None
        if self.settings.is_local:
            speed = self._chat_provider(params).throughput()
            expected = speed.seconds(tally.input_tokens, typical * to_run)
            note = (
                f"local model {params.model}: nothing is spent; wall time from its speed measured now on "
                f"this machine ({speed.prompt_tokens_per_s:.0f} prompt tokens/s read, "
                f"{speed.output_tokens_per_s:.0f} tokens/s written), typical answer lengths assumed"
            )
        if self.settings.is_offline:
            note = (
                "offline provider: extractive, no model is called and nothing is spent; the token "
                "counts are what a model provider would read"
            )
            cost = max_cost = 0.0
        else:
            cost = estimate_cost(params.provider, params.model, tally.input_tokens, typical * to_run)
            max_cost = estimate_cost(params.provider, params.model, tally.input_tokens, max_output)
            if cost is None:
                note = unpriced_note(params.provider, params.model)
        return DryRunEstimate(
            task=task.key,
            provider=self.provider_label,
            model=params.model,
            items=tally.items,
            cached_items=tally.cached_items,
            input_tokens=tally.input_tokens,
            output_tokens=typical * to_run,
            max_output_tokens=max_output,
            cost_usd=cost,
            max_cost_usd=max_cost,
            note=note,
            expected_seconds=expected,
        )
