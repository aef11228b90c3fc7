"""library_exports: reading real exports, against the bare parser, and a project with 30 libraries.

- Better BibTeX's 3,725-entry export (3.5 MB, a test fixture of Better BibTeX, kept gzipped under
  ``insight_assets_tests/data/library_exports/``) read by ``read_bibtex`` (every entry's metadata,
  names, file fields resolved) against ``bibtexparser.parse_string`` with its default middleware,
  the bare baseline, side by side in one run, each the best of ``REPEATS``. Target: at most 2.5x.
- 30 libraries registered (the big export and the other fixtures, copied), then ``insight-assets
  library list`` and ``insight-assets collections``, each a process of its own, once parsing and
  once with nothing changed (the parses kept in ``data/cache/libraries/``). Target: under 2 s.

Needs no corpus; ``--quick`` registers 6 libraries.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO_ROOT, print_table, ratio, summary

EXPORTS = REPO_ROOT / "insight_assets_tests" / "data" / "library_exports"
BIG = EXPORTS / "better-bibtex" / "Cache does not seem to fill #1296.bibtex.gz"
REPEATS = 3
LIBRARIES, QUICK_LIBRARIES = 30, 6
OTHERS = [
    EXPORTS / "jabref" / "testjabref.bib",
    EXPORTS / "jabref" / "test-library-with-attached-files.bib",
    EXPORTS / "better-bibtex" / "Jabref import - groups lost #1730-3.bib",
    EXPORTS / "better-bibtex" / "Better BibLaTeX.009.biblatex",
]


def best_of(function, *args) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - started)
    return min(times)


def cli(project: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "insight_assets.cli", *args],
        cwd=project,
        env={**os.environ, "DAGSTER_HOME": str(project / "home")},
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - started


def run(corpus: Path, quick: bool) -> dict:
    import bibtexparser

    from insight_assets.core.library.bibtex import read_bibtex

    with tempfile.TemporaryDirectory(prefix="bench-library-exports-") as scratch:
        root = Path(scratch)
        big = root / "big.bib"
        big.write_bytes(gzip.decompress(BIG.read_bytes()))
        text = big.read_text(encoding="utf-8")
        plain_s = best_of(bibtexparser.parse_string, text)
        ours_s = best_of(read_bibtex, big, "big")
        collection = read_bibtex(big, "big")

        project = root / "project"
        (project / "data" / "collections").mkdir(parents=True)
        (project / "home").mkdir()
        count = QUICK_LIBRARIES if quick else LIBRARIES
        for number in range(count):
            source = big if number == 0 else OTHERS[number % len(OTHERS)]
            copy = project / "exports" / f"{number:02d}{source.suffix}"
            copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(source, copy)
            cli(project, "library", "add", "bibtex", str(copy), "--name", f"lib-{number:02d}")
        shutil.rmtree(project / "data" / "cache" / "libraries")
        rows = [
            {"command": "library list, parsing every library", "seconds": cli(project, "library", "list")},
            {"command": "library list, nothing changed", "seconds": cli(project, "library", "list")},
            {"command": "collections, nothing changed", "seconds": cli(project, "collections")},
        ]
    entries = len(collection.items) + len(collection.problems)
    print_table(
        [
            {"reader": "bibtexparser.parse_string (bare)", "seconds": plain_s},
            {"reader": "read_bibtex (metadata, names, files)", "seconds": ours_s},
        ],
        ["reader", "seconds"],
        title=f"Better BibTeX's export of 3,725 entries ({entries} items and problems), best of {REPEATS}",
    )
    print_table(
        rows, ["command", "seconds"], title=f"{count} registered libraries, each command a process of its own"
    )
    read_ratio = ratio(ours_s, plain_s)
    unchanged = max(row["seconds"] for row in rows[1:])
    return {
        "summary": summary(
            f"3,725 entries {ours_s:.2f} s (bare parse {plain_s:.2f} s); {count} libraries, nothing changed: "
            f"list and collections at most {unchanged:.1f} s",
            ratio=read_ratio,
            target="<= 2.5x the bare parse; < 2 s",
            met=read_ratio is not None and read_ratio <= 2.5 and unchanged < 2.0,
        ),
        "plain_parse_s": plain_s,
        "read_bibtex_s": ours_s,
        "commands": rows,
    }
