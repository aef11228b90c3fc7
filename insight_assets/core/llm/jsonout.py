"""Turn a model's reply into a validated object, or say precisely what is wrong with it.

Models wrap JSON in prose ("Here is the JSON: ...") or in code fences, so the reply is tried whole,
then fenced blocks, then every place where a JSON object or array starts. The first object found
is validated against the task's schema and its own checks; the problems are described in a form
that can be shown to the model in the repair call. A task whose schema is a list (a pydantic
``RootModel`` of a list) is answered by the first JSON array instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel, RootModel, ValidationError

from insight_assets.core.startup.lazy import lazy_regex

T = TypeVar("T", bound=BaseModel)

_FENCE = lazy_regex(r"```[A-Za-z0-9_-]*[^\S\n]*\n(.*?)```", re.DOTALL)

# Scanning a long reply from every brace costs quadratic time; a real answer starts early.
_MAX_START_POSITIONS = 200


class OutputProblem(ValueError):
    """The reply cannot be used; ``str(error)`` is written to be shown to the model."""


def extract_json(text: str, want: type = dict) -> Any:
    """The JSON value in ``text``: preferably an object (``want=dict``) or an array (``want=list``),
    else the other kind."""
    stripped = text.strip()
    noun = "array" if want is list else "object"
    if not stripped:
        raise OutputProblem(f"the reply was empty; it must be a JSON {noun}")
    candidates: list[Any] = []
    try:
        candidates.append(json.loads(stripped))
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            candidates.append(json.loads(block))
        except json.JSONDecodeError:
            continue
    for found in (value for value in candidates if isinstance(value, want)):
        return found
    decoder = json.JSONDecoder()
    starts = [index for index, char in enumerate(text) if char in "{["][:_MAX_START_POSITIONS]
    others: list[Any] = [value for value in candidates if isinstance(value, dict | list)]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, want):
            return value
        if isinstance(value, dict | list):
            others.append(value)
    if others:
        return others[0]
    raise OutputProblem(f"the reply contains no valid JSON {noun}; reply with one JSON {noun} only")


def describe_validation_error(error: ValidationError) -> str:
    lines = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"- {location}: {item['msg']}")
    return "\n".join(lines)


def parse_output(
    text: str,
    model: type[T],
    check: Callable[[T, Mapping[str, Any]], list[str]] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> T:
    """Extract, validate and check a reply; raises ``OutputProblem`` describing every problem."""
    return validate_value(extract_json(text, list if _is_list_model(model) else dict), model, check, inputs)


def _is_list_model(model: type[BaseModel]) -> bool:
    return issubclass(model, RootModel) and get_origin(model.model_fields["root"].annotation) is list


def validate_value(
    value: Any,
    model: type[T],
    check: Callable[[T, Mapping[str, Any]], list[str]] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> T:
    try:
        result = model.model_validate(value)
    except ValidationError as error:
        raise OutputProblem(
            "the JSON does not match the schema:\n" + describe_validation_error(error)
        ) from None
    if check is not None:
        problems = check(result, inputs or {})
        if problems:
            raise OutputProblem("\n".join(f"- {problem}" for problem in problems))
    return result


def parse_text_output(
    text: str,
    model: type[T],
    field: str,
    check: Callable[[T, Mapping[str, Any]], list[str]] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> T:
    """A plain-text reply as ``field`` of ``model``, checked; raises ``OutputProblem``."""
    reply = _FENCE.sub(lambda found: found.group(1), text).strip()
    if not reply:
        raise OutputProblem("- the reply is empty; write the text")
    return validate_value({field: reply}, model, check, inputs)
