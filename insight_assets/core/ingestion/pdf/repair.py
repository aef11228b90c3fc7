"""Text repair of extracted PDF text: ligature characters, and end-of-line hyphenation undone
without breaking real compounds ("self-attention")."""

from __future__ import annotations

import re

from insight_assets.core.startup.lazy import lazy_regex

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
_LINE_END_HYPHEN = lazy_regex(r"[-\u2010\u00ad][ \t]*\n[ \t]*(?=[^\W\d_])")
HYPHEN_CONTEXT = 64  # characters either side of a line-end hyphen that decide how to join
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


def hyphen_join(before: str, hyphen: str, after: str) -> str | None:
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
        joined = hyphen_join(
            text[max(0, start - HYPHEN_CONTEXT) : start], match[0][0], text[end : end + HYPHEN_CONTEXT]
        )
        return match[0] if joined is None else joined

    return _LINE_END_HYPHEN.sub(replace, text)


def clean_page_text(text: str) -> str:
    """Ligatures repaired, end-of-line hyphenation undone."""
    return join_hyphenated_lines(repair_ligatures(text))
