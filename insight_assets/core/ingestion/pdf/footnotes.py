"""Footnotes: their markers out of the words, their text out of the sentences.

PyMuPDF's plain text glues a superscript footnote marker to its neighbours: "S2ORC,7 the" in the
body, and "7pronounced 'stork'" where the footnote itself starts. Left so, a chunk holds a token
"7pronounced", and a footnote at the bottom of the left column reads as part of the sentence that
continues at the top of the right one.

A page whose text shows a footnote's glued start is read again with span sizes and flags (the
cheap ``"blocks"`` extraction has neither; the ``"dict"`` one costs about half a page read more, so
only those pages pay it). A *footnote line* opens with a marker span (1-3 digits or a footnote
symbol) set smaller than the text after it or flagged superscript, and that text is smaller than
the page's body text or sits in the page's bottom quarter. Its marker names the footnote. In the
body, a marker span (superscript or smaller than its neighbour) naming one of the page's footnotes
is dropped; one naming none (an affiliation's) is kept, apart from the word after it. Footnote
lines leave their block and come back as the page's footnotes, one string each, markers dropped.
"""

from __future__ import annotations

from collections import Counter

import pymupdf

from insight_assets.core.startup.lazy import lazy_regex

# What triggers the second read: a line that opens with a marker glued to a word ("7pronounced",
# "14we", "∗Equal"); not to a unit or a size ("13B", "16GB", "3x3"), nor "3 Method" (a heading).
GLUED_FOOTNOTE_START = lazy_regex(r"(?m)^(?:\d{1,3}|[*†‡§¶∗]+)(?:[a-z]{2}|[A-Z][a-z])")
_MARKER = lazy_regex(r"\d{1,3}|[*†‡§¶∗]{1,3}")
_MAX_MARKER_CHARS = 4  # a marker span's text, with a space beside it
_MARKER_BEFORE_WORD = lazy_regex(r"(?:\d|[*†‡§¶∗])[^\W\d_]")
# A marker is set at most this share of the size of the text beside it.
_MARKER_SIZE_RATIO = 0.85
# Footnote text is set at most this share of the page's body text size, or sits in the page's
# bottom part (on a page of tables and captions, the most common size is the footnotes' own).
_FOOTNOTE_SIZE_RATIO = 0.95
_FOOTNOTE_AREA = 0.75
_SUPERSCRIPT = pymupdf.TEXT_FONT_SUPERSCRIPT


# A token that opens with 1-3 digits glued to a word ("7pronounced", "13unpaywall"): a footnote's
# number left on its text. A few real tokens look alike ("20Newsgroups", "2D"); the count is a measure.
_DIGIT_GLUED = lazy_regex(r"(?<![\w.])\d{1,3}[A-Za-z][a-z]{2,}")


def digit_glued_tokens(text: str) -> list[str]:
    """The tokens of ``text`` that open with a number glued to a word."""
    return _DIGIT_GLUED.findall(text)


def has_glued_footnote(block_texts: list[str]) -> bool:
    """Whether a page's block texts show a footnote whose marker is glued to its first word."""
    return any(GLUED_FOOTNOTE_START.search(text) for text in block_texts)


def _body_size(blocks: list[dict]) -> float:
    """The page's body text size: the size of the lines' first spans that covers the most
    characters (a line's first span is enough, and the page is read once more only here)."""
    sizes: Counter[float] = Counter()
    for block in blocks:
        for line in block["lines"]:
            first = line["spans"][0]
            sizes[first["size"]] += len(first["text"])
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _is_marker(span: dict, beside: dict | None) -> bool:
    """A span that is a footnote marker: its text is one, and it is superscript or set smaller than
    the span ``beside`` it."""
    if not _MARKER.fullmatch(span["text"].strip()):
        return False
    if span["flags"] & _SUPERSCRIPT:
        return True
    return beside is not None and span["size"] <= _MARKER_SIZE_RATIO * beside["size"]


def _footnote_marker(line: dict, body_size: float, bottom_area: float) -> str | None:
    """The marker of a line that opens a footnote; None for any other line."""
    if len(line["spans"][0]["text"]) > _MAX_MARKER_CHARS:  # most lines: cheaply ruled out
        return None
    spans = [span for span in line["spans"] if span["text"].strip()]
    if len(spans) < 2 or not _is_marker(spans[0], spans[1]):
        return None
    if spans[1]["size"] > _FOOTNOTE_SIZE_RATIO * body_size and line["bbox"][1] < bottom_area:
        return None
    return spans[0]["text"].strip()


def _line_text(line: dict, drop: set[str]) -> str:
    """A line's text without the body markers named in ``drop``; a marker naming no footnote (an
    author's affiliation: "2EleutherAI") is kept, apart from the word after it."""
    spans = line["spans"]
    text = "".join(span["text"] for span in spans)
    # Most lines hold no marker to drop and none glued to a word: skip the span-by-span look.
    if not any(marker in text for marker in drop) and not _MARKER_BEFORE_WORD.search(text):
        return text
    kept = []
    for index, span in enumerate(spans):
        before = spans[index - 1] if index else None
        after = spans[index + 1] if index + 1 < len(spans) else None
        if any(beside and _is_marker(span, beside) for beside in (before, after)):
            if span["text"].strip() in drop:
                continue
            if after and not after["text"][:1].isspace():
                kept.append(span["text"] + " ")
                continue
        kept.append(span["text"])
    return "".join(kept)


def _union(boxes: list[tuple]) -> tuple:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def split_footnotes(textpage: pymupdf.TextPage) -> tuple[list[tuple], list[str]]:
    """The page's text blocks, as ``extractBLOCKS`` tuples, without footnote lines or the markers
    that point at them; and the page's footnotes, in order, without their markers."""
    blocks = [block for block in textpage.extractDICT()["blocks"] if block["type"] == 0]
    body_size = _body_size(blocks)
    page = textpage.rect
    bottom_area = page.y0 + _FOOTNOTE_AREA * (page.y1 - page.y0)
    opening = [
        [_footnote_marker(line, body_size, bottom_area) for line in block["lines"]] for block in blocks
    ]
    markers = {marker for block_markers in opening for marker in block_markers if marker is not None}
    body_blocks: list[tuple] = []
    footnotes: list[list[str]] = []
    for block, block_markers in zip(blocks, opening, strict=True):
        texts, boxes = [], []
        in_footnote = False
        for line, marker in zip(block["lines"], block_markers, strict=True):
            if marker is not None:
                in_footnote = True
                footnotes.append([_line_text(line, set()).lstrip()[len(marker) :].lstrip()])
            elif in_footnote:  # the footnote goes on
                footnotes[-1].append(_line_text(line, set()))
            else:
                texts.append(_line_text(line, markers))
                boxes.append(line["bbox"])
        if texts:
            body_blocks.append((*_union(boxes), "\n".join(texts), block["number"], 0))
    return body_blocks, ["\n".join(lines) for lines in footnotes]
