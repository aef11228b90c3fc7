"""References matched to the collection's own papers.

A reference cites a collection paper when

1. the paper's title appears in the reference: after folding both to lower-case letters and digits
   (accents, spaces, hyphens and punctuation gone), the title aligns with a stretch of the reference
   with a similarity of at least ``min_title_similarity`` (``title_similarity``);
2. the surname of the first author of the part of the reference that holds the title (an entry that
   is really two references run together has two author lists: ``cited_segment``) appears in the
   head of the paper's first page, where its authors are, unless one of the two is unknown;
3. the year that part names is possible for the paper, within ``year_tolerance`` (a preprint is
   cited a year before its venue): not before the latest year the paper's first page names (a paper
   names no year after its own; the date an arXiv stamp was revised does not count, the identifier's
   year does), and not after the year of a publication line in the head of the first page
   (``Journal ... (2003)``, ``Published as a conference paper at ICLR 2016``, ``© 2014``).

A check that cannot be made (no surname found, no year on either side) does not reject; a check that
disagrees does, and the reference stays unmatched with the reason. A paper never cites itself.

Before any title, a DOI: a reference that names the DOI a paper has in its library entry cites that
paper, whatever its title looks like (similarity 1.0).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from insight_assets.core.library.model import normalized_doi
from insight_assets.core.runtime.stage_settings import Settings
from insight_assets.core.startup.lazy import lazy_regex

from .references import YEAR, Reference, cited_segment, first_author, fold, fold_positions, reference_year

# Words too common in titles to say anything about a match on their own.
_TITLE_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "in",
        "on",
        "with",
        "to",
        "from",
        "by",
        "via",
        "using",
        "towards",
        "toward",
        "is",
        "are",
        "as",
        "at",
        "its",
    ]
)
_ARXIV_ID = lazy_regex(r"\b(\d{2})(0[1-9]|1[0-2])\.\d{4,5}(?:v\d+)?\b")
# An arXiv stamp's revision date ("arXiv:1412.6980v9 [cs.LG] 30 Jan 2017") says when it was revised.
_ARXIV_STAMP_DATE = lazy_regex(r"(arXiv:\S+\s*\[[^\]]*\]\s*\d{1,2}\s+[A-Z][a-z]{2,8}\s+)(?:19|20)\d\d")
# A year in a line that says where and when the paper itself was published.
_PUBLICATION_LINE = lazy_regex(
    r"(?:©|\(c\)|copyright|published|journal|proceedings|transactions|conference)[^\n]{0,80}?"
    r"(?<!\d)((?:19|20)\d\d)(?!\d)",
    re.IGNORECASE,
)
# The head of the first page, where title and authors are: before the abstract, else this many characters.
_HEAD_CHARS = 1500


class MatchSettings(Settings):
    """Thresholds of the citation matcher (the `citations` asset's config)."""

    min_title_similarity: float = Field(
        default=0.9,
        gt=0.0,
        le=1.0,
        description="How closely a paper's title must align with a stretch of a reference (1.0: verbatim, "
        "ignoring case, accents, spaces and punctuation).",
    )
    year_tolerance: int = Field(
        default=1,
        ge=0,
        description="Years a reference's year may stray from the paper's (a preprint cited before its venue).",
    )
    # Folded titles shorter than this ("glove", "bert") would match too many references by chance.
    min_title_chars: int = Field(
        default=12,
        description="Papers whose title has fewer letters and digits are not matched (too many chance hits).",
    )
    min_block_chars: int = Field(
        default=3,
        ge=1,
        description="A block of fewer aligned characters is chance, not a shared stretch of the title.",
    )


DEFAULT_MATCH = MatchSettings()


@dataclass(frozen=True)
class Paper:
    """A collection paper as the matcher sees it: its title and the head of its first page."""

    doc_id: str
    title: str
    first_page: str
    doi: str = ""  # lower-case, from a library; '' when unknown

    @property
    def folded_title(self) -> str:
        return fold(self.title)

    @property
    def head(self) -> str:
        text = self.first_page
        cut = re.search(r"\babstract\b", text, re.IGNORECASE)
        return text[: cut.start() if cut and cut.start() > 0 else _HEAD_CHARS]

    @property
    def latest_named_year(self) -> int:
        """The latest year the first page names (an arXiv identifier's, ``1301.3781``: 2013, included;
        a stamp's revision date not); 0 when it names none."""
        text = _ARXIV_STAMP_DATE.sub(r"\1", self.first_page)
        years = {int(match.group(1)) for match in YEAR.finditer(text)}
        years |= {2000 + int(match.group(1)) for match in _ARXIV_ID.finditer(text)}
        return max(years, default=0)

    @property
    def publication_year(self) -> int:
        """The year of a publication line in the head of the first page; 0 when there is none."""
        years = [int(match.group(1)) for match in _PUBLICATION_LINE.finditer(self.head)]
        return max(years, default=0)


@dataclass(frozen=True)
class Match:
    """The outcome for one reference: the cited paper (None when unmatched), the title similarity of
    the best candidate, and why it was rejected when it was."""

    reference: Reference
    cited_doc_id: str | None
    title_similarity: float
    candidate_doc_id: str | None
    reason: str


def title_similarity(folded_title: str, folded_reference: str, min_block: int = 3) -> float:
    """How well ``folded_title`` aligns with a stretch of ``folded_reference``: 2M / (T + S), where M
    is the number of aligned characters (in blocks of at least ``min_block``), T the title's length
    and S the length of the stretch of the reference they span. 1.0: the title occurs verbatim."""
    return align_title(folded_title, folded_reference, min_block)[0]


def align_title(folded_title: str, folded_reference: str, min_block: int = 3) -> tuple[float, int]:
    """``title_similarity`` and where the aligned stretch starts in ``folded_reference``."""
    if not folded_title or not folded_reference:
        return 0.0, 0
    matcher = difflib.SequenceMatcher(None, folded_title, folded_reference, autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size >= min_block]
    if not blocks:
        return 0.0, 0
    aligned = sum(block.size for block in blocks)
    span = blocks[-1].b + blocks[-1].size - blocks[0].b
    return 2 * aligned / (len(folded_title) + span), blocks[0].b


def _title_words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in _TITLE_STOPWORDS}


def match_references(
    citing_doc_id: str,
    references: Sequence[Reference],
    papers: Sequence[Paper],
    settings: MatchSettings = DEFAULT_MATCH,
) -> list[Match]:
    """One ``Match`` per reference of ``citing_doc_id`` against the collection's ``papers`` (for many
    citing papers, build one ``TitleIndex`` and call its ``match``)."""
    return TitleIndex(papers, settings).match(citing_doc_id, references)


@dataclass(frozen=True)
class _Candidate:
    paper: Paper
    title: str  # folded
    title_words: frozenset[str]
    head: str  # folded
    named_year: int
    publication_year: int


class TitleIndex:
    """A collection's papers prepared once for matching all its references: what each paper's
    checks need, and which papers a reference's words can match at all."""

    def __init__(self, papers: Sequence[Paper], settings: MatchSettings = DEFAULT_MATCH):
        self.settings = settings
        self.candidates = [
            _Candidate(
                paper,
                paper.folded_title,
                frozenset(_title_words(paper.title)),
                fold(paper.head),
                paper.latest_named_year,
                paper.publication_year,
            )
            for paper in papers
            if len(paper.folded_title) >= settings.min_title_chars
        ]
        self._by_word: dict[str, list[int]] = {}
        for position, candidate in enumerate(self.candidates):
            for word in candidate.title_words:
                self._by_word.setdefault(word, []).append(position)
        self._wordless = [i for i, candidate in enumerate(self.candidates) if not candidate.title_words]
        self._by_doi = {paper.doi.lower(): paper for paper in papers if paper.doi}

    def _plausible(self, words: set[str]) -> list[_Candidate]:
        """The papers most of whose title words (60%) the reference holds at all: a cheap filter
        before aligning titles, through the word index rather than every paper."""
        shared = Counter(position for word in words for position in self._by_word.get(word, ()))
        positions = [i for i, n in shared.items() if n >= 0.6 * len(self.candidates[i].title_words)]
        return [self.candidates[i] for i in sorted(positions + self._wordless)]

    def match(self, citing_doc_id: str, references: Sequence[Reference]) -> list[Match]:
        settings = self.settings
        matches = []
        for reference in references:
            by_doi = self._by_doi.get(normalized_doi(reference.text))
            if by_doi is not None and by_doi.doc_id != citing_doc_id:
                matches.append(Match(reference, by_doi.doc_id, 1.0, by_doi.doc_id, ""))
                continue
            folded, positions = fold_positions(reference.text)
            best: tuple[float, Paper, str] | None = None
            for candidate in self._plausible(_title_words(reference.text)):
                if candidate.paper.doc_id == citing_doc_id:
                    continue
                similarity, start = align_title(candidate.title, folded, settings.min_block_chars)
                if similarity < settings.min_title_similarity:
                    continue
                segment = cited_segment(reference.text, positions[start])
                reason = _check(
                    first_author(segment), reference_year(segment), candidate.head, candidate.named_year,
                    candidate.publication_year, settings,
                )  # fmt: skip
                if best is None or (not reason, similarity) > (not best[2], best[0]):
                    best = (similarity, candidate.paper, reason)
            if best is None:
                matches.append(Match(reference, None, 0.0, None, "no collection paper's title"))
            else:
                similarity, paper, reason = best
                matches.append(
                    Match(reference, None if reason else paper.doc_id, similarity, paper.doc_id, reason)
                )
        return matches


def _check(
    author: str, year: int, folded_head: str, named_year: int, publication_year: int, settings: MatchSettings
) -> str:
    """Why a reference by first author ``author`` (folded surname) from ``year`` cannot cite the paper
    with this first-page head and these years ("" if it can); either may be unknown ("", 0)."""
    if author and folded_head and author not in folded_head:
        return f"first author {author!r} is not among the paper's authors"
    tolerance = settings.year_tolerance
    if year and named_year and year < named_year - tolerance:
        return f"year {year} is before {named_year}, a year the paper's first page names"
    if year and publication_year and year > publication_year + tolerance:
        return f"year {year} is after the paper's publication ({publication_year})"
    return ""
