"""``insight_assets.core.ingestion.pdf``: outcomes on the shared corpus (bad/ included), the structure of a demo
paper, reading order, and the text-repair helpers.

Corpus tests read ``../shared/corpus`` beside the repository (or ``INSIGHT_ASSETS_CORPUS``) and skip
when it is absent; the demo paper lives in the repository under data/.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from insight_assets.core.ingestion.documents import ParseResult
from insight_assets.core.ingestion.pdf import (
    DEFAULT_QUALITY,
    clean_page_text,
    count_pages,
    join_hyphenated_lines,
    parse_pdf,
    repair_ligatures,
)
from insight_assets.core.ingestion.text_quality import USABLE

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("INSIGHT_ASSETS_CORPUS") or REPO.parent / "shared" / "corpus")
SPECTER = REPO / "data" / "collections" / "scholarly-docs" / "2020.acl-main.207_specter.pdf"
HUGE = "bad/huge-page-count_619-pages_unstructured-DA.pdf"
QUALITY_WARNINGS = {"garbled_pages", "poor_text"}
LIGATURE_CHARS = "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "MANIFEST.tsv").is_file(),
    reason=f"shared PDF corpus not found at {CORPUS} (set INSIGHT_ASSETS_CORPUS to its folder)",
)


@functools.cache
def parsed(path: Path) -> ParseResult:
    """Each file is parsed once per test session."""
    return parse_pdf(path)


@functools.cache
def manifest() -> list[dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def errors(result: ParseResult) -> list[str]:
    return [p.kind for p in result.problems if p.severity == "error"]


def warnings(result: ParseResult) -> set[str]:
    return {p.kind for p in result.problems if p.severity == "warning"}


# --------------------------------------------------------------------------------------------------
# bad/: every broken file gets the outcome its MANIFEST.tsv bad_category calls for


@dataclass(frozen=True)
class Outcome:
    error: str | None  # the one error problem expected, or None: a document comes back
    warnings: frozenset[str] = frozenset()  # exactly these warning kinds


BAD_OUTCOMES = {
    "not-a-pdf": Outcome("not_a_pdf"),
    "encrypted-user-password": Outcome("encrypted"),
    # Encrypted, but the user password is empty: it opens, so it is parsed like any other file.
    "encrypted-owner-password-only": Outcome(None),
    "scanned-no-text-layer": Outcome("scanned"),
    "zero-pages": Outcome("zero_pages"),
    # The first half of a valid file's bytes: no %%EOF and no xref; MuPDF's repair opens it but
    # finds no page, so "truncated" (rather than zero_pages, which is a complete file with no pages).
    "truncated (DERIVED)": Outcome("truncated"),
    "corrupted-flate-stream": Outcome(None, frozenset({"corrupted"})),
    "blank-pages": Outcome(None, frozenset({"blank_pages"})),
    # A valid 619-page manual; its page 182 is empty, which is worth a warning.
    "huge-page-count": Outcome(None, frozenset({"blank_pages"})),
}


@needs_corpus
def test_every_bad_file_is_in_the_manifest_with_a_known_category() -> None:
    listed = {row["path"]: row["bad_category"] for row in manifest() if row["path"].startswith("bad/")}
    on_disk = {f"bad/{path.name}" for path in (CORPUS / "bad").glob("*.pdf")}
    assert on_disk == set(listed)
    assert set(listed.values()) <= set(BAD_OUTCOMES), "a new bad_category needs an expected outcome here"


@needs_corpus
@pytest.mark.parametrize("category", sorted(BAD_OUTCOMES))
def test_bad_file_outcome(category: str) -> None:
    paths = [CORPUS / row["path"] for row in manifest() if row["bad_category"] == category]
    assert paths, f"no file of category {category!r} in MANIFEST.tsv"
    expected = BAD_OUTCOMES[category]
    for path in paths:
        result = parsed(path)
        assert result.file == str(path) and result.size_bytes == path.stat().st_size
        if expected.error:
            assert result.document is None, path.name
            assert [(p.kind, p.severity) for p in result.problems] == [(expected.error, "error")], path.name
        else:
            assert result.ok and not errors(result), (path.name, result.problems)
            assert warnings(result) == expected.warnings, (path.name, result.problems)
        for problem in result.problems:  # messages name the file
            assert path.name in problem.message


@needs_corpus
def test_problem_messages_say_what_to_do() -> None:
    advice = {"encrypted": "password", "scanned": "OCR", "truncated": "again", "not_a_pdf": "replace"}
    for row in manifest():
        result = parsed(CORPUS / row["path"])
        for problem in result.problems:
            if problem.kind in advice:
                assert advice[problem.kind].lower() in problem.message.lower(), problem.message


@needs_corpus
def test_blank_pages_warning_names_the_pages() -> None:
    result = parsed(CORPUS / "bad/blank-pages_layout-parser-paper-with-empty-pages.pdf")
    (problem,) = result.problems
    # Page 2 is empty; page 3 only says "This page is intentionally left blank".
    assert "pages 2, 3" in problem.message
    assert result.document.page_count == 4
    assert result.document.title.startswith("LayoutParser: A Unified Toolkit")


@needs_corpus
def test_corrupted_stream_keeps_the_recovered_text() -> None:
    result = parsed(CORPUS / "bad/corrupted-flate-stream_pdfminer-zen-of-python.pdf")
    assert "Beautiful is better than ugly." in result.document.text
    assert "zlib" in result.problems[0].message


@needs_corpus
def test_owner_password_only_file_is_parsed() -> None:
    result = parsed(CORPUS / "bad/encrypted-owner-only_copy-protected_layoutparser-excerpt.pdf")
    assert result.problems == []
    assert result.document.page_count == 2
    assert "Deep Learning Based Document Image Analysis" in result.document.title


@needs_corpus
def test_huge_file_parses_page_by_page() -> None:
    path = CORPUS / HUGE
    started = time.perf_counter()
    result = parse_pdf(path)
    elapsed = time.perf_counter() - started
    document = result.document
    assert document is not None and not errors(result)
    assert document.page_count == 619
    assert len(document.text) > 1_800_000
    assert document.page_offsets[-1] < len(document.text)
    # About 1.5 s on a laptop; a per-page cost that grew with the page count would blow this bound.
    assert elapsed < 60


@needs_corpus
def test_count_pages() -> None:
    assert count_pages(CORPUS / HUGE) == 619
    assert count_pages(CORPUS / "bad/zero-pages_qpdf-empty.pdf") == 0
    assert count_pages(CORPUS / "bad/not-a-pdf_qpdf-bad1.pdf") == 0
    assert count_pages(CORPUS / "bad/encrypted-user-password_unstructured.pdf") == 0
    assert count_pages(CORPUS / "bad/does-not-exist.pdf") == 0


# --------------------------------------------------------------------------------------------------
# The whole corpus outside bad/


@needs_corpus
def test_corpus_papers_parse_with_structure() -> None:
    rows = [row for row in manifest() if not row["path"].startswith("bad/")]
    assert len(rows) >= 80
    results = [(row, parsed(CORPUS / row["path"])) for row in rows]

    def key(text: str) -> str:
        return "".join(ch for ch in repair_ligatures(text).lower() if ch.isalnum())

    titles = abstracts = sections = references = 0
    for row, result in results:
        document = result.document
        assert document is not None and not errors(result), (row["path"], result.problems)
        # No real paper is rejected or flagged by the text-quality gate, with room to spare.
        quality = result.quality
        assert quality.verdict == USABLE and not warnings(result) & QUALITY_WARNINGS, row["path"]
        assert quality.word_share >= DEFAULT_QUALITY.poor_word_share + 0.05, row["path"]
        assert quality.junk_share <= DEFAULT_QUALITY.max_junk_share / 10, row["path"]
        assert document.page_count == int(row["pages"])
        assert not any(ch in document.text for ch in LIGATURE_CHARS), row["path"]
        ours, theirs = key(document.title), key(row["title"])
        titles += bool(ours) and (ours in theirs or theirs in ours)
        abstracts += len(document.abstract) > 200
        sections += len(document.sections) >= 3
        if document.references:
            references += 1
            assert document.body_end < len(document.text)
            heading = document.text[document.body_end :].lstrip("0123456789.IVX \n").lower()
            assert heading.startswith(("references", "bibliography")), row["path"]
        else:
            assert document.body_end == len(document.text)
    # Measured: titles 84/85 (the miss is a wrong title in MANIFEST.tsv), abstracts 81, sections 84,
    # references 83.
    count = len(results)
    assert titles >= 0.95 * count and sections >= 0.95 * count
    assert abstracts >= 0.9 * count and references >= 0.9 * count


# --------------------------------------------------------------------------------------------------
# A demo paper: SPECTER (ACL 2020, two columns)


@pytest.fixture(scope="module")
def specter():
    if not SPECTER.is_file():
        pytest.skip(f"demo paper not found: {SPECTER}")
    result = parse_pdf(SPECTER)
    assert result.ok and result.problems == []
    return result.document


def test_specter_title_and_abstract(specter) -> None:
    assert "SPECTER" in specter.title
    assert specter.title.endswith("Citation-informed Transformers")
    assert specter.abstract.startswith("Representation learning is a critical ingredient")
    assert "the citation graph" in specter.abstract
    # Stops before "1 Introduction"; the footnote marker after the last sentence is gone.
    assert specter.abstract.endswith("baselines on the benchmark.")


def test_a_first_page_set_in_one_font_size_has_no_title_of_its_own(tmp_path) -> None:
    from insight_assets_tests.pdf_factory import english_pages, write_pdf

    result = parse_pdf(write_pdf(tmp_path / "plain.pdf", english_pages(2)))
    assert result.ok
    # Every line is in the page's one size: none of them is set apart as a title.
    assert result.document.title == ""


def test_specter_sections(specter) -> None:
    sections = specter.sections
    for heading in ("Abstract", "1 Introduction", "2.1 Overview", "7 Related Work", "References"):
        assert heading in sections
    assert sections.index("1 Introduction") < sections.index("2 Model") < sections.index("References")
    assert sections[-1] == "A Appendix A - Baseline Details"


def test_specter_references_and_body(specter) -> None:
    assert specter.references.startswith("Anant K. Agarwal")
    assert "A Pretrained Language Model for Scientific\nText" in specter.references  # SciBERT
    assert 0 < specter.body_end < len(specter.text)
    assert specter.text[specter.body_end :].startswith("References\n")
    assert specter.page_at(specter.body_end) == 9
    assert "8\nConclusions and Future Work" in specter.body
    assert "Anant K. Agarwal" not in specter.body


def test_specter_text_is_repaired(specter) -> None:
    assert not any(ch in specter.text for ch in LIGATURE_CHARS)
    assert "scientific" in specter.text  # "scientiﬁc" in the PDF
    assert "critical ingredient" in specter.text  # "ingre-" / "dient" across a line break
    assert "state-of-the-art" in specter.text  # a real hyphen stays


def test_specter_reads_left_column_before_right(specter) -> None:
    page = specter.page_texts[0]
    # The title and abstract come first; the introduction's sentence runs from the bottom of the left
    # column ("...representing individual words") to the top of the right one ("or sentences, ...").
    # Between the two sits only the left column's footnote.
    assert page.index("SPECTER: Document-level") < page.index("Abstract") < page.index("1\nIntroduction")
    end_of_left = page.index("widely used for representing individual words")
    top_of_right = page.index("or sentences, extensions to whole-document embeddings")
    assert end_of_left < top_of_right < end_of_left + 120
    # The page footer comes after both columns.
    assert page.index("Proceedings of the 58th Annual Meeting") > top_of_right


# --------------------------------------------------------------------------------------------------
# Synthetic PDFs: reading order against the content stream, garbled text, missing files

LEFT_COLUMN = [
    "LEFT COLUMN opens the body text.",
    "It runs down the left half of the",
    "page first, as readers expect, and",
    "its last line splits a word: embed-",
]
RIGHT_COLUMN = [
    "ding of the paper in the right one.",
    "RIGHT COLUMN text continues here,",
    "after the left column has ended,",
    "down to the foot of the page.",
]


def write_two_column_pdf(path: Path) -> None:
    """A two-column page drawn right column first, then the left one, then the title above both."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    page.insert_text((326, 120), "\n".join(RIGHT_COLUMN), fontsize=10)
    page.insert_text((72, 120), "\n".join(LEFT_COLUMN), fontsize=10)
    page.insert_text((150, 72), "A Title That Spans Both Columns", fontsize=16)
    pdf.save(path)
    pdf.close()


def test_two_column_page_reads_left_then_right_whatever_the_stream_order(tmp_path: Path) -> None:
    path = tmp_path / "two-columns.pdf"
    write_two_column_pdf(path)
    with pymupdf.open(path) as pdf:
        stream_order = pdf[0].get_text()
    assert stream_order.index("RIGHT COLUMN") < stream_order.index("LEFT COLUMN")  # bare text is wrong

    result = parse_pdf(path)
    text = result.document.text
    assert text.index("A Title That Spans") < text.index("LEFT COLUMN") < text.index("RIGHT COLUMN")
    # The word hyphenated across the columns is joined.
    assert "splits a word: embedding of the paper" in text
    assert result.document.title == "A Title That Spans Both Columns"


def test_garbled_text_layer_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "garbled.pdf"
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 72), "\n".join(["#1 %2 &3 *4 (5) 6=7 8+9 0/1 @2 $3 ^4 ~5"] * 20), fontsize=9)
    pdf.save(path)
    pdf.close()

    result = parse_pdf(path)
    assert result.document is None
    assert [p.kind for p in result.problems] == ["garbled"]
    assert "garbled.pdf" in result.problems[0].message


def test_missing_file_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    result = parse_pdf(tmp_path / "gone.pdf", doc_id="abc")
    assert result.document is None and result.doc_id == "abc"
    assert [p.kind for p in result.problems] == ["unreadable"]


def test_doc_id_defaults_to_the_file_hash(tmp_path: Path) -> None:
    path = tmp_path / "two-columns.pdf"
    write_two_column_pdf(path)
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert parse_pdf(path).doc_id == expected == parse_pdf(path).document.doc_id
    assert parse_pdf(path, doc_id="given").document.doc_id == "given"


# --------------------------------------------------------------------------------------------------
# Text repair


@pytest.mark.parametrize(
    ("raw", "repaired"),
    [
        ("\ufb01ne-tuning", "fine-tuning"),
        ("e\ufb00ect, \ufb02ow, e\ufb03cient, ba\ufb04ed", "effect, flow, efficient, baffled"),
        ("\ufb05yle \ufb06ep", "style step"),
        ("no ligatures here", "no ligatures here"),
    ],
)
def test_repair_ligatures(raw: str, repaired: str) -> None:
    assert repair_ligatures(raw) == repaired


@pytest.mark.parametrize(
    ("raw", "joined"),
    [
        ("document embed-\nding models", "document embedding models"),
        ("trailing space embed- \n  ding", "trailing space embedding"),
        ("soft embed\u00ad\nding", "soft embedding"),
        # A compound's hyphen at a line end is a real one.
        ("a state-of-the-\nart model", "a state-of-the-art model"),
        ("a state-\nof-the-art model", "a state-of-the-art model"),
        # After a word that forms compounds, the hyphen is kept; a syllable break still joins.
        ("uses self-\nattention layers", "uses self-attention layers"),
        ("in the few-\nshot setting", "in the few-shot setting"),
        ("the re-\nsults show", "the results show"),
    ],
)
def test_join_hyphenated_lines_joins(raw: str, joined: str) -> None:
    assert join_hyphenated_lines(raw) == joined


@pytest.mark.parametrize(
    "kept",
    [
        "state-of-the-art methods\nare compared",  # hyphens inside a line
        "we use GPT-\n3 here",  # a digit after the break
        "the Bi-\nLSTM encoder",  # an uppercase letter after the break
        "SCI-\nDOCS covers",  # uppercase on both sides
        "see eq. 3 -\nthe rest",  # a dash after a space, not a hyphenated word
        "ends with a hyphen-",  # no line break
    ],
)
def test_join_hyphenated_lines_keeps(kept: str) -> None:
    assert join_hyphenated_lines(kept) == kept


@given(st.text(alphabet=st.characters(blacklist_characters="-\u2010\u00ad")))
def test_join_hyphenated_lines_leaves_text_without_hyphens_alone(text: str) -> None:
    assert join_hyphenated_lines(text) == text


@given(st.text(alphabet="aZé1-\u00ad\n \t"))
def test_join_hyphenated_lines_only_drops_hyphens_and_line_breaks(text: str) -> None:
    def visible(value: str) -> list[str]:
        return [ch for ch in value if ch not in "-\u00ad\n \t"]

    joined = join_hyphenated_lines(text)
    assert visible(joined) == visible(text)  # no letter lost, added or moved
    assert len(joined) <= len(text)


def test_clean_page_text_repairs_ligatures_before_joining() -> None:
    assert clean_page_text("e\ufb03-\ncient and \ufb01ne") == "efficient and fine"
