"""The text-quality gate: verdicts on page texts (``assess_text``) and on PDFs made for each verdict.

The PDFs come from ``pdf_factory``: real English from the demo paper, drawn through a broken font map,
as OCR noise over scanned pages, through a damaged stream, or as scans with only a stamp. That no
real paper of the shared corpus is rejected or flagged is checked in ``test_pdf.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from insight_assets.core.ingestion.chunking import PROFILES, chunk_document
from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets.core.ingestion.text_quality import (
    DEGRADED,
    UNUSABLE,
    USABLE,
    QualitySettings,
    assess_text,
)
from insight_assets_tests import pdf_factory as make

DEFAULTS = QualitySettings()
CHINESE = (
    "科学文献的表示是推荐和检索系统的核心。本文提出一种利用引用关系学习文档表示的方法，"
    "相互引用的论文应当具有相近的表示，而没有关系的论文应当相距较远。我们在七个任务上评估了该方法。"
)
NUMBERS_TABLE = "\n".join(
    " ".join(f"{(row * 7 + column * 13) % 100 / 100:.2f}" for column in range(12)) for row in range(40)
)


def english(count: int) -> list[str]:
    return make.english_pages(count)


# --------------------------------------------------------------------------------------------------
# Verdicts on page texts


def test_english_pages_are_usable() -> None:
    verdict = assess_text(english(6), [], DEFAULTS)
    assert verdict.verdict == USABLE and verdict.language == "en"
    assert verdict.word_share > 0.95 and verdict.junk_share < 0.01
    assert not verdict.garbled_pages and not verdict.poor_pages


@pytest.mark.parametrize(
    ("pages", "language"),
    [([make.FRENCH] * 4, "fr"), ([CHINESE * 20] * 3, "en")],
    ids=["french", "chinese"],
)
def test_papers_in_other_languages_are_not_rejected(pages: list[str], language: str) -> None:
    # French words are French words; Chinese is written without spaces, so no word list judges it.
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == USABLE, verdict
    assert verdict.language == language


def test_a_broken_font_map_is_garbled() -> None:
    pages = ["".join(make.caesar(ch) for ch in page) for page in english(6)]
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "garbled"
    assert "6 of 6 pages with text are garbled" in verdict.reason
    assert verdict.word_share < DEFAULTS.garbled_word_share


def test_control_characters_and_unmapped_glyphs_are_garbled() -> None:
    pages = ["".join(make.symbols(ch) for ch in page) for page in english(4)]
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "garbled"
    assert "control characters, unmapped glyphs or symbols" in verdict.reason
    assert verdict.junk_share > 0.5


def test_symbols_and_digits_without_words_are_garbled() -> None:
    verdict = assess_text(["#1 %2 &3 *4 (5) 6=7 8+9 0/1 @2 $3 ^4 ~5\n" * 20], [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "garbled"
    assert "not text" in verdict.reason


def test_words_run_together_are_garbled() -> None:
    verdict = assess_text([page.replace(" ", "") for page in english(3)], [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "garbled"
    assert "run together" in verdict.reason


def test_a_few_garbled_pages_among_good_ones_are_named_for_dropping() -> None:
    pages = english(8)
    pages[2] = "".join(make.caesar(ch) for ch in pages[2])
    pages[6] = "".join(make.symbols(ch) for ch in pages[6])
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == DEGRADED
    assert verdict.garbled_pages == [3, 7]
    assert "real words" in verdict.page_reasons[3] and "control characters" in verdict.page_reasons[7]


def test_half_the_pages_garbled_makes_the_document_unusable() -> None:
    pages = english(4)
    pages[1], pages[3] = ("".join(make.caesar(ch) for ch in page) for page in (pages[1], pages[3]))
    assert assess_text(pages, [], DEFAULTS).verdict == UNUSABLE


def test_poor_ocr_is_kept_with_the_weak_pages_named() -> None:
    pages = [make.ocr_noise(page, 0.5, seed=number) for number, page in enumerate(english(5))]
    pages[2] = make.ocr_noise(english(5)[2], 0.05)  # one page read well
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == DEGRADED and not verdict.garbled_pages
    assert verdict.poor_pages == [1, 2, 4, 5]
    assert DEFAULTS.garbled_word_share < verdict.word_share < DEFAULTS.poor_word_share


def test_a_few_poorly_read_pages_in_a_good_paper_are_not_flagged() -> None:
    # Real papers have pages as weak as this (reference lists: names, venues, URLs), so poor OCR is
    # judged over the whole document, not page by page.
    pages = english(6) + [make.ocr_noise(english(1)[0], 0.5)]
    assert assess_text(pages, [], DEFAULTS).verdict == USABLE


def test_light_ocr_noise_is_not_flagged() -> None:
    assert assess_text([make.ocr_noise(page, 0.1) for page in english(4)], [], DEFAULTS).verdict == USABLE


def test_random_character_ocr_is_garbled() -> None:
    verdict = assess_text([make.random_characters(page) for page in english(3)], [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "garbled"


def test_tables_of_numbers_are_not_garbled() -> None:
    pages = english(3) + [NUMBERS_TABLE]
    verdict = assess_text(pages, [], DEFAULTS)
    assert verdict.verdict == USABLE and not verdict.garbled_pages


@pytest.mark.parametrize("text", ["", "Introduction", "Results\n\n12"], ids=["empty", "one-word", "heading"])
def test_almost_no_text_is_unusable(text: str) -> None:
    verdict = assess_text([text], [], DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "too_little_text"
    assert f"only {verdict.chars} characters" in verdict.reason


def test_image_pages_whose_only_text_is_a_stamp_are_a_scan() -> None:
    pages = ["Downloaded from https://archive.example.org on 12 March 2021"] * 10
    verdict = assess_text(pages, list(range(1, 11)), DEFAULTS)
    assert verdict.verdict == UNUSABLE and verdict.kind == "scanned"
    # The same text without images (slides, say) is text, if there is enough of it.
    assert assess_text(pages, [], DEFAULTS).verdict == USABLE


def test_thresholds_are_configuration() -> None:
    pages = [make.ocr_noise(page, 0.5) for page in english(3)]
    assert assess_text(pages, [], DEFAULTS).verdict == DEGRADED
    assert assess_text(pages, [], QualitySettings(poor_word_share=0.6)).verdict == USABLE
    assert assess_text(["Introduction"], [], QualitySettings(min_document_chars=5)).verdict == USABLE


def test_settings_are_validated_and_keyed() -> None:
    with pytest.raises(ValueError, match="poor_word_share\n  Input should be less than or equal to 1"):
        QualitySettings(poor_word_share=1.5)
    with pytest.raises(ValueError, match="min_document_chars\n  Input should be greater than or equal to 0"):
        QualitySettings(min_document_chars=-1)
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        QualitySettings(poor_word_shar=0.5)
    assert QualitySettings().key() == DEFAULTS.key() != QualitySettings(poor_word_share=0.8).key()


# --------------------------------------------------------------------------------------------------
# Generated PDFs, one per verdict


def problems(path: Path) -> list[tuple[str, str]]:
    return [(problem.kind, problem.severity) for problem in parse_pdf(path).problems]


def test_pdf_through_a_broken_font_map_is_an_error(tmp_path: Path) -> None:
    path = make.write_pdf(tmp_path / "cipher.pdf", english(8), remap=make.caesar)
    result = parse_pdf(path)
    assert result.document is None and result.quality.verdict == UNUSABLE
    assert problems(path) == [("garbled", "error")]
    assert "cipher.pdf" in result.problems[0].message and "OCR" in result.problems[0].message


def test_pdf_with_control_characters_and_symbols_is_an_error(tmp_path: Path) -> None:
    path = make.write_pdf(tmp_path / "soup.pdf", english(8), remap=make.symbols)
    assert problems(path) == [("garbled", "error")]


def test_scan_with_random_character_ocr_is_an_error(tmp_path: Path) -> None:
    pages = [make.random_characters(page) for page in english(5)]
    assert problems(make.write_pdf(tmp_path / "noise.pdf", pages, scanned=True)) == [("garbled", "error")]


def test_scan_with_poor_ocr_is_kept_with_a_warning(tmp_path: Path) -> None:
    pages = [make.ocr_noise(page, 0.4) for page in english(5)]
    result = parse_pdf(make.write_pdf(tmp_path / "poor-ocr.pdf", pages, scanned=True))
    assert result.document is not None
    assert [(p.kind, p.severity) for p in result.problems] == [("poor_text", "warning")]
    assert "pages 1, 2, 3, 4, 5" in result.problems[0].message
    assert "ocrmypdf" in result.problems[0].message


def test_scan_with_good_ocr_is_usable(tmp_path: Path) -> None:
    result = parse_pdf(make.write_pdf(tmp_path / "good-ocr.pdf", english(5), scanned=True))
    assert result.document is not None and not result.problems and result.quality.verdict == USABLE


def test_one_word_pdf_is_an_error(tmp_path: Path) -> None:
    assert problems(make.write_pdf(tmp_path / "one-word.pdf", ["Introduction"])) == [
        ("too_little_text", "error")
    ]


def test_damaged_stream_with_six_characters_is_an_error(tmp_path: Path) -> None:
    path = make.write_damaged_stream(tmp_path / "damaged.pdf", "Result", make.english_text()[:3000])
    result = parse_pdf(path)
    assert result.document is None
    assert problems(path) == [("corrupted", "error")]
    assert "only 6 characters" in result.problems[0].message and "zlib" in result.problems[0].message


def test_scan_with_only_a_stamp_as_text_is_an_error(tmp_path: Path) -> None:
    path = make.write_stamped_scan(tmp_path / "stamped.pdf", 8, "Downloaded from https://archive.example.org")
    result = parse_pdf(path)
    assert problems(path) == [("scanned", "error")]
    assert "8 of 8 pages are images" in result.problems[0].message


def test_garbled_pages_are_dropped_from_a_good_paper(tmp_path: Path) -> None:
    path = make.append_pages(make.DEMO_PAPER, tmp_path / "mixed.pdf", english(2), remap=make.symbols)
    result = parse_pdf(path)
    document = result.document
    assert document is not None and result.quality.verdict == DEGRADED
    assert [(p.kind, p.severity) for p in result.problems] == [("garbled_pages", "warning")]
    assert "pages 14, 15" in result.problems[0].message
    assert document.page_count == 15 and document.page_texts[13:] == ["", ""]
    assert document.title.startswith("SPECTER")
    chunks = chunk_document(document, PROFILES["passage"])
    assert chunks and max(chunk.page_end for chunk in chunks) <= 13


def test_paper_in_french_is_usable(tmp_path: Path) -> None:
    result = parse_pdf(make.write_pdf(tmp_path / "article.pdf", [make.FRENCH * 2] * 3))
    assert result.document is not None and not result.problems
    assert result.quality.language == "fr"


def test_thresholds_reach_the_parser(tmp_path: Path) -> None:
    path = make.write_pdf(tmp_path / "one-word.pdf", ["Introduction"])
    result = parse_pdf(path, quality=QualitySettings(min_document_chars=5))
    assert result.document is not None and result.quality.verdict == USABLE
