"""The commands that span every defs folder: ``build`` (one or more collections, every asset;
with a hosted model, the plan first), ``collections`` (each one, stale or not), ``deployment``
(where things live and run) and ``estimate`` (a dry run's price).

Imports stay inside the functions: ``insight-assets --help`` loads no model library.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from insight_assets.app import progress
from insight_assets.app.build_runs import run_in_processes, run_job, run_on_cluster
from insight_assets.app.commands import (
    Command,
    add_collection_argument,
    embedder_resource,
    environment_llm,
    failure_reasons,
    instance,
    known_collection,
    missing_key,
    storage_resource,
    stores,
)


def reuse_summary(result) -> str:
    """How many of a run's steps were built, how many reused their last build (nothing they read had
    changed) and how many restored an earlier one (they read what it read), and which were built."""
    builds = {}
    for event in result.all_events:
        if event.event_type_value == "ASSET_MATERIALIZATION":
            materialization = event.event_specific_data.materialization
            value = materialization.metadata.get("build")
            builds[materialization.asset_key.to_user_string()] = value.value if value else ""
    built = sorted(asset for asset, build in builds.items() if not build.startswith(progress.REUSED))
    if len(built) == len(builds):
        return f"{len(built)} step(s) built"
    named = f" ({', '.join(built)})" if len(built) <= 8 else ""
    restored = sum(build.startswith("restored") for build in builds.values())
    reused = len(builds) - len(built) - restored
    said = [f"{len(built)} step(s) built{named}", f"{reused} reused: nothing they read had changed"]
    if restored:
        said.append(f"{restored} restored: they read again what an earlier build of theirs read")
    return ", ".join(said)


def build(args: argparse.Namespace) -> int:
    """Register each collection as a partition and materialize all its assets."""
    from insight_assets.core.deployment import Deployment
    from insight_assets.defs.pools import POOLS
    from insight_assets.defs.resources import BUDGET_USD_ENV, RETRY_FAILED_ENV

    # Read by the llm resource when each step starts (this process's runs and its subprocesses).
    if args.retry_failed:
        os.environ[RETRY_FAILED_ENV] = "1"
    if args.budget_usd is not None:
        os.environ[BUDGET_USD_ENV] = str(args.budget_usd)
    # Every engine answers before the definitions load and anything is written.
    storage = storage_resource()
    deployment = Deployment.from_environment()
    deployment.check_steps(worker_resources=POOLS)

    from insight_assets.app.in_process import end_abandoned_runs
    from insight_assets.core.collection_sources import find_sources
    from insight_assets.definitions import defs
    from insight_assets.defs.runs import register_collections

    sources = find_sources(storage.collections_root)
    available = sources.collections
    collections = sorted(available) if args.all else args.collection
    problem = _why_not_build(storage, collections, sources)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    dagster_instance = instance()
    for run_id in end_abandoned_runs(dagster_instance):
        print(f"Run {run_id} of an earlier build was left unfinished (its process died); marked failed.")
    register_collections(dagster_instance, collections)
    job = defs.resolve_job_def("build_collection")
    failed = [
        name
        for name in collections
        if not _build_collection(args, dagster_instance, job, deployment, name, available[name])
    ]
    print()
    print(summary(storage, collections))
    if failed:
        return 1
    print("\nOpen the UI with `./run ui` (or `dagster dev`) and go to http://127.0.0.1:3000 -> Assets.")
    return 0


def _why_not_build(storage, collections: list[str] | None, sources) -> str | None:
    """Why the build cannot start: no collection, one unknown (of ``sources``, the project's), a
    model without its key."""
    if not collections:
        return f"No collections to build under {Path(storage.collections_root).resolve()}."
    for name in collections:
        problem = known_collection(storage, name, sources)
        if problem:
            return problem
    return missing_key()


def _build_collection(args, dagster_instance, job, deployment, name: str, source) -> bool:
    """One collection's run, with its progress on screen; whether it succeeded (why not, if not).
    Offline or with a local model its steps run in this process, one after another (nothing to wait
    for, and one model loaded); with a hosted model in processes of their own, side by side, after
    the plan and its price are shown (``app/build_plan.py``)."""
    from insight_assets.app import llm_steps
    from insight_assets.app.build_plan import Planned, plan_first
    from insight_assets.defs.catalog import build_signature
    from insight_assets.defs.sources import BUILD_SIGNATURE_TAG, source_observation

    print(f"Building collection {name!r} ...", flush=True)
    # The source as this build reads it: the UI compares it with what each asset was built from.
    dagster_instance.report_runless_asset_event(source_observation(name, source.signature()))
    tags = {BUILD_SIGNATURE_TAG: build_signature(source, environment_llm(), embedder_resource())}
    hosted = llm_steps.hosted_provider() and not deployment.dask_scheduler
    planned = Planned(go_on=True)
    if hosted and args.plan:
        resources = {"llm": environment_llm(), "storage": storage_resource(), "embedder": embedder_resource()}
        planned = plan_first(
            dagster_instance, job, name, tags, resources=resources, report=_report_run, verbose=args.verbose
        )
        if not planned.go_on:
            return False
    steps = len(job.graph.node_dict) if planned.rest is None else len(planned.rest)
    with progress.build_view(dagster_instance, name, steps, args.verbose) as view:
        tags |= view.tags
        if deployment.dask_scheduler:
            result = run_on_cluster(dagster_instance, name, tags, verbose=args.verbose)
        elif hosted:
            result = run_in_processes(dagster_instance, name, tags, planned.rest, verbose=args.verbose)
        else:
            result = run_job(job, dagster_instance, name, tags=tags, verbose=args.verbose)
    _report_run(result)
    return result.success


def _report_run(result) -> None:
    """What a run built and reused; why its failed steps failed and where its log is."""
    print(f"  {reuse_summary(result)}", flush=True)
    if not result.success:
        for reason in failure_reasons(result):
            print(f"  {reason}", file=sys.stderr)
        print(f"  (the run's full log: run {result.run_id} in the UI, ./run ui -> Runs)", file=sys.stderr)


def summary(storage, collections: list[str]) -> str:
    """One line per collection: documents, problems, chunks per profile, vectors, pairs, citation links."""
    from insight_assets.core.ingestion.ingest import paper_count

    warehouse = storage.warehouse
    lines = []
    for name in collections:
        documents = paper_count(warehouse, name)
        problems = warehouse.rows(
            "SELECT file, kind FROM parse_problems WHERE collection = ? AND severity = 'error' ORDER BY file",
            [name],
        )
        chunk_counts = warehouse.rows(
            "SELECT profile, count(*) AS n FROM chunks WHERE collection = ? GROUP BY profile ORDER BY profile",
            [name],
        )
        # As the last build wrote them: counting LanceDB's rows would load LanceDB (most of a second).
        vectors = warehouse.rows(
            "SELECT rows FROM asset_builds WHERE collection = ? AND asset = 'chunk_embeddings'", [name]
        )
        pairs = warehouse.rows(
            "SELECT count(*) AS n FROM generated_answers WHERE collection = ? AND status = 'kept'", [name]
        )[0]["n"]
        links = warehouse.rows("SELECT count(*) AS n FROM citations WHERE collection = ?", [name])[0]["n"]
        chunks_text = ", ".join(f"{row['n']} {row['profile']} chunks" for row in chunk_counts) or "no chunks"
        lines.append(
            f"{name}: {documents} documents, {chunks_text}, {vectors[0]['rows'] if vectors else 0} vectors, "
            f"{pairs} question-answer pairs, {links} citation links"
            + (
                f"; {len(problems)} unusable file(s): "
                + ", ".join(f"{p['file']} ({p['kind']})" for p in problems)
                if problems
                else ""
            )
        )
    lines.append(f"Tables: {warehouse.location}  Vectors: {storage.vectors_uri}")
    reports = [
        report
        for name in collections
        for report in sorted(
            (Path(storage.reports_dir) / name).glob("*.*"),
            key=lambda path: (path.suffix != ".html", path.name),
        )
        if report.suffix in (".html", ".md")
    ]
    if reports:
        lines.append("Reports: " + "  ".join(str(report.resolve()) for report in reports))
    return "\n".join(lines)


def list_collections(args: argparse.Namespace) -> int:
    """Each collection (folder or library collection): where it comes from, whether its source
    changed since its last build, and what has been built for it."""
    from insight_assets.core.collection_sources import find_sources
    from insight_assets.core.ingestion.ingest_store import built_source_signatures

    storage = stores()
    found = find_sources(storage.collections_root)
    for name, reason in found.unreadable.items():
        print(f"{name}: {reason}", file=sys.stderr)
    if not found.collections:
        print(f"No collections under {Path(storage.collections_root).resolve()} and no library registered.")
        return 0
    built = built_source_signatures(storage.warehouse)
    for name, source in sorted(found.collections.items()):
        if name not in built:
            state = f"not built: insight-assets build --collection {name}"
        elif built[name] != source.signature():
            state = f"STALE: its {source.kind} changed since the last build; insight-assets build --collection {name}"
        else:
            state = "up to date"
        print(f"{name} [{source.kind}: {source.origin}] {state}")
    print()
    print(summary(storage, sorted(found.collections)))
    return 0


def show_deployment(args: argparse.Namespace) -> int:
    """Where this deployment keeps its state and runs its steps, each engine tried."""
    from insight_assets.core.deployment import Deployment
    from insight_assets.defs.pools import POOLS

    deployment = Deployment.from_environment()
    print("\n".join(deployment.describe()))
    deployment.check(worker_resources=POOLS)
    print("Every engine answered.")
    return 0


def estimate(args: argparse.Namespace) -> int:
    """Print what a collection's model calls would cost, calling no model."""
    collection = args.collection
    from insight_assets.core.ingestion.ingest import paper_count
    from insight_assets.core.llm import ConfigurationError

    # Every task's row and the total: a price is read to its last line.
    from insight_assets.core.page.markdown import markdown_table
    from insight_assets.defs.dry_run import estimate_collection
    from insight_assets.defs.estimate import estimate_columns, estimate_rows, total_seconds
    from insight_assets.defs.resources import LLMResource

    storage = storage_resource()
    problem = known_collection(storage, collection)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if not paper_count(storage.warehouse, collection):
        print(
            f"Collection {collection!r} has not been parsed yet; run: insight-assets build --collection {collection}",
            file=sys.stderr,
        )
        return 1
    llm = LLMResource(provider=args.provider, model=args.model, base_url=args.base_url)
    try:
        with progress.steps_view(f"pricing {collection}", unit="steps priced", stream=sys.stderr) as view:
            estimates = estimate_collection(
                storage, llm, embedder_resource(), collection, view, every_step=args.every_step
            )
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


def _build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--collection", "-c", action="append", default=[], help="collection (folder) name; repeatable"
    )
    parser.add_argument("--all", action="store_true", help="every folder under the collections root")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="show Dagster's log lines instead of the live view"
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="ask again the model calls that failed for good on an earlier build (else they are not paid for twice)",
    )
    parser.add_argument(
        "--budget-usd",
        type=float,
        help="the most one collection's run may spend on the model, in US dollars (a call that could pass it is not sent)",
    )
    parser.add_argument(
        "--no-plan",
        dest="plan",
        action="store_false",
        help="with a hosted model, ask it without first pricing the build (the plan costs a dry run)",
    )


def _estimate_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("--provider", help="offline, local, openai, anthropic, gemini or openai-compatible")
    parser.add_argument(
        "--model", help="model name, or for local a GGUF file (default: the provider's default)"
    )
    parser.add_argument("--base-url", help="server address, for openai-compatible")
    parser.add_argument(
        "--every-step",
        action="store_true",
        help="price every step, also those the next build would reuse or restore (else they cost nothing)",
    )


COMMANDS = (
    Command("build", "materialize every asset of one or more collections", build, _build_arguments),
    Command("collections", "list collections and what has been built for them", list_collections),
    Command(
        "deployment",
        "where the instance, warehouse and vectors live and where steps run (INSIGHT_ASSETS_*), each tried",
        show_deployment,
    ),
    Command(
        "estimate",
        "dry run: tokens and cost of a collection's model calls, calling no model",
        estimate,
        _estimate_arguments,
    ),
)
