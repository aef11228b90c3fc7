"""``insight-assets summarize``: cited multi-paper summaries (XSum; its ``ask`` flow is
``defs/xsum/ask.py``)."""

from __future__ import annotations

import argparse
import sys

from insight_assets.app.commands import (
    Command,
    add_collection_argument,
    answer_and_print,
    embedder_resource,
    known_collection,
    missing_key,
    storage_resource,
)


def summarize(args: argparse.Namespace) -> int:
    """The stored XSum summaries of a collection, or a new one for ``topic`` over ``papers`` (or
    the papers best matching the topic), with its citations."""
    collection, topic, papers = args.collection, args.topic, args.papers
    storage = storage_resource()
    problem = known_collection(storage, collection) or (missing_key() if topic else None)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if topic is None:
        return _stored_summaries(storage, collection)
    return _new_summary(storage, collection, topic, papers)


def _stored_summaries(storage, collection: str) -> int:
    from insight_assets.core.methods import xsum

    rows = xsum.store.rendered_summaries(storage.warehouse, collection, xsum.XSUM)
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
    from insight_assets.core.ingestion.ingest import paper_names

    rows = paper_names(storage.warehouse, collection)
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
    doc_ids = None
    if names:
        doc_ids, unknown = _resolve_papers(storage, collection, names)
        if unknown:
            print(f"No single paper of {collection!r} matches: {'; '.join(unknown)}", file=sys.stderr)
            return 2
    from insight_assets.defs.asking import Asked
    from insight_assets.defs.xsum.ask import ASK

    asked = Asked(collection, topic, storage, embedder_resource(), {"papers": doc_ids})
    return answer_and_print(asked, [ASK])


def _summarize_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("--topic", help="what to summarize; without it, the summaries `build` wrote")
    parser.add_argument(
        "--papers",
        nargs="+",
        help="document ids, file names or titles (default: the 5 papers best matching the topic)",
    )


def _summarize_misuse(args: argparse.Namespace) -> str | None:
    return "--papers needs --topic" if args.papers and not args.topic else None


COMMANDS = (
    Command(
        "summarize",
        "a cited multi-paper summary (XSum): the stored ones, or one for a topic and papers you name",
        summarize,
        _summarize_arguments,
        _summarize_misuse,
    ),
)
