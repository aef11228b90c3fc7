"""Run in a separate process by the cache test: write many entries into one shared cache file."""

from __future__ import annotations

from pathlib import Path

from insight_assets.core.llm.cache import ResponseCache


def write_entries(path: str, worker: int, count: int) -> None:
    cache = ResponseCache(Path(path))
    for number in range(count):
        cache.put(
            f"worker{worker}-{number}",
            task="t",
            task_version=1,
            provider="openai",
            model="m",
            value_json=f'{{"n": {number}}}',
            input_tokens=1,
            output_tokens=1,
        )
