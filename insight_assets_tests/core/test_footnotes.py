"""Footnote markers out of the words, footnotes out of the sentences (``core/ingestion/pdf/footnotes.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pymupdf
import pytest

from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets.core.ingestion.pdf.footnotes import digit_glued_tokens
from insight_assets.core.text import split_sentences
from insight_assets_tests.conftest import DEMO_COLLECTION
from insight_assets_tests.pdf_factory import english_text

FOOTNOTE = "we use the cld2 tool from the unpaywall data dump"


def _put(page: pymupdf.Page, text: str, size: float, x: float, y: float) -> float:
    page.insert_text((x, y), text, fontsize=size, fontname="helv")
    return x + pymupdf.get_text_length(text, fontname="helv", fontsize=size)


def write_page_with_a_footnote(path: Path, *, footnote_size: float = 8, marker_size: float = 6) -> Path:
    """A page of 10 pt prose in which one sentence carries footnote marker 14, raised and set in
    ``marker_size``, and the footnote itself at the bottom of the page."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    lines = textwrap.wrap(english_text()[:2400], 95)
    y = 80
    for line in lines[:12]:
        _put(page, line, 10, 72, y)
        y += 14
    x = _put(page, "We detect the language of every paper with a public tool", 10, 72, y)
    x = _put(page, "14", marker_size, x, y - 4)
    _put(page, " and keep the English ones.", 10, x, y)
    for line in lines[12:]:
        y += 14
        _put(page, line, 10, 72, y)
    x = _put(page, "14", marker_size, 72, 720)
    _put(page, FOOTNOTE, footnote_size, x, 724)
    pdf.save(path)
    pdf.close()
    return path


def test_a_footnote_marker_leaves_the_sentence_and_the_footnote_follows_the_page(tmp_path):
    path = write_page_with_a_footnote(tmp_path / "footnote.pdf")
    assert "tool14 and" in pymupdf.open(path)[0].get_text()  # what plain extraction gives
    (text,) = parse_pdf(path).document.page_texts
    assert "with a public tool and keep the English ones." in text
    assert not digit_glued_tokens(text) and "14" not in text
    # The footnote is the page's last sentence, apart from the body's.
    sentences = [text[start:end] for start, end in split_sentences(text)]
    assert sentences[-1] == FOOTNOTE
    assert text.endswith("\n\n" + FOOTNOTE)


def test_a_number_set_like_the_text_is_not_a_footnote(tmp_path):
    path = write_page_with_a_footnote(tmp_path / "plain.pdf", footnote_size=10, marker_size=10)
    (text,) = parse_pdf(path).document.page_texts
    assert "tool14 and" in text and "14we use" in text


def test_the_demo_papers_have_no_digit_glued_tokens_and_keep_their_footnotes():
    texts = {pdf.name: "\n".join(parse_pdf(pdf).document.page_texts) for pdf in DEMO_COLLECTION.glob("*.pdf")}
    glued = {name: digit_glued_tokens(text) for name, text in texts.items()}
    assert sum(map(len, glued.values())) <= 3, glued
    s2orc = texts["2020.acl-main.447_s2orc.pdf"]
    assert "\n\npronounced “stork”" in s2orc and "7pronounced" not in s2orc
    assert "we introduce S2ORC, the Semantic Scholar" in s2orc


@pytest.mark.parametrize("name", ["rwkv.pdf"])
def test_an_affiliation_marker_that_names_no_footnote_is_kept_apart_from_its_word(corpus, name):
    (path,) = corpus.rglob(name)
    text = parse_pdf(path).document.page_texts[0]
    assert "2EleutherAI" not in text and "2 EleutherAI" in text
