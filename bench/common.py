"""Shared by the benchmarks: where the corpus is, timing, tables and the JSON results."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
BAD = "bad"  # the corpus folder of broken files


def corpus_root(override: str | None = None) -> Path:
    """``--corpus``, else ``INSIGHT_ASSETS_CORPUS``, else ``../shared/corpus`` beside the repository."""
    return Path(override or os.environ.get("INSIGHT_ASSETS_CORPUS") or REPO_ROOT.parent / "shared" / "corpus")


def pdfs(folder: Path) -> list[Path]:
    """The PDFs under ``folder`` as a folder collection finds them (``CollectionSource.contents``): any depth, any suffix case, by name."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")


def collections(corpus: Path) -> dict[str, list[Path]]:
    """Each top-level folder of the corpus (a topical collection, or bad/) and its PDFs."""
    return {folder.name: pdfs(folder) for folder in sorted(corpus.iterdir()) if folder.is_dir()}


def good_pdfs(corpus: Path) -> list[Path]:
    """Every PDF of the corpus outside bad/."""
    return [pdf for name, files in collections(corpus).items() if name != BAD for pdf in files]


def smallest(files: list[Path], count: int) -> list[Path]:
    """The ``count`` smallest files (by bytes), in name order: a fixed subset for ``--quick``."""
    return sorted(sorted(files, key=lambda p: (p.stat().st_size, p))[:count])


def timed(function: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """``(seconds, result)`` of one call ``function(*args)``, by ``time.perf_counter``."""
    started = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - started, result


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or None when the denominator is 0."""
    return numerator / denominator if denominator else None


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"
    return "-" if value is None else str(value)


def print_table(rows: list[dict], columns: list[str], title: str | None = None) -> None:
    """A plain-text table; numbers right-aligned."""
    cells = [[fmt(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column)] + [len(line[i]) for line in cells]) for i, column in enumerate(columns)]
    numeric = [all(isinstance(row.get(column), int | float | None) for row in rows) for column in columns]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    if title:
        print(f"\n{title}")
    print(line(columns))
    print(line(["-" * w for w in widths]))
    for values in cells:
        print(line(values))


def summary(result: str, ratio: float | None = None, target: str = "-", met: bool | None = None) -> dict:
    """The line a benchmark contributes to the final table (also stored in its JSON)."""
    return {"result": result, "ratio": ratio, "target": target, "met": met}


def write_json(name: str, result: dict) -> Path:
    """``bench/results/<name>.json``, with when and where it ran."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    record = {
        "benchmark": name,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        **result,
    }
    path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return path
