"""``LLMClient``: the one way the methods ask a model.

``run(task, **inputs)`` returns a validated output object or raises; ``run_many`` runs a batch with
a concurrency limit and records one failed item without sinking the others; ``dry_run`` estimates
tokens and cost without calling anyone; ``summary()`` is what the asset shows as metadata.

For a model provider a call goes: render the prompt -> fit it to the model's context window
(``window.py``) -> cache lookup -> budget reservation -> request with retries -> extract and validate
JSON -> on failure one repair request that shows the model its error -> cache the valid answer (or
record the failure: see ``cache.py``). Every request, cache hit and offline answer is a ledger row.

Each request holds a slot of the provider's ``ProviderLimiter`` (``concurrency.py``) while it is in
flight, one limiter per provider endpoint and process, so every client's batches draw from one pool
of ``LLMSettings.concurrency`` calls, which backs off when the provider answers 429.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import string
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar

from pydantic import BaseModel

from . import ledger as ledger_rows
from .batches import BatchingClient
from .cache import ResponseCache, offline_cache_key
from .concurrency import ProviderLimiter
from .errors import (
    BudgetExceeded,
    InvalidOutputError,
    LLMError,
    ProviderError,
    RequestRejectedError,
)
from .estimating import EstimatingClient
from .jsonout import OutputProblem, parse_output, parse_text_output
from .ledger import CallLedger, CallProgress, LedgerRow
from .pricing import context_window, estimate_cost
from .providers import OFFLINE_LABEL, ChatProvider, Completion, Message, OfflineProvider, make_chat_provider
from .recording import RecordingClient
from .redaction import Redactor
from .results import (
    FINISHED,
    TRUNCATED,
    Answer,
    CallContext,
    _count_text_tokens,
    count_message_tokens,
)
from .retry import Retrier, RetryPolicy, RetryStats
from .same_requests import SAME_REQUESTS
from .settings import OFFLINE, TOKEN_PROBABILITY_PROVIDERS, LLMSettings, ModelParams
from .tasks import Task, load_prompt
from .window import TOKENS_PER_MESSAGE, Fitted, fit_to_window, too_long

if TYPE_CHECKING:
    from .budget import Budget
    from .dry_run import EstimateTally

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger(__name__)

REPAIR_TEMPLATE = "repair_json.v1.txt"
REPAIR_TEXT_TEMPLATE = "repair_text.v1.txt"


class LLMClient(BatchingClient, EstimatingClient, RecordingClient):
    """Runs tasks against the configured provider for one asset (or one piece of work).

    ``cache`` and ``ledger`` are shared, persistent stores (``None``: no cache; no persistent
    ledger, the client still keeps its own rows for ``summary()``). ``budget`` is usually one per
    run. ``sleep``, ``clock`` and ``rng`` drive the retry backoff and are injectable for tests.
    The client is safe to use from several threads.

    With ``estimate_only`` the client is a dry run of a whole chain of tasks: every ``run`` prices
    the prompt the configured provider would read (cached prompts are free), then returns the
    task's offline answer so that the next step has realistic inputs to price. Nothing is sent,
    no key is needed and nothing is written to the ledger; ``estimates()`` holds the tally.

    ``progress`` hears after each item how far the client's work has come (``CallProgress``).
    ``limiter``: the provider's shared limiter (default: this process's for the endpoint, see
    ``concurrency.shared_limiter``); ``max_concurrency`` caps this client's batches below it.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        cache: ResponseCache | None = None,
        ledger: CallLedger | None = None,
        budget: Budget | None = None,
        context: CallContext | Mapping[str, str | None] | None = None,
        logger: logging.Logger | logging.LoggerAdapter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        estimate_only: bool = False,
        progress: Callable[[CallProgress], None] | None = None,
        limiter: ProviderLimiter | None = None,
        max_concurrency: int | None = None,
    ):
        self.settings = settings
        self._limiter = limiter
        self.max_concurrency = max_concurrency
        self.estimate_only = estimate_only
        self.cache = cache
        self.ledger = ledger or CallLedger(None)
        self.budget = budget
        if context is None:
            context = CallContext()
        elif not isinstance(context, CallContext):
            context = CallContext(**context)
        self.context = context
        self.log = logger or log
        self.clock = clock
        self.redact = Redactor([settings.api_key])
        self.retrier = Retrier(
            RetryPolicy(
                max_retries=settings.max_retries,
                max_total_s=settings.max_total_retry_s,
                initial_backoff_s=settings.initial_backoff_s,
                max_backoff_s=settings.max_backoff_s,
            ),
            sleep=sleep,
            clock=clock,
            rng=rng,
            logger=self.log,
        )
        self._offline = OfflineProvider()
        self._providers: dict[str | None, ChatProvider] = {}
        self._lock = threading.Lock()
        self._rows: list[LedgerRow] = []
        self._budget_refusals = 0
        self._failed_items = 0
        self._recorded_failures = 0
        self._trimmed_items = 0
        self._estimates: dict[str, tuple[Task[Any], EstimateTally]] = {}
        self._planned_keys: set[str] = set()  # the requests a dry run counted as calls to make
        self._progress = progress
        self._planned = self._done = 0

    # -- public API -------------------------------------------------------------------------

    @property
    def provider_label(self) -> str:
        return OFFLINE_LABEL if self.settings.is_offline else self.settings.provider

    def writer_label(self, task: Task[Any]) -> str:
        """Who writes ``task``'s answers: "offline (extractive)" or "<provider>/<model>" (for
        ``local``, the GGUF file's name: "local/SmolLM2-135M-Instruct.Q4_1")."""
        if self.settings.is_offline:
            return OFFLINE_LABEL
        return f"{self.provider_label}/{self.settings.params_for(task).model}"

    def reads_token_probabilities(self, task: Task[Any]) -> bool:
        """Whether ``task``'s model gives token probabilities (its ``choice_options``), rather than
        only a sampled reply."""
        if self.settings.is_offline:
            return False
        return self.settings.params_for(task).provider in TOKEN_PROBABILITY_PROVIDERS

    def run(self, task: Task[T], /, **inputs: Any) -> T:
        """The validated output of ``task`` on ``inputs``; raises an ``LLMError`` when there is
        none (``BudgetExceeded``, ``ProviderError`` subclasses, ``InvalidOutputError``...)."""
        self._plan(1)
        return self._counted_run(task, inputs).value

    def _plan(self, items: int) -> None:
        with self._lock:
            self._planned += items

    def _counted_run(self, task: Task[T], inputs: Mapping[str, Any]) -> Answer[T]:
        try:
            return self._run(task, inputs)
        except BudgetExceeded:
            raise
        except LLMError:
            with self._lock:
                self._failed_items += 1
            raise
        finally:
            self._report_progress()

    def _report_progress(self) -> None:
        if self._progress is None or self.estimate_only:
            return
        with self._lock:
            self._done += 1
            done, planned = self._done, self._planned
        summary = self.summary()
        self._progress(
            CallProgress(
                done, max(done, planned), summary.input_tokens, summary.output_tokens, summary.cost_usd
            )
        )

    def _run(self, task: Task[T], inputs: Mapping[str, Any]) -> Answer[T]:
        full_inputs = task.complete_inputs(inputs)
        if self.estimate_only:
            return self._run_estimate(task, full_inputs)
        if self.settings.is_offline:
            return Answer(self._run_offline(task, full_inputs))
        self.settings.check_ready()
        params = self._params(task, full_inputs)
        fitted = self._fit(task, params, full_inputs)
        if fitted.trimmed:
            with self._lock:
                self._trimmed_items += 1
            self.log.warning("task %s: %s", task.key, fitted.trimmed)
        full_inputs, prompt = dict(fitted.inputs), fitted.prompt
        if task.decoding_schema is not None and params.json_output:
            params = dataclasses.replace(params, json_schema=task.decoding_schema(full_inputs))
        if task.decoding_grammar is not None and not params.json_output:
            params = dataclasses.replace(params, text_grammar=task.decoding_grammar(full_inputs))
        key = self._cache_key(task, params, prompt)
        while True:
            cached = self._from_cache(task, params, key, full_inputs)
            if cached is not None:
                return dataclasses.replace(cached, trimmed=fitted.trimmed)
            recorded = self._recorded_failure(task, params, key)
            if recorded is not None:
                raise recorded
            # The same request asked by another thread meanwhile is paid for once: wait for its
            # answer, then look in the cache again.
            with SAME_REQUESTS.turn(key) as asking:
                if asking:
                    return self._ask_once(task, params, fitted, full_inputs, key)

    def _ask_once(
        self, task: Task[T], params: ModelParams, fitted: Fitted, full_inputs: dict[str, Any], key: str
    ) -> Answer[T]:
        """``_ask``, remembering a failure that asking again unchanged would repeat."""
        try:
            return self._ask(task, params, fitted, full_inputs, key)
        except (InvalidOutputError, RequestRejectedError) as error:
            # Final for this request: asked again unchanged, it would fail again (and cost again).
            self._remember_failure(task, params, key, str(error))
            raise

    def _ask(
        self, task: Task[T], params: ModelParams, fitted: Fitted, full_inputs: dict[str, Any], key: str
    ) -> Answer[T]:
        """Ask the provider (with a longer or a repair request where needed) and cache the answer."""
        messages = [Message("user", fitted.prompt)]
        completion, outcome = self._exchange(task, params, messages, full_inputs, ledger_rows.ANSWER)
        room = self._answer_room(params, fitted)
        sized = task.max_tokens_for is not None and not self.settings.sets_max_tokens(task)
        if completion.truncated and sized and room > params.max_tokens:
            # Sized to the input and still cut off: once more with twice the room (as the window allows).
            # A max_tokens the configuration sets is a cap the user chose (cost, time): never exceeded.
            params = dataclasses.replace(params, max_tokens=min(2 * params.max_tokens, room))
            completion, outcome = self._exchange(task, params, messages, full_inputs, ledger_rows.LONGER)
        if isinstance(outcome, OutputProblem):
            repair = self._repair_prompt(task, outcome)
            messages += [Message("assistant", completion.text), Message("user", repair)]
            completion, outcome = self._exchange(task, params, messages, full_inputs, ledger_rows.REPAIR)
        if isinstance(outcome, OutputProblem):
            problems = self.redact(str(outcome))
            raise InvalidOutputError(
                f"task {task.key} got invalid output from {params.provider} model {params.model} "
                f"twice (the second time after a repair request showing the error):\n{problems}",
                task=task.name,
                problems=problems,
            )
        # An answer cut off at max_tokens is cached as what it is: asked again, it would be cut again.
        finish_reason = TRUNCATED if completion.truncated else None
        if self.cache is not None:
            self.cache.put(
                key,
                task=task.name,
                task_version=task.version,
                provider=params.provider,
                model=params.model,
                value_json=outcome.model_dump_json(),
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                finish_reason=finish_reason,
            )
        return Answer(outcome, finish_reason or FINISHED, fitted.trimmed)

    def _params(self, task: Task[Any], inputs: Mapping[str, Any]) -> ModelParams:
        """The task's parameters, with max_tokens sized to ``inputs`` when the task sizes it and
        the configuration does not set it."""
        params = self.settings.params_for(task)
        if task.max_tokens_for is not None and not self.settings.sets_max_tokens(task):
            params = dataclasses.replace(params, max_tokens=max(1, int(task.max_tokens_for(inputs))))
        return params

    def _window(self, params: ModelParams) -> tuple[int | None, Callable[[str], int]]:
        """The model's context window (``None``: unknown, nothing is fitted) and its token counter:
        the local model's own tokenizer, else cl100k."""
        if params.model_path is not None:
            provider = self._chat_provider(params)
            return provider.context_tokens, provider.count_tokens
        windows = [
            w for w in (self.settings.context_tokens, context_window(params.provider, params.model)) if w
        ]
        return (min(windows) if windows else None), _count_text_tokens

    def _message_tokens(self, params: ModelParams, messages: Sequence[Message]) -> int:
        """A request's input tokens, by the model's own tokenizer where the provider has one."""
        _, count = self._window(params)
        return sum(count(message.content) + TOKENS_PER_MESSAGE for message in messages)

    def _fit(self, task: Task[Any], params: ModelParams, inputs: Mapping[str, Any]) -> Fitted:
        window, count = self._window(params)
        if window is None:
            return Fitted(inputs, task.render(inputs), prompt_tokens=0)
        return fit_to_window(task, inputs, count=count, window=window, max_tokens=params.max_tokens)

    def _answer_room(self, params: ModelParams, fitted: Fitted) -> int:
        """The most tokens an answer to ``fitted`` may take within the window."""
        window, _ = self._window(params)
        if window is None:
            return 2 * params.max_tokens
        return window - fitted.prompt_tokens - TOKENS_PER_MESSAGE

    def close(self) -> None:
        with self._lock:
            providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            provider.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _offline_answer(self, task: Task[T], inputs: Mapping[str, Any]) -> T:
        try:
            return self._offline.run(task, inputs)
        except OutputProblem as problem:
            raise InvalidOutputError(
                f"offline implementation of task {task.key} broke its own schema:\n{problem}",
                task=task.name,
                problems=str(problem),
            ) from None

    def _run_offline(self, task: Task[T], inputs: Mapping[str, Any]) -> T:
        params = self.settings.params_for(task)
        key = offline_cache_key(task.name, task.version, inputs) if self.cache is not None else None
        cached = self._from_cache(task, params, key, inputs) if key is not None else None
        if cached is not None:
            return cached.value
        started = self.clock()
        try:
            value = self._offline_answer(task, inputs)
        except InvalidOutputError as error:
            self._record(
                task,
                OFFLINE,
                params.model,
                started=started,
                status=ledger_rows.INVALID_OUTPUT,
                error=str(error),
            )
            raise
        self._record(task, OFFLINE, params.model, started=started)
        if key is not None:
            self.cache.put(
                key,
                task=task.name,
                task_version=task.version,
                provider=OFFLINE,
                model=params.model,
                value_json=value.model_dump_json(),
                input_tokens=None,
                output_tokens=None,
            )
        return value

    def _chat_provider(self, params: ModelParams) -> Any:
        """The provider for ``params`` (``local``: one per model file, as a task may use another)."""
        with self._lock:
            if params.model_path not in self._providers:
                self._providers[params.model_path] = make_chat_provider(
                    self.settings, self.redact, params.model_path
                )
            return self._providers[params.model_path]

    def _exchange(
        self,
        task: Task[T],
        params: ModelParams,
        messages: Sequence[Message],
        inputs: Mapping[str, Any],
        purpose: str,
    ) -> tuple[Completion, T | OutputProblem]:
        """One request (with retries) and the validation of its reply; records the ledger row."""
        provider = self._chat_provider(params)
        window, _ = self._window(params)
        estimated_input = self._message_tokens(params, messages)
        if window is not None and estimated_input + params.max_tokens > window:
            # The first request was fitted; a repair adds the reply and the problems to it.
            raise too_long(task, estimated_input + params.max_tokens, window, f"(for its {purpose} request)")
        label = f"{params.provider} call for task {task.key}" + (
            " (repair)" if purpose == ledger_rows.REPAIR else ""
        )
        reservation = None
        if self.budget is not None:
            try:
                reservation = self.budget.reserve(
                    label=label,
                    estimated_usd=estimate_cost(
                        params.provider, params.model, estimated_input, params.max_tokens
                    ),
                    estimated_tokens=estimated_input + params.max_tokens,
                )
            except BudgetExceeded:
                with self._lock:
                    self._budget_refusals += 1
                raise
        stats = RetryStats()
        started = self.clock()
        failure: ProviderError | None = None
        try:
            completion = self.retrier.call(
                lambda: self._limited_complete(provider, messages, params), label=label, stats=stats
            )
        except ProviderError as error:
            failure = error
        if failure is not None:
            self._record(
                task,
                params.provider,
                params.model,
                started=started,
                purpose=purpose,
                status=ledger_rows.ERROR,
                attempts=stats.attempts,
                error=str(failure),
            )
            if self.budget is not None and reservation is not None:
                self.budget.settle(reservation, usd=0.0, tokens=0)
            failure.attempts = stats.attempts
            raise failure
        estimated = completion.input_tokens is None or completion.output_tokens is None
        input_tokens = completion.input_tokens if completion.input_tokens is not None else estimated_input
        if completion.output_tokens is not None:
            output_tokens = completion.output_tokens
        else:
            output_tokens = count_message_tokens([Message("assistant", completion.text)])
        cost = estimate_cost(params.provider, params.model, input_tokens, output_tokens)
        try:
            outcome: T | OutputProblem = (
                parse_output(completion.text, task.output_model, task.check_output, inputs)
                if task.text_field is None
                else parse_text_output(
                    completion.text, task.output_model, task.text_field, task.check_output, inputs
                )
            )
        except OutputProblem as problem:
            if completion.truncated:
                problem = OutputProblem(
                    f"{problem}\n- the reply was cut off at max_tokens={params.max_tokens}; "
                    "answer more briefly"
                )
            outcome = problem
        self._record(
            task,
            params.provider,
            params.model,
            started=started,
            purpose=purpose,
            status=ledger_rows.INVALID_OUTPUT if isinstance(outcome, OutputProblem) else ledger_rows.OK,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tokens_estimated=estimated,
            cost_usd=cost,
            attempts=stats.attempts,
            error=self.redact(str(outcome)) if isinstance(outcome, OutputProblem) else None,
        )
        if self.budget is not None and reservation is not None:
            self.budget.settle(reservation, usd=cost, tokens=input_tokens + output_tokens)
        return completion, outcome

    def _repair_prompt(self, task: Task[T], problem: OutputProblem) -> str:
        if task.text_field is not None:
            return string.Template(load_prompt(REPAIR_TEXT_TEMPLATE)).substitute(problems=str(problem))
        return string.Template(load_prompt(REPAIR_TEMPLATE)).substitute(
            problems=str(problem), output_schema=task.output_schema_json
        )
