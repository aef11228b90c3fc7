"""``insight-assets ideas`` and ``ask --method scipip``: research ideas for a background (SciPIP)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insight_assets.defs.commands import (
    AskFlow,
    Command,
    add_collection_argument,
    embedder_resource,
    environment_llm,
    known_collection,
    missing_key,
    not_built,
    storage_resource,
)


def ideas(args: argparse.Namespace) -> int:
    """SciPIP's ideas for research backgrounds (one given, or a file of them): the papers retrieved
    with the routes that found them, and the dual path's ideas with the papers that inspired them."""
    collection, background, file = args.collection, args.background, args.file
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import scipip

    storage = storage_resource()
    problem = known_collection(storage, collection) or missing_key()
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
    embedder = embedder_resource()
    try:
        library = scipip.store.load_library(
            storage.warehouse, storage.lancedb_uri, embedder.get_embedder(), collection
        )
    except IndexMissing as error:
        return not_built(collection, error)
    papers = {
        row["doc_id"]: scipip.Paper(row["title"], row["method"])
        for row in scipip.store.load_papers(storage.warehouse, collection)
    }
    with environment_llm().client(asset="ideas", partition=collection, run_id=None) as client:
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


def _ideas_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("background", nargs="?", help="the research background, in quotes")
    parser.add_argument(
        "--file", help='a backgrounds file: JSON Lines of {"background": ...} or a JSON array'
    )


def _ideas_misuse(args: argparse.Namespace) -> str | None:
    return (
        "ideas needs a background or --file, not both" if bool(args.background) == bool(args.file) else None
    )


def _ask(args: argparse.Namespace) -> int:
    """The question as a research background."""
    return ideas(argparse.Namespace(collection=args.collection, background=args.question, file=None))


COMMANDS = (
    Command(
        "ideas",
        "research ideas for a background (SciPIP), with the papers that inspired them",
        ideas,
        _ideas_arguments,
        _ideas_misuse,
    ),
)
ASK = AskFlow("scipip", "research ideas with the question as their background (SciPIP)", _ask)
