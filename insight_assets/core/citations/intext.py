"""Which references a passage cites, from its in-text citation markers.

Two styles are read: numbered (``[3]``, ``[2, 5-7]``, ``[Mik13]``), by the label of each reference in
a numbered list; and author-year (``(Mikolov et al., 2013a)``, ``Le and Mikolov (2014)``), by the
reference's first author's surname followed within a few words by its year. Only references with a
label, or with a surname and a year, can be found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from insight_assets.core.startup.lazy import lazy_regex

_NUMERIC_GROUP = lazy_regex(r"\[(\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*)\]")
# Between the surname and the year: "et al., ", " and Mikolov (", " & Lapata, 2008; ".
_AUTHOR_TO_YEAR = r"[^()\[\]]{0,45}?[(,\s;]"


@dataclass(frozen=True)
class CitedReference:
    """What a passage can cite a reference by, and the collection paper it is (if any)."""

    label: str
    first_author: str  # folded: lower-case ASCII letters
    year: int
    cited_doc_id: str | None


def _ascii_lower(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if char.isascii()).lower()


def numeric_labels(passage: str) -> set[str]:
    """The numbers a passage cites in brackets, ranges expanded: "[2, 5-7]" gives 2, 5, 6, 7."""
    labels: set[str] = set()
    for group in _NUMERIC_GROUP.finditer(passage):
        for part in re.split(r"\s*[,;]\s*", group.group(1)):
            bounds = re.split(r"\s*[-–]\s*", part)
            if len(bounds) == 2 and int(bounds[0]) <= int(bounds[1]) <= int(bounds[0]) + 50:
                labels.update(str(number) for number in range(int(bounds[0]), int(bounds[1]) + 1))
            else:
                labels.update(bounds)
    return labels


def cites(passage: str, reference: CitedReference, labels: set[str] | None = None) -> bool:
    """Whether ``passage`` cites ``reference`` (``labels``: ``numeric_labels(passage)``, if known)."""
    if reference.label:
        if reference.label.isdigit():
            return reference.label in (numeric_labels(passage) if labels is None else labels)
        return reference.label in passage
    if not reference.first_author or not reference.year:
        return False
    pattern = rf"\b{re.escape(reference.first_author)}{_AUTHOR_TO_YEAR}{reference.year}[a-z]?\b"
    return re.search(pattern, _ascii_lower(passage).replace("-", "")) is not None


def cited_documents(passage: str, references: Iterable[CitedReference]) -> list[str]:
    """The collection papers ``passage`` cites, in reference order, each once."""
    labels = numeric_labels(passage)
    found = [ref.cited_doc_id for ref in references if ref.cited_doc_id and cites(passage, ref, labels)]
    return list(dict.fromkeys(found))
