"""The errors the LLM layer raises.

Every message is written for the person who has to fix the problem and has already been scrubbed
of API keys (see ``redaction.py``). Errors marked ``fatal`` would fail every item of a batch the
same way (a wrong key, an unknown model, a missing input), so ``LLMClient.run_many`` stops at the
first one instead of recording it once per item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .rate_limits import RateLimitHint


class LLMError(RuntimeError):
    """Base class of the errors of this package."""

    fatal = False


class ConfigurationError(LLMError):
    """The settings cannot work: unknown provider, missing model, base URL or key."""

    fatal = True


class TaskDefinitionError(LLMError):
    """A task is badly defined: missing template, clashing name in the registry."""

    fatal = True


class TaskInputError(LLMError):
    """A task was run with missing or unexpected inputs."""

    fatal = True


class ProviderError(LLMError):
    """A request to a provider failed.

    ``status`` is the HTTP status when the server answered, ``None`` for timeouts and connection
    errors; ``attempts`` is how many requests were sent before giving up.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after_s: float | None = None,
        attempts: int = 1,
        rate_limit: RateLimitHint | None = None,
    ):
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.retry_after_s = retry_after_s
        self.attempts = attempts
        # What the answer's rate-limit headers said (a 429's), for the provider's limiter.
        self.rate_limit = rate_limit


class TransientProviderError(ProviderError):
    """A failure that may pass if the request is sent again: 408, 409, 429, 5xx, a timeout or a
    lost connection. The retry loop consumes these; callers see ``RetriesExhaustedError``."""


class AuthenticationError(ProviderError):
    """401 or 403: the key is wrong, expired or lacks access."""

    fatal = True


class UnknownModelError(ProviderError):
    """404: the model (or the endpoint behind the base URL) does not exist for this key."""

    fatal = True


class RequestRejectedError(ProviderError):
    """Another 4xx: the server refused this request (too long, bad parameter). Other items may
    still succeed, so this is not fatal."""


class RetriesExhaustedError(ProviderError):
    """Transient failures went on past the retry count or the total retry time."""


class InvalidOutputError(LLMError):
    """The model's output was not valid for the task's schema, even after one repair call."""

    def __init__(self, message: str, *, task: str, problems: str):
        super().__init__(message)
        self.task = task
        self.problems = problems


class BudgetExceeded(LLMError):
    """The next call could push the run past its budget, so it was not sent."""


class ContextTooLongError(LLMError):
    """A request cannot fit the model's context window, even with its task's trimmable input cut
    to the minimum. Only this item fails; its message starts with ``context_too_long``."""
