"""The JSON schema a grammar-constrained decoder is given: the task's, with open lists bounded and
small integer ranges spelled out.

A small model caught in a loop under a grammar ("type", "type", ...) never closes its JSON and runs
to max_tokens. Bounding every array the task's schema leaves open makes it close. The bound only
shapes decoding: the task's own schema and checks still judge the answer. Strings stay unbounded:
llama-cpp-python spells a length bound out as one nested grammar rule per character.

llama-cpp-python's converter ignores an integer's ``minimum`` and ``maximum``: SmolLM2 rated an idea's
clarity 6 on a 0-5 scale, and the reply cost a repair call. An integer bounded on both sides to a
range of at most ``MAX_ENUMERATED`` values is given as the enumeration of its values, which the
converter does follow.
"""

from __future__ import annotations

from typing import Any

DECODING_MAX_ITEMS = 12
MAX_ENUMERATED = 101


def decoding_schema(schema: Any) -> Any:
    """``schema`` with every array that has no ``maxItems`` bounded to ``DECODING_MAX_ITEMS`` (or
    its ``minItems``, when that is more), and every small bounded integer range enumerated."""
    if isinstance(schema, list):
        return [decoding_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: decoding_schema(value) for key, value in schema.items()}
    if bounded.get("type") == "array" and "maxItems" not in bounded:
        bounded["maxItems"] = max(DECODING_MAX_ITEMS, bounded.get("minItems", 0))
    values = _integer_range(bounded)
    if values is not None and "enum" not in bounded and "const" not in bounded:
        bounded["enum"] = values
    return bounded


def _integer_range(schema: dict[str, Any]) -> list[int] | None:
    """The values of an integer schema bounded on both sides, when there are few enough."""
    if schema.get("type") != "integer":
        return None
    low, high = schema.get("minimum"), schema.get("maximum")
    if not isinstance(low, int) or not isinstance(high, int) or not 0 <= high - low < MAX_ENUMERATED:
        return None
    return list(range(low, high + 1))
