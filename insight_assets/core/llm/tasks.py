"""Tasks: what a method asks a model, and how the answer is checked.

A task is a name, a version, a prompt template (a text file under ``insight_assets/core/prompts``),
an output schema (a pydantic model) and an offline implementation. The template uses
``string.Template`` placeholders (``$question``); ``$output_schema`` is filled in with the output
model's JSON schema. Inputs that are not strings are written into the prompt as JSON unless the
task supplies ``format_inputs``.

A task whose answer is prose (a summary) names ``text_field``: the model replies with plain text,
not JSON, and the text becomes that field of the output model. Such a task may size its
``max_tokens`` to its inputs (``max_tokens_for``); a reply cut off at that size is asked again once
with twice the room, and a reply cut off again comes back marked as truncated (``finish_reason``).
A max_tokens set in the configuration replaces the sizing and is never exceeded: a reply cut off at
it comes back marked as truncated at once.

The template's text and the version both enter the cache key, so editing either one makes the
next run ask the model again.

A prompt must fit the model's context window with room for ``max_tokens``. A task names in
``trim_input`` the input that may shrink when it does not: a list ordered most relevant first
(passages, papers, facts) loses items from its end, a text loses whole sentences from its end, never
less than ``trim_minimum`` of them. What was dropped is recorded on the item; when even the minimum
does not fit, the item fails with ``context_too_long`` (see ``window.py``).

Providers that decode under a JSON schema (``local``, a llama.cpp server) use the output model's
schema, or the one ``decoding_schema(inputs)`` narrows to the inputs when the task has it: exact list
lengths, the numbers or ids that exist, a required opening. A prose task may give a GBNF grammar of
its text instead (``decoding_grammar(inputs)``, e.g. ``grammars.cited_prose``: only the given sources
cited). A small model then meets those checks by
construction; ``check_output`` still judges every answer, whoever wrote it.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from .errors import TaskDefinitionError, TaskInputError

OutputT = TypeVar("OutputT", bound=BaseModel)

PROMPTS_PACKAGE = "insight_assets.core.prompts"
OUTPUT_SCHEMA_PLACEHOLDER = "output_schema"


def load_prompt(template: str | Path) -> str:
    """The text of a prompt file: a file name inside ``core/prompts`` or a path to a file."""
    path = Path(template)
    if path.is_absolute():
        if not path.is_file():
            raise TaskDefinitionError(f"prompt template {path} does not exist")
        return path.read_text(encoding="utf-8")
    resource = resources.files(PROMPTS_PACKAGE).joinpath(str(template))
    if not resource.is_file():
        raise TaskDefinitionError(f"prompt template {template!r} is not in insight_assets/core/prompts")
    return resource.read_text(encoding="utf-8")


def default_format(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=str)


@dataclass(frozen=True, eq=False)
class Task(Generic[OutputT]):
    """One kind of question to a model.

    ``offline(**inputs)`` returns the output model (or a dict for it) built from the inputs alone;
    it must be deterministic and honest about being extractive. ``inputs`` names the keyword
    arguments ``run`` accepts (default: the template's placeholders), ``input_defaults`` fills
    those a caller may omit. ``format_inputs`` turns the inputs into the template's strings when
    plain JSON would read badly. ``check_output`` returns problems that the schema cannot see
    (a cited id that was not among the inputs); they are treated like schema errors, so the model
    gets one repair call for them. ``expected_output_tokens`` is what a dry run assumes a typical
    answer costs (default: ``max_tokens``). ``text_field`` and ``max_tokens_for``: see the module
    docstring; ``max_tokens_for`` gives way to a max_tokens set in the configuration.
    """

    name: str
    version: int | str
    template: str | Path
    output_model: type[OutputT]
    offline: Callable[..., OutputT | Mapping[str, Any]]
    inputs: tuple[str, ...] = ()
    input_defaults: Mapping[str, Any] = field(default_factory=dict)
    format_inputs: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None
    check_output: Callable[[OutputT, Mapping[str, Any]], list[str]] | None = None
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int = 1024
    expected_output_tokens: int | None = None
    # Options the reply's first token is read as (G-Eval's "1".."5"): a provider with token
    # log-probabilities (``TOKEN_PROBABILITY_PROVIDERS``) returns their probabilities instead of a
    # sampled reply; the output model then holds ``probabilities``.
    choice_options: tuple[str, ...] = ()
    description: str = ""
    text_field: str | None = None
    max_tokens_for: Callable[[Mapping[str, Any]], int] | None = None
    trim_input: str | None = None
    trim_minimum: int = 1
    decoding_schema: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    decoding_grammar: Callable[[Mapping[str, Any]], str] | None = None
    _template_text: str = field(init=False, repr=False)
    _placeholders: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name or not str(self.version):
            raise TaskDefinitionError("a task needs a name and a version")
        text = load_prompt(self.template)
        parsed = string.Template(text)
        if not parsed.is_valid():
            raise TaskDefinitionError(
                f"prompt template of task {self.name!r} has a malformed placeholder; write a "
                "literal dollar sign as $$"
            )
        placeholders = tuple(parsed.get_identifiers())
        if self.text_field is not None and self.text_field not in self.output_model.model_fields:
            raise TaskDefinitionError(
                f"task {self.name!r}: text_field {self.text_field!r} is not a field of "
                f"{self.output_model.__name__}"
            )
        if self.max_tokens_for is not None and self.text_field is None:
            raise TaskDefinitionError(
                f"task {self.name!r}: max_tokens_for needs a text_field (a cut-off JSON reply cannot be kept)"
            )
        if not self.inputs:
            derived = tuple(name for name in placeholders if name != OUTPUT_SCHEMA_PLACEHOLDER)
            object.__setattr__(self, "inputs", derived)
        if self.trim_input is not None and self.trim_input not in self.inputs:
            raise TaskDefinitionError(
                f"task {self.name!r}: trim_input {self.trim_input!r} is not one of its inputs"
            )
        if self.trim_minimum < 0:
            raise TaskDefinitionError(f"task {self.name!r}: trim_minimum must be zero or more")
        # Stored once: the hash is part of the cache key and must not change mid-run.
        object.__setattr__(self, "_template_text", text)
        object.__setattr__(self, "_placeholders", placeholders)

    @property
    def template_text(self) -> str:
        return self._template_text

    @property
    def template_hash(self) -> str:
        return hashlib.sha256(self.template_text.encode("utf-8")).hexdigest()

    @functools.cached_property
    def output_schema(self) -> dict[str, Any]:
        """The answer's JSON schema (computed once: providers that constrain decoding read it per call)."""
        return self.output_model.model_json_schema()

    @property
    def output_schema_json(self) -> str:
        return json.dumps(self.output_schema, indent=1, sort_keys=True)

    def complete_inputs(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The inputs with defaults filled in; raises ``TaskInputError`` on missing or unknown
        names, which are programming errors and would fail every item alike."""
        merged = {**self.input_defaults, **inputs}
        missing = sorted(set(self.inputs) - set(merged))
        unknown = sorted(set(merged) - set(self.inputs))
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if unknown:
                parts.append(f"unexpected {', '.join(unknown)}")
            raise TaskInputError(
                f"task {self.name!r} takes inputs {', '.join(self.inputs)}: {'; '.join(parts)}"
            )
        return merged

    def render(self, inputs: Mapping[str, Any]) -> str:
        """The prompt for these inputs (already completed by ``complete_inputs``)."""
        if self.format_inputs is not None:
            values = dict(self.format_inputs(inputs))
        else:
            values = {name: default_format(value) for name, value in inputs.items()}
        values[OUTPUT_SCHEMA_PLACEHOLDER] = self.output_schema_json
        missing = sorted(set(self._placeholders) - set(values))
        if missing:
            raise TaskDefinitionError(
                f"template of task {self.name!r} uses ${', $'.join(missing)}, which its "
                "format_inputs does not provide"
            )
        return string.Template(self.template_text).substitute(values)

    @property
    def key(self) -> str:
        return f"{self.name}@v{self.version}"


def narrowed(
    schema: Mapping[str, Any], definition: str | None = None, /, **properties: Mapping[str, Any]
) -> dict[str, Any]:
    """A copy of ``schema`` with JSON-schema keywords added to some of its properties, for a task's
    ``decoding_schema``: ``narrowed(schema, questions={"minItems": 5, "maxItems": 5})``. With
    ``definition``, the properties are those of that model in ``$defs`` (a list's item model)."""
    result = copy.deepcopy(dict(schema))
    target = result["$defs"][definition] if definition else result
    for name, keywords in properties.items():
        target["properties"][name] = {**target["properties"][name], **keywords}
    return result


def exactly(count: int) -> dict[str, int]:
    """The keywords of a list of exactly ``count`` items."""
    return {"minItems": count, "maxItems": count}


def question_shape(low: int, high: int) -> dict[str, str]:
    """The keywords of one capitalised question ending in "?", of ``low`` to ``high`` characters
    between its first letter and its question mark (no quote, no other question mark)."""
    return {"type": "string", "pattern": f'^[A-Z][^"\\\\?]{{{low},{high}}}[?]$'}


def one_item_each(
    schema: Mapping[str, Any],
    field: str,
    key: str,
    values: Sequence[Any],
    /,
    *,
    required: Sequence[str] = (),
    **properties: Mapping[str, Any],
) -> dict[str, Any]:
    """A copy of ``schema`` whose list ``field`` holds one item per value of ``values``, in their
    order, its ``key`` set to that value (``prefixItems``): for a ``decoding_schema`` that rates
    every idea once, or scores every label once. ``properties`` replace some of the items' other
    properties' schemas and ``required`` adds to those an item must have."""
    result = copy.deepcopy(dict(schema))
    listing = result["properties"][field]
    item = listing.pop("items")  # the converter would read it before prefixItems
    if "$ref" in item:
        item = result["$defs"][item["$ref"].rsplit("/", 1)[1]]
    must = sorted({*item.get("required", ()), *required, key})
    listing["prefixItems"] = [
        {**item, "properties": {**item["properties"], **properties, key: {"const": value}}, "required": must}
        for value in values
    ]
    listing.update(exactly(len(values)))
    return result


def list_problems(items: Sequence[str], limit: int, noun: str) -> list[str]:
    """A ``check_output``'s problems with a list of texts: more than ``limit``, or an empty one."""
    problems = []
    if len(items) > limit:
        problems.append(f"there are {len(items)} {noun}s; write at most {limit}")
    if any(not item.strip() for item in items):
        problems.append(f"a {noun} is empty")
    return problems


_REGISTRY: dict[str, Task[Any]] = {}


def register_task(task: Task[OutputT]) -> Task[OutputT]:
    """Add ``task`` to the registry (idempotent for the same object); returns it, so a module can
    write ``SUMMARIZE = register_task(Task(...))``."""
    existing = _REGISTRY.get(task.name)
    if existing is not None and existing is not task:
        raise TaskDefinitionError(
            f"two tasks are named {task.name!r} ({existing.key} and {task.key}); rename one or "
            "bump the version of the existing task instead"
        )
    _REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task[Any]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise TaskDefinitionError(f"no task named {name!r} (registered: {known})") from None


def registered_tasks() -> dict[str, Task[Any]]:
    return dict(_REGISTRY)
