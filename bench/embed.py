"""embed: words/s of ``LocalEmbedder.embed_batched`` (the chunks' path) against the bare
sentence-transformers call.

Same model instance, same texts, same batch size. Bare is
``model.encode(texts, batch_size=B, normalize_embeddings=True)``; ours is ``LocalEmbedder.embed_batched``,
which first tokenizes every text to cut the ones over 256 word pieces into windows (bare silently
truncates them) and then makes the same ``encode`` call on the windows. The texts are the first N
passage chunks (150 tokens) of the corpus's PDFs outside bad/, taking one PDF from each collection in
turn so every topic contributes. Each side runs ``REPEATS`` times, order swapped each round, best
time counts. The mean cosine between the two vector sets is ~1.0 when no text needed windows.
Target: ours >= 0.9x bare.
"""

from __future__ import annotations

from itertools import chain, zip_longest
from pathlib import Path

import numpy as np

from bench.common import BAD, collections, print_table, ratio, summary, timed
from bench.compare import load_bare_model
from insight_assets.core.embedding.models import LocalEmbedder
from insight_assets.core.ingestion.chunking import PROFILES, chunk_document
from insight_assets.core.ingestion.pdf import parse_pdf

TEXTS, QUICK_TEXTS = 256, 32
BATCH_SIZE = 16  # LocalEmbedder's default; both sides use it
REPEATS = 2
TARGET = 0.9


def sample_texts(corpus: Path, count: int) -> list[str]:
    """The first ``count`` xsum chunk texts, reading PDFs round-robin across the collections."""
    groups = [files for name, files in collections(corpus).items() if name != BAD]
    texts: list[str] = []
    for path in (p for p in chain.from_iterable(zip_longest(*groups)) if p is not None):
        document = parse_pdf(path).document
        if document:
            texts += [chunk.text for chunk in chunk_document(document, PROFILES["passage"])]
        if len(texts) >= count:
            break
    return texts[:count]


def run(corpus: Path, quick: bool) -> dict:
    texts = sample_texts(corpus, QUICK_TEXTS if quick else TEXTS)
    embedder = LocalEmbedder(batch_size=BATCH_SIZE)
    load_s, _ = timed(lambda: embedder.model)
    bare = load_bare_model()
    sides = {
        "bare": lambda: bare.encode(
            texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        ),
        "ours": lambda: embedder.embed_batched(texts),
    }
    embedder.embed_batched(texts[:8])  # warm-up: first-call costs of torch and the tokenizer

    best, vectors = {}, {}
    for round_ in range(REPEATS):
        for side in sorted(sides, reverse=round_ % 2 == 1):
            seconds, vectors[side] = timed(sides[side])
            best[side] = min(seconds, best.get(side, seconds))

    words = sum(len(text.split()) for text in texts)  # as ingest counts words_embedded
    windowed = sum(1 for text in texts if len(embedder.windows(text)) > 1)
    cosines = np.sum(np.asarray(vectors["ours"]) * np.asarray(vectors["bare"]), axis=1)
    rows = [
        {
            "side": side,
            "texts": len(texts),
            "words": words,
            "seconds": best[side],
            "texts_s": len(texts) / best[side],
            "words_s": words / best[side],
        }
        for side in ("bare", "ours")
    ]
    print_table(
        rows,
        ["side", "texts", "words", "seconds", "texts_s", "words_s"],
        title=f"embed: batch size {BATCH_SIZE}, best of {REPEATS}, model loaded in {load_s:.1f} s",
    )
    print(
        f"texts needing more than one window (windowed by ours): {windowed}; "
        f"cosine ours vs bare: mean {cosines.mean():.4f}, min {cosines.min():.4f}"
    )
    speed = ratio(best["bare"], best["ours"])
    return {
        "summary": summary(
            f"ours {rows[1]['words_s']:,.0f} words/s, bare {rows[0]['words_s']:,.0f} words/s, "
            f"cosine {cosines.mean():.4f}",
            speed,
            f">= {TARGET}x",
            speed is not None and speed >= TARGET,
        ),
        "batch_size": BATCH_SIZE,
        "repeats": REPEATS,
        "model_load_s": load_s,
        "sides": rows,
        "windowed_texts": windowed,
        "cosine_mean": float(cosines.mean()),
        "cosine_min": float(cosines.min()),
    }
