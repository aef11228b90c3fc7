"""``insight-assets library``: the reference-manager libraries whose collections this project
builds (``add zotero DIR``, ``add bibtex FILE``, ``add csl FILE``, ``list``, ``remove NAME``).
They are kept in ``data/libraries.json``; a library itself is only ever read."""

from __future__ import annotations

import argparse
import sys

from insight_assets.app.commands import Command, storage_resource


def library(args: argparse.Namespace) -> int:
    from insight_assets.core.collection_sources import find_sources, registry_for
    from insight_assets.core.library import LibraryError

    storage = storage_resource()
    registry = registry_for(storage.collections_root)
    try:
        if args.action == "add":
            taken = set(find_sources(storage.collections_root).collections)
            added = registry.add(
                args.kind, args.path, args.name, taken=taken, base_dir=getattr(args, "base_dir", None)
            )
            print(f"Added {added.kind} library {added.name!r} ({added.path}).")
            _print_collections(added)
            return 0
        if args.action == "remove":
            removed = registry.remove(args.name)
            print(
                f"Removed library {removed.name!r}: it is no longer read (the library at {removed.path} is "
                "untouched; what was built from it stays until you delete the partitions)."
            )
            return 0
        libraries = registry.libraries()
        if not libraries:
            print("No library registered: insight-assets library add zotero|bibtex|csl PATH")
        for entry in libraries:
            print(f"{entry.name} [{entry.kind}] {entry.path}")
            try:
                _print_collections(entry)
            except LibraryError as error:
                print(f"  cannot be read: {error}")
        return 0
    except LibraryError as error:
        print(f"insight-assets library {args.action}: {error}", file=sys.stderr)
        return 2


def _print_collections(entry) -> None:
    for collection in entry.collections():
        errors = sum(problem.severity == "error" for problem in collection.problems)
        print(
            f"  {collection.name}: {len(collection.items)} paper(s) with a PDF"
            + (f", {errors} item(s) without one (see source_documents' problems)" if errors else "")
            + f"  <- {collection.path}"
        )


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="read a library's collections as collections of this project")
    kinds = add.add_subparsers(dest="kind", required=True)
    zotero = kinds.add_parser("zotero", help="a Zotero data directory (holding zotero.sqlite and storage/)")
    zotero.add_argument("path", metavar="DIR")
    zotero.add_argument(
        "--base-dir",
        metavar="DIR",
        help="Zotero's linked attachment base directory, for files linked relative to it (Settings > Advanced > Files and Folders)",
    )
    zotero.add_argument(
        "--name", help="the library's name; each collection is NAME-<its path> (default: the folder's name)"
    )
    for kind, what in (
        ("bibtex", "a BibTeX file (Better BibTeX's export, with file paths)"),
        ("csl", "a CSL-JSON file"),
    ):
        export = kinds.add_parser(kind, help=what)
        export.add_argument("path", metavar="FILE")
        export.add_argument("--name", required=True, help="the collection's name")
    actions.add_parser("list", help="the libraries and their collections")
    remove = actions.add_parser("remove", help="stop reading a library (the library is untouched)")
    remove.add_argument("name", metavar="NAME")


COMMAND = Command(
    "library",
    "add, list or remove the Zotero, BibTeX and CSL-JSON libraries built as collections",
    library,
    _arguments,
)
