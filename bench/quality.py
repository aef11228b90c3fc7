"""quality: the text-quality gate's measures and verdict for every PDF of the corpus, and its cost.

For each file (bad/ included): the verdict, the problem kinds, the document language, pages,
characters per page, the junk share, the real-word share, words per 1,000 characters, characters per
token, the pages dropped as garbled or named as poor, and the digit-glued tokens ("7pronounced": a
footnote's number left on a word). The target is the gate's promise about the
real papers: none is rejected or flagged.

Cost, side by side on the same files: ``parse_pdf`` (which runs the gate) against ``assess_text``
alone on the page texts parse_pdf returned, best of ``REPEATS``; the figure is the gate's share of the
parse time.
"""

from __future__ import annotations

from pathlib import Path

from bench.common import BAD, collections, print_table, smallest, summary, timed
from insight_assets.core.ingestion.pdf import DEFAULT_QUALITY, parse_pdf
from insight_assets.core.ingestion.pdf.footnotes import digit_glued_tokens
from insight_assets.core.ingestion.text_quality import USABLE, assess_text

REPEATS = 2
QUICK_FILES = 3


def run(corpus: Path, quick: bool) -> dict:
    files = [pdf for name, pdfs in collections(corpus).items() for pdf in pdfs]
    if quick:
        files = smallest(files, QUICK_FILES)
    rows, parse_s, gate_s, pages = [], 0.0, 0.0, 0
    for path in files:
        best_parse = best_gate = float("inf")
        for _ in range(REPEATS):
            seconds, result = timed(parse_pdf, path)
            best_parse = min(best_parse, seconds)
        quality = result.quality
        if result.document is not None:
            for _ in range(REPEATS):
                seconds, _ = timed(assess_text, result.document.page_texts, [], DEFAULT_QUALITY)
                best_gate = min(best_gate, seconds)
            parse_s, gate_s, pages = (
                parse_s + best_parse,
                gate_s + best_gate,
                pages + result.document.page_count,
            )
        rows.append(
            {
                "file": path.relative_to(corpus).as_posix(),
                "real_paper": path.relative_to(corpus).parts[0] != BAD,
                "verdict": quality.verdict if quality else "not read",
                "problems": ", ".join(sorted({p.kind for p in result.problems})) or "-",
                "language": quality.language if quality else "-",
                "pages": quality.pages if quality else 0,
                "chars_per_page": quality.chars_per_page if quality else None,
                "junk_share": quality.junk_share if quality else None,
                "word_share": quality.word_share if quality else None,
                "words_per_1000": quality.words_per_1000_chars if quality else None,
                "chars_per_token": quality.mean_token_chars if quality else None,
                "garbled_pages": len(quality.garbled_pages) if quality else 0,
                "poor_pages": len(quality.poor_pages) if quality else 0,
                "digit_glued": len(digit_glued_tokens("\n".join(result.document.page_texts)))
                if result.document
                else None,
            }
        )
    print_table(
        rows,
        [
            "file",
            "verdict",
            "problems",
            "language",
            "pages",
            "chars_per_page",
            "junk_share",
            "word_share",
            "words_per_1000",
            "chars_per_token",
            "garbled_pages",
            "poor_pages",
            "digit_glued",
        ],
        title=f"quality: {len(rows)} PDFs",
    )
    papers = [row for row in rows if row["real_paper"]]
    flagged = [row["file"] for row in papers if row["verdict"] != USABLE]
    shares = [row["word_share"] for row in papers if row["word_share"] is not None]
    share = gate_s / parse_s if parse_s else None
    print(
        f"\nReal papers: {len(papers)}, usable {len(papers) - len(flagged)}"
        + (f", flagged: {', '.join(flagged)}" if flagged else "")
        + (f"; word share {min(shares):.3f} to {max(shares):.3f}" if shares else "")
        + f"; digit-glued tokens (footnote numbers left on words): {sum(r['digit_glued'] or 0 for r in papers)}"
        + f"\nGate: {1000 * gate_s / max(pages, 1):.2f} ms/page, {share:.1%} of parse_pdf's time "
        f"({1000 * parse_s / max(pages, 1):.2f} ms/page) over {pages} pages"
    )
    return {
        "summary": summary(
            f"{len(papers) - len(flagged)}/{len(papers)} real papers usable; gate {share:.1%} of parse time",
            share,
            "no real paper flagged",
            not flagged,
        ),
        "files": rows,
        "gate_ms_per_page": 1000 * gate_s / max(pages, 1),
        "parse_ms_per_page": 1000 * parse_s / max(pages, 1),
    }
