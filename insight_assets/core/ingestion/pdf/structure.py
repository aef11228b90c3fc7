"""A paper's structure from its text: section headings, title, abstract and references block.

Headings are found per text block while pages are read: a block that is a short heading, or that
starts with one. Candidates are then filtered as a whole: numbered headings must form a plausible
sequence, which is what separates "2.1 Overview" from list items, table rows and running headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import lazy_regex

from .repair import join_hyphenated_lines, repair_ligatures

if TYPE_CHECKING:
    import pymupdf

    from ..documents import ParsedDocument

_NUMBERED = lazy_regex(r"(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})\.? (?P<title>.+)")
_ROMAN = lazy_regex(r"(?P<num>[IVX]{1,5})\. (?P<title>.+)")
# Appendix headings ("A Details", "B.2 Prompts"); accepted only after the references.
_LETTERED = lazy_regex(r"(?P<num>[A-H](?:\.\d{1,2}){0,2}) (?P<title>.+)")
_NUMBER_ONLY = lazy_regex(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.|[A-H](?:\.\d{1,2}){0,2}")
_REFERENCES_NAMES = ("references", "bibliography", "reference list", "literature cited", "works cited")
# Unnumbered headings that numbered papers use too.
_FRONT_AND_BACK_NAMES = (
    "abstract",
    "contents",
    "table of contents",
    "limitations",
    "ethics statement",
    "broader impact",
    "acknowledgment",
    "acknowledgments",
    "acknowledgement",
    "acknowledgements",
    "appendix",
    "appendices",
    "supplementary material",
    *_REFERENCES_NAMES,
)
# Unnumbered headings of unnumbered papers; in a numbered paper these words alone are table headers.
_BODY_NAMES = (
    "introduction",
    "background",
    "related work",
    "method",
    "methods",
    "materials and methods",
    "results",
    "discussion",
    "results and discussion",
    "conclusion",
    "conclusions",
    "conclusion and future work",
    "conclusions and future work",
)
_NAMED = lazy_regex(
    "(?P<name>"
    + "|".join(sorted(_FRONT_AND_BACK_NAMES + _BODY_NAMES, key=len, reverse=True))
    + r"|appendix [A-Z])\s*:?",
    re.IGNORECASE,
)
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}
_TITLE_FORBIDDEN = set("=<>{}|#@\\$^~_")
_RUN_IN_SENTENCE = lazy_regex(r"[a-z]{3,}\. [A-Z]")
_MAX_HEADING_CHARS = 110
_MAX_HEADING_WORDS = 16
# The same numbered title on this many blocks is a running header ("2 A. AUTHOR ET AL", "4 ...").
_RUNNING_HEADER_REPEATS = 3
# How far back (in candidates) a numbered heading looks for its predecessor; bounds the work on
# huge documents with thousands of numbered lines.
_CHAIN_WINDOW = 60


@dataclass
class Heading:
    text: str  # as shown in ``sections``: whitespace collapsed
    scheme: str  # "named", "numbered" or "lettered"
    key: tuple[int, ...]  # section number, e.g. (2, 1) for "2.1"; letters count from A = 1
    name: str  # lowercased title, to spot "references"
    page: int
    start: int  # offsets in the page text
    end: int

    @property
    def is_references(self) -> bool:
        return self.name in _REFERENCES_NAMES


def _roman_value(numeral: str) -> int:
    values = [_ROMAN_VALUES[ch] for ch in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _plausible_title(title: str) -> bool:
    """A heading's words: not a table row, equation, code line, sentence, affiliation or TOC entry."""
    if len(title) > _MAX_HEADING_CHARS or not title[0].isupper() or title[-1] in ".,;:-":
        return False
    if _TITLE_FORBIDDEN.intersection(title) or "http" in title or title.count(",") > 2:
        return False
    if _RUN_IN_SENTENCE.search(title):  # "Participants. We recruited...": a paragraph's run-in heading
        return False
    words = title.split()
    if len(words) > _MAX_HEADING_WORDS or (len(words) > 1 and words[-1].isdigit()):  # "... 12": TOC
        return False
    visible = title.replace(" ", "")
    letters = sum(ch.isalpha() for ch in visible)
    return letters >= 2 and letters >= 0.6 * len(visible)


def _classify_heading(text: str) -> tuple[str, tuple[int, ...], str] | None:
    """(scheme, key, lowercased title) when ``text`` (one line, single-spaced) reads as a heading."""
    named = _NAMED.fullmatch(text)
    if named and text[0].isupper():
        return "named", (), named["name"].lower()
    for scheme, pattern in (("numbered", _NUMBERED), ("numbered", _ROMAN), ("lettered", _LETTERED)):
        match = pattern.fullmatch(text)
        if not match or not _plausible_title(match["title"]):
            continue
        number = match["num"]
        if pattern is _ROMAN:
            key: tuple[int, ...] = (_roman_value(number),)
        elif pattern is _LETTERED:
            key = (ord(number[0]) - ord("A") + 1, *(int(part) for part in number[2:].split(".") if part))
        else:
            key = tuple(int(part) for part in number.split(".") if part)
        return scheme, key, match["title"].rstrip(" :").lower()
    return None


def block_heading(block_text: str) -> tuple[str, tuple[int, ...], str, str, int] | None:
    """A heading at the start of a (cleaned) block: (scheme, key, name, shown text, length in block).

    Either the whole block is a short heading ("2.1\\nOverview"), or the block starts with one and
    the paragraph follows in the same block ("1\\nIntroduction\\nAs the pace...", "References\\n[1] ...").
    """
    if not (block_text[0].isdigit() or block_text[0].isupper()):  # cheap exit for most paragraphs
        return None
    lines = block_text.split("\n", 3)
    if len(block_text) <= _MAX_HEADING_CHARS + 10 and len(lines) <= 3:
        shown = " ".join(block_text.split())
        found = _classify_heading(shown)
        if found:
            return (*found, shown, len(block_text))
    first = lines[0].strip()
    if len(lines) > 1:
        # The number alone on the first line and the title on the second.
        if _NUMBER_ONLY.fullmatch(first):
            shown = f"{first} {' '.join(lines[1].split())}"
            found = _classify_heading(shown)
            if found:
                return (*found, shown, len(lines[0]) + 1 + len(lines[1]))
        # A named heading alone on the first line ("References" followed by the first entry).
        named = _NAMED.fullmatch(first)
        if named and first[0].isupper():
            return "named", (), named["name"].lower(), first, len(lines[0])
    return None


def _follows(previous: tuple[int, ...] | None, key: tuple[int, ...]) -> bool:
    """Whether section number ``key`` can come after ``previous`` (``None``: the first one).

    Allows a skipped number or two, since a heading can be missed, but rejects going backwards or
    far ahead.
    """
    if previous is None:
        return key[0] <= 3 and all(part <= 2 for part in key[1:])
    if key <= previous:
        return False
    if key[0] > previous[0]:
        return key[0] <= previous[0] + 2 and all(part <= 2 for part in key[1:])
    depth = 1
    while depth < len(key) and depth < len(previous) and key[depth] == previous[depth]:
        depth += 1
    if depth >= len(key):
        return False
    before = previous[depth] if depth < len(previous) else 0
    return key[depth] <= before + 3 and all(part <= 2 for part in key[depth + 1 :])


def _longest_sequence(headings: list[Heading]) -> list[Heading]:
    """The longest run of ``headings`` (in order) whose numbers follow each other.

    Longest rather than greedy, so that one stray "2 ..." (an affiliation, a list item) before
    "1 Introduction" does not shut out the real sequence.
    """
    length = [0] * len(headings)
    previous = [-1] * len(headings)
    for j, heading in enumerate(headings):
        if _follows(None, heading.key):
            length[j] = 1
        for i in range(max(0, j - _CHAIN_WINDOW), j):
            if length[i] and length[i] + 1 > length[j] and _follows(headings[i].key, heading.key):
                length[j], previous[j] = length[i] + 1, i
    if not any(length):
        return []
    index = length.index(max(length))
    chain = []
    while index >= 0:
        chain.append(headings[index])
        index = previous[index]
    return chain[::-1]


def _select_headings(candidates: list[Heading]) -> list[Heading]:
    """The real section headings among the candidates, in document order."""
    repeats: dict[str, int] = {}
    for heading in candidates:
        if heading.scheme != "named":
            repeats[heading.name] = repeats.get(heading.name, 0) + 1
    candidates = [h for h in candidates if h.scheme == "named" or repeats[h.name] < _RUNNING_HEADER_REPEATS]
    references_at = max((i for i, h in enumerate(candidates) if h.is_references), default=len(candidates))
    numbered = _longest_sequence([h for h in candidates if h.scheme == "numbered"])
    # Lettered headings are appendices: only after the references, where "A ..." is not a sentence.
    lettered = _longest_sequence([h for h in candidates[references_at + 1 :] if h.scheme == "lettered"])
    chosen = {id(h) for h in numbered + lettered}
    numbered_paper = len(numbered) >= 3
    first_numbered = next((i for i, h in enumerate(candidates) if numbered and h is numbered[0]), 0)

    selected: list[Heading] = []
    seen_names: set[str] = set()
    for index, heading in enumerate(candidates):
        if heading.scheme != "named":
            if id(heading) in chosen:
                selected.append(heading)
            continue
        if numbered_paper and (
            heading.name not in _FRONT_AND_BACK_NAMES
            # Before "1 Introduction" only an abstract or a table of contents; the rest is that table.
            or (index < first_numbered and heading.name not in ("abstract", "contents", "table of contents"))
        ):
            continue
        # One Abstract, one Introduction...; references may come twice (main text, appendix).
        if heading.name in seen_names and not heading.is_references:
            continue
        seen_names.add(heading.name)
        selected.append(heading)
    return selected


_ABSTRACT_INLINE = lazy_regex(
    r"^[ \t]*abstract(?:[ \t]*[.:\u2014\u2013-][ \t]*|[ \t]*\n)", re.IGNORECASE | re.MULTILINE
)
_MAX_ABSTRACT_CHARS = 3000
_TITLE_MARKS = " *\u2217\u2020\u2021\u00a7\u00b6"  # footnote marks after a title
_TITLE_MIN_SPAN_SIZE = 0.75
# More lines than this in the largest font are body text, not a title: a page set in one size.
_MAX_TITLE_LINES = 6
_CAPITALS_HYPHENATION = lazy_regex(r"(?<=[A-Z])-\n(?=[A-Z]{2})")
_FILE_NAME = lazy_regex(r"\.(?:dvi|pdf|docx?|tex|txt|ps|indd|ai)\s*$", re.IGNORECASE)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _alnum_key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def metadata_title(metadata: dict | None, first_page_text: str) -> str:
    """The metadata title when it is the paper's: it must be printed on page 1.

    Metadata titles are often a file name ("bengio03a.dvi"), a reference-manager label ("Faruqui
    and Dyer - 2014 - ...") or the title of an embedded figure; the page-1 check rejects all three.
    """
    title = _squash(repair_ligatures((metadata or {}).get("title") or ""))
    if len(title) < 4 or len(title.split()) < 2 or _FILE_NAME.search(title):
        return ""
    return title if _alnum_key(title) in _alnum_key(first_page_text) else ""


def largest_font_title(page: pymupdf.Page, textpage: pymupdf.TextPage) -> str:
    """The largest-font horizontal lines in the top half of a page, in order; "" when more than
    ``_MAX_TITLE_LINES`` are in that font (the page has no larger title line)."""
    lines: list[tuple[float, list[dict]]] = []
    top_half = page.rect.height / 2
    for block in textpage.extractDICT()["blocks"]:
        for line in block.get("lines", ()):
            # Vertical text (arXiv's side stamp) is often the largest on the page.
            if abs(line["dir"][1]) > 0.01 or line["bbox"][1] > top_half:
                continue
            sizes = [span["size"] for span in line["spans"] if not span["text"].isspace()]
            if sizes:
                lines.append((max(sizes), line["spans"]))
    sizes = [size for size, spans in lines if sum(ch.isalpha() for s in spans for ch in s["text"]) >= 3]
    if not sizes:
        return ""
    largest = max(sizes)
    parts: list[str] = []
    title_sizes: set[float] = set()
    for size, spans in lines:
        # A title line is in the largest font, or continues the title in its small capitals.
        if size < largest - 0.5 and round(size, 1) not in title_sizes:
            if parts:
                break
            continue
        # Much smaller spans on a title line are footnote marks; small capitals (about 0.8 of the
        # size) are part of the title. Spaces may come as spans of their own.
        kept = [s for s in spans if s["text"].isspace() or s["size"] >= _TITLE_MIN_SPAN_SIZE * largest]
        title_sizes.update(round(s["size"], 1) for s in kept if not s["text"].isspace())
        parts.append("".join(s["text"] for s in kept).strip())
    if len(parts) > _MAX_TITLE_LINES:
        return ""
    title = join_hyphenated_lines(repair_ligatures("\n".join(parts)))
    title = _CAPITALS_HYPHENATION.sub("", title)  # "COMPRE-" / "HENSION" in all-capitals titles
    return _squash(title).strip(_TITLE_MARKS)


def _abstract(document: ParsedDocument, headings: list[tuple[int, int, Heading]]) -> str:
    """Text after an "Abstract" heading (or a run-in "Abstract:"), up to the next heading or page end."""
    text, offsets = document.text, document.page_offsets
    # The abstract is on the first pages; do not take an "Abstract" from an appendix.
    search_end = offsets[2] if len(offsets) > 2 else len(text)
    start = next((end for begin, end, h in headings if h.name == "abstract" and begin < search_end), None)
    if start is None:
        match = _ABSTRACT_INLINE.search(text, 0, search_end)
        if not match:
            return ""
        start = match.end()
    page = document.page_at(start)
    page_end = offsets[page] if page < len(offsets) else len(text)
    end = min(page_end, next((begin for begin, _, h in headings if begin >= start), len(text)))
    abstract = _squash(text[start : min(end, start + _MAX_ABSTRACT_CHARS)])
    if end > start + _MAX_ABSTRACT_CHARS and ". " in abstract:
        abstract = abstract[: abstract.rindex(". ") + 1]  # no next heading nearby: end at a sentence
    return abstract


def add_structure(document: ParsedDocument, candidates: list[Heading]) -> None:
    """Sections, abstract, references and body_end, from headings found while reading pages."""
    headings = _select_headings(candidates)
    document.sections = [h.text for h in headings]
    offsets = document.page_offsets
    placed = [(offsets[h.page] + h.start, offsets[h.page] + h.end, h) for h in headings]
    document.abstract = _abstract(document, placed)
    references = [item for item in placed if item[2].is_references]
    if references:
        begin, end, _ = references[-1]
        stop = next((b for b, _, _ in placed if b > begin), len(document.text))
        document.references = document.text[end:stop].strip()
        document.body_end = begin
