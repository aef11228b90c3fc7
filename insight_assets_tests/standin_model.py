"""A stand-in hosted model behind ``FakeModelServer``: each request is answered with a reply valid
against the JSON schema it carries (the openai-compatible provider sends the task's decoding schema:
enums, ``const`` ids, counts and string patterns included), after a configurable latency, in runs of
words quoted from its own prompt, and 429s with rate-limit headers once more calls are in flight than the
stand-in's own limit.

It is what a test or a benchmark uses to build a collection "through a hosted model" without one:
every answer is a function of the request (a rerun gets the same answers, a cache hit is a hit),
prose cites the labels its prompt shows ("[S1]"), ratings ask for probabilities when the request
asks for log-probabilities, and a repair request is answered from its first prompt. It does not
understand the prompt: a check that a schema cannot say (a word count, a grounding test) may refuse
an answer, as it would a real model's.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from re import _constants as sre_constants
from re import _parser as sre_parse
from typing import Any

from insight_assets_tests.fake_model_server import Failure, FakeModelServer, Received, Reply

_WORD = re.compile(r"[a-z][a-z]{2,}")
_LABEL = re.compile(r"\[([A-Z]{1,3}\d{1,3})\]")
# A label that opens a line names a listed passage or source ("[P3] text..."): what may be cited.
_LISTED_LABEL = re.compile(r"^\[([A-Za-z]{0,3}\d{1,3})\] ", re.MULTILINE)
# Titles as prompts list them: "Title: X", "- X: text", or in double quotes.
_TITLES = (
    re.compile(r"^Title: (.+)$", re.MULTILINE),
    re.compile(r"^- (.{8,200}?): ", re.MULTILINE),
    re.compile(r'^- "?([^"\n]{8,200})"?$', re.MULTILINE),
)
# Property names whose values must be an id or a title the prompt shows.
_ID_NAMES = ("id", "label", "passage_id", "chunk_id", "alias")
_TITLE_HINTS = ("title", "inspired", "paper")
_NUMBER_NAMES = ("number", "index", "candidate")
# As many items as an array allows, up to this: a model asked for "up to five insights" writes five.
_MOST_ITEMS = 8
_FALLBACK_WORDS = ("research", "papers", "methods", "evidence", "results", "models", "datasets")


def _digest(*parts: object) -> int:
    return int(hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:12], 16)


class _Writer:
    """Text for one request: words of its prompt, in an order seeded by the request."""

    def __init__(self, prompt: str):
        self.words = _WORD.findall(prompt.lower()) or list(_FALLBACK_WORDS)
        self.seed = _digest(prompt)
        listed = list(dict.fromkeys(_LISTED_LABEL.findall(prompt)))
        self.labels = listed or list(dict.fromkeys(_LABEL.findall(prompt)))
        self.titles = next((found for pattern in _TITLES if (found := pattern.findall(prompt))), [])
        self._count = 0
        self._quotes = 0

    def next_seed(self) -> int:
        self._count += 1
        return _digest(self.seed, self._count)

    def text(self, chars: int) -> str:
        """About ``chars`` characters quoted from the prompt's words, from a place seeded by the
        request, ending without a space: the distinct items of one answer quote distinct places, as
        a model asked for distinct things writes about different ones, and a phrase it names (an
        entity, a relation) is one its passages hold."""
        # Successive quotes step on by the golden ratio of the prompt: spread over it, seldom overlapping.
        self._quotes += 1
        start = (self.seed + self._quotes * int(len(self.words) * 0.618)) % len(self.words)
        picked: list[str] = []
        length = 0
        while length < chars:
            word = self.words[(start + len(picked)) % len(self.words)]
            picked.append(word)
            length += len(word) + 1
        return " ".join(picked)[: max(chars, 1)].rstrip() or self.words[0]


@dataclass
class _Pattern:
    """An example string matching a regular expression, written with the writer's words where the
    expression allows any text."""

    writer: _Writer

    def example(self, pattern: str) -> str:
        return self._sequence(sre_parse.parse(pattern))

    def _sequence(self, items: Any) -> str:
        return "".join(self._item(op, value) for op, value in items)

    def _item(self, op: Any, value: Any) -> str:
        if op is sre_constants.LITERAL:
            return chr(value)
        if op is sre_constants.NOT_LITERAL:
            return "a" if chr(value) != "a" else "b"
        if op is sre_constants.ANY:
            return "a"
        if op is sre_constants.AT:
            return ""
        if op is sre_constants.IN:
            return self._char_in(value, self.writer.next_seed())
        if op is sre_constants.SUBPATTERN:
            return self._sequence(value[-1])
        if op is sre_constants.BRANCH:
            branches = value[1]
            return self._sequence(branches[self.writer.next_seed() % len(branches)])
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, high, body = value
            return self._repeat(low, high, body)
        raise ValueError(f"the stand-in cannot write an example of {op} in a pattern")

    def _repeat(self, low: int, high: int, body: Any) -> str:
        top = high if high != sre_constants.MAXREPEAT else max(low, 60)
        if len(body) == 1 and body[0][0] is sre_constants.IN:
            # Free text: words, about halfway between the bounds, within the class.
            allowed = body[0][1]
            target = (low + top) // 2 if top - low < 400 else low + 60
            text = "".join(c for c in self.writer.text(max(target, 1)) if self._allows(allowed, c))
            while len(text) < low:
                text += self._char_in(allowed, len(text))
            return text[: max(top, 0)]
        count = low if low > 0 else min(1, top)
        return "".join(self._sequence(body) for _ in range(count))

    def _char_in(self, allowed: Any, seed: int) -> str:
        for candidate in ("e", "a", "t", "o", "n", "s", "E", "A", "T", "1", "-", " "):
            if self._allows(allowed, candidate):
                return candidate
        for op, value in allowed:
            if op is sre_constants.LITERAL:
                return chr(value)
            if op is sre_constants.RANGE:
                return chr(value[0] + seed % (value[1] - value[0] + 1))
        raise ValueError("the stand-in found no character for a class")

    @staticmethod
    def _allows(allowed: Any, char: str) -> bool:
        negate = bool(allowed) and allowed[0][0] is sre_constants.NEGATE
        found = False
        code = ord(char)
        for op, value in allowed:
            if (
                op is sre_constants.LITERAL
                and value == code
                or op is sre_constants.RANGE
                and value[0] <= code <= value[1]
            ):
                found = True
            elif op is sre_constants.CATEGORY:
                found = found or _category(value, char)
        return found != negate


def _category(category: Any, char: str) -> bool:
    names = {
        sre_constants.CATEGORY_DIGIT: str.isdigit,
        sre_constants.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
        sre_constants.CATEGORY_SPACE: str.isspace,
        sre_constants.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
        sre_constants.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
        sre_constants.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
    }
    test = names.get(category)
    return bool(test and test(char))


class _Instance:
    """A value valid against a JSON schema (the subset pydantic and our decoding schemas use)."""

    def __init__(self, root: dict[str, Any], writer: _Writer):
        self.root = root
        self.writer = writer
        self.patterns = _Pattern(writer)

    def of(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            return self.of(self._resolve(schema["$ref"]))
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            values = schema["enum"]
            return values[self.writer.next_seed() % len(values)]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [o for o in schema[key] if not (isinstance(o, dict) and o.get("type") == "null")]
                return self.of(options[0] if options else schema[key][0])
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self._resolve(part["$ref"]) if "$ref" in part else part)
            return self.of(merged)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or "properties" in schema:
            return self._object(schema.get("properties", {}))
        if kind == "array":
            return self._array(schema)
        if kind == "string":
            return self._string(schema)
        if kind == "integer":
            low, high = schema.get("minimum", 1), schema.get("maximum", 5)
            return int(low + self.writer.next_seed() % (high - low + 1))
        if kind == "number":
            low, high = schema.get("minimum", 0.0), schema.get("maximum", 1.0)
            return round(low + (high - low) * (self.writer.next_seed() % 1000) / 1000, 3)
        if kind == "boolean":
            return self.writer.next_seed() % 2 == 0
        return None

    def _object(self, properties: dict[str, Any]) -> dict[str, Any]:
        """An object; where it names titles, its free text quotes them (as "cite each title in
        the answer, in double quotes" asks)."""
        value = {name: self.of_property(name, sub) for name, sub in properties.items()}
        named = [
            title
            for name, item in value.items()
            if any(hint in name.lower() for hint in _TITLE_HINTS)
            for title in (item if isinstance(item, list) else [item])
            if isinstance(title, str) and title in self.writer.titles
        ]
        if named:
            for name, sub in properties.items():
                if isinstance(value[name], str) and value[name] not in named and "pattern" not in sub:
                    value[name] += " " + " and ".join(f'"{title}"' for title in named)
        return value

    def of_property(self, name: str, schema: Any) -> Any:
        """A property's value, following what its name says it must be when the schema leaves it
        open: an id the prompt lists, a title it shows."""
        plain = self._resolve(schema["$ref"]) if isinstance(schema, dict) and "$ref" in schema else schema
        open_value = isinstance(plain, dict) and not {"enum", "const", "pattern", "prefixItems"} & set(plain)
        lowered = name.lower()
        if open_value and self.writer.titles and any(hint in lowered for hint in _TITLE_HINTS):
            if plain.get("type") == "array":
                return self.writer.titles[: max(1, plain.get("minItems", 1))]
            if plain.get("type") == "string":
                return self.writer.titles[0]
        if open_value and self.writer.labels and lowered.endswith("ids") and plain.get("type") == "array":
            return self.writer.labels[: max(1, plain.get("minItems", 1))]
        return self.of(schema)

    def _resolve(self, ref: str) -> dict[str, Any]:
        node: Any = self.root
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        return node

    def _array(self, schema: dict[str, Any]) -> list[Any]:
        prefix = schema.get("prefixItems")
        if prefix:
            return [self.of(item) for item in prefix]
        low = schema.get("minItems", 1)
        high = schema.get("maxItems", max(low, 3))
        count = max(low, min(high, _MOST_ITEMS))
        items = schema.get("items", {})
        item = self._resolve(items["$ref"]) if "$ref" in items else items
        keyed = self._keyed_items(item, low, high)
        if keyed is not None:
            return keyed
        values: list[Any] = []
        for _ in range(count * 3):
            value = self.of(items)
            if not schema.get("uniqueItems") or value not in values:
                values.append(value)
            if len(values) == count:
                break
        return values

    def _keyed_items(self, item: dict[str, Any], low: int, high: int) -> list[Any] | None:
        """Objects keyed by an id the prompt lists (one per listed label, as "rate each of these"
        asks) or by a distinct number; ``None`` for other items."""
        properties = item.get("properties", {})
        id_name = next((n for n in _ID_NAMES if n in properties and "const" not in properties[n]), None)
        if id_name is not None and self.writer.labels:
            labels = self.writer.labels[: max(low, min(high, len(self.writer.labels)))]
            return [{**self.of(item), id_name: label} for label in labels]
        number = next((n for n in _NUMBER_NAMES if n in properties), None)
        if number is not None and properties[number].get("type") == "integer":
            count = max(low, min(high, _MOST_ITEMS))
            first = properties[number].get("minimum", 1)
            return [{**self.of(item), number: first + position} for position in range(count)]
        return None

    def _string(self, schema: dict[str, Any]) -> str:
        if "pattern" in schema:
            return self.patterns.example(schema["pattern"])
        low, high = schema.get("minLength", 0), schema.get("maxLength", 160)
        text = self.writer.text(min(max(low, 60), high))
        if self.writer.labels and "id" not in schema.get("title", "").lower():
            text = f"{text} [{self.writer.labels[0]}]"
        return text[:high] if len(text) > high else text.ljust(low, "e")


@dataclass
class StandInModel:
    """The responder of a ``FakeModelServer``: ``server.responder = StandInModel(server, latency_s=1.0)``.

    ``max_in_flight``: when more calls than this are in flight, a request gets a 429 with
    ``Retry-After`` and ``x-ratelimit-remaining-requests: 0`` instead of an answer, as a provider's
    concurrency limit answers. ``answered`` and ``rate_limited`` count what it did."""

    server: FakeModelServer
    latency_s: float = 0.0
    max_in_flight: int | None = None
    retry_after_s: float = 0.5
    answered: int = 0
    rate_limited: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, request: Received) -> Reply | Failure:
        if self.max_in_flight is not None and self.server.in_flight > self.max_in_flight:
            with self._lock:
                self.rate_limited += 1
            return Failure(
                429,
                "Rate limit reached for requests",
                headers={
                    "retry-after-ms": str(int(self.retry_after_s * 1000)),
                    "x-ratelimit-remaining-requests": "0",
                    "x-ratelimit-reset-requests": f"{self.retry_after_s}s",
                },
            )
        with self._lock:
            self.answered += 1
        prompt = _first_prompt(request)
        writer = _Writer(prompt)
        body = request.body
        if body.get("logprobs"):
            # A rating read from the first token's probabilities (G-Eval): mass on middling scores.
            return Reply("3", delay_s=self.latency_s, top_probabilities={"3": 0.5, "4": 0.3, "2": 0.2})
        schema = (body.get("response_format") or {}).get("schema")
        if schema is None:
            text = writer.text(240) + (f" [{writer.labels[0]}]." if writer.labels else ".")
            return Reply(
                text, input_tokens=len(prompt) // 4, output_tokens=len(text) // 4, delay_s=self.latency_s
            )
        value = _Instance(schema, writer).of(schema)
        text = json.dumps(value)
        return Reply(
            text, input_tokens=len(prompt) // 4, output_tokens=len(text) // 4, delay_s=self.latency_s
        )


def _first_prompt(request: Received) -> str:
    """The conversation's first user message: the task prompt, also for a repair request."""
    messages = request.body.get("messages") or []
    return next((m["content"] for m in messages if m.get("role") == "user"), "")
