"""``insight-assets search``: the chunks of a built collection that best match a query."""

from __future__ import annotations

import argparse
import sys

from insight_assets.app.commands import (
    Command,
    add_collection_argument,
    embedder_choice,
    environment_llm,
    known_collection,
    missing_key,
    not_built,
    stores,
)
from insight_assets.app.passages import (
    DEFAULT_CANDIDATES,
    SEARCH_MODES,
    SEARCH_RERANKERS,
    OpenCollection,
    search_notes,
    search_passages,
)


def search(args: argparse.Namespace) -> int:
    """The chunks that best match a query, with their papers and pages (the shared retrieval layer)."""
    collection, query, k, mode, reranker = args.collection, args.query, args.k, args.mode, args.rerank
    candidates = args.candidates
    from insight_assets.core.llm import LLMError
    from insight_assets.core.retrieval.index import IndexMissing

    # Dagster is not needed to search, nor the model unless it reranks (``--rerank llm``).
    storage = stores()
    problem = known_collection(storage, collection) or (missing_key() if reranker == "llm" else None)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        opened = OpenCollection.open(storage, embedder_choice(), collection)
        hits = search_passages(
            opened,
            environment_llm() if reranker == "llm" else None,
            query,
            k=k,
            mode=mode,
            reranker=reranker,
            candidates=candidates,
        )
    except IndexMissing as error:
        return not_built(collection, error)
    except LLMError as error:
        print(f"Cannot rerank: {error}", file=sys.stderr)
        return 1
    if not hits:
        print(f"No chunk of {collection!r} matches {query!r} ({mode} search).")
        return 1
    for number, hit in enumerate(hits, start=1):
        found = "+".join(hit.found_by) + (f", reranked by {hit.reranker}" if hit.reranker else "")
        text = " ".join(hit.text.split())
        cite = f"{hit.cite}, " if hit.cite else ""
        print(f"\n{number}. {hit.title}, {cite}{hit.pages}  [score {hit.score:.3f}; {found}]")
        print(f"   {text[:300]}{'…' if len(text) > 300 else ''}")
    if args.notes:
        _print_notes(search_notes(storage, embedder_choice(), collection, query), collection)
    return 0


def _print_notes(hits: list, collection: str) -> None:
    """The reader's own notes, printed apart from the papers' passages."""
    print("\nYour notes (your own highlights and notes, not the papers' text):")
    if not hits:
        print(f"   none in {collection!r}: only a Zotero library's highlights and notes are read.")
    for hit in hits:
        comment = f"  (your comment: {hit.comment})" if hit.comment and hit.text else ""
        print(f"   - {hit.label}: {' '.join((hit.text or hit.comment).split())[:300]}{comment}")


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("query", help="the query, in quotes")
    parser.add_argument("-k", type=int, default=10, help="chunks to show (default: %(default)s)")
    parser.add_argument(
        "--mode", choices=SEARCH_MODES, default="hybrid", help="first-stage search (default: %(default)s)"
    )
    parser.add_argument(
        "--rerank",
        choices=SEARCH_RERANKERS,
        default="late-interaction",
        help="second stage (default: %(default)s)",
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_CANDIDATES,
        help="first-stage hits the reranker reads (default: %(default)s)",
    )
    parser.add_argument(
        "--notes",
        action="store_true",
        help="also search your own highlights and notes (a Zotero library's), printed apart as 'your notes'",
    )


COMMANDS = (
    Command(
        "search",
        "the chunks of a built collection that best match a query, with papers and pages",
        search,
        _search_arguments,
    ),
)
