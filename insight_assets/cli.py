"""``insight-assets``: build and inspect collections without opening the Dagster UI.

Runs go through the same Dagster instance as ``dagster dev`` (``DAGSTER_HOME``, by default
``data/dagster_home``), so everything built here shows up in the UI's run history and lineage.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

DEFAULT_DAGSTER_HOME = Path("data/dagster_home")
# Step events go to the run log (and the UI); the terminal gets INFO lines only.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def _instance():
    import dagster as dg

    if not os.environ.get("DAGSTER_HOME"):
        DEFAULT_DAGSTER_HOME.mkdir(parents=True, exist_ok=True)
        os.environ["DAGSTER_HOME"] = str(DEFAULT_DAGSTER_HOME.resolve())
    return dg.DagsterInstance.get()


def _storage():
    from insight_assets.defs.resources import StorageResource

    return StorageResource()


def build(collections: list[str], *, every: bool) -> int:
    """Register each collection as a partition and materialize all its assets."""
    from insight_assets.definitions import defs
    from insight_assets.defs.automation import collection_folders
    from insight_assets.defs.partitions import InvalidCollectionKey, validate_collection_key
    from insight_assets.defs.runs import register_collections

    storage = _storage()
    available = collection_folders(Path(storage.collections_root))
    if every:
        collections = sorted(available)
    if not collections:
        print(f"No collections to build under {Path(storage.collections_root).resolve()}.", file=sys.stderr)
        return 2
    for name in collections:
        try:
            validate_collection_key(name)
        except InvalidCollectionKey as error:
            print(error, file=sys.stderr)
            return 2
        if name not in available:
            print(
                f"No folder for collection {name!r} under {Path(storage.collections_root).resolve()}; "
                f"known collections: {', '.join(available) or 'none'}.",
                file=sys.stderr,
            )
            return 2

    instance = _instance()
    register_collections(instance, collections)
    job = defs.resolve_job_def("build_collection")
    failed = []
    for name in collections:
        print(f"Building collection {name!r} ...", flush=True)
        result = job.execute_in_process(
            instance=instance, partition_key=name, raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        if not result.success:
            failed.append(name)
            print(f"  run {result.run_id} failed; see `dagster dev` -> Runs for the step that failed.", file=sys.stderr)
    print()
    print(summary(storage, collections))
    if failed:
        return 1
    print("\nOpen the UI with `./run ui` (or `dagster dev`) and go to http://127.0.0.1:3000 -> Assets.")
    return 0


def summary(storage, collections: list[str]) -> str:
    """One line per collection: documents, problems, chunks per profile, vectors."""
    warehouse = storage.warehouse
    lines = []
    for name in collections:
        documents = warehouse.rows("SELECT count(*) AS n FROM parsed_documents WHERE collection = ?", [name])[0]["n"]
        problems = warehouse.rows(
            "SELECT file, kind FROM parse_problems WHERE collection = ? AND severity = 'error' ORDER BY file", [name]
        )
        chunk_counts = warehouse.rows(
            "SELECT profile, count(*) AS n FROM chunks WHERE collection = ? GROUP BY profile ORDER BY profile", [name]
        )
        vectors = storage.vectors.read(name, ["profile"])
        chunks_text = ", ".join(f"{row['n']} {row['profile']} chunks" for row in chunk_counts) or "no chunks"
        lines.append(
            f"{name}: {documents} documents, {chunks_text}, {vectors.num_rows if vectors is not None else 0} vectors"
            + (f"; {len(problems)} unusable file(s): " + ", ".join(f"{p['file']} ({p['kind']})" for p in problems) if problems else "")
        )
    lines.append(f"Tables: {Path(storage.warehouse_path).resolve()}  Vectors: {storage.lancedb_uri}")
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


def main(argv: list[str] | None = None) -> int:
    import dagster as dg

    # single-run backfill policies are marked beta; that is known and fine here.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    parser = argparse.ArgumentParser(prog="insight-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="materialize every asset of one or more collections")
    build_parser.add_argument("--collection", "-c", action="append", default=[], help="collection (folder) name; repeatable")
    build_parser.add_argument("--all", action="store_true", help="every folder under the collections root")
    commands.add_parser("collections", help="list collections and what has been built for them")
    args = parser.parse_args(argv)
    if args.command == "build":
        return build(args.collection, every=args.all)
    return list_collections()


if __name__ == "__main__":
    sys.exit(main())
