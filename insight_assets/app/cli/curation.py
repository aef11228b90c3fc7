"""``insight-assets export``: a collection's question-answer pairs as JSONL."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insight_assets.app.commands import Command, add_collection_argument, known_collection, storage_resource


def export(args: argparse.Namespace) -> int:
    """Write a collection's kept question-answer pairs as SCOpE-QA-style JSONL."""
    collection, output = args.collection, args.output
    from insight_assets.core import curation
    from insight_assets.core.ingestion.ingest import paper_titles

    storage = storage_resource()
    problem = known_collection(storage, collection)
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
    titles = paper_titles(storage.warehouse, collection)
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


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")


COMMANDS = (
    Command("export", "write a collection's question-answer pairs as JSONL", export, _export_arguments),
)
