"""``insight-assets ideas``: research ideas for a background (SciPIP; the same as its ``ask`` flow,
``defs/scipip/ask.py``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insight_assets.app.commands import (
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
    with the routes that found them, and the dual path's ideas with the papers that inspired them;
    the same as ``ask --method scipip`` (``ideas_for``, with the settings of the collection's build)."""
    collection, background, file = args.collection, args.background, args.file
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import scipip
    from insight_assets.core.methods.scipip.stages import ideas_for
    from insight_assets.core.retrieval.index import IndexMissing
    from insight_assets.defs.materialization import scope_of
    from insight_assets.defs.scipip.ask import ideas_text

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
    with environment_llm().client(asset="ideas", partition=collection, run_id=None) as client:
        scope = scope_of(storage, embedder, client, collection)
        try:
            found = ideas_for(scope, backgrounds)
        except IndexMissing as error:
            return not_built(collection, error)
        except LLMError as error:
            print(f"Cannot propose ideas: {error}", file=sys.stderr)
            return 1
        for run in found.runs:
            print(
                f"Background: {run.query.background}\n\n{ideas_text(run, found.papers, client.provider_label)}"
            )
            for error in run.errors:
                print(f"{error}", file=sys.stderr)
            print()
        calls = client.summary()
        print(f"{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0 if any(run.integrated for run in found.runs) else 1


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


COMMANDS = (
    Command(
        "ideas",
        "research ideas for a background (SciPIP), with the papers that inspired them",
        ideas,
        _ideas_arguments,
        _ideas_misuse,
    ),
)
