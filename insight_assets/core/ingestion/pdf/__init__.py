"""PDF file -> ``ParseResult``: page text in reading order, repaired, with the paper's structure.

Plain PyMuPDF, one file at a time, one page at a time. ``parse_pdf`` never raises for a bad file:
what is wrong with it comes back as ``ParseProblem`` records, an ``"error"`` when no document could
be made and a ``"warning"`` when the document was kept with a caveat.

Speed matters (the corpus benchmark wants at least 0.8x the throughput of bare ``page.get_text()``),
so every page is read with the cheap ``"blocks"`` extraction; only page 1 may also be read as
``"dict"``, for font sizes, when the PDF's metadata has no usable title.

MuPDF's warning store is process-global, so do not run ``parse_pdf`` from several threads at once
(processes are fine): one file's warnings would be blamed on another.

Parsing and the problems of a file are here; text repair is in ``repair.py``, reading order in
``layout.py``, headings, title, abstract and references in ``structure.py``, and the text-quality
gate in ``core/ingestion/text_quality.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf

from insight_assets.core.ingestion.boilerplate import find_boilerplate
from insight_assets.core.ingestion.documents import ParsedDocument, ParseProblem, ParseResult, sha256_file
from insight_assets.core.ingestion.parser_version import DEFAULT_QUALITY, PARSER_VERSION, parser_version
from insight_assets.core.ingestion.pdf.footnotes import has_glued_footnote, split_footnotes
from insight_assets.core.ingestion.pdf.layout import reading_order
from insight_assets.core.ingestion.pdf.repair import (
    HYPHEN_CONTEXT,
    clean_page_text,
    hyphen_join,
    join_hyphenated_lines,
    repair_ligatures,
)
from insight_assets.core.ingestion.pdf.structure import (
    Heading,
    add_structure,
    block_heading,
    largest_font_title,
    metadata_title,
)
from insight_assets.core.ingestion.text_quality import (
    UNUSABLE,
    QualitySettings,
    TextVerdict,
    assess_text,
    visible_chars,
)
from insight_assets.core.startup.lazy import lazy_regex

__all__ = ["DEFAULT_QUALITY", "PARSER_VERSION", "count_pages", "parse_pdf", "parser_version"]


# --------------------------------------------------------------------------------------------------
# Problems

# MuPDF warnings that mean content was lost or guessed at. Others are harmless here ("bogus font
# ascent/descent", "repaired broken tree structure in outline", "broken xref subsection").
_DAMAGE_WARNING = lazy_regex(
    r"zlib|flate|lzw|data.loss|premature end|corrupt|syntax error|treating as end of file|read error"
    r"|missing 'endobj'|repairing PDF|repair broken xref|cannot find startxref|cannot (?:load|read)"
    r"|unknown (?:compression|filter)",
    re.IGNORECASE,
)
# A blank page: a short text with no letters (a lone page number is not text), or only a "left
# blank" notice. A long letterless text is not a blank page: that is for the text-quality gate.
_BLANK_MAX_CHARS = 80
_BLANK_PAGE = lazy_regex(
    r"[\W\d_]*(?:this page (?:is )?(?:intentionally )?left blank)?[\W\d_]*", re.IGNORECASE
)
_OCR_ADVICE = "Run OCR over the pages (e.g. ocrmypdf --force-ocr), then re-add the file."


def _page_list(numbers: list[int], limit: int = 12) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")


def _has_eof_marker(path: Path) -> bool:
    """Whether the file ends with %%EOF, as a complete PDF does (junk after it is tolerated)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" in handle.read()


# --------------------------------------------------------------------------------------------------
# Parsing

# The flags bare ``page.get_text()`` uses (ligatures and whitespace kept, clipped to the page, no
# images): the same extraction cost, and ligatures are repaired here.
_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT


def parse_pdf(
    path: Path, *, doc_id: str | None = None, quality: QualitySettings = DEFAULT_QUALITY
) -> ParseResult:
    """Parse one PDF. Never raises for a bad file: see ``ParseResult.problems``.

    ``quality`` sets the thresholds of the text-quality gate (``text_quality.py``): a garbled or
    nearly empty text layer makes the file unusable, a few garbled pages are dropped with a warning.
    """
    path = Path(path)
    try:
        size_bytes = path.stat().st_size
        doc_id = doc_id or sha256_file(path)
    except OSError as exc:
        advice = "Check that it exists and is readable."
        problem = _problem("unreadable", path, f"cannot read the file ({exc})", advice)
        return ParseResult(str(path), doc_id or "", 0, None, [problem])
    try:
        document, problems, verdict = _parse(path, doc_id, quality)
    except Exception as exc:  # noqa: BLE001 - the per-file boundary: anything unforeseen becomes a problem
        what = f"parsing failed ({type(exc).__name__}: {exc})"
        advice = "Try re-saving it with another PDF tool (e.g. print to PDF), then re-add the file."
        document, problems, verdict = None, [_problem("unreadable", path, what, advice)], None
    return ParseResult(str(path), doc_id, size_bytes, document, problems, verdict)


def crashed_parse(path: Path, doc_id: str, how: str) -> ParseResult:
    """The result for a file whose parse ended the process parsing it (``how``: "killed by SIGSEGV"):
    MuPDF crashed on it, or the machine ran out of memory."""
    what = f"the PDF parser crashed on this file (its process was {how})"
    advice = "Try re-saving it with another PDF tool (e.g. print to PDF), then re-add the file."
    try:
        size_bytes = path.stat().st_size
    except OSError:
        size_bytes = 0
    return ParseResult(str(path), doc_id, size_bytes, None, [_problem("unreadable", path, what, advice)])


def count_pages(path: Path) -> int:
    """The page count of a PDF without reading any page; 0 when it cannot be opened (or needs a password)."""
    try:
        with pymupdf.open(path, filetype="pdf") as pdf:
            return 0 if pdf.needs_pass else pdf.page_count
    except (RuntimeError, OSError):  # FileDataError, EmptyFileError, a missing or unreadable file
        return 0


def _problem(kind: str, path: Path, what: str, advice: str, severity: str = "error") -> ParseProblem:
    """A problem whose message says what happened, to which file, and what the user can do."""
    return ParseProblem(kind, f"{path.name}: {what}. {advice}", severity)


_Parsed = tuple[ParsedDocument | None, list[ParseProblem], TextVerdict | None]


def _unusable(kind: str, path: Path, what: str, advice: str, verdict: TextVerdict | None = None) -> _Parsed:
    return None, [_problem(kind, path, what, advice)], verdict


def _parse(path: Path, doc_id: str, quality: QualitySettings) -> _Parsed:
    with path.open("rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:  # the header may sit anywhere in the first 1024 bytes
        advice = "Check that the right file was saved under this name and replace it with the real PDF."
        return _unusable("not_a_pdf", path, "not a PDF (no %PDF header)", advice)
    complete = _has_eof_marker(path)

    pymupdf.TOOLS.reset_mupdf_warnings()
    try:
        pdf = pymupdf.open(path, filetype="pdf")
    except RuntimeError as exc:  # FileDataError and friends
        if not complete:
            what = f"the file is cut short (no %%EOF) and cannot be opened ({exc})"
            return _unusable("truncated", path, what, "Download or copy it again.")
        what = f"PyMuPDF cannot open it as a PDF ({exc})"
        return _unusable("not_a_pdf", path, what, "Replace it with an intact copy.")
    try:
        return _parse_open(pdf, path, doc_id, complete, quality)
    finally:
        pdf.close()


def _parse_open(
    pdf: pymupdf.Document, path: Path, doc_id: str, complete: bool, quality: QualitySettings
) -> _Parsed:
    # MuPDF has already tried the empty password, so a file with only an owner password gets past.
    if pdf.needs_pass:
        advice = "Remove the password (e.g. qpdf --decrypt --password=... in.pdf out.pdf); re-add the file."
        return _unusable("encrypted", path, "the PDF needs a password to open", advice)
    if pdf.page_count == 0:
        if not complete:
            what = "the file is cut short (no %%EOF) and no pages could be recovered"
            return _unusable("truncated", path, what, "Download or copy it again.")
        if pdf.is_repaired:
            what = "the PDF is damaged and no pages could be recovered"
            return _unusable("corrupted", path, what, "Replace it with an intact copy.")
        return _unusable("zero_pages", path, "the PDF has no pages", "Replace it with the full document.")

    page_texts: list[str] = []
    candidates: list[Heading] = []
    textless: list[int] = []  # 1-based page numbers
    sparse_images: list[int] = []  # pages holding images and little text
    failed: list[str] = []
    title = ""
    for index in range(pdf.page_count):
        try:
            page = pdf.load_page(index)
            # One text extraction per page; page 1's also serves the title's font-size lookup.
            textpage = page.get_textpage(flags=_TEXT_FLAGS)
            text = _page_text(page, textpage, index, candidates)
            if index == 0:
                title = metadata_title(pdf.metadata, text) or largest_font_title(page, textpage)
            # Images are looked up only on pages with little text: a scan, or a figure page.
            if visible_chars(text) < quality.sparse_page_chars and page.get_images():
                sparse_images.append(index + 1)
        except (RuntimeError, pymupdf.mupdf.FzErrorBase) as exc:  # one bad page must not lose the rest
            failed.append(f"page {index + 1}: {exc}")
            page_texts.append("")
            continue
        page_texts.append(text)
        if len(text) <= _BLANK_MAX_CHARS and _BLANK_PAGE.fullmatch(text):
            textless.append(index + 1)

    damage = failed + [
        line for line in pymupdf.TOOLS.mupdf_warnings().splitlines() if _DAMAGE_WARNING.search(line)
    ]
    if len(failed) == len(page_texts):
        what = f"no page could be read ({failed[0]})"
        return _unusable("corrupted", path, what, "Replace it with an intact copy.")
    if len(textless) + len(failed) == len(page_texts):
        if damage:
            what = f"no text could be recovered from the damaged file ({'; '.join(damage[:2])})"
            return _unusable("corrupted", path, what, "Replace it with an intact copy.")
        scan = any(number in sparse_images for number in textless)
        what = f"no page has any text ({'only images: a scan' if scan else 'no text layer'})"
        return _unusable("scanned", path, what, "Run OCR (e.g. ocrmypdf) first, then re-add the file.")

    verdict = assess_text(page_texts, sparse_images, quality)
    if verdict.verdict == UNUSABLE:
        return _text_unusable(path, verdict, damage)
    for number in verdict.garbled_pages:  # dropped: no chunk, no summary, no model sees them
        page_texts[number - 1] = ""
    candidates = [heading for heading in candidates if heading.page + 1 not in verdict.garbled_pages]

    problems = _warnings(path, len(page_texts), complete, damage, textless, sparse_images)
    problems += _quality_warnings(path, verdict)
    document = ParsedDocument(doc_id=doc_id, file=str(path), page_texts=page_texts, title=title)
    add_structure(document, candidates)
    document.boilerplate = find_boilerplate(
        document.text, document.body_end, title=document.title, sections=document.sections
    )
    return document, problems, verdict


def _text_unusable(path: Path, verdict: TextVerdict, damage: list[str]) -> _Parsed:
    """The problem of a file whose text layer failed the quality gate."""
    what = f"the text layer is not usable: {verdict.reason}"
    if verdict.kind == "too_little_text" and damage:
        what += f"; the file is damaged ({'; '.join(damage[:2])})"
        return _unusable("corrupted", path, what, "Replace it with an intact copy.", verdict)
    if verdict.kind == "too_little_text":
        advice = "If the pages are scans, run OCR (e.g. ocrmypdf --force-ocr) and re-add the file."
    else:
        advice = _OCR_ADVICE
    return _unusable(verdict.kind, path, what, advice, verdict)


def _quality_warnings(path: Path, verdict: TextVerdict) -> list[ParseProblem]:
    """Warnings of a degraded document: pages dropped as garbled, text that reads like poor OCR."""
    problems = []
    if verdict.garbled_pages:
        first = verdict.garbled_pages[0]
        what = (
            f"{len(verdict.garbled_pages)} of {verdict.pages} pages are garbled and were left out: pages "
            f"{_page_list(verdict.garbled_pages)} (page {first}: {verdict.page_reasons.get(first, 'garbled')})"
        )
        advice = "Run OCR over those pages (e.g. ocrmypdf --force-ocr) and re-add the file to get their text."
        problems.append(_problem("garbled_pages", path, what, advice, "warning"))
    if verdict.poor_pages:
        what = (
            f"the text reads like poor OCR: {verdict.word_share:.0%} of its words are real {verdict.language} "
            f"words (real papers: 90% or more), weakest on pages {_page_list(verdict.poor_pages)}; it is kept"
        )
        advice = "Re-run OCR (e.g. ocrmypdf --redo-ocr) for better text."
        problems.append(_problem("poor_text", path, what, advice, "warning"))
    return problems


def _warnings(
    path: Path,
    page_count: int,
    complete: bool,
    damage: list[str],
    textless: list[int],
    image_pages: list[int],
) -> list[ParseProblem]:
    """The caveats of a document that is kept."""
    problems = []
    if damage:
        what = f"damaged content ({'; '.join(damage[:4])}); the text recovered may be incomplete"
        advice = "Replace the file with an intact copy for the full text."
        problems.append(_problem("corrupted", path, what, advice, "warning"))
    if not complete:
        what = f"the file seems cut short (no %%EOF); {page_count} pages were read but text may be missing"
        problems.append(_problem("truncated", path, what, "Download or copy it again.", "warning"))
    if textless:
        what = f"{len(textless)} of {page_count} pages have no text: pages {_page_list(textless)}"
        advice = "Nothing to do if they are meant to be blank."
        image_only = [number for number in textless if number in image_pages]
        if image_only:
            only = _page_list(image_only)
            advice = f"Pages {only} hold only images: run OCR (e.g. ocrmypdf) to get their text."
        problems.append(_problem("blank_pages", path, what, advice, "warning"))
    return problems


def _is_rotated_line(block: tuple) -> bool:
    """A one-line block taller than wide: only rotated text is shaped like that."""
    text = block[4].strip()
    return "\n" not in text and len(text) >= 3 and block[3] - block[1] > 2 * (block[2] - block[0])


def _page_text(page: pymupdf.Page, textpage: pymupdf.TextPage, index: int, candidates: list[Heading]) -> str:
    """The page's cleaned text in reading order, then its footnotes (``footnotes.py``), each after a
    blank line so that no sentence runs into one; heading candidates are appended to ``candidates``."""
    extracted, footnotes = textpage.extractBLOCKS(), []
    if has_glued_footnote([block[4] for block in extracted if block[6] == 0]):
        extracted, footnotes = split_footnotes(textpage)
    blocks, rotated = [], []
    for block in extracted:
        if block[6] == 0 and block[4] and not block[4].isspace():  # text blocks with visible text
            (rotated if _is_rotated_line(block) else blocks).append(block)
    rect = page.rect
    pieces: list[str] = []
    length = 0
    # Rotated lines (arXiv's side stamp, axis labels) go last, out of the way of the paragraphs.
    for block in reading_order(blocks, (rect.x0 + rect.x1) / 2) + rotated:
        text = clean_page_text(block[4].strip())
        if pieces:
            # A word hyphenated across blocks (bottom of the left column, top of the right one).
            previous = pieces[-1]
            joined = None
            if previous[-1] in "-\u2010\u00ad":
                joined = hyphen_join(previous[-HYPHEN_CONTEXT - 1 : -1], previous[-1], text[:HYPHEN_CONTEXT])
            if joined is None:
                pieces.append("\n")
                length += 1
            else:
                pieces[-1] = previous[:-1] + joined
                length += len(joined) - 1
        heading = block_heading(text)
        if heading:
            scheme, key, name, shown, size = heading
            candidates.append(Heading(shown, scheme, key, name, index, length, length + size))
        pieces.append(text)
        length += len(text)
    notes = [clean_page_text(note.strip()) for note in footnotes]
    return "\n\n".join(part for part in ["".join(pieces), *notes] if part)


__all__ = [
    "DEFAULT_QUALITY",
    "PARSER_VERSION",
    "clean_page_text",
    "count_pages",
    "join_hyphenated_lines",
    "parse_pdf",
    "parser_version",
    "repair_ligatures",
]
