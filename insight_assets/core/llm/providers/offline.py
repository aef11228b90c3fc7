"""The offline provider: no model, no network.

It calls each task's offline implementation, which is deterministic and *extractive*: it selects
and arranges text from the inputs (central sentences, key phrases, the passages they come from)
and never writes new prose. Its ledger rows and metadata say "offline (extractive)" so nobody
mistakes its output for a language model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ..jsonout import validate_value

if TYPE_CHECKING:
    from ..tasks import Task

OFFLINE_LABEL = "offline (extractive)"

T = TypeVar("T", bound=BaseModel)


class OfflineProvider:
    name = "offline"
    label = OFFLINE_LABEL

    def run(self, task: Task[T], inputs: Mapping[str, Any]) -> T:
        """The task's offline answer, held to the same schema and checks as a model's; raises
        ``OutputProblem`` when the implementation breaks them."""
        value = task.offline(**inputs)
        if isinstance(value, BaseModel):
            value = value.model_dump()
        return validate_value(value, task.output_model, task.check_output, inputs)
