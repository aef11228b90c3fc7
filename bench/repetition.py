"""repetition: where ``insights_do_not_repeat_the_answer`` draws its line, measured on the corpus.

Pairs the papers' own authors wrote: *restatements*, a paper's main contribution stated twice in
its own words (two sentences naming the paper's short name with "we present / propose / introduce");
*additions*, that contribution beside one of the paper's result sentences (a number, a percentage,
"outperforms"). Each pair's cosine with the bundled embedder; for each candidate line, the share of
restatements it catches and of additions it flags. The check's line, ``REPEATS_ANSWER_COSINE``,
is printed with them.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np

from bench.common import good_pdfs, print_table, smallest, summary
from insight_assets.core.curation.compression import (
    CompressionSettings,
    compression_inputs,
    papers_to_compress,
)
from insight_assets.core.embedding.models import create_embedder
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets.core.methods.insightgen.repetition import REPEATS_ANSWER_COSINE
from insight_assets.core.text import sentence_texts

QUICK_FILES = 12
LINES = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
_CONTRIBUTION = re.compile(r"\bwe (present|propose|introduce)\b", re.IGNORECASE)
_RESULT = re.compile(r"\d+(\.\d+)?\s*%|\b(outperform\w*|improv\w* by|achiev\w*)\b", re.IGNORECASE)
_MAX_PER_PAPER = 5  # contributions; results: 6


def run(corpus: Path, quick: bool) -> dict:
    files = smallest(good_pdfs(corpus), QUICK_FILES) if quick else good_pdfs(corpus)
    embed = create_embedder().embed
    restatements: list[float] = []
    additions: list[float] = []
    for path in files:
        document = parse_pdf(path).document
        if document is None or ":" not in (document.title or ""):
            continue
        name = document.title.split(":")[0].strip()
        if len(name.split()) > 2:  # only papers with a short name ("SPECTER: ...") to find it by
            continue
        text = compression_inputs(papers_to_compress([document])[0], CompressionSettings())["text"]
        sentences = [s for s in sentence_texts(text) if 8 <= len(s.split()) <= 60]
        stated = [s for s in sentences if _CONTRIBUTION.search(s) and name.lower() in s.lower()]
        stated = list(dict.fromkeys(stated))[:_MAX_PER_PAPER]
        results = [s for s in sentences if _RESULT.search(s) and not _CONTRIBUTION.search(s)][:6]
        if len(stated) < 2:
            continue
        vectors = normalize_rows(embed(stated + results))
        claims, found = vectors[: len(stated)], vectors[len(stated) :]
        restatements += [
            float(claims[i] @ claims[j]) for i, j in itertools.combinations(range(len(stated)), 2)
        ]
        additions += [float(claim @ result) for claim in claims for result in found]
    caught, flagged = np.array(restatements), np.array(additions)
    rows = [
        {
            "line": line,
            "restatements_caught": round(float((caught >= line).mean()), 3) if caught.size else None,
            "additions_flagged": round(float((flagged >= line).mean()), 3) if flagged.size else None,
            "the_check": "<-" if line == REPEATS_ANSWER_COSINE else "",
        }
        for line in LINES
    ]
    print_table(
        rows,
        ["line", "restatements_caught", "additions_flagged", "the_check"],
        title=f"{caught.size} restatements, {flagged.size} additions",
    )
    at_line = next(row for row in rows if row["line"] == REPEATS_ANSWER_COSINE)
    result = (
        f"at {REPEATS_ANSWER_COSINE}: {at_line['restatements_caught']} of {caught.size} restatements caught, "
        f"{at_line['additions_flagged']} of {flagged.size} additions flagged"
    )
    print(f"\n{result}")
    return {"summary": summary(result), "lines": rows}
