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
        library, papers = _library(storage, embedder, collection)
    except IndexMissing as error:
        return not_built(collection, error)
    with environment_llm().client(asset="ideas", partition=collection, run_id=None) as client:
        try:
            queries = scipip.make_queries(client, embedder.get_embedder().embed, backgrounds)
            runs = scipip.propose_ideas(
                client, library, papers, queries, ideas=_idea_settings(storage, library, embedder, collection)
            )
        except LLMError as error:
            print(f"Cannot propose ideas: {error}", file=sys.stderr)
            return 1
        for run in runs:
            print(f"Background: {run.query.background}\n\n{_ideas_text(run, papers, client.provider_label)}")
            for error in run.errors:
                print(f"{error}", file=sys.stderr)
            print()
        calls = client.summary()
        print(f"{calls.calls} model calls, {calls.cache_hits} from cache, cost ${calls.cost_usd:.4f}")
    return 0 if any(run.integrated for run in runs) else 1


def _library(storage, embedder, collection: str):
    """The collection's SciPIP library and its papers (title and method) by document id."""
    from insight_assets.core.methods import scipip

    library = scipip.store.load_library(
        storage.warehouse, storage.vectors_uri, embedder.get_embedder(), collection
    )
    papers = {
        row["doc_id"]: scipip.Paper(row["title"], row["method"])
        for row in scipip.store.load_papers(storage.warehouse, collection)
    }
    return library, papers


def _idea_settings(storage, library, embedder, collection: str):
    """SciPIP's own path only (no baselines to compare), in the field the build used (else inferred)."""
    from insight_assets.core.methods import scipip
    from insight_assets.core.methods.scipip.field import research_field

    field = scipip.store.built_field(storage.warehouse, collection)
    found = research_field(field, library.summary_vectors, embedder.get_embedder().embed)
    return scipip.IdeaSettings(found.name, scientist_ideas=0, expand=(scipip.schemas.DUAL,))


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
    """SciPIP's ideas with the question as the research background; citations are the retrieved
    papers (their summaries, so no pages)."""
    from insight_assets.core.methods import scipip
    from insight_assets.defs.scipip.ideas import SciPIPIdeasConfig

    library, papers = _library(asked.storage, asked.embedder, asked.collection)
    background = scipip.Background(scipip.backgrounds.background_id(asked.question), asked.question)
    queries = scipip.make_queries(client, asked.embedder.get_embedder().embed, [background])
    # The build's retrieval settings (SKC routes, thresholds, how many papers).
    retrieval = asked.built_with("scipip_ideas", SciPIPIdeasConfig).settings()
    ideas = _idea_settings(asked.storage, library, asked.embedder, asked.collection)
    (run,) = scipip.propose_ideas(client, library, papers, queries, retrieval, ideas)
    if not run.integrated:
        raise AskFailed(
            "no idea was proposed: " + ("; ".join(map(str, run.errors)) or "every path came back empty")
        )
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
