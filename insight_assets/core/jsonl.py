"""A collection's own JSON Lines files (``questions.jsonl``, ``summaries.jsonl``), read line by line.

Blank lines and lines starting with ``#`` are skipped. Every other line is parsed as JSON and handed
to the caller's ``parse``, which returns the line's value and its key (for duplicates) or raises
``UnusableLine`` saying why; an unusable line is reported with its number (1-based) and left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class LineProblem:
    line: int
    message: str


class UnusableLine(ValueError):
    """Why a line cannot be used; its message is what the user reads."""


def read_lines(path: Path, parse: Callable[[Any], tuple[T, Hashable]]) -> tuple[list[T], list[LineProblem]]:
    """The usable values of ``path`` (none when it does not exist) and the problems found; a line
    whose key repeats an earlier line's is a duplicate of it."""
    if not path.exists():
        return [], []
    values: list[T] = []
    problems: list[LineProblem] = []
    first_seen: dict[Hashable, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as error:
                raise UnusableLine(f"invalid JSON: {error.msg} at column {error.colno}") from None
            value, key = parse(raw)
            if key in first_seen:
                raise UnusableLine(f"duplicate of line {first_seen[key]}")
        except UnusableLine as problem:
            problems.append(LineProblem(number, str(problem)))
            continue
        first_seen[key] = number
        values.append(value)
    return values, problems
