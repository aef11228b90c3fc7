"""``insight-assets library``: the reference-manager libraries whose collections this project
builds (``add zotero DIR``, ``add bibtex FILE``, ``add csl FILE``, ``show NAME``, ``list``,
``remove NAME``). They are kept in ``data/libraries.json``; a library itself is only ever read."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter

from insight_assets.app.commands import Command, storage_resource

# Problems `library add` prints; `library show` prints them all.
FIRST_PROBLEMS = 5


def library(args: argparse.Namespace) -> int:
    from insight_assets.core.collection_sources import find_sources, registry_for
    from insight_assets.core.library import LibraryError

    storage = storage_resource()
    registry = registry_for(storage.collections_root)
    try:
        if args.action == "add":
            taken = set(find_sources(storage.collections_root).collections)
            added = registry.add(
                args.kind,
                args.path,
                args.name,
                taken=taken,
                base_dir=getattr(args, "base_dir", None),
                pdf_dir=getattr(args, "pdfs", None),
            )
            print(f"Added {added.kind} library {added.name!r} ({added.path}).")
            _print_added(added)
            return 0
        if args.action == "remove":
            removed = registry.remove(args.name)
            print(
                f"Removed library {removed.name!r}: it is no longer read (the library at {removed.path} is "
                "untouched; what was built from it stays until you delete the partitions)."
            )
            return 0
        if args.action == "show":
            return _show(registry.named(args.name), args.json)
        return _list(registry.libraries(), args.json)
    except LibraryError as error:
        print(f"insight-assets library {args.action}: {error}", file=sys.stderr)
        return 2


def _item_json(item) -> dict:
    """An item as ``show --json`` gives it: the ``papers`` table's fields, its key and its PDF."""
    fields = item.metadata()
    fields.pop("link")
    return {"key": fields.pop("item_key"), **fields, "pdf": str(item.pdf) if item.pdf else None}


def _show(entry, as_json: bool) -> int:
    """Every collection of the library with every item and every problem."""
    collections = entry.collections()
    if as_json:
        print(
            json.dumps(
                {
                    "library": entry.name,
                    "kind": entry.kind,
                    "path": entry.path,
                    "collections": [
                        {
                            "name": collection.name,
                            "items": [_item_json(item) for item in collection.every_item],
                            "problems": [dataclasses.asdict(problem) for problem in collection.problems],
                        }
                        for collection in collections
                    ],
                },
                indent=2,
            )
        )
        return 0
    print(
        f"{entry.name} [{entry.kind}] {entry.path}"
        + (f" (PDFs from {entry.pdf_dir})" if entry.pdf_dir else "")
    )
    for collection in collections:
        print(
            f"\n{collection.name}  <- {collection.path}: {len(collection.every_item)} item(s), "
            f"{len(collection.items)} with a PDF"
        )
        for item in collection.every_item:
            people = "; ".join(item.authors[:3]) + ("; et al." if len(item.authors) > 3 else "")
            where = ", ".join(
                str(part) for part in (item.venue, item.year, item.doi and f"doi:{item.doi}") if part
            )
            print(f"  {item.citekey or item.key}: {item.title or '(no title)'}")
            print(f"      {people or '(no authors)'}" + (f" | {where}" if where else ""))
            print(
                f"      PDF: {item.pdf} (by its {item.matched_by})"
                if item.pdf
                else "      PDF: none (see its problem)"
            )
        if collection.problems:
            print(f"  {len(collection.problems)} problem(s):")
            for problem in collection.problems:
                print(f"  - [{problem.kind}] {problem.message}")
    return 0


def _list(libraries, as_json: bool) -> int:
    from insight_assets.core.library import LibraryError

    rows = []
    for entry in libraries:
        row = {"name": entry.name, "kind": entry.kind, "path": entry.path, "collections": [], "error": None}
        try:
            for collection in entry.collections():
                kinds = Counter(problem.kind for problem in collection.problems)
                row["collections"].append(
                    {
                        "name": collection.name,
                        "items": len(collection.every_item),
                        "with_pdf": len(collection.items),
                        "problems": dict(sorted(kinds.items())),
                    }
                )
        except LibraryError as error:
            row["error"] = str(error)
        rows.append(row)
    if as_json:
        print(json.dumps({"libraries": rows}, indent=2))
        return 0
    if not rows:
        print("No library registered: insight-assets library add zotero|bibtex|csl PATH")
    for row in rows:
        print(f"{row['name']} [{row['kind']}] {row['path']}")
        if row["error"]:
            print(f"  cannot be read: {row['error']}")
        for collection in row["collections"]:
            problems = ", ".join(f"{count} {kind}" for kind, count in collection["problems"].items())
            print(
                f"  {collection['name']}: {collection['items']} item(s), {collection['with_pdf']} with a PDF"
                + (f"; problems: {problems}" if problems else "")
            )
    return 0


def _print_added(entry) -> None:
    """Each collection's counts, then the first problems and where to see them all."""
    problems = []
    for collection in entry.collections():
        print(
            f"  {collection.name}: {len(collection.every_item)} item(s), {len(collection.items)} with a PDF"
            + f"  <- {collection.path}"
        )
        problems += collection.problems
    for problem in problems[:FIRST_PROBLEMS]:
        print(f"  - [{problem.kind}] {problem.message}")
    if len(problems) > FIRST_PROBLEMS:
        print(f"  ... {len(problems) - FIRST_PROBLEMS} more: insight-assets library show {entry.name}")


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
        ("bibtex", "a BibTeX or BibLaTeX file (JabRef, Mendeley, Zotero, Better BibTeX, or by hand)"),
        ("csl", "a CSL-JSON file (its PDFs from --pdfs DIR)"),
    ):
        export = kinds.add_parser(kind, help=what)
        export.add_argument("path", metavar="FILE")
        export.add_argument("--name", required=True, help="the collection's name")
        export.add_argument(
            "--pdfs",
            metavar="DIR",
            help="the folder of the library's PDFs, for entries that name no file: matched by citekey, DOI or title",
        )
    show = actions.add_parser("show", help="a library's collections: every item, its PDF, every problem")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--json", action="store_true", help="as JSON")
    listing = actions.add_parser("list", help="the libraries and their collections")
    listing.add_argument("--json", action="store_true", help="as JSON")
    remove = actions.add_parser("remove", help="stop reading a library (the library is untouched)")
    remove.add_argument("name", metavar="NAME")


COMMAND = Command(
    "library",
    "add, show, list or remove the Zotero, BibTeX and CSL-JSON libraries built as collections",
    library,
    _arguments,
)
