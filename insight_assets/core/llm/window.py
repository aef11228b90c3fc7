"""Context windows: a prompt and the room for its answer must fit the model's window.

Before a call, the prompt's tokens (counted by the model's own tokenizer where the provider has one,
else cl100k) plus ``max_tokens`` plus the chat format's few tokens per message must fit. When they do
not, the task's ``trim_input`` shrinks in the task's own order, least relevant last: list items are
dropped from the end, a text loses whole sentences from its end. The longest version that fits is
kept (found by bisection), and the item records what was dropped. When even ``trim_minimum`` items do
not fit, or the task trims nothing, the item fails with ``context_too_long`` — never a crash, never a
cut inside a passage.

Windows: ``local`` from the loaded model (its trained context, capped by ``context_tokens``); hosted
models from the price table; ``openai-compatible`` only when ``context_tokens`` says it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text import split_sentences
from .errors import ContextTooLongError

if TYPE_CHECKING:
    from .tasks import Task

CONTEXT_TOO_LONG = "context_too_long"
# The chat format wraps each message in a few tokens (role markers, separators).
TOKENS_PER_MESSAGE = 8


@dataclass(frozen=True)
class Fitted:
    """The inputs and prompt to send; ``trimmed`` says what was dropped to fit (``None``: nothing)."""

    inputs: Mapping[str, Any]
    prompt: str
    prompt_tokens: int
    trimmed: str | None = None


def too_long(task: Task[Any], needed: int, window: int, detail: str) -> ContextTooLongError:
    return ContextTooLongError(
        f"{CONTEXT_TOO_LONG}: task {task.key} needs {needed} tokens (prompt and max_tokens), more than "
        f"the model's context window of {window} {detail}"
    )


def fit_to_window(
    task: Task[Any],
    inputs: Mapping[str, Any],
    *,
    count: Callable[[str], int],
    window: int,
    max_tokens: int,
) -> Fitted:
    """``inputs`` as sent, or trimmed to fit ``window``; raises ``ContextTooLongError``."""
    room = window - max_tokens - TOKENS_PER_MESSAGE
    prompt = task.render(inputs)
    tokens = count(prompt)
    if tokens <= room:
        return Fitted(inputs, prompt, tokens)
    field = task.trim_input
    units = _units(inputs[field]) if field is not None else None
    if field is None or units is None or len(units.parts) <= task.trim_minimum:
        detail = "(the task has nothing it may drop)" if field is None else f"(its {field} cannot shrink)"
        raise too_long(task, tokens + max_tokens, window, detail)

    def attempt(keep: int) -> Fitted | None:
        trimmed = {**inputs, field: units.keep(keep)}
        text = task.render(trimmed)
        used = count(text)
        return Fitted(trimmed, text, used) if used <= room else None

    best = attempt(task.trim_minimum)
    if best is None:
        raise too_long(
            task, tokens + max_tokens, window, f"even with {task.trim_minimum} of its {field} kept"
        )
    low, high = task.trim_minimum, len(units.parts) - 1  # ``low`` fits, all of them does not
    while low < high:
        middle = (low + high + 1) // 2
        fitted = attempt(middle)
        if fitted is None:
            high = middle - 1
        else:
            low, best = middle, fitted
    dropped = len(units.parts) - low
    note = f"dropped the last {dropped} of {len(units.parts)} {units.noun} of {field} to fit a {window}-token window"
    return Fitted(best.inputs, best.prompt, best.prompt_tokens, note)


@dataclass(frozen=True)
class _Units:
    """An input cut into the parts trimming may drop; ``keep(n)`` is the input with its first n."""

    parts: Sequence[Any]
    noun: str
    keep: Callable[[int], Any]


def _units(value: Any) -> _Units | None:
    if isinstance(value, str):
        spans = split_sentences(value)
        return _Units(spans, "sentences", lambda count: value[: spans[count - 1][1]] if count else "")
    if isinstance(value, list | tuple):
        return _Units(value, "items", lambda count: value[:count])
    return None
