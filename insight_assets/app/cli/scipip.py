"""``insight-assets ideas`` and ``ask --method scipip``: research ideas for a background (SciPIP)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insight_assets.app.asking import Asked, AskFailed, MethodAnswer, citations
from insight_assets.app.commands import (
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
    with the routes that found them, and the dual path's ideas with the papers that inspired them;
    the same as ``ask --method scipip`` (``ideas_for``, with the settings of the collection's build)."""
    collection, background, file = args.collection, args.background, args.file
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import scipip
    from insight_assets.core.methods.scipip.stages import ideas_for

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
        proposed = []
        try:
            for background in backgrounds:
                proposed.append(ideas_for(scope, background))
        except IndexMissing as error:
            return not_built(collection, error)
        except LLMError as error:
            print(f"Cannot propose ideas: {error}", file=sys.stderr)
            return 1
        for found in proposed:
            (run,) = found.runs
            print(
                f"Background: {run.query.background}\n\n{_ideas_text(run, found.papers, client.provider_label)}"
            )
            for error in run.errors:
                print(f"{error}", file=sys.stderr)
            print()
        calls = client.summary()
        print(f"{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0 if any(found.runs[0].integrated for found in proposed) else 1


def scope_of(storage, embedder, client, collection: str):
    """The collection as SciPIP's stages see it, with ``client``."""
    from insight_assets.defs.model_calls import scope_of as collection_scope

    return collection_scope(storage, embedder, client, collection)


def _ideas_text(run, papers, writer: str) -> str:
    """The papers a background retrieved, with the routes that found them, and the ideas."""
    from insight_assets.core.methods.scipip.schemas import DUAL

    lines = ["Retrieved papers (SKC, then the filter):"]
    lines += [
        f"- {papers[doc].title if doc in papers else doc}  [{', '.join(run.retrieval.routes[doc])}]"
        for doc in run.retrieval.selected
    ]
    lines.append(f"\nIdeas ({writer}):")
    for number, idea in enumerate(run.integrated, start=1):
        detail = run.expansion(DUAL, number - 1)
        lines.append(f"\n{number}. {idea.title}\n   {idea.idea}")
        if detail is not None and detail.method != f"{idea.title}: {idea.idea}":  # offline repeats it
            lines.append(f"   Problem: {detail.problem}\n   Method: {detail.method}")
            lines.append(f"   Expected outcome: {detail.expected_outcome}")
        if idea.inspired_by:
            lines.append(f"   Inspired by: {'; '.join(idea.inspired_by)}")
    return "\n".join(lines)


def answer(asked: Asked, client) -> MethodAnswer:
    """SciPIP's ideas with the question as the research background (``ideas_for``: the settings the
    collection was built with); citations are the retrieved papers (their summaries, so no pages)."""
    from insight_assets.core.methods import scipip
    from insight_assets.core.methods.scipip.stages import ideas_for

    background = scipip.Background(scipip.backgrounds.background_id(asked.question), asked.question)
    found = ideas_for(scope_of(asked.storage, asked.embedder, client, asked.collection), background)
    (run,) = found.runs
    if not run.integrated:
        raise AskFailed(
            "no idea was proposed: " + ("; ".join(map(str, run.errors)) or "every path came back empty")
        )
    papers = found.papers
    return MethodAnswer(
        text=_ideas_text(run, papers, client.provider_label),
        citations=citations(
            (papers[doc].title if doc in papers else doc, 0, 0) for doc in run.retrieval.selected
        ),
    )


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
ASK = AskFlow("scipip", "research ideas with the question as their background (SciPIP)", answer)
