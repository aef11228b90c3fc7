"""Where a paper's sections start and end in its text.

The parser records each section's heading as shown (``ParsedDocument.sections``: "2 Related Work",
"3.1 Training", "Abstract"), not where it is. ``section_spans`` finds the headings again, in order,
in the document's text; a section runs to the next heading of the same or a higher level (so "2"
includes "2.1" and "2.2"), the last one to the end of the body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from insight_assets.core.startup.lazy import lazy_regex

# "2", "2.1", "IV", "A.2" before a heading's name.
_NUMBER = lazy_regex(r"^(?:\d{1,2}(?:\.\d{1,2})*|[IVX]{1,5}|[A-Z](?:\.\d{1,2})*)\.?\s+(?=\S)")


@dataclass(frozen=True)
class SectionSpan:
    heading: str  # as the parser showed it
    name: str  # lower-cased, without its number: "related work"
    level: int  # 1 for "2" or an unnumbered heading, 2 for "2.1"...
    start: int  # where the heading starts in the text
    body_start: int  # where the section's text starts, after the heading
    end: int

    def text(self, document_text: str) -> str:
        return document_text[self.body_start : self.end].strip()


def heading_name(heading: str) -> tuple[str, int]:
    """A heading's lower-cased name without its number, and its level."""
    found = _NUMBER.match(heading)
    if not found:
        return heading.strip().lower(), 1
    number = found.group(0).strip().rstrip(".")
    return heading[found.end() :].strip().lower(), number.count(".") + 1


def _pattern(heading: str) -> re.Pattern[str]:
    words = heading.split()
    return re.compile(r"\s*".join(re.escape(word) for word in words), re.IGNORECASE)


def section_spans(text: str, headings: Sequence[str], end: int | None = None) -> list[SectionSpan]:
    """The sections of ``text`` whose headings are found, in order, searching each after the one
    before; a heading not found is skipped. ``end`` is where the body ends (the references)."""
    body_end = len(text) if end is None else end
    found: list[tuple[str, str, int, int, int]] = []
    position = 0
    for heading in headings:
        match = _pattern(heading).search(text, position)
        if match is None:
            continue
        name, level = heading_name(heading)
        found.append((heading, name, level, match.start(), match.end()))
        position = match.end()
    spans = []
    for index, (heading, name, level, start, body_start) in enumerate(found):
        following = (later[3] for later in found[index + 1 :] if later[2] <= level)
        stop = next(following, body_end if start < body_end else len(text))
        spans.append(SectionSpan(heading, name, level, start, body_start, max(stop, body_start)))
    return spans


def find_section(spans: Sequence[SectionSpan], names: Sequence[str]) -> SectionSpan | None:
    """The first span whose name starts with one of ``names`` (lower case), trying ``names`` in
    order: ``find_section(spans, ["related work", "background"])``."""
    for wanted in names:
        for span in spans:
            if span.name.startswith(wanted):
                return span
    return None
