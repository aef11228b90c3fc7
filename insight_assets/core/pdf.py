"""PDF file -> ``ParseResult``: page text in reading order, repaired, with the paper's structure.

Plain PyMuPDF, one file at a time, one page at a time. ``parse_pdf`` never raises for a bad file:
what is wrong with it comes back as ``ParseProblem`` records, an ``"error"`` when no document could
be made and a ``"warning"`` when the document was kept with a caveat.

Speed matters (the corpus benchmark wants at least 0.8x the throughput of bare ``page.get_text()``),
so every page is read with the cheap ``"blocks"`` extraction; only page 1 may also be read as
``"dict"``, for font sizes, when the PDF's metadata has no usable title.

MuPDF's warning store is process-global, so do not run ``parse_pdf`` from several threads at once
(processes are fine): one file's warnings would be blamed on another.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from insight_assets.core.documents import ParsedDocument, ParseProblem, ParseResult, sha256_file
from insight_assets.core.text_quality import (
    UNUSABLE,
    QualitySettings,
    TextVerdict,
    assess_text,
    visible_chars,
)

# Bump whenever the text or structure produced for the same file can change.
PARSER_VERSION = "3"
DEFAULT_QUALITY = QualitySettings()


def parser_version(quality: QualitySettings = DEFAULT_QUALITY) -> str:
    """What a stored parse was made with: the parser's version and the text-quality thresholds, so
    that changing either parses again."""
    return f"{PARSER_VERSION}/q{quality.key()}"

# --------------------------------------------------------------------------------------------------
# Text repair


_LIGATURES = (
    ("\ufb00", "ff"),
    ("\ufb01", "fi"),
    ("\ufb02", "fl"),
    ("\ufb03", "ffi"),
    ("\ufb04", "ffl"),
    ("\ufb05", "st"),
    ("\ufb06", "st"),
)

# A hyphen (ASCII, U+2010 or soft hyphen) that ends a line; the letters around it are checked in code.
_LINE_END_HYPHEN = re.compile(r"[-\u2010\u00ad][ \t]*\n[ \t]*(?=[^\W\d_])")
_CONTEXT = 64  # characters either side of a line-end hyphen that decide how to join
# Whole words that form hyphenated compounds in papers ("self-attention", "few-shot"): a line-end
# hyphen after one of them is a real hyphen. Syllable-like prefixes (re-, pre-, sub-) are left out
# because they also end ordinary word breaks ("re-sults").
_COMPOUND_PREFIXES = frozenset(
    {
        "self",
        "non",
        "cross",
        "multi",
        "semi",
        "well",
        "task",
        "domain",
        "state",
        "long",
        "short",
        "high",
        "low",
        "large",
        "small",
        "fine",
        "zero",
        "few",
        "real",
        "open",
        "human",
        "end",
        "time",
        "rule",
        "data",
        "model",
        "context",
        "language",
        "word",
        "sentence",
        "document",
        "character",
        "token",
        "sequence",
        "graph",
        "knowledge",
    }
)


def repair_ligatures(text: str) -> str:
    """Replace typographic ligature characters (``ﬁ`` ...) with their letters."""
    # ``in`` + ``replace`` per ligature: several times faster than ``str.translate`` on text that
    # mostly has none, and this runs on every block of every page.
    for ligature, letters in _LIGATURES:
        if ligature in text:
            text = text.replace(ligature, letters)
    return text


def _hyphen_join(before: str, hyphen: str, after: str) -> str | None:
    """How to rejoin ``before`` + hyphen + line break + ``after`` (a few dozen characters each side).

    Returns ``None`` to leave the line break alone, ``""`` to drop the hyphen (``embed-``/``ding``),
    or ``"-"`` to keep it and drop only the break: in a compound (``state-of-the-``/``art``,
    ``state-``/``of-the-art``) the hyphen is a real one that happens to fall at the line end.
    """
    if not (before[-1:].isalpha() and before[-1].islower() and after[:1].islower()):
        return None
    if hyphen == "\u00ad":  # a soft hyphen only ever marks a word break
        return ""
    previous_word = before.rsplit(None, 1)[-1]
    next_word = after.split(None, 1)[0].rstrip("-\u2010")
    if any(mark in word for word in (previous_word, next_word) for mark in "-\u2010"):
        return "-"
    if previous_word.lstrip("([\"'").lower() in _COMPOUND_PREFIXES:
        return "-"
    return ""


def join_hyphenated_lines(text: str) -> str:
    """Undo end-of-line hyphenation: ``"embed-\\nding"`` -> ``"embedding"``.

    Only between two lowercase letters, so ``"GPT-\\n3"`` or ``"Bi-\\nLSTM"`` keep their break, and a
    compound keeps its hyphen (``"state-of-the-\\nart"`` -> ``"state-of-the-art"``, ``"self-\\nattention"``
    -> ``"self-attention"``).
    """

    def replace(match: re.Match[str]) -> str:
        start, end = match.start(), match.end()
        joined = _hyphen_join(text[max(0, start - _CONTEXT) : start], match[0][0], text[end : end + _CONTEXT])
        return match[0] if joined is None else joined

    return _LINE_END_HYPHEN.sub(replace, text)


def clean_page_text(text: str) -> str:
    """Ligatures repaired, end-of-line hyphenation undone."""
    return join_hyphenated_lines(repair_ligatures(text))


# --------------------------------------------------------------------------------------------------
# Reading order

# A block counts as belonging to one column when at most this share of its width crosses the page's
# vertical midline; otherwise it spans both columns (title, full-width figure, centred page number).
_COLUMN_OVERHANG = 0.1
# A page is read as two columns only when each side holds at least this share of the text.
_MIN_COLUMN_SHARE = 0.2


def _reading_order(blocks: list[tuple], midline: float) -> list[tuple]:
    """Text blocks (``page.get_text("blocks")`` tuples) in reading order.

    On a two-column page, blocks that span the midline cut the page into horizontal bands; each band
    is read left column top to bottom, then right column. Other pages keep PyMuPDF's order, which
    follows the content stream and is right for single-column layouts.
    """
    left, right, spanning = [], [], []
    for block in blocks:
        x0, x1 = block[0], block[2]
        width = max(x1 - x0, 1e-6)
        on_left = max(0.0, min(x1, midline) - x0)
        on_right = max(0.0, x1 - max(x0, midline))
        if on_right <= _COLUMN_OVERHANG * width:
            left.append(block)
        elif on_left <= _COLUMN_OVERHANG * width:
            right.append(block)
        else:
            spanning.append(block)
    total = sum(len(block[4]) for block in blocks)
    if min(sum(len(b[4]) for b in left), sum(len(b[4]) for b in right)) < _MIN_COLUMN_SHARE * total:
        return blocks

    spanning.sort(key=lambda b: (b[1], b[0]))
    cuts = [(b[1] + b[3]) / 2 for b in spanning]
    bands: list[tuple[list[tuple], list[tuple]]] = [([], []) for _ in range(len(spanning) + 1)]
    for side, column in ((0, left), (1, right)):
        for block in column:
            bands[bisect.bisect_left(cuts, (block[1] + block[3]) / 2)][side].append(block)
    ordered: list[tuple] = []
    for index, (band_left, band_right) in enumerate(bands):
        ordered.extend(sorted(band_left, key=lambda b: (b[1], b[0])))
        ordered.extend(sorted(band_right, key=lambda b: (b[1], b[0])))
        if index < len(spanning):
            ordered.append(spanning[index])
    return ordered


# --------------------------------------------------------------------------------------------------
# Section headings
#
# Headings are found per text block while pages are read: a block that is a short heading, or that
# starts with one. Candidates are then filtered as a whole: numbered headings must form a plausible
# sequence, which is what separates "2.1 Overview" from list items, table rows and running headers.

_NUMBERED = re.compile(r"(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})\.? (?P<title>.+)")
_ROMAN = re.compile(r"(?P<num>[IVX]{1,5})\. (?P<title>.+)")
# Appendix headings ("A Details", "B.2 Prompts"); accepted only after the references.
_LETTERED = re.compile(r"(?P<num>[A-H](?:\.\d{1,2}){0,2}) (?P<title>.+)")
_NUMBER_ONLY = re.compile(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.|[A-H](?:\.\d{1,2}){0,2}")
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
_NAMED = re.compile(
    "(?P<name>"
    + "|".join(sorted(_FRONT_AND_BACK_NAMES + _BODY_NAMES, key=len, reverse=True))
    + r"|appendix [A-Z])\s*:?",
    re.IGNORECASE,
)
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}
_TITLE_FORBIDDEN = set("=<>{}|#@\\$^~_")
_RUN_IN_SENTENCE = re.compile(r"[a-z]{3,}\. [A-Z]")
_MAX_HEADING_CHARS = 110
_MAX_HEADING_WORDS = 16
# The same numbered title on this many blocks is a running header ("2 A. AUTHOR ET AL", "4 ...").
_RUNNING_HEADER_REPEATS = 3
# How far back (in candidates) a numbered heading looks for its predecessor; bounds the work on
# huge documents with thousands of numbered lines.
_CHAIN_WINDOW = 60


@dataclass
class _Heading:
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


def _block_heading(block_text: str) -> tuple[str, tuple[int, ...], str, str, int] | None:
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


def _longest_sequence(headings: list[_Heading]) -> list[_Heading]:
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


def _select_headings(candidates: list[_Heading]) -> list[_Heading]:
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

    selected: list[_Heading] = []
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


# --------------------------------------------------------------------------------------------------
# Title, abstract, references


# "Abstract" alone on a line, or run in: "Abstract—We ...", "ABSTRACT: We ...".
_ABSTRACT_INLINE = re.compile(
    r"^[ \t]*abstract(?:[ \t]*[.:\u2014\u2013-][ \t]*|[ \t]*\n)", re.IGNORECASE | re.MULTILINE
)
_MAX_ABSTRACT_CHARS = 3000
_TITLE_MARKS = " *\u2217\u2020\u2021\u00a7\u00b6"  # footnote marks after a title
_TITLE_MIN_SPAN_SIZE = 0.75
_CAPITALS_HYPHENATION = re.compile(r"(?<=[A-Z])-\n(?=[A-Z]{2})")
_FILE_NAME = re.compile(r"\.(?:dvi|pdf|docx?|tex|txt|ps|indd|ai)\s*$", re.IGNORECASE)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _alnum_key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _metadata_title(metadata: dict | None, first_page_text: str) -> str:
    """The metadata title when it is the paper's: it must be printed on page 1.

    Metadata titles are often a file name ("bengio03a.dvi"), a reference-manager label ("Faruqui
    and Dyer - 2014 - ...") or the title of an embedded figure; the page-1 check rejects all three.
    """
    title = _squash(repair_ligatures((metadata or {}).get("title") or ""))
    if len(title) < 4 or len(title.split()) < 2 or _FILE_NAME.search(title):
        return ""
    return title if _alnum_key(title) in _alnum_key(first_page_text) else ""


def _largest_font_title(page: pymupdf.Page, textpage: pymupdf.TextPage) -> str:
    """The largest-font horizontal lines in the top half of a page, in order."""
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
    title = join_hyphenated_lines(repair_ligatures("\n".join(parts)))
    title = _CAPITALS_HYPHENATION.sub("", title)  # "COMPRE-" / "HENSION" in all-capitals titles
    return _squash(title).strip(_TITLE_MARKS)


def _abstract(document: ParsedDocument, headings: list[tuple[int, int, _Heading]]) -> str:
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


# --------------------------------------------------------------------------------------------------
# Problems

# MuPDF warnings that mean content was lost or guessed at. Others are harmless here ("bogus font
# ascent/descent", "repaired broken tree structure in outline", "broken xref subsection").
_DAMAGE_WARNING = re.compile(
    r"zlib|flate|lzw|data.loss|premature end|corrupt|syntax error|treating as end of file|read error"
    r"|missing 'endobj'|repairing PDF|repair broken xref|cannot find startxref|cannot (?:load|read)"
    r"|unknown (?:compression|filter)",
    re.IGNORECASE,
)
# A blank page: a short text with no letters (a lone page number is not text), or only a "left
# blank" notice. A long letterless text is not a blank page: that is for the text-quality gate.
_BLANK_MAX_CHARS = 80
_BLANK_PAGE = re.compile(
    r"[\W\d_]*(?:this page (?:is )?(?:intentionally )?left blank)?[\W\d_]*", re.IGNORECASE
)
_OCR_ADVICE = "Run OCR over the pages (e.g. ocrmypdf --force-ocr), then re-add the file."


def _page_list(numbers: list[int], limit: int = 12) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")


def _has_eof_marker(path: Path) -> bool:
    """Whether the file ends with %%EOF, as a complete PDF does (junk after it is tolerated)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" in handle.read()


# --------------------------------------------------------------------------------------------------
# Parsing

# The flags bare ``page.get_text()`` uses (ligatures and whitespace kept, clipped to the page, no
# images): the same extraction cost, and ligatures are repaired here.
_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT


def parse_pdf(
    path: Path, *, doc_id: str | None = None, quality: QualitySettings = DEFAULT_QUALITY
) -> ParseResult:
    """Parse one PDF. Never raises for a bad file: see ``ParseResult.problems``.

    ``quality`` sets the thresholds of the text-quality gate (``text_quality.py``): a garbled or
    nearly empty text layer makes the file unusable, a few garbled pages are dropped with a warning.
    """
    path = Path(path)
    try:
        size_bytes = path.stat().st_size
        doc_id = doc_id or sha256_file(path)
    except OSError as exc:
        advice = "Check that it exists and is readable."
        problem = _problem("unreadable", path, f"cannot read the file ({exc})", advice)
        return ParseResult(str(path), doc_id or "", 0, None, [problem])
    try:
        document, problems, verdict = _parse(path, doc_id, quality)
    except Exception as exc:  # noqa: BLE001 - the per-file boundary: anything unforeseen becomes a problem
        what = f"parsing failed ({type(exc).__name__}: {exc})"
        advice = "Try re-saving it with another PDF tool (e.g. print to PDF), then re-add the file."
        document, problems, verdict = None, [_problem("unreadable", path, what, advice)], None
    return ParseResult(str(path), doc_id, size_bytes, document, problems, verdict)


def count_pages(path: Path) -> int:
    """The page count of a PDF without reading any page; 0 when it cannot be opened (or needs a password)."""
    try:
        with pymupdf.open(path, filetype="pdf") as pdf:
            return 0 if pdf.needs_pass else pdf.page_count
    except (RuntimeError, OSError):  # FileDataError, EmptyFileError, a missing or unreadable file
        return 0


def _problem(kind: str, path: Path, what: str, advice: str, severity: str = "error") -> ParseProblem:
    """A problem whose message says what happened, to which file, and what the user can do."""
    return ParseProblem(kind, f"{path.name}: {what}. {advice}", severity)


_Parsed = tuple[ParsedDocument | None, list[ParseProblem], TextVerdict | None]


def _unusable(kind: str, path: Path, what: str, advice: str, verdict: TextVerdict | None = None) -> _Parsed:
    return None, [_problem(kind, path, what, advice)], verdict


def _parse(path: Path, doc_id: str, quality: QualitySettings) -> _Parsed:
    with path.open("rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:  # the header may sit anywhere in the first 1024 bytes
        advice = "Check that the right file was saved under this name and replace it with the real PDF."
        return _unusable("not_a_pdf", path, "not a PDF (no %PDF header)", advice)
    complete = _has_eof_marker(path)

    pymupdf.TOOLS.reset_mupdf_warnings()
    try:
        pdf = pymupdf.open(path, filetype="pdf")
    except RuntimeError as exc:  # FileDataError and friends
        if not complete:
            what = f"the file is cut short (no %%EOF) and cannot be opened ({exc})"
            return _unusable("truncated", path, what, "Download or copy it again.")
        what = f"PyMuPDF cannot open it as a PDF ({exc})"
        return _unusable("not_a_pdf", path, what, "Replace it with an intact copy.")
    try:
        return _parse_open(pdf, path, doc_id, complete, quality)
    finally:
        pdf.close()


def _parse_open(
    pdf: pymupdf.Document, path: Path, doc_id: str, complete: bool, quality: QualitySettings
) -> _Parsed:
    # MuPDF has already tried the empty password, so a file with only an owner password gets past.
    if pdf.needs_pass:
        advice = "Remove the password (e.g. qpdf --decrypt --password=... in.pdf out.pdf); re-add the file."
        return _unusable("encrypted", path, "the PDF needs a password to open", advice)
    if pdf.page_count == 0:
        if not complete:
            what = "the file is cut short (no %%EOF) and no pages could be recovered"
            return _unusable("truncated", path, what, "Download or copy it again.")
        if pdf.is_repaired:
            what = "the PDF is damaged and no pages could be recovered"
            return _unusable("corrupted", path, what, "Replace it with an intact copy.")
        return _unusable("zero_pages", path, "the PDF has no pages", "Replace it with the full document.")

    page_texts: list[str] = []
    candidates: list[_Heading] = []
    textless: list[int] = []  # 1-based page numbers
    sparse_images: list[int] = []  # pages holding images and little text
    failed: list[str] = []
    title = ""
    for index in range(pdf.page_count):
        try:
            page = pdf.load_page(index)
            # One text extraction per page; page 1's also serves the title's font-size lookup.
            textpage = page.get_textpage(flags=_TEXT_FLAGS)
            text = _page_text(page, textpage, index, candidates)
            if index == 0:
                title = _metadata_title(pdf.metadata, text) or _largest_font_title(page, textpage)
            # Images are looked up only on pages with little text: a scan, or a figure page.
            if visible_chars(text) < quality.sparse_page_chars and page.get_images():
                sparse_images.append(index + 1)
        except (RuntimeError, pymupdf.mupdf.FzErrorBase) as exc:  # one bad page must not lose the rest
            failed.append(f"page {index + 1}: {exc}")
            page_texts.append("")
            continue
        page_texts.append(text)
        if len(text) <= _BLANK_MAX_CHARS and _BLANK_PAGE.fullmatch(text):
            textless.append(index + 1)

    damage = failed + [line for line in pymupdf.TOOLS.mupdf_warnings().splitlines() if _DAMAGE_WARNING.search(line)]
    if len(failed) == len(page_texts):
        what = f"no page could be read ({failed[0]})"
        return _unusable("corrupted", path, what, "Replace it with an intact copy.")
    if len(textless) + len(failed) == len(page_texts):
        if damage:
            what = f"no text could be recovered from the damaged file ({'; '.join(damage[:2])})"
            return _unusable("corrupted", path, what, "Replace it with an intact copy.")
        scan = any(number in sparse_images for number in textless)
        what = f"no page has any text ({'only images: a scan' if scan else 'no text layer'})"
        return _unusable("scanned", path, what, "Run OCR (e.g. ocrmypdf) first, then re-add the file.")

    verdict = assess_text(page_texts, sparse_images, quality)
    if verdict.verdict == UNUSABLE:
        return _text_unusable(path, verdict, damage)
    for number in verdict.garbled_pages:  # dropped: no chunk, no summary, no model sees them
        page_texts[number - 1] = ""
    candidates = [heading for heading in candidates if heading.page + 1 not in verdict.garbled_pages]

    problems = _warnings(path, len(page_texts), complete, damage, textless, sparse_images)
    problems += _quality_warnings(path, verdict)
    document = ParsedDocument(doc_id=doc_id, file=str(path), page_texts=page_texts, title=title)
    _add_structure(document, candidates)
    return document, problems, verdict


def _text_unusable(path: Path, verdict: TextVerdict, damage: list[str]) -> _Parsed:
    """The problem of a file whose text layer failed the quality gate."""
    what = f"the text layer is not usable: {verdict.reason}"
    if verdict.kind == "too_little_text" and damage:
        what += f"; the file is damaged ({'; '.join(damage[:2])})"
        return _unusable("corrupted", path, what, "Replace it with an intact copy.", verdict)
    if verdict.kind == "too_little_text":
        advice = "If the pages are scans, run OCR (e.g. ocrmypdf --force-ocr) and re-add the file."
    else:
        advice = _OCR_ADVICE
    return _unusable(verdict.kind, path, what, advice, verdict)


def _quality_warnings(path: Path, verdict: TextVerdict) -> list[ParseProblem]:
    """Warnings of a degraded document: pages dropped as garbled, text that reads like poor OCR."""
    problems = []
    if verdict.garbled_pages:
        first = verdict.garbled_pages[0]
        what = (
            f"{len(verdict.garbled_pages)} of {verdict.pages} pages are garbled and were left out: pages "
            f"{_page_list(verdict.garbled_pages)} (page {first}: {verdict.page_reasons.get(first, 'garbled')})"
        )
        advice = "Run OCR over those pages (e.g. ocrmypdf --force-ocr) and re-add the file to get their text."
        problems.append(_problem("garbled_pages", path, what, advice, "warning"))
    if verdict.poor_pages:
        what = (
            f"the text reads like poor OCR: {verdict.word_share:.0%} of its words are real {verdict.language} "
            f"words (real papers: 90% or more), weakest on pages {_page_list(verdict.poor_pages)}; it is kept"
        )
        advice = "Re-run OCR (e.g. ocrmypdf --redo-ocr) for better text."
        problems.append(_problem("poor_text", path, what, advice, "warning"))
    return problems


def _warnings(
    path: Path, page_count: int, complete: bool, damage: list[str], textless: list[int], image_pages: list[int]
) -> list[ParseProblem]:
    """The caveats of a document that is kept."""
    problems = []
    if damage:
        what = f"damaged content ({'; '.join(damage[:4])}); the text recovered may be incomplete"
        advice = "Replace the file with an intact copy for the full text."
        problems.append(_problem("corrupted", path, what, advice, "warning"))
    if not complete:
        what = f"the file seems cut short (no %%EOF); {page_count} pages were read but text may be missing"
        problems.append(_problem("truncated", path, what, "Download or copy it again.", "warning"))
    if textless:
        what = f"{len(textless)} of {page_count} pages have no text: pages {_page_list(textless)}"
        advice = "Nothing to do if they are meant to be blank."
        image_only = [number for number in textless if number in image_pages]
        if image_only:
            only = _page_list(image_only)
            advice = f"Pages {only} hold only images: run OCR (e.g. ocrmypdf) to get their text."
        problems.append(_problem("blank_pages", path, what, advice, "warning"))
    return problems


def _is_rotated_line(block: tuple) -> bool:
    """A one-line block taller than wide: only rotated text is shaped like that."""
    text = block[4].strip()
    return "\n" not in text and len(text) >= 3 and block[3] - block[1] > 2 * (block[2] - block[0])


def _page_text(page: pymupdf.Page, textpage: pymupdf.TextPage, index: int, candidates: list[_Heading]) -> str:
    """The page's cleaned text in reading order; heading candidates are appended to ``candidates``."""
    blocks, rotated = [], []
    for block in textpage.extractBLOCKS():
        if block[6] == 0 and block[4] and not block[4].isspace():  # text blocks with visible text
            (rotated if _is_rotated_line(block) else blocks).append(block)
    rect = page.rect
    pieces: list[str] = []
    length = 0
    # Rotated lines (arXiv's side stamp, axis labels) go last, out of the way of the paragraphs.
    for block in _reading_order(blocks, (rect.x0 + rect.x1) / 2) + rotated:
        text = clean_page_text(block[4].strip())
        if pieces:
            # A word hyphenated across blocks (bottom of the left column, top of the right one).
            previous = pieces[-1]
            joined = None
            if previous[-1] in "-\u2010\u00ad":
                joined = _hyphen_join(previous[-_CONTEXT - 1 : -1], previous[-1], text[:_CONTEXT])
            if joined is None:
                pieces.append("\n")
                length += 1
            else:
                pieces[-1] = previous[:-1] + joined
                length += len(joined) - 1
        heading = _block_heading(text)
        if heading:
            scheme, key, name, shown, size = heading
            candidates.append(_Heading(shown, scheme, key, name, index, length, length + size))
        pieces.append(text)
        length += len(text)
    return "".join(pieces)


def _add_structure(document: ParsedDocument, candidates: list[_Heading]) -> None:
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
