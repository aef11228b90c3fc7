"""A persistent, content-addressed cache of validated answers.

The key is the sha256 of a canonical JSON of everything that decides an answer: provider, model,
parameters, task name and version, the template's hash and the rendered prompt. Offline answers
are cached too, keyed by the task, its inputs and the engine's source (``offline_cache_key``), so a
collection with one new paper computes only that paper's. Nothing secret is
in it. Only answers that passed validation are stored, as the validated object's JSON, so a cache
hit never needs a repair and never replays a bad answer; an answer cut off at ``max_tokens`` is
stored with its finish reason, so it comes back marked as cut off. A request whose answer failed
for good (invalid after its repair, refused by the server) is kept apart in ``failed_requests``
with the reason, so an unchanged rebuild does not pay for it again (``LLMSettings.retry_failed``
asks again). The file is shared by all runs and partitions; see ``sqlite_store`` for why two
processes can write it at once.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .sqlite_store import SQLiteFile

DEFAULT_CACHE_FILE = Path("cache") / "llm_responses.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    task_version TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    value_json TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failed_requests (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    task_version TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    error TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""

# Added after the first release: a file written before has no such column until it is added.
_FINISH_REASON_COLUMN = "ALTER TABLE responses ADD COLUMN finish_reason TEXT"


def cache_key(
    *,
    model_identity: dict[str, Any],
    task_name: str,
    task_version: int | str,
    template_hash: str,
    prompt: str,
) -> str:
    canonical = json.dumps(
        {
            "model": model_identity,
            "task": task_name,
            "version": str(task_version),
            "template": template_hash,
            "prompt": prompt,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@functools.cache
def engine_source_digest() -> str:
    """A digest of the engine's source (``insight_assets/core``): part of an offline answer's key,
    so that an edit to an offline implementation, or to any helper it calls, computes it anew."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8"))
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class _NoFaithfulJson(TypeError):
    """An input whose JSON form would not tell two different values apart."""


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if hasattr(value, "tolist"):  # a numpy array or scalar, in full (its str() elides)
        return value.tolist()
    raise _NoFaithfulJson(type(value).__name__)


def offline_cache_key(task_name: str, task_version: int | str, inputs: Mapping[str, Any]) -> str | None:
    """The cache key of an offline answer: the task, its version, the engine's source and the
    inputs; ``None`` when an input has no faithful JSON form (such an answer is not cached)."""
    try:
        prompt = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)
    except (_NoFaithfulJson, ValueError):
        return None
    return cache_key(
        model_identity={"provider": "offline", "engine": engine_source_digest()},
        task_name=task_name,
        task_version=task_version,
        template_hash="",
        prompt=prompt,
    )


@dataclass(frozen=True)
class CachedAnswer:
    value_json: str
    provider: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    # The provider's reason the answer ended where it did: ``None`` for a finished answer,
    # ``results.TRUNCATED`` for one cut off at max_tokens.
    finish_reason: str | None = None


class ResponseCache:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._file = SQLiteFile(self.path, _SCHEMA)
        with self._file.transaction() as connection:
            columns = {row[1] for row in connection.execute("PRAGMA table_info(responses)")}
            if "finish_reason" not in columns:
                connection.execute(_FINISH_REASON_COLUMN)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> ResponseCache:
        return cls(Path(data_dir) / DEFAULT_CACHE_FILE)

    def get(self, key: str) -> CachedAnswer | None:
        with self._file.transaction() as connection:
            row = connection.execute(
                "SELECT value_json, provider, model, input_tokens, output_tokens, finish_reason "
                "FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        return CachedAnswer(*row) if row else None

    def put(
        self,
        key: str,
        *,
        task: str,
        task_version: int | str,
        provider: str,
        model: str,
        value_json: str,
        input_tokens: int | None,
        output_tokens: int | None,
        finish_reason: str | None = None,
    ) -> None:
        """Keep a validated answer (and forget a failure recorded for the same request)."""
        with self._file.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO responses (key, task, task_version, provider, model, value_json, "
                "input_tokens, output_tokens, created_at, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    task,
                    str(task_version),
                    provider,
                    model,
                    value_json,
                    input_tokens,
                    output_tokens,
                    time.time(),
                    finish_reason,
                ),
            )
            connection.execute("DELETE FROM failed_requests WHERE key = ?", (key,))

    def failure(self, key: str) -> str | None:
        """Why the request ``key`` failed for good when it was last asked; ``None`` if it did not."""
        with self._file.transaction() as connection:
            row = connection.execute("SELECT error FROM failed_requests WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_failure(
        self, key: str, *, task: str, task_version: int | str, provider: str, model: str, error: str
    ) -> None:
        """Record that the request ``key`` failed for good, and why."""
        with self._file.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO failed_requests VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, task, str(task_version), provider, model, error, time.time()),
            )

    def __len__(self) -> int:
        with self._file.transaction() as connection:
            return connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
