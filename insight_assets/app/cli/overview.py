"""``insight-assets report``: (re)write a collection's page and print where it is; ``insight-assets
changes``: what the last build (or the builds since one) changed."""

from __future__ import annotations

import argparse
import json
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


def changes(args: argparse.Namespace) -> int:
    """Print the digest of what the collection's last build changed (or every build after
    ``--since``), as Markdown or, with ``--json``, as the MCP tool ``what_changed`` gives it."""
    from insight_assets.core.changes import store
    from insight_assets.core.changes.digest import as_markdown
    from insight_assets.core.collection_sources import InvalidCollectionKey, validate_collection_key

    try:
        validate_collection_key(args.collection)
        data = store.digest_data(storage_resource().warehouse, args.collection, args.since)
    except (InvalidCollectionKey, store.NoSuchBuild) as error:
        print(error, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(as_markdown(data, page_link=None), end="")
    return 0


def _changes_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument(
        "--since",
        metavar="BUILD|DATE",
        help="what every build after this one changed: a build (its run id, or the start of one) or a "
        "date (YYYY-MM-DD: against the last build before it)",
    )
    parser.add_argument("--json", action="store_true", help="the digest as JSON")


COMMANDS = (
    Command(
        "report",
        "(re)write a collection's page, data/reports/<collection>/index.html, and print its path",
        report,
        _report_arguments,
    ),
    Command(
        "changes",
        "what the last build of a collection changed: papers, themes and findings, each with the papers it "
        "cites or was made from",
        changes,
        _changes_arguments,
    ),
)
