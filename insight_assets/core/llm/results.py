"""What running tasks returns: one item's result, a batch's, where calls come from, and the
token counts of a request."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from pydantic import BaseModel

from ..text import count_tokens
from .window import TOKENS_PER_MESSAGE

if TYPE_CHECKING:
    from .errors import BudgetExceeded
    from .providers import Message

T = TypeVar("T", bound=BaseModel)

# Why an answer ended, as ``ItemResult.finish_reason`` reports it.
FINISHED = "stop"
TRUNCATED = "length"

# The bundled tokenizer keeps per-call state; calls from run_many's threads take turns.
_TOKENIZER_LOCK = threading.Lock()


def count_message_tokens(messages: Sequence[Message]) -> int:
    """Estimated input tokens of a request (cl100k_base; other providers' tokenizers differ by
    a few percent, which is fine for budgets and dry runs)."""
    with _TOKENIZER_LOCK:
        return sum(count_tokens(message.content) + TOKENS_PER_MESSAGE for message in messages)


def _count_text_tokens(text: str) -> int:
    with _TOKENIZER_LOCK:
        return count_tokens(text)


@dataclass(frozen=True)
class CallContext:
    """Where calls come from; copied into every ledger row."""

    asset: str | None = None
    partition: str | None = None
    run_id: str | None = None


ItemStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class ItemResult(Generic[T]):
    """One item of a batch: its value, or why there is none. ``skipped`` items were not run
    because the budget was reached."""

    index: int
    status: ItemStatus
    value: T | None = None
    error: str | None = None
    finish_reason: str | None = None  # FINISHED or TRUNCATED when there is a value
    trimmed: str | None = None  # what was dropped from the inputs to fit the context window
    # A dry run's stand-in for an answer not known yet (the offline one): its text is not the
    # model's, so a near-duplicate filter must not judge it.
    guessed: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class BatchResult(Generic[T]):
    items: tuple[ItemResult[T], ...]
    budget_error: BudgetExceeded | None = None

    @property
    def budget_exceeded(self) -> bool:
        return self.budget_error is not None

    @property
    def values(self) -> list[T | None]:
        """One entry per input, ``None`` where the item failed or was skipped."""
        return [item.value for item in self.items]

    @property
    def failed(self) -> list[ItemResult[T]]:
        return [item for item in self.items if item.status == "failed"]

    @property
    def skipped(self) -> list[ItemResult[T]]:
        return [item for item in self.items if item.status == "skipped"]

    @property
    def trimmed(self) -> list[ItemResult[T]]:
        return [item for item in self.items if item.trimmed]


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A task's validated value, why its answer ended, what was cut from its inputs, and whether
    it is a dry run's guess (see ``ItemResult.guessed``)."""

    value: T
    finish_reason: str = FINISHED
    trimmed: str | None = None
    guessed: bool = False
