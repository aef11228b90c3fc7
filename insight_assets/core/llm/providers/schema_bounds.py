"""The JSON schema a grammar-constrained decoder is given: the task's, with open lists bounded.

A small model caught in a loop under a grammar ("type", "type", ...) never closes its JSON and runs
to max_tokens. Bounding every array the task's schema leaves open makes it close. The bound only
shapes decoding: the task's own schema and checks still judge the answer. Strings stay unbounded:
llama-cpp-python spells a length bound out as one nested grammar rule per character.
"""

from __future__ import annotations

from typing import Any

DECODING_MAX_ITEMS = 12


def decoding_schema(schema: Any) -> Any:
    """``schema`` with every array that has no ``maxItems`` bounded to ``DECODING_MAX_ITEMS`` (or
    its ``minItems``, when that is more)."""
    if isinstance(schema, list):
        return [decoding_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: decoding_schema(value) for key, value in schema.items()}
    if bounded.get("type") == "array" and "maxItems" not in bounded:
        bounded["maxItems"] = max(DECODING_MAX_ITEMS, bounded.get("minItems", 0))
    return bounded
