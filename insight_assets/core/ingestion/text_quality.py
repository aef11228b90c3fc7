"""Is a PDF's text layer worth reading? Measures taken from the text itself, and verdicts on them.

A text layer can be there and still be useless: a font without a Unicode map extracts as control
characters or symbol soup, a poor OCR pass as misspelt fragments, a damaged stream as a handful of
characters. File names and metadata say nothing about that; only the text does.

Measures of a page (``PageMeasures``), over its visible (non-space) characters:

- ``chars``: how many there are;
- ``junk_share``: the share no text is written in: control characters, private-use glyphs (unmapped
  fonts), U+FFFD, and pictographs outside the blocks papers use (letters and digits of every script,
  punctuation, maths, arrows, currency, CJK punctuation);
- ``word_share``: of the words of three letters or more in alphabetic scripts, the share that are
  words of the document's language, i.e. in that language's word list from ``wordfreq`` (which
  ships the lists of about 40 languages in its wheel). Scripts written without spaces (CJK, Thai)
  are not judged this way;
- ``mean_token_chars``: characters per whitespace-separated token (text without spaces is one
  long token).

Verdicts (``assess_text``):

- **unusable**: too little text in the whole file; characters but no words (symbols and digits);
  pages that are images with only a stamp or header as text; or garbled pages among at least
  ``max_garbled_page_share`` of the pages that have text;
- **degraded**: a few garbled pages (the caller drops them), or words that read like poor OCR (the
  document's word share under ``poor_word_share``);
- **usable**.

The defaults leave a margin around the test corpus (85 real papers, 1,900 pages, measured by
``python -m bench quality``): documents have a word share of 0.93 to 0.99, no page under 0.64, no
page over 4.5% junk or 9 characters per token (15 on the contents pages of a 619-page manual). Text
through a broken font map scores under 0.25; OCR that misreads 40% of the words about 0.75.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
from pydantic import ConfigDict, Field

from insight_assets.core.startup.lazy import LazyModel, lazy_regex

USABLE, DEGRADED, UNUSABLE = "usable", "degraded", "unusable"

# Everything but these is junk: word characters of any script (\w), whitespace, ASCII punctuation,
# Latin-1 punctuation and symbols (±, °, ×, ÷), modifier letters and combining marks, Greek,
# general punctuation through geometric shapes (dashes, quotes, sub/superscripts, currency,
# letterlike symbols, arrows, maths operators, technical symbols, bullets), the maths blocks after
# the dingbats, and CJK and full-width punctuation.
_JUNK = lazy_regex(
    r"[^\w\s!-/:-@\[-`{-~\u00a0-\u00bf\u00d7\u00f7\u02b0-\u03ff\u2000-\u25ff\u27c0-\u2bff\u3000-\u303f\uff00-\uffef]"
)
# Words, matched on casefolded text. In alphabetic scripts written with spaces (Latin, Greek,
# Cyrillic, Armenian, Hebrew, Arabic, and Latin and Greek extended) a word is three letters or more,
# and these are the words judged against a word list: two-letter words are left out because random
# letter pairs are too often words by chance. Explicit ranges rather than [^\W\d_]: twice as fast.
_ALPHABETIC_WORD = lazy_regex(
    r"[a-z\u00df-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u052f\u0531-\u0587\u05d0-\u05ea\u0620-\u064a\u1e00-\u1fff]{3,}"
)
# Runs of scripts written without spaces between words (Indic, Thai, Lao, Hangul, kana, CJK): text,
# counted as words, but not judged against word lists.
_UNSPACED_RUN = lazy_regex(
    r"[\u0900-\u0dff\u0e00-\u0eff\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+"
)

# Tried in this order when English does not fit; the list is wordfreq's (large lists first).
_LANGUAGES = (
    "en", "de", "fr", "es", "pt", "it", "nl", "ru", "pl", "cs", "sv", "fi", "nb", "ca", "uk",
    "da", "ro", "hu", "tr", "sk", "sl", "lt", "lv", "id", "ms", "vi", "el", "bg", "mk", "sh",
    "is", "fil", "ar", "fa", "he", "ur",
)  # fmt: skip


def _share(default: float, description: str):
    return Field(default=default, ge=0.0, le=1.0, description=description)


class QualitySettings(LazyModel):
    """Thresholds of the text-quality gate, each with its bound: the parsing step's config (the UI's
    launchpad shows these fields). The defaults leave a margin around every real paper of the test
    corpus (see the module docstring); loosen them for unusual collections."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    min_document_chars: int = Field(
        default=200,
        ge=0,
        description="Fewer visible characters in the whole file: unusable (too little text).",
    )
    min_words_per_1000_chars: float = Field(
        default=20.0,
        ge=0.0,
        description="Fewer words per 1,000 characters: symbols and digits, not text (unusable).",
    )
    judge_page_chars: int = Field(
        default=100, ge=0, description="Pages with fewer characters are not judged."
    )
    max_junk_share: float = _share(
        0.25, "A page with a larger share of control characters, unmapped glyphs or stray symbols is garbled."
    )
    min_judged_words: int = Field(
        default=20, ge=0, description="Words a page (or file) needs before its share of real words counts."
    )
    garbled_word_share: float = _share(
        0.45, "A page (or file) with a smaller share of real words (wordfreq's lists) is garbled."
    )
    max_mean_token_chars: float = Field(
        default=25.0,
        ge=0.0,
        description="Longer tokens on average: the words of a page run together (garbled).",
    )
    max_garbled_page_share: float = _share(
        0.5, "This share of the pages with text garbled: the file is unusable (fewer: they are dropped)."
    )
    poor_word_share: float = _share(
        0.85, "A file with a smaller share of real words reads like poor OCR: kept, with a warning."
    )
    sparse_page_chars: int = Field(
        default=200,
        ge=0,
        description="An image page with fewer characters of text counts as a scan with a stamp or header.",
    )
    max_sparse_image_page_share: float = _share(
        0.8, "This share of pages such scans: the file is unusable (run OCR)."
    )

    def key(self) -> str:
        """A short digest of the values: stored with each parse, so other thresholds parse again."""
        return hashlib.sha256(repr(sorted(self.model_dump().items())).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class PageMeasures:
    chars: int
    junk: int
    tokens: int
    words: int  # words of three letters or more in alphabetic scripts, and runs of unspaced scripts
    judged_words: int  # the alphabetic ones: checked against the word list
    known_words: int  # of those, the ones in it

    @property
    def junk_share(self) -> float:
        return self.junk / self.chars if self.chars else 0.0

    @property
    def word_share(self) -> float | None:
        return self.known_words / self.judged_words if self.judged_words else None

    @property
    def mean_token_chars(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0


@dataclass
class TextVerdict:
    """What ``assess_text`` found. ``kind`` and ``reason`` say why a document is unusable;
    ``garbled_pages`` (1-based) are to be dropped from a degraded one; ``poor_pages`` read like poor
    OCR. The measures are the document's, over all its pages."""

    verdict: str
    language: str
    pages: int
    chars: int
    junk_share: float
    word_share: float | None
    words_per_1000_chars: float
    mean_token_chars: float
    kind: str = ""
    reason: str = ""
    garbled_pages: list[int] = field(default_factory=list)
    poor_pages: list[int] = field(default_factory=list)
    page_reasons: dict[int, str] = field(default_factory=dict)

    @property
    def chars_per_page(self) -> float:
        return self.chars / self.pages if self.pages else 0.0


@functools.cache
def word_list(language: str) -> frozenset[str]:
    """The words of ``language`` that wordfreq knows (its large list where there is one), casefolded.

    Read straight from the lists in wordfreq's wheel: importing wordfreq itself costs three times
    as long (it loads its tokenizers), and every process that parses pays it. A list is a gzipped
    msgpack "cBpack": a header, then one bucket of words per frequency step, most frequent first.
    """
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the wordfreq package is missing: reinstall insight_assets")
    data = Path(spec.submodule_search_locations[0]) / "data"
    path = next(
        (
            data / f"{size}_{language}.msgpack.gz"
            for size in ("large", "small")
            if (data / f"{size}_{language}.msgpack.gz").is_file()
        ),
        None,
    )
    if path is None:
        raise ValueError(f"wordfreq has no word list for {language!r}")
    with gzip.open(path) as handle:
        header, *buckets = msgpack.load(handle, raw=False)
    if header.get("format") != "cB":
        raise RuntimeError(f"{path} is not a wordfreq cBpack (header {header})")
    return frozenset(word for bucket in buckets for word in bucket)


@functools.cache
def _known_words(language: str) -> frozenset[str]:
    """The words a page of a ``language`` document is judged against: that language's, and English
    ones too, since a paper in another language often has an English abstract or English terms."""
    return word_list(language) if language == "en" else word_list(language) | word_list("en")


def visible_chars(text: str) -> int:
    """Characters that are not white space (counted without a Python loop: this runs on every page)."""
    return len(text) - sum(text.count(space) for space in " \n\t\r\xa0")


def page_words(text: str) -> tuple[list[str], int]:
    """The page's words judged against word lists (casefolded, as wordfreq's lists are), and how
    many runs of unspaced scripts it has besides."""
    folded = text.casefold()
    return _ALPHABETIC_WORD.findall(folded), len(_UNSPACED_RUN.findall(folded))


def measure_page(text: str, judged: Sequence[str], unspaced_runs: int, known: frozenset[str]) -> PageMeasures:
    """The measures of one page from its ``page_words``; ``known`` is the word list."""
    return PageMeasures(
        chars=visible_chars(text),
        junk=len(_JUNK.findall(text)),
        tokens=len(text.split()),
        words=len(judged) + unspaced_runs,
        judged_words=len(judged),
        known_words=sum(map(known.__contains__, judged)),
    )


def document_language(words: Sequence[str], good_share: float) -> str:
    """The language whose word list holds most of ``words``; the first in ``_LANGUAGES`` order that
    holds at least ``good_share`` of them, so most papers read only the English list."""
    best, best_share = "en", 0.0
    for language in _LANGUAGES if words else ():
        share = sum(map(word_list(language).__contains__, words)) / len(words)
        if share > best_share:
            best, best_share = language, share
        if best_share >= good_share:
            break
    return best


def assess_text(
    page_texts: Sequence[str], sparse_image_pages: Sequence[int], settings: QualitySettings
) -> TextVerdict:
    """Judge a document's pages. ``sparse_image_pages`` are the 1-based pages that hold images and
    fewer than ``settings.sparse_page_chars`` visible characters (the parser knows the images)."""
    words = [page_words(text) for text in page_texts]
    measures = [
        measure_page(text, *page, _known_words("en")) for text, page in zip(page_texts, words, strict=True)
    ]
    language = "en"
    known_words, judged_count = (
        sum(page.known_words for page in measures),
        sum(page.judged_words for page in measures),
    )
    if known_words < settings.poor_word_share * judged_count:  # not English, or not words at all
        language = document_language(
            [word for judged, _ in words for word in judged], settings.poor_word_share
        )
        if language != "en":
            known = _known_words(language)
            measures = [
                measure_page(text, *page, known) for text, page in zip(page_texts, words, strict=True)
            ]

    page_reasons = {
        number: reason
        for number, page in enumerate(measures, start=1)
        if (reason := _garbled_reason(page, settings))
    }
    garbled = sorted(page_reasons)
    judged_pages = sum(1 for page in measures if page.chars >= settings.judge_page_chars)
    kept = [page for number, page in enumerate(measures, start=1) if number not in page_reasons]
    kept_chars = sum(page.chars for page in kept)
    kept_judged_words = sum(page.judged_words for page in kept)
    kept_share = sum(page.known_words for page in kept) / kept_judged_words if kept_judged_words else None
    verdict = _measured(language, measures)
    verdict.page_reasons = page_reasons
    pages = len(page_texts)

    if verdict.chars < settings.min_document_chars:
        return _unusable(
            verdict, "too_little_text", f"only {verdict.chars} characters of text in {_pages(pages)}"
        )
    if pages and len(sparse_image_pages) >= settings.max_sparse_image_page_share * pages:
        return _unusable(
            verdict,
            "scanned",
            f"{len(sparse_image_pages)} of {_pages(pages)} are images with under {settings.sparse_page_chars} "
            f"characters of text each ({verdict.chars_per_page:.0f} per page on average): a scan whose only "
            "text is a stamp or header",
        )
    if garbled and len(garbled) >= settings.max_garbled_page_share * max(judged_pages, 1):
        first = garbled[0]
        return _unusable(
            verdict,
            "garbled",
            f"{len(garbled)} of {judged_pages} pages with text are garbled (page {first}: {page_reasons[first]})",
        )
    if verdict.words_per_1000_chars < settings.min_words_per_1000_chars:
        return _unusable(
            verdict,
            "garbled",
            f"{verdict.chars} characters but only {verdict.words_per_1000_chars:.0f} words per 1,000 of them: "
            "symbols and digits, not text",
        )
    if (
        kept_share is not None
        and kept_judged_words >= settings.min_judged_words
        and kept_share < settings.garbled_word_share
    ):
        return _unusable(verdict, "garbled", f"only {kept_share:.0%} of its words are words of any language")
    if kept_chars < settings.min_document_chars:
        return _unusable(
            verdict, "too_little_text", f"only {kept_chars} characters of readable text in {_pages(pages)}"
        )

    verdict.garbled_pages = garbled
    if (
        kept_share is not None
        and kept_judged_words >= settings.min_judged_words
        and kept_share < settings.poor_word_share
    ):
        verdict.poor_pages = [
            number
            for number, page in enumerate(measures, start=1)
            if number not in page_reasons
            and page.judged_words >= settings.min_judged_words
            and (page.word_share or 0.0) < settings.poor_word_share
        ] or [number for number, page in enumerate(measures, start=1) if number not in page_reasons]
    verdict.verdict = DEGRADED if verdict.garbled_pages or verdict.poor_pages else USABLE
    return verdict


def _garbled_reason(page: PageMeasures, settings: QualitySettings) -> str:
    """Why a page's text is garbled, or "" when it is not (or too short to judge)."""
    if page.chars < settings.judge_page_chars:
        return ""
    if page.junk_share > settings.max_junk_share:
        return f"{page.junk_share:.0%} of its characters are control characters, unmapped glyphs or symbols"
    # Only text in alphabetic scripts is written with spaces between words (not CJK, Thai...).
    alphabetic = page.judged_words > page.words - page.judged_words
    if alphabetic and page.mean_token_chars > settings.max_mean_token_chars:
        return f"its words run together ({page.mean_token_chars:.0f} characters between spaces)"
    share = page.word_share
    if (
        page.judged_words >= settings.min_judged_words
        and share is not None
        and share < settings.garbled_word_share
    ):
        return f"only {share:.0%} of its words are real words"
    return ""


def _measured(language: str, measures: list[PageMeasures]) -> TextVerdict:
    """A usable verdict carrying the document's measures, over all its pages."""
    chars = sum(page.chars for page in measures)
    judged = sum(page.judged_words for page in measures)
    tokens = sum(page.tokens for page in measures)
    return TextVerdict(
        verdict=USABLE,
        language=language,
        pages=len(measures),
        chars=chars,
        junk_share=sum(page.junk for page in measures) / chars if chars else 0.0,
        word_share=sum(page.known_words for page in measures) / judged if judged else None,
        words_per_1000_chars=1000 * sum(page.words for page in measures) / chars if chars else 0.0,
        mean_token_chars=chars / tokens if tokens else 0.0,
    )


def _unusable(verdict: TextVerdict, kind: str, reason: str) -> TextVerdict:
    verdict.verdict, verdict.kind, verdict.reason = UNUSABLE, kind, reason
    return verdict


def _pages(count: int) -> str:
    return f"{count} page{'s' if count != 1 else ''}"
