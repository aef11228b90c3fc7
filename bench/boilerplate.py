"""boilerplate: how many of the corpus's passage chunks were boilerplate, before and after.

For every real paper: the boilerplate spans found per kind (``core/ingestion/boilerplate.py``); the passage
chunks made as before (the whole body) of which boilerplate is at least half the text; and the chunks
made now (boilerplate left out) that still match a loose net of boilerplate words (thanks, grant,
copyright sign, email, licence, "Proceedings of"), listed for a reader to judge: the net catches
some content too ("licensed" data), and what it lists is what detection missed or rightly kept.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

from bench.common import good_pdfs, print_table, smallest, summary
from insight_assets.core.ingestion.boilerplate import KINDS
from insight_assets.core.ingestion.chunking import PROFILES, chunk_document
from insight_assets.core.ingestion.pdf import parse_pdf

QUICK_FILES = 5
# Half a chunk's characters in boilerplate spans: that chunk was boilerplate.
BOILERPLATE_SHARE = 0.5
NET = re.compile(
    r"\bthank|\bgrateful\b|\bgrants?\b|©|c⃝|\bcopyright\b|@\w+\.\w|\blicen[cs]e|^proceedings of",
    re.IGNORECASE | re.MULTILINE,
)


def run(corpus: Path, quick: bool) -> dict:
    files = smallest(good_pdfs(corpus), QUICK_FILES) if quick else good_pdfs(corpus)
    profile = PROFILES["passage"]
    kinds: Counter[str] = Counter()
    before = before_boilerplate = after = 0
    caught: list[dict] = []
    for path in files:
        document = parse_pdf(path).document
        if document is None:
            continue
        kinds.update(span.kind for span in document.boilerplate)
        marked = [(span.char_start, span.char_end) for span in document.boilerplate]
        whole = chunk_document(dataclasses.replace(document, boilerplate=[]), profile)
        before += len(whole)
        before_boilerplate += sum(
            _covered(chunk.char_start, chunk.char_end, marked)
            >= BOILERPLATE_SHARE * (chunk.char_end - chunk.char_start)
            for chunk in whole
        )
        kept = chunk_document(document, profile)
        after += len(kept)
        for chunk in kept:
            if match := NET.search(chunk.text):
                start = max(match.start() - 60, 0)
                caught.append(
                    {
                        "file": path.name[:40],
                        "page": chunk.page_start,
                        "text": " ".join(chunk.text[start : start + 140].split()),
                    }
                )
    print_table(
        caught,
        ["file", "page", "text"],
        title=f"Chunks kept that the loose net still catches ({len(caught)})",
    )
    print_table(
        [{"kind": kind, "spans": kinds[kind]} for kind in KINDS],
        ["kind", "spans"],
        title=f"Spans found in {len(files)} papers",
    )
    result = (
        f"{before_boilerplate} of {before} passage chunks were boilerplate before, 0 of {after} now; "
        f"{len(caught)} kept chunks match the loose net"
    )
    print(f"\n{result}")
    return {
        "summary": summary(result),
        "kinds": dict(kinds),
        "chunks_before": before,
        "boilerplate_chunks_before": before_boilerplate,
        "chunks_after": after,
        "net_after": caught,
    }


def _covered(start: int, end: int, spans: list[tuple[int, int]]) -> int:
    return sum(max(0, min(end, b) - max(start, a)) for a, b in spans)
