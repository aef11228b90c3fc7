"""Research backgrounds to propose ideas for: a collection's ``backgrounds.jsonl`` (one
``{"background": ...}`` per line), or a file like SciPIP's public ones, a JSON array
(``test_background.json``) or JSON Lines with entities (``test_acl_2024.json``: ``entities_bg``).

An empty or missing background makes an item unusable; entities that are ``null`` or not a list
of strings are reported and left to be extracted. Problems carry the line (JSON Lines) or the
item number (a JSON array), 1-based.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...jsonl import LineProblem, UnusableLine

BACKGROUNDS_FILE = "backgrounds.jsonl"
ENTITY_KEYS = ("entities", "entities_bg")


@dataclass(frozen=True)
class Background:
    background_id: str
    background: str
    entities: tuple[str, ...] | None = None  # given with it; None: to be extracted
    note: str | None = None  # a problem that did not make it unusable
    held_out: str | None = None  # a collection paper's own background: that paper's id


def background_id(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def parse_background(raw: Any) -> tuple[Background, str]:
    if not isinstance(raw, dict):
        raise UnusableLine('expected an object like {"background": "..."}')
    text = raw.get("background")
    if not isinstance(text, str) or not text.strip():
        raise UnusableLine('"background" is missing or empty')
    key = next((k for k in ENTITY_KEYS if k in raw), None)
    entities, note = None, None
    if key is not None:
        given = raw[key]
        if isinstance(given, list) and given and all(isinstance(e, str) and e.strip() for e in given):
            entities = tuple(e.strip() for e in given)
        else:
            note = f'"{key}" is {json.dumps(given)[:40]}, not a list of phrases: they will be extracted'
    found = Background(background_id(text), text.strip(), entities, note)
    return found, found.background_id


def read_backgrounds(path: Path) -> tuple[list[Background], list[LineProblem]]:
    """The usable backgrounds of ``path`` (none when it does not exist), and every problem: the
    unusable items and the notes of usable ones, each with its line or item number."""
    if not path.exists():
        return [], []
    text = path.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        try:
            entries = list(enumerate(json.loads(text), start=1))
        except json.JSONDecodeError as error:
            return [], [LineProblem(error.lineno, f"invalid JSON array: {error.msg}")]
        label = "item"
    else:
        entries = [
            (number, line)
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
        label = "line"
    found: list[Background] = []
    problems: list[LineProblem] = []
    seen: dict[str, int] = {}
    for number, raw in entries:
        try:
            if label == "line":
                raw = _json_line(raw)
            background, key = parse_background(raw)
            if key in seen:
                raise UnusableLine(f"duplicate of {label} {seen[key]}")
        except UnusableLine as problem:
            problems.append(LineProblem(number, f"{label} {number}: {problem}"))
            continue
        seen[key] = number
        found.append(background)
        if background.note:
            problems.append(LineProblem(number, f"{label} {number}: {background.note}"))
    return found, problems


def _json_line(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise UnusableLine(f"invalid JSON: {error.msg} at column {error.colno}") from None


def research_backgrounds(
    folder: Path, own: Mapping[str, str], leave_one_out: bool
) -> tuple[list[Background], list[LineProblem]]:
    """The collection's ``backgrounds.jsonl`` (in ``folder``), then, with ``leave_one_out``, each
    paper's own background from ``own`` (doc id -> background), that paper to be held out."""
    given, problems = read_backgrounds(folder / BACKGROUNDS_FILE)
    papers = (
        [Background(f"paper:{doc}", text, held_out=doc) for doc, text in own.items() if text]
        if leave_one_out
        else []
    )
    return given + papers, problems
