"""Benchmarks (not tests): our ingestion path against bare baselines on the shared corpus.

Run ``python -m bench [name ...] [--quick] [--corpus PATH]``; see bench/README.md.
"""

import warnings

# Dagster warns, once per asset at import, that `backfill_policy` is beta: noise in a benchmark's output.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`")
