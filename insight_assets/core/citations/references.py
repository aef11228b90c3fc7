"""A paper's references block cut into entries, with each entry's year and first author's surname.

Three layouts are recognised, from the text alone:

- bracketed labels, ``[12] Author. Title. Venue, 2014.`` or ``[Chen and Manning2014] Danqi Chen ...``;
- plain numbers, ``12. Author ...``;
- author-year lists (ACL, ICLR, ICML, JMLR styles), one entry after another, where a new entry starts
  on a line that opens with an author (``Surname, X.``, ``First Surname,``, ``First X. Surname and``)
  right after a line that ends a sentence.

Cutting is best effort: a merged or split entry costs at most that entry's match, because matching
(``matching.py``) looks for a known title anywhere inside an entry.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from insight_assets.core.startup.lazy import lazy_regex

# "[12]", "[Mik13]", "[Chen and Manning2014]", "[Afonso et al.2002]".
_BRACKETED = lazy_regex(r"^\s*\[(\d{1,3}|[^\[\],]{2,60}?\d{2,4}[a-z]?)\]\s*")
_NUMBERED = lazy_regex(r"^\s*(\d{1,3})\.\s+(?=[A-Z\u00C0-\u024F])")
# A line that opens an author-year entry: "Bengio, Y.", "Le, Quoc V.", "Quoc V. Le and", "Yoon Kim.",
# "Mikolov, T., Chen, K.", "Tomas Mikolov, Kai Chen".
_NAME = r"[A-Z\u00C0-\u024F][\w'’´`¨\-\u00C0-\u024F]+"
_AUTHOR_START = lazy_regex(
    rf"^(?:{_NAME},\s+(?:[A-Z]\.|{_NAME})"  # Surname, X.  /  Surname, First
    rf"|(?:{_NAME}\s+)(?:[A-Z]\.?\s+)*{_NAME}(?:,|\s+and\s|\.\s|\s+et\s+al)"  # First [X.] Surname, / and
    rf"|(?:[A-Z](?:[.-]\s?[A-Z])*\.\s*)+{_NAME}(?:,|\s+and\s|\.\s|\s+et\s+al))"  # D. Baker and / J.R. Bellegarda.
)
# An author list anywhere in a stretch of text (not only at its start).
_AUTHOR_SEARCH = lazy_regex(r"(?<![\w'’\-])" + _AUTHOR_START.pattern.removeprefix("^"))
_SENTENCE_END = lazy_regex(r"[.?!)\]]\s*$|(?:19|20)\d\d[a-z]?\s*$")
_PAGE_NUMBER = lazy_regex(r"^\s*\d{1,4}\s*$")
YEAR = lazy_regex(r"(?<![\d.])((?:19|20)\d\d)(?:[a-z])?(?![\d])")
_MIN_ENTRY_CHARS = 25


@dataclass(frozen=True)
class Reference:
    """One entry of a references block: its text (lines joined, end-of-line hyphens repaired), the
    year it names (0 when none), its first author's surname ("" when none was found) and the label
    the text cites it by in a numbered list ("12" for ``[12]`` or ``12.``; "" in author-year lists)."""

    index: int
    text: str
    year: int
    first_author: str
    label: str = ""


def split_references(block: str) -> list[Reference]:
    """The entries of a references block, in order."""
    lines = [line.strip() for line in block.splitlines()]
    lines = [line for line in lines if line and not _PAGE_NUMBER.match(line)]
    if not lines:
        return []
    for pattern in (_BRACKETED, _NUMBERED):
        starts = [i for i, line in enumerate(lines) if pattern.match(line)]
        if _numbered_list(lines, starts, pattern):
            groups = _cut(lines, starts)
            labels = [pattern.match(group).group(1) for group in groups]
            entries = [pattern.sub("", group, count=1) for group in groups]
            return _references(entries, labels)
    starts = [0] + [
        i
        for i in range(1, len(lines))
        if _AUTHOR_START.match(lines[i]) and _SENTENCE_END.search(lines[i - 1])
    ]
    return _references(_cut(lines, starts))


def _numbered_list(lines: list[str], starts: list[int], pattern: re.Pattern) -> bool:
    """Whether the lines ``pattern`` matches open the entries of a list: the first line is one, and
    numeric labels mostly count up by one (a table's "[1]" or "12." scattered in an appendix
    that follows author-year references do not)."""
    if not starts or starts[0] != 0:
        return False
    labels = [pattern.match(lines[i]).group(1) for i in starts]
    if not all(label.isdigit() for label in labels):
        return True
    steps = sum(int(b) == int(a) + 1 for a, b in itertools.pairwise(labels))
    return len(labels) == 1 or steps >= 0.6 * (len(labels) - 1)


def _cut(lines: list[str], starts: list[int]) -> list[str]:
    """The lines between consecutive starts joined into entries (lines before the first start, a
    heading's remains, are dropped)."""
    bounds = sorted(set(starts)) + [len(lines)]
    return [join_lines(lines[begin:end]) for begin, end in itertools.pairwise(bounds)]


def join_lines(lines: list[str]) -> str:
    """Lines joined with spaces; a word hyphenated across a line break is joined back."""
    text = ""
    for line in lines:
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text


def _references(entries: list[str], labels: list[str] | None = None) -> list[Reference]:
    labelled = zip(entries, labels or [""] * len(entries), strict=True)
    kept = [(entry, label) for entry, label in labelled if len(entry) >= _MIN_ENTRY_CHARS]
    return [
        Reference(i, entry, reference_year(entry), first_author(entry), label)
        for i, (entry, label) in enumerate(kept)
    ]


def reference_year(entry: str) -> int:
    """The publication year an entry names: the first plausible year after the author list (in
    author-year styles it follows the names; in numbered styles it closes the entry)."""
    years = [int(match.group(1)) for match in YEAR.finditer(entry)]
    return years[0] if years else 0


def first_author(entry: str) -> str:
    """The first author's surname: before the comma in ``Surname, X.``, else the last word of the
    first name in ``First X. Surname,`` / ``First Surname and``."""
    head = re.split(r",|\s+and\s+|(?<=[A-Za-z][a-z])\.\s+(?=[A-Z\d])|\s+et\s+al", entry, maxsplit=1)[
        0
    ].strip()
    words = [word for word in re.findall(r"[^\W\d_][\w'’´`¨\-]*", head) if len(word.strip(".")) > 1]
    if not words:
        return ""
    comma_style = re.match(rf"^{_NAME},\s+(?:[A-Z]\.|{_NAME})", entry)
    return fold(words[0] if comma_style else words[-1])


def fold(text: str) -> str:
    """Lower-case letters and digits only, accents removed: ``Sen´ecal`` and ``Senécal`` both become
    ``senecal``; spaces, hyphens and punctuation vanish, so line-break hyphenation does not matter."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed.lower() if char.isalnum() and char.isascii())


def fold_positions(text: str) -> tuple[str, list[int]]:
    """``fold(text)`` and, for each of its characters, the index in ``text`` it came from."""
    kept, positions = [], []
    for index, char in enumerate(text):
        for folded in unicodedata.normalize("NFKD", char).lower():
            if folded.isalnum() and folded.isascii():
                kept.append(folded)
                positions.append(index)
    return "".join(kept), positions


def cited_segment(entry: str, position: int) -> str:
    """The part of ``entry`` that cites the title starting at ``position``: from the start of the
    author list in the last sentence before it (year-only sentences skipped) to the end. An entry that
    is really two references run together (a missed cut, a running header between them) so yields the
    second one's authors and year; when that sentence holds no author list (a title matched from its
    middle), the whole entry."""
    # Sentences end at a period after two word characters, not after an initial ("F. Morin").
    bounds = [0] + [match.end() for match in re.finditer(r"(?<=[\w)]{2})\s?\.\s+", entry[:position])]
    sentences = list(zip(bounds, [*bounds[1:], position], strict=True))
    for begin, end in reversed(sentences):
        sentence = entry[begin:end].strip(" .")
        if not sentence or YEAR.fullmatch(sentence.strip("()")):
            continue
        author = _AUTHOR_SEARCH.search(entry, begin, end)
        return entry[author.start() :] if author else entry
    return entry
