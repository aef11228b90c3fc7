"""parse: pages/s and chars/s of ``parse_pdf`` against bare PyMuPDF, on every PDF outside bad/.

Bare is the least any PDF-to-text step does: open the file and call ``page.get_text()`` on every
page. Ours adds what makes the text usable (reading order on two-column pages, ligature and
hyphenation repair, headings, title, abstract, references, problem detection). bad/ is left out:
its files measure error paths, not parsing.

Both sides get the same files with the OS cache warm. Each file is timed on both sides in turn,
``REPEATS`` times with the order swapped each round, and the best time per file and side counts,
so a burst of load from elsewhere hits both sides alike. ``doc_id`` is computed beforehand, as the
pipeline's scan step does, so ours is not charged for hashing the file. Target: ours >= 0.8x bare.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from bench.common import good_pdfs, print_table, ratio, smallest, summary, timed
from insight_assets.core.ingestion.documents import sha256_file
from insight_assets.core.ingestion.pdf import parse_pdf

REPEATS = 2
QUICK_FILES = 3
TARGET = 0.8


def bare(path: Path) -> int:
    """Characters of bare PyMuPDF text extraction."""
    with pymupdf.open(path) as document:
        return sum(len(page.get_text()) for page in document)


def ours(path: Path, doc_id: str) -> int:
    """Characters of the page texts ``parse_pdf`` produces (0 if it reports the file unusable)."""
    document = parse_pdf(path, doc_id=doc_id).document
    return sum(map(len, document.page_texts)) if document else 0


def run(corpus: Path, quick: bool) -> dict:
    files = good_pdfs(corpus)
    if quick:
        files = smallest(files, QUICK_FILES)
    doc_ids = {path: sha256_file(path) for path in files}  # also reads every file once: a warm cache
    sides = {"bare": bare, "ours": lambda path: ours(path, doc_ids[path])}

    per_file = []
    for path in files:
        with pymupdf.open(path) as document:
            pages = document.page_count
        best, chars = {}, {}
        for round_ in range(REPEATS):
            for side in sorted(sides, reverse=round_ % 2 == 1):
                seconds, chars[side] = timed(sides[side], path)
                best[side] = min(seconds, best.get(side, seconds))
        per_file.append(
            {
                "file": path.relative_to(corpus).as_posix(),
                "pages": pages,
                "bare_s": best["bare"],
                "ours_s": best["ours"],
                "bare_chars": chars["bare"],
                "ours_chars": chars["ours"],
            }
        )

    by_collection: dict[str, list[dict]] = {}
    for row in per_file:
        by_collection.setdefault(row["file"].split("/")[0], []).append(row)
    rows = [_totals(name, group) for name, group in by_collection.items()]
    total = _totals("total", per_file)
    print_table(
        rows + [total],
        [
            "collection",
            "files",
            "pages",
            "bare_pages_s",
            "ours_pages_s",
            "pages_ratio",
            "bare_chars_s",
            "ours_chars_s",
            "chars_ratio",
        ],
        title=f"parse: best of {REPEATS} per file, {len(files)} PDFs",
    )
    met = total["pages_ratio"] is not None and total["pages_ratio"] >= TARGET
    return {
        "summary": summary(
            f"ours {total['ours_pages_s']:,.0f} pages/s, bare {total['bare_pages_s']:,.0f} pages/s "
            f"(chars/s {total['chars_ratio']:.2f}x)",
            total["pages_ratio"],
            f">= {TARGET}x",
            met,
        ),
        "repeats": REPEATS,
        "collections": rows,
        "total": total,
        "files": per_file,
    }


def _totals(name: str, rows: list[dict]) -> dict:
    pages = sum(row["pages"] for row in rows)
    bare_s, ours_s = sum(row["bare_s"] for row in rows), sum(row["ours_s"] for row in rows)
    bare_chars_s = sum(row["bare_chars"] for row in rows) / bare_s
    ours_chars_s = sum(row["ours_chars"] for row in rows) / ours_s
    return {
        "collection": name,
        "files": len(rows),
        "pages": pages,
        "bare_s": bare_s,
        "ours_s": ours_s,
        "bare_pages_s": pages / bare_s,
        "ours_pages_s": pages / ours_s,
        "pages_ratio": ratio(bare_s, ours_s),  # same pages: the inverse ratio of the times
        "bare_chars_s": bare_chars_s,
        "ours_chars_s": ours_chars_s,
        "chars_ratio": ratio(ours_chars_s, bare_chars_s),
    }
