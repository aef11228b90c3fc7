"""Boilerplate in a paper's body, recognised from its text: what no method should read or quote.

Five kinds, each a span of ``document.text`` inside the body:

- ``acknowledgements``: sentences that thank someone, an Acknowledgements section, and an Author
  Contributions statement (who did what: credit, as thanks are);
- ``funding``: sentences that name a grant, award or funder ("supported in part by NSF grant ...");
- ``affiliations``: the front matter between the title and the abstract (authors, institutions,
  emails) and any short line holding an email address;
- ``copyright``: copyright, licence and publication stamps (short lines: "© 2020 ACL",
  "Licensed under CC BY 4.0", "Proceedings of ..., pages 84-91", "arXiv:2004.07180v4 [cs.CL]", a DOI,
  a venue's running header: "Published as a conference paper at ICLR 2017");
- ``references``: reference-list entries left in the body (two or more entries close together).

Nothing here looks at file names. The spans stay stored with the parsed document (marked by kind);
the chunker leaves them out, so no method's retrieval, prompt or quotation sees them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from insight_assets.core.startup.lazy import lazy_regex
from insight_assets.core.text import split_sentences

from .sections import section_spans

KINDS = ("acknowledgements", "funding", "affiliations", "copyright", "references")

# The front matter is only looked for this close to the start, and only this long.
_FRONT_MATTER_MAX_CHARS = 2500
_SHORT_LINE_CHARS = 180
# An Acknowledgements section longer than this probably runs into a heading the parser missed:
# only its thanking and funding sentences are taken.
_SECTION_MAX_CHARS = 1500

# "thanks to" is mostly causal ("thanks to its deferred execution"): only with "special",
# "many" or "also" is it thanking someone.
_THANKS = lazy_regex(
    r"\b(?:thank|thanks(?!\s+to\b|:)|thankful|grateful|gratitude|gratefully acknowledge"
    r"|(?:special|many|sincere) thanks|thanks also to"
    r"|acknowledges? (?:the |our |their )?(?:support|funding|financial|help|assistance|generous|useful|helpful))\b"
    r"|^acknowledge?ments?\b",
    re.IGNORECASE,
)
_FUNDING = lazy_regex(
    r"\b(?:supported|funded|sponsored|financed)\b[^.]{0,160}?"
    r"\b(?:grants?|awards?|foundation|fellowships?|council|agency|NSF|NIH|DARPA|IARPA|ERC|EPSRC|DFG|NSERC"
    r"|Horizon 2020|program(?:me)?|contracts?|funds?|scholarships?)\b"
    r"|\bgrant (?:no\.?|number|agreement|#)",
    re.IGNORECASE,
)
_EMAIL = lazy_regex(r"[\w.+{},-]+@[\w-]+(?:\.[\w-]+)+")
_COPYRIGHT = lazy_regex(
    r"©|c⃝|\(c\) ?(?:19|20)\d\d|\bcopyright\b|all rights reserved|\blicen[cs]ed under\b|creative commons"
    r"|\bCC[- ]BY\b|permission to make digital or hard copies|^\s*proceedings of\b.*\bpages? \d"
    r"|^\s*proceedings of the\b.*\b(?:conference|meeting|symposium|workshop)\b"
    r"|^\s*arxiv:\d{4}\.\d{4,5}|^\s*(?:https?://(?:dx\.)?doi\.org/|doi:?\s*10\.\d{4,})"
    r"|^\s*(?:published|under review) as an? (?:conference|workshop|journal) paper\b",
    re.IGNORECASE,
)
# A DOI inside a longer line is a citation of data or code, not a stamp, unless the line is short.
_DOI = lazy_regex(r"\bdoi(?:\.org/|:)\s*10\.\d{4,}", re.IGNORECASE)
_DOI_LINE_CHARS = 60
# A copyright sign this far into a line follows the page's last words: the span starts at the sign.
_SIGN = lazy_regex(r"©|c⃝")
_SIGN_INSIDE_CHARS = 40
_CONTRIBUTIONS_HEADING = lazy_regex(
    r"^[ \t]*(?:\d[\d.]*\s+)?(?:authors?['’]?s?\s+contributions?|contributions of the authors"
    r"|credit authorship contribution statement)\b[ \t]*[:.]?",
    re.IGNORECASE | re.MULTILINE,
)
_ABSTRACT_HEADING = lazy_regex(r"^\s*abstract\b[\s.:—-]*", re.IGNORECASE | re.MULTILINE)
_YEAR = lazy_regex(r"\b(?:19[5-9]\d|20[0-4]\d)[a-z]?\b")
_VENUE = lazy_regex(
    r"\b(?:In Proceedings|Proceedings of|arXiv|Journal|Conference|Transactions|pp\.|vol\.|Press|Workshop)\b"
)
_ENTRY_START = lazy_regex(
    r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.)\s+\S|^[A-Z][\w'’-]+,\s(?:[A-Z]\.\s?){1,3}(?:,|and\b|&)"
)
_ENTRY_GAP_LINES = 3


@dataclass(frozen=True)
class BoilerplateSpan:
    kind: str
    char_start: int
    char_end: int


def find_boilerplate(
    text: str, body_end: int, *, title: str = "", sections: Sequence[str] = ()
) -> list[BoilerplateSpan]:
    """The boilerplate spans of ``text[:body_end]``, sorted and not overlapping (where two kinds
    overlap, the earlier span is cut short)."""
    body = text[:body_end]
    found = [
        *_front_matter(body, title),
        *_short_lines(body),
        *_sentences(body),
        *_acknowledgement_sections(body, sections),
        *_contribution_statements(body, sections),
        *_reference_runs(body),
    ]
    return _disjoint(found)


def content_spans(body_length: int, boilerplate: Sequence[BoilerplateSpan]) -> list[tuple[int, int]]:
    """The spans of the body between its boilerplate spans (which must be sorted and disjoint)."""
    spans, position = [], 0
    for span in boilerplate:
        if span.char_start > position:
            spans.append((position, min(span.char_start, body_length)))
        position = max(position, span.char_end)
    if position < body_length:
        spans.append((position, body_length))
    return [(start, end) for start, end in spans if body_length and end > start]


def _lines(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for line in text.splitlines(keepends=True):
        yield start, start + len(line.rstrip("\n"))
        start += len(line)


def _front_matter(body: str, title: str) -> list[BoilerplateSpan]:
    """Authors, affiliations and emails: from the line after the title to the Abstract heading."""
    heading = _ABSTRACT_HEADING.search(body, 0, _FRONT_MATTER_MAX_CHARS + len(title) + 200)
    if heading is None:
        return []
    words = title.split()
    shown = re.search(r"\s+".join(map(re.escape, words)), body[: heading.start()]) if words else None
    if shown is None:
        return []
    start = body.find("\n", shown.end())
    if start < 0 or heading.start() - start > _FRONT_MATTER_MAX_CHARS or heading.start() <= start + 1:
        return []
    end = start + 1 + len(body[start + 1 : heading.start()].rstrip())
    return [BoilerplateSpan("affiliations", start + 1, end)]


def _short_lines(body: str) -> list[BoilerplateSpan]:
    spans = []
    for start, end in _lines(body):
        line = body[start:end]
        if not line.strip() or len(line) > _SHORT_LINE_CHARS:
            continue
        if _COPYRIGHT.search(line) or (len(line) <= _DOI_LINE_CHARS and _DOI.search(line)):
            sign = _SIGN.search(line)
            begin = start + sign.start() if sign and sign.start() > _SIGN_INSIDE_CHARS else start
            spans.append(BoilerplateSpan("copyright", begin, end))
        elif _EMAIL.search(line):
            spans.append(BoilerplateSpan("affiliations", start, end))
    return spans


def _sentences(body: str) -> list[BoilerplateSpan]:
    spans = []
    for start, end in split_sentences(body):
        sentence = body[start:end]
        if _FUNDING.search(sentence):
            spans.append(BoilerplateSpan("funding", start, end))
        elif _THANKS.search(sentence):
            spans.append(BoilerplateSpan("acknowledgements", start, end))
    return spans


def _acknowledgement_sections(body: str, sections: Sequence[str]) -> list[BoilerplateSpan]:
    spans = []
    for section in section_spans(body, sections):
        if not (section.name.startswith("acknowledg") or section.name in ("funding", "funding statement")):
            continue
        if section.end - section.start <= _SECTION_MAX_CHARS:
            spans.append(BoilerplateSpan("acknowledgements", section.start, section.end))
        else:  # only the heading itself; the sentences rule takes the thanking sentences
            spans.append(BoilerplateSpan("acknowledgements", section.start, section.body_start))
    return spans


def _contribution_statements(body: str, sections: Sequence[str]) -> list[BoilerplateSpan]:
    """Author Contributions statements, from their heading (a section, or a line opening with it)
    to the next section, at most ``_SECTION_MAX_CHARS`` long."""
    starts = [section.start for section in section_spans(body, sections)]
    spans = []
    for match in _CONTRIBUTIONS_HEADING.finditer(body):
        end = min([len(body), match.start() + _SECTION_MAX_CHARS, *(s for s in starts if s > match.end())])
        spans.append(BoilerplateSpan("acknowledgements", match.start(), end))
    return spans


def _reference_runs(body: str) -> list[BoilerplateSpan]:
    """Runs of reference entries: entry starts (a number or "Surname, I.") with a year or a venue,
    at most a few lines apart, two or more in a run; the last entry runs to its closing period."""
    lines = list(_lines(body))
    spans: list[BoilerplateSpan] = []
    first = last = None  # indices into ``lines`` of the run's first and last entry lines
    entries = 0
    for index, (start, end) in enumerate(lines):
        line = body[start:end]
        starts_entry = bool(_ENTRY_START.search(line)) and bool(_YEAR.search(line) or _VENUE.search(line))
        if starts_entry or (first is not None and _YEAR.search(line) and _VENUE.search(line)):
            first = index if first is None else first
            last, entries = index, entries + starts_entry
        elif first is not None and index - last > _ENTRY_GAP_LINES:
            spans.extend(_closed_run(body, lines, first, last, entries))
            first = last = None
            entries = 0
    if first is not None:
        spans.extend(_closed_run(body, lines, first, last, entries))
    return spans


def _closed_run(
    body: str, lines: list[tuple[int, int]], first: int, last: int, entries: int
) -> list[BoilerplateSpan]:
    if entries < 2:
        return []
    for index in range(last, min(last + _ENTRY_GAP_LINES, len(lines) - 1) + 1):
        if body[lines[index][0] : lines[index][1]].rstrip().endswith("."):
            last = index
            break
    return [BoilerplateSpan("references", lines[first][0], lines[last][1])]


def _disjoint(spans: list[BoilerplateSpan]) -> list[BoilerplateSpan]:
    result: list[BoilerplateSpan] = []
    for span in sorted(spans, key=lambda s: (s.char_start, -s.char_end)):
        if result and span.char_start < result[-1].char_end:
            if span.char_end <= result[-1].char_end:
                continue  # inside the one before
            span = BoilerplateSpan(span.kind, result[-1].char_end, span.char_end)
        if span.char_end > span.char_start:
            result.append(span)
    return result
