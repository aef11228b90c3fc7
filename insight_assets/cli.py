"""``insight-assets``: build and inspect collections without opening the Dagster UI.

Runs go through the same Dagster instance as ``dagster dev`` (``DAGSTER_HOME``, by default
``data/dagster_home``), so everything built here shows up in the UI's run history and lineage.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from pathlib import Path

DEFAULT_DAGSTER_HOME = Path("data/dagster_home")
# The methods `ask` can run; each method package adds itself here with its entry function.
ASK_METHODS = ("insightgen", "xsum", "contregen", "insight-rag", "scipip")
# Papers a topic's summary reads when none are named: those holding its best-matching chunks.
TOPIC_PAPERS = 5
# core.retrieval's RETRIEVAL_MODES and RERANKERS, spelled out so that `--help` imports nothing heavy.
SEARCH_MODES = ("dense", "lexical", "hybrid")
SEARCH_RERANKERS = ("late-interaction", "llm", "none")
# insight_rag's RETRIEVER_MODES, the first its default, spelled out for the same reason.
INSIGHT_RETRIEVERS = ("index", "sentences", "llm")
# Step events go to the run log (and the UI); the terminal gets INFO lines only.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
# Console-log records left out of the terminal: stack traces, and the steps skipped because an
# earlier one failed. The failed step's own message is printed after the run instead.
_UNSHOWN_RECORDS = ("Stack Trace:", ". Not executing.")


def _instance():
    import dagster as dg

    from insight_assets.defs.instance import ensure_instance_config

    if not os.environ.get("DAGSTER_HOME"):
        os.environ["DAGSTER_HOME"] = str(DEFAULT_DAGSTER_HOME.resolve())
    # As ./run does: telemetry off, a run queue and pools sized to the cores.
    try:
        outcome = ensure_instance_config(Path(os.environ["DAGSTER_HOME"]))
    except ValueError as exc:
        raise SystemExit(f"Cannot configure the Dagster instance: {exc}") from None
    if outcome.message:
        print(outcome.message, file=sys.stderr)
    return dg.DagsterInstance.get()


class _FailuresInBrief(io.TextIOBase):
    """Standard error for a run's console log, without stack traces and skipped-step notices.

    Dagster logs a failed step with its stack trace, then one error per step it skips. Here the
    failed step's message, printed after the run, says what went wrong and what to do; the full log
    (traces included) stays in the run's log in the UI. The console logger writes each record in one
    call, so a record is kept or dropped whole.
    """

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        if not any(marker in text for marker in _UNSHOWN_RECORDS):
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def failure_reasons(result) -> list[str]:
    """Why each failed step of a run failed: a ``dg.Failure``'s description, else the error's message."""
    reasons = []
    for event in result.all_events:
        if event.event_type_value != "STEP_FAILURE":
            continue
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            reason = data.user_failure_data.description
        else:
            reason = f"{data.error.cls_name}: {data.error.message.strip()}" if data.error else "unknown error"
        reasons.append(f"{event.step_key}: {reason}")
    return reasons


def _storage():
    from insight_assets.defs.resources import StorageResource

    return StorageResource()


def build(collections: list[str], *, every: bool) -> int:
    """Register each collection as a partition and materialize all its assets."""
    from insight_assets.definitions import defs
    from insight_assets.defs.automation import collection_folders
    from insight_assets.defs.in_process import end_abandoned_runs, process_tags
    from insight_assets.defs.runs import register_collections

    storage = _storage()
    available = collection_folders(Path(storage.collections_root))
    if every:
        collections = sorted(available)
    if not collections:
        print(f"No collections to build under {Path(storage.collections_root).resolve()}.", file=sys.stderr)
        return 2
    for name in collections:
        problem = _known_collection(storage, name)
        if problem:
            print(problem, file=sys.stderr)
            return 2

    missing_key = _missing_key()
    if missing_key:
        print(missing_key, file=sys.stderr)
        return 2
    instance = _instance()
    for run_id in end_abandoned_runs(instance):
        print(f"Run {run_id} of an earlier build was left unfinished (its process died); marked failed.")
    register_collections(instance, collections)
    job = defs.resolve_job_def("build_collection")
    failed = []
    for name in collections:
        print(f"Building collection {name!r} ...", flush=True)
        with contextlib.redirect_stderr(_FailuresInBrief(sys.stderr)):
            result = job.execute_in_process(
                instance=instance,
                partition_key=name,
                raise_on_error=False,
                run_config=QUIET_RUN_CONFIG,
                tags=process_tags(),
            )
        if not result.success:
            failed.append(name)
            for reason in failure_reasons(result):
                print(f"  {reason}", file=sys.stderr)
            print(f"  (the run's full log: run {result.run_id} in the UI, ./run ui -> Runs)", file=sys.stderr)
    print()
    print(summary(storage, collections))
    if failed:
        return 1
    print("\nOpen the UI with `./run ui` (or `dagster dev`) and go to http://127.0.0.1:3000 -> Assets.")
    return 0


def summary(storage, collections: list[str]) -> str:
    """One line per collection: documents, problems, chunks per profile, vectors, pairs, citation links."""
    warehouse = storage.warehouse
    lines = []
    for name in collections:
        documents = warehouse.rows("SELECT count(*) AS n FROM parsed_documents WHERE collection = ?", [name])[
            0
        ]["n"]
        problems = warehouse.rows(
            "SELECT file, kind FROM parse_problems WHERE collection = ? AND severity = 'error' ORDER BY file",
            [name],
        )
        chunk_counts = warehouse.rows(
            "SELECT profile, count(*) AS n FROM chunks WHERE collection = ? GROUP BY profile ORDER BY profile",
            [name],
        )
        vectors = storage.vectors.read(name, ["profile"])
        pairs = warehouse.rows(
            "SELECT count(*) AS n FROM generated_answers WHERE collection = ? AND status = 'kept'", [name]
        )[0]["n"]
        links = warehouse.rows("SELECT count(*) AS n FROM citations WHERE collection = ?", [name])[0]["n"]
        chunks_text = ", ".join(f"{row['n']} {row['profile']} chunks" for row in chunk_counts) or "no chunks"
        lines.append(
            f"{name}: {documents} documents, {chunks_text}, {vectors.num_rows if vectors is not None else 0} vectors, "
            f"{pairs} question-answer pairs, {links} citation links"
            + (
                f"; {len(problems)} unusable file(s): "
                + ", ".join(f"{p['file']} ({p['kind']})" for p in problems)
                if problems
                else ""
            )
        )
    lines.append(f"Tables: {Path(storage.warehouse_path).resolve()}  Vectors: {storage.lancedb_uri}")
    reports = [
        report for name in collections for report in sorted((Path(storage.reports_dir) / name).glob("*.md"))
    ]
    if reports:
        lines.append("Reports: " + "  ".join(str(report) for report in reports))
    return "\n".join(lines)


def list_collections() -> int:
    from insight_assets.defs.automation import collection_folders

    storage = _storage()
    folders = collection_folders(Path(storage.collections_root))
    if not folders:
        print(f"No collections under {Path(storage.collections_root).resolve()}.")
        return 0
    print(summary(storage, sorted(folders)))
    return 0


def _known_collection(storage, name: str) -> str | None:
    """An error message when ``name`` is not a valid, existing collection."""
    from insight_assets.defs.automation import collection_folders
    from insight_assets.defs.partitions import InvalidCollectionKey, validate_collection_key

    try:
        validate_collection_key(name)
    except InvalidCollectionKey as error:
        return str(error)
    available = collection_folders(Path(storage.collections_root))
    if name not in available:
        return (
            f"No folder for collection {name!r} under {Path(storage.collections_root).resolve()}; "
            f"known collections: {', '.join(available) or 'none'}."
        )
    return None


def export(collection: str, output: str) -> int:
    """Write a collection's kept question-answer pairs as SCOpE-QA-style JSONL."""
    from insight_assets.core import curation

    storage = _storage()
    problem = _known_collection(storage, collection)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    answers = curation.load_answers(storage.warehouse, collection)
    if not answers:
        print(
            f"Collection {collection!r} has no question-answer pairs yet; build it first: "
            f"insight-assets build --collection {collection}",
            file=sys.stderr,
        )
        return 1
    titles = curation.load_titles(storage.warehouse, collection)
    records = curation.export_records(collection, answers, titles)
    if output == "-":
        curation.write_jsonl(records, sys.stdout)
    else:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        with open(output, "w", encoding="utf-8") as stream:
            curation.write_jsonl(records, stream)
        print(
            f"Wrote {len(records)} question-answer pairs of {collection!r} to {Path(output).resolve()}",
            file=sys.stderr,
        )
    return 0


def estimate(collection: str, provider: str | None, model: str | None, base_url: str | None) -> int:
    """Print what a collection's model calls would cost, calling no model."""
    from insight_assets.core.llm import ConfigurationError
    from insight_assets.defs.estimate import (
        estimate_collection,
        estimate_columns,
        estimate_rows,
        total_seconds,
    )
    from insight_assets.defs.metadata import markdown_table
    from insight_assets.defs.resources import EmbedderResource, LLMResource

    storage = _storage()
    problem = _known_collection(storage, collection)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if not storage.warehouse.rows(
        "SELECT 1 FROM parsed_documents WHERE collection = ? LIMIT 1", [collection]
    ):
        print(
            f"Collection {collection!r} has not been parsed yet; run: insight-assets build --collection {collection}",
            file=sys.stderr,
        )
        return 1
    llm = LLMResource(provider=provider, model=model, base_url=base_url)
    try:
        estimates = estimate_collection(storage, llm, EmbedderResource(), collection)
    except ConfigurationError as error:
        print(f"Cannot estimate: {error}", file=sys.stderr)
        return 2
    print(markdown_table(estimate_rows(estimates), estimate_columns(estimates)))
    seconds = total_seconds(estimates)
    if seconds is not None:
        print(f"\nExpected wall time of the model calls: about {seconds / 60:.0f} minutes on this machine.")
    for note in sorted({e.note for e in estimates if e.note}):
        print(f"\nNote: {note}")
    print(
        "\nOutput tokens assume each task's typical answer; max_cost_usd assumes every answer uses its "
        "whole max_tokens. Prompts already in the cache count as free."
    )
    return 0


def _missing_key() -> str | None:
    """Why the model the environment selects cannot run, before any run starts."""
    from insight_assets.core.llm import ConfigurationError

    try:
        _environment_llm().settings().check_ready()
    except ConfigurationError as error:
        return f"INSIGHT_ASSETS_LLM_PROVIDER: {error} (unset it to build offline)."
    return None


class AnswerUnavailable(RuntimeError):
    """No answer could be generated for an asked question; the message says why."""


def _environment_llm():
    """The model the environment selects (INSIGHT_ASSETS_LLM_*), its key read at call time."""
    from insight_assets.defs.resources import LLMResource

    return LLMResource()


def ask(collection: str, question: str, answer: str | None) -> int:
    """Answer (unless given) and related insights for one question, from the stored index."""
    from insight_assets.core.curation import QAPair
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import insightgen
    from insight_assets.defs.resources import EmbedderResource

    storage = _storage()
    problem = _known_collection(storage, collection) or _missing_key()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    embedder = EmbedderResource().get_embedder()
    try:
        index, cluster_index = insightgen.load_insightgen_index(
            storage.warehouse, storage.vectors, collection, embedder.variant
        )
    except IndexMissing as error:
        print(
            f"collection {collection!r}: {error} (insight-assets build --collection {collection} builds everything).",
            file=sys.stderr,
        )
        return 1
    with _environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            cited: tuple[str, ...] = ()
            if answer is None:
                answer, cited = _generated_answer(
                    client, storage, index, collection, question, embedder.embed
                )
            pair = QAPair("ask", question, answer)
            settings = insightgen.InsightGenSettings(methods=("insightgen",))
            result = insightgen.run_insightgen(client, [pair], index, cluster_index, embedder.embed, settings)
        except (LLMError, AnswerUnavailable) as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        print(f"Question: {question}\n\nAnswer ({client.provider_label if cited else 'given'}):\n{answer}")
        if cited:
            print("\nCited: " + "; ".join(index.titles.get(doc_id, doc_id) for doc_id in cited))
        (run,) = result.outcome.runs
        if not run.insights:
            print(f"\nNo insights: {run.error}", file=sys.stderr)
            return 1
        print(f"\nRelated insights ({client.provider_label}):")
        for number, insight in enumerate(run.insights, start=1):
            sources = "; ".join(index.source_labels.get(chunk_id, chunk_id) for chunk_id in insight.chunk_ids)
            print(
                f"\n{number}. [{insight.type}] {insight.hook}\n   {insight.body}\n   → {insight.realization}"
            )
            print(f"   Sources: {sources}")
        summary = client.summary()
        print(f"\n{summary.calls} model calls, {summary.cache_hits} from cache, cost ${summary.cost_usd:.4f}")
    return 0


def search(collection: str, query: str, *, k: int, mode: str, reranker: str, candidates: int) -> int:
    """The chunks that best match a query, with their papers and pages (the shared retrieval layer)."""
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.retrieval import Retriever, rerank
    from insight_assets.defs.resources import EmbedderResource

    storage = _storage()
    problem = _known_collection(storage, collection) or (_missing_key() if reranker == "llm" else None)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    embedder = EmbedderResource().get_embedder()
    try:
        retriever = Retriever.open(storage.warehouse, storage.vectors, collection, embedder)
    except IndexMissing as error:
        print(
            f"collection {collection!r}: {error} (insight-assets build --collection {collection} builds it).",
            file=sys.stderr,
        )
        return 1
    hits = retriever.search(query, k=max(k, candidates) if reranker != "none" else k, mode=mode)
    try:
        with _environment_llm().client(asset="search", partition=collection, run_id=None) as client:
            hits = rerank(query, hits, top_n=k, reranker=reranker, llm=client)
    except LLMError as error:
        print(f"Cannot rerank: {error}", file=sys.stderr)
        return 1
    if not hits:
        print(f"No chunk of {collection!r} matches {query!r} ({mode} search).")
        return 1
    for number, hit in enumerate(hits, start=1):
        found = "+".join(hit.found_by) + (f", reranked by {hit.reranker}" if hit.reranker else "")
        text = " ".join(hit.text.split())
        print(f"\n{number}. {hit.title}, {hit.pages}  [score {hit.score:.3f}; {found}]")
        print(f"   {text[:300]}{'…' if len(text) > 300 else ''}")
    return 0


def summarize(collection: str, topic: str | None, papers: list[str] | None) -> int:
    """The stored XSum summaries of a collection, or a new one for ``topic`` over ``papers`` (or
    the papers best matching the topic), with its citations."""
    storage = _storage()
    problem = _known_collection(storage, collection) or (_missing_key() if topic else None)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if topic is None:
        return _stored_summaries(storage, collection)
    return _new_summary(storage, collection, topic, papers)


def _stored_summaries(storage, collection: str) -> int:
    rows = storage.warehouse.rows(
        """SELECT t.kind, t.topic, s.rendered, s.status FROM xsum_summaries s
           JOIN xsum_targets t USING (collection, target_id)
           WHERE s.collection = ? AND s.method = 'xsum' AND s.rendered IS NOT NULL ORDER BY t.kind, t.topic""",
        [collection],
    )
    if not rows:
        print(
            f"collection {collection!r} has no stored summaries: build it (insight-assets build -c {collection}) "
            "or name a --topic.",
            file=sys.stderr,
        )
        return 1
    for row in rows:
        flag = " [truncated]" if row["status"] == "truncated" else ""
        print(f"\n## {row['topic']} ({row['kind']}){flag}\n\n{row['rendered']}")
    return 0


def _resolve_papers(storage, collection: str, names: list[str]) -> tuple[list[str], list[str]]:
    """Document ids for ``names`` (an id or its first 8+ characters, a file name, or a title), and
    the names that match no paper."""
    from insight_assets.core.citations.references import fold

    rows = storage.warehouse.rows(
        "SELECT doc_id, file, title FROM parsed_documents WHERE collection = ?", [collection]
    )
    found, unknown = [], []
    for name in names:
        matches = [
            row["doc_id"]
            for row in rows
            if name == row["doc_id"]
            or (len(name) >= 8 and row["doc_id"].startswith(name))
            or name == row["file"]
            or (fold(name) and fold(name) == fold(row["title"] or ""))
        ]
        (found if len(matches) == 1 else unknown).append(matches[0] if len(matches) == 1 else name)
    return list(dict.fromkeys(found)), unknown


def _new_summary(storage, collection: str, topic: str, names: list[str] | None) -> int:
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import xsum
    from insight_assets.core.methods.xsum import load
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import load_sources
    from insight_assets.defs.resources import EmbedderResource

    embedder = EmbedderResource().get_embedder()
    try:
        retriever = Retriever.open(storage.warehouse, storage.vectors, collection, embedder, xsum.PROFILE)
    except IndexMissing as error:
        print(
            f"collection {collection!r}: {error} (insight-assets build --collection {collection} builds it).",
            file=sys.stderr,
        )
        return 1
    if names:
        doc_ids, unknown = _resolve_papers(storage, collection, names)
        if unknown:
            print(f"No single paper of {collection!r} matches: {'; '.join(unknown)}", file=sys.stderr)
            return 2
    else:
        hits = retriever.search(topic, k=50, mode="hybrid")
        doc_ids = list(dict.fromkeys(hit.doc_id for hit in hits))[:TOPIC_PAPERS]
    doc_ids = [doc for doc in doc_ids if doc in retriever.documents]
    if not doc_ids:
        print(f"No paper of {collection!r} has text to summarize for {topic!r}.", file=sys.stderr)
        return 1
    target = xsum.SummaryTarget("cli", "user", topic, tuple(doc_ids))
    papers = {paper.doc_id: paper for paper in load.load_papers(storage.warehouse, collection)}
    sources = load_sources(storage.warehouse, collection, xsum.PROFILE)
    with _environment_llm().client(asset="summarize", partition=collection, run_id=None) as client:
        try:
            result = xsum.summarize(client, retriever, target, papers, sources)
        except LLMError as error:
            print(f"Cannot summarize: {error}", file=sys.stderr)
            return 1
        summary = result.summary
        answered = sum(answer.status == xsum.ANSWERED for answer in result.answers)
        print(f"Topic: {topic}\nPapers: " + "; ".join(papers[doc].title for doc in doc_ids))
        print(
            f"Questions: {len(result.questions)}, answered {answered}, abstained "
            f"{sum(a.status == xsum.ABSTAINED for a in result.answers)}"
        )
        if not summary.text:
            print(f"\nNo summary: {summary.error}", file=sys.stderr)
            return 1
        flag = " (cut off at max_tokens)" if summary.status == xsum.TRUNCATED else ""
        print(f"\nSummary ({client.provider_label}){flag}:\n{summary.rendered}")
        print("\nSources:")
        for number, chunk_id in enumerate(summary.cited, start=1):
            print(f"  {number}. {sources[chunk_id].label if chunk_id in sources else chunk_id}")
        calls = client.summary()
        print(f"\n{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0


def ask_contregen(collection: str, question: str) -> int:
    """ConTReGen for one question: the tree, its synthesis into a cited answer, the tree shown."""
    from insight_assets.core.clustering import theme_labels
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import contregen
    from insight_assets.core.methods.contregen.report import tree_text
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import load_sources, render_citations
    from insight_assets.defs.resources import EmbedderResource

    storage = _storage()
    try:
        retriever = Retriever.open(
            storage.warehouse,
            storage.vectors,
            collection,
            EmbedderResource().get_embedder(),
            contregen.PROFILE,
        )
    except IndexMissing as error:
        print(
            f"collection {collection!r}: {error} (insight-assets build --collection {collection} builds it).",
            file=sys.stderr,
        )
        return 1
    themes = theme_labels(storage.warehouse, collection)
    asked = contregen.TreeQuestion("cli", question, source="cli")
    with _environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            (tree,), found = contregen.grow_trees(client, retriever, [asked], themes=themes)
            sources = {**load_sources(storage.warehouse, collection, contregen.PROFILE), **found}
            (answer,) = contregen.write_answers(client, retriever, [tree], sources, baselines=False)
        except LLMError as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        if not answer.text:
            print(f"No answer: {answer.error}", file=sys.stderr)
            return 1
        flag = " (cut off at max_tokens)" if answer.status == contregen.schemas.TRUNCATED else ""
        print(f"Question: {question}\n\nAnswer ({client.provider_label}){flag}:\n")
        print(render_citations(answer.text, sources))
        print("\nTree (sub-questions, whether kept, and the sources each kept):\n")
        print(tree_text(tree, sources))
        calls = client.summary()
        print(f"\n{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0


def ask_insight_rag(collection: str, question: str, mode: str) -> int:
    """Insight-RAG for one question: the identified insights, what the retriever returned for each
    (with sources), and the answer generated from them."""
    import dagster as dg

    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import insight_rag
    from insight_assets.core.methods.insight_rag.schemas import BURIED, OK
    from insight_assets.core.retrieval.citing import render_citations
    from insight_assets.defs.insight_rag import open_setup
    from insight_assets.defs.resources import EmbedderResource

    storage = _storage()
    problem = _known_collection(storage, collection) or _missing_key()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        settings = insight_rag.AnswerSettings(retriever_modes=(mode,))
        setup = open_setup(storage, EmbedderResource(), collection, settings)
    except dg.Failure as error:
        print(
            f"{error.description} (insight-assets build --collection {collection} builds it).",
            file=sys.stderr,
        )
        return 1
    asked = insight_rag.BenchmarkItem(item_id="cli", kind=BURIED, question=question)
    with _environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            (identified,) = insight_rag.identify(client, [asked], setup)
            if identified.status != OK:
                reason = identified.error or "it found no fragment to complete"
                print(f"The insight identifier gave nothing to retrieve: {reason}", file=sys.stderr)
                return 1
            (answered,) = insight_rag.answer(client, [asked], [identified], setup, baselines=False)
        except LLMError as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        print(f"Question: {question}\n\nIdentified insights ({client.provider_label}):")
        for found in identified.insights:
            print(f"- {found.insight} … ({'several answers' if found.multi_answer else 'one answer'})")
        print(f"\nRetrieved insights ({mode} retriever):")
        for number, (text, chunk_id) in enumerate(
            zip(answered.insights, answered.passage_chunk_ids, strict=True), start=1
        ):
            source = setup.sources.get(chunk_id)
            print(f"{number}. {text}\n   Source: {source.label if source else chunk_id}")
        if not answered.insights:
            print("(none)")
        if answered.status != OK:
            print(f"\nNo answer: {answered.error}", file=sys.stderr)
            return 1
        print(f"\nAnswer ({client.provider_label}):\n{render_citations(answered.answer, setup.sources)}")
        calls = client.summary()
        print(f"\n{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0


def ideas(collection: str, background: str | None, file: str | None) -> int:
    """SciPIP's ideas for research backgrounds (one given, or a file of them): the papers retrieved
    with the routes that found them, and the dual path's ideas with the papers that inspired them."""
    import dagster as dg

    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import scipip
    from insight_assets.defs.resources import EmbedderResource
    from insight_assets.defs.scipip import load_library

    storage = _storage()
    problem = _known_collection(storage, collection) or _missing_key()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if file:
        backgrounds, problems = scipip.read_backgrounds(Path(file))
        for found in problems:
            print(f"{file}: {found.message}", file=sys.stderr)
        if not Path(file).exists():
            print(f"No file {file!r}.", file=sys.stderr)
            return 2
    else:
        text = (background or "").strip()
        backgrounds = [scipip.Background(scipip.backgrounds.background_id(text), text)] if text else []
    if not backgrounds:
        print("No research background to propose ideas for.", file=sys.stderr)
        return 2
    embedder = EmbedderResource()
    try:
        library = load_library(storage, embedder, collection)
    except dg.Failure as error:
        print(
            f"{error.description} (insight-assets build --collection {collection} builds it).",
            file=sys.stderr,
        )
        return 1
    rows = storage.warehouse.rows(
        "SELECT doc_id, title, method FROM scipip_papers WHERE collection = ? AND status = 'ok'", [collection]
    )
    papers = {row["doc_id"]: scipip.Paper(row["title"], row["method"]) for row in rows}
    with _environment_llm().client(asset="ideas", partition=collection, run_id=None) as client:
        try:
            queries = scipip.make_queries(client, embedder.get_embedder().embed, backgrounds)
            runs = scipip.propose_ideas(client, library, papers, queries)
        except LLMError as error:
            print(f"Cannot propose ideas: {error}", file=sys.stderr)
            return 1
        for run in runs:
            print(f"Background: {run.query.background}\n\nRetrieved papers (SKC, then the filter):")
            for doc in run.retrieval.selected:
                print(
                    f"- {papers[doc].title if doc in papers else doc}  [{', '.join(run.retrieval.routes[doc])}]"
                )
            print(f"\nIdeas ({client.provider_label}):")
            for number, (idea, detail) in enumerate(zip(run.integrated, run.expanded, strict=True), start=1):
                print(f"\n{number}. {idea.title}\n   {idea.idea}")
                if detail is not None and detail.method != f"{idea.title}: {idea.idea}":  # offline repeats it
                    print(f"   Problem: {detail.problem}\n   Method: {detail.method}")
                    print(f"   Expected outcome: {detail.expected_outcome}")
                if idea.inspired_by:
                    print(f"   Inspired by: {'; '.join(idea.inspired_by)}")
            for error in run.errors:
                print(f"{error}", file=sys.stderr)
            print()
        calls = client.summary()
        print(f"{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0 if any(run.integrated for run in runs) else 1


def _generated_answer(
    client, storage, index, collection: str, question: str, embed
) -> tuple[str, tuple[str, ...]]:
    """An answer from the compressed papers nearest the question (by their stored chunk vectors)."""
    import numpy as np

    from insight_assets.core import curation

    compressed = curation.load_compressed(storage.warehouse, collection)
    query = np.asarray(embed([question]), dtype=np.float32)[0]
    nearest = index.nearest_documents(
        query,
        curation.AnswerSettings().max_documents_for_user_questions,
        among={doc.document_id for doc in compressed},
    )
    asked = curation.Question(
        question_id=curation.question_id(question, ()),
        question=question,
        document_ids=tuple(sorted(nearest)),
        combination_index=None,
        source=curation.USER,
    )
    outcome = curation.generate_answers(client, [asked], compressed, curation.AnswerSettings(), embed)
    (result,) = outcome.answers
    if result.status != "kept":
        raise AnswerUnavailable(result.error or outcome.budget_error or "no answer was produced")
    return result.answer, result.cited_document_ids


def main(argv: list[str] | None = None) -> int:
    # The bundled embedder needs no network; say so before transformers looks for one.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    parser = argparse.ArgumentParser(prog="insight-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="materialize every asset of one or more collections")
    build_parser.add_argument(
        "--collection", "-c", action="append", default=[], help="collection (folder) name; repeatable"
    )
    build_parser.add_argument("--all", action="store_true", help="every folder under the collections root")
    commands.add_parser("collections", help="list collections and what has been built for them")
    export_parser = commands.add_parser("export", help="write a collection's question-answer pairs as JSONL")
    export_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    export_parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
    estimate_parser = commands.add_parser(
        "estimate", help="dry run: tokens and cost of a collection's model calls, calling no model"
    )
    estimate_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    estimate_parser.add_argument(
        "--provider", help="offline, local, openai, anthropic, gemini or openai-compatible"
    )
    estimate_parser.add_argument(
        "--model", help="model name, or for local a GGUF file (default: the provider's default)"
    )
    estimate_parser.add_argument("--base-url", help="server address, for openai-compatible")
    ask_parser = commands.add_parser(
        "ask", help="answer a question and list related insights, from a built collection"
    )
    ask_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    ask_parser.add_argument("question", help="the question, in quotes")
    ask_parser.add_argument("--answer", help="your answer; without it one is generated from the papers")
    ask_parser.add_argument(
        "--method",
        choices=ASK_METHODS,
        default=ASK_METHODS[0],
        help="the method that answers (default: %(default)s)",
    )
    ask_parser.add_argument(
        "--retriever",
        choices=INSIGHT_RETRIEVERS,
        default=INSIGHT_RETRIEVERS[0],
        help="insight-rag's insight retriever (default: %(default)s)",
    )
    search_parser = commands.add_parser(
        "search", help="the chunks of a built collection that best match a query, with papers and pages"
    )
    search_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    search_parser.add_argument("query", help="the query, in quotes")
    search_parser.add_argument("-k", type=int, default=10, help="chunks to show (default: %(default)s)")
    search_parser.add_argument(
        "--mode", choices=SEARCH_MODES, default="hybrid", help="first-stage search (default: %(default)s)"
    )
    search_parser.add_argument(
        "--rerank",
        choices=SEARCH_RERANKERS,
        default="late-interaction",
        help="second stage (default: %(default)s)",
    )
    search_parser.add_argument(
        "--candidates",
        type=int,
        default=100,
        help="first-stage hits the reranker reads (default: %(default)s)",
    )
    summarize_parser = commands.add_parser(
        "summarize",
        help="a cited multi-paper summary (XSum): the stored ones, or one for a topic and papers you name",
    )
    summarize_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    summarize_parser.add_argument(
        "--topic", help="what to summarize; without it, the summaries `build` wrote"
    )
    summarize_parser.add_argument(
        "--papers",
        nargs="+",
        help=f"document ids, file names or titles (default: the {TOPIC_PAPERS} papers best matching the topic)",
    )
    ideas_parser = commands.add_parser(
        "ideas", help="research ideas for a background (SciPIP), with the papers that inspired them"
    )
    ideas_parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")
    ideas_parser.add_argument("background", nargs="?", help="the research background, in quotes")
    ideas_parser.add_argument(
        "--file", help='a backgrounds file: JSON Lines of {"background": ...} or a JSON array'
    )
    args = parser.parse_args(argv)
    if args.command == "ideas" and bool(args.background) == bool(args.file):
        parser.error("ideas needs a background or --file, not both")
    if args.command == "summarize" and args.papers and not args.topic:
        parser.error("--papers needs --topic")
    if args.command == "search":
        return search(
            args.collection,
            args.query,
            k=args.k,
            mode=args.mode,
            reranker=args.rerank,
            candidates=args.candidates,
        )
    if args.command == "ask":
        if args.method == "xsum":
            return summarize(args.collection, args.question, None)
        if args.method == "contregen":
            return ask_contregen(args.collection, args.question)
        if args.method == "insight-rag":
            return ask_insight_rag(args.collection, args.question, args.retriever)
        if args.method == "scipip":
            return ideas(args.collection, args.question, None)
        return ask(args.collection, args.question, args.answer)
    if args.command == "summarize":
        return summarize(args.collection, args.topic, args.papers)
    if args.command == "ideas":
        return ideas(args.collection, args.background, args.file)
    if args.command == "build":
        return build(args.collection, every=args.all)
    if args.command == "export":
        return export(args.collection, args.output)
    if args.command == "estimate":
        return estimate(args.collection, args.provider, args.model, args.base_url)
    return list_collections()


if __name__ == "__main__":
    sys.exit(main())
