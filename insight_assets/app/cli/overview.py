"""``insight-assets report``: (re)write a collection's page and print where it is."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insight_assets.app.build_runs import run_job
from insight_assets.app.commands import (
    Command,
    add_collection_argument,
    failure_reasons,
    instance,
    known_collection,
    missing_key,
    storage_resource,
)


def report(args: argparse.Namespace) -> int:
    """Materialize ``collection_report`` for the collection (a run in the UI's history like any
    other) and print the page's path."""
    collection = args.collection
    storage = storage_resource()
    problem = known_collection(storage, collection) or missing_key()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    import dagster as dg

    from insight_assets.definitions import defs
    from insight_assets.defs.overview.assets import PAGE_FILE
    from insight_assets.defs.runs import register_collections

    dagster_instance = instance()
    register_collections(dagster_instance, [collection])
    key = dg.AssetKey("collection_report")
    job = defs.resolve_implicit_job_def_def_for_assets([key])
    result = run_job(job, dagster_instance, collection, asset_selection=[key])
    if not result.success:
        for reason in failure_reasons(result):
            print(f"  {reason}", file=sys.stderr)
        return 1
    print((Path(storage.reports_dir) / collection / PAGE_FILE).resolve())
    return 0


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)


COMMANDS = (
    Command(
        "report",
        "(re)write a collection's page, data/reports/<collection>/index.html, and print its path",
        report,
        _report_arguments,
    ),
)
