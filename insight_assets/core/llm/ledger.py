"""The cost ledger: one row per call, and the per-asset summary that becomes asset metadata.

A *call* is one answer asked for: a request to a provider (retries included, their count in
``attempts``), a repair request, a cache hit or an offline answer. Rows are kept in memory by the
client that made them (for its summary) and, when a path is given, appended to a SQLite file
shared by all runs, where a budget can also sum up what a run has spent across processes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .pricing import unpriced_note
from .sqlite_store import SQLiteFile

DEFAULT_LEDGER_FILE = Path("cache") / "llm_ledger.sqlite"

# status values
OK = "ok"
INVALID_OUTPUT = "invalid_output"
ERROR = "error"

# purpose values
ANSWER = "answer"
REPAIR = "repair"
LONGER = "longer"  # the same request again with more room, after a reply was cut off

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    run_id TEXT,
    asset TEXT,
    partition TEXT,
    task TEXT NOT NULL,
    task_version TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL,
    status TEXT NOT NULL,
    cache_hit INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    tokens_estimated INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cost_usd REAL,
    attempts INTEGER NOT NULL,
    error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_run ON calls (run_id);
CREATE INDEX IF NOT EXISTS calls_by_asset ON calls (asset, partition);
"""


@dataclass(frozen=True)
class LedgerRow:
    """One call. ``cost_usd`` is ``None`` when the model has no price; ``tokens_estimated`` is
    true when the server reported no usage and the counts come from our tokenizer; ``error`` is
    already scrubbed of keys."""

    run_id: str | None
    asset: str | None
    partition: str | None
    task: str
    task_version: str
    provider: str
    model: str
    purpose: str
    status: str
    cache_hit: bool
    input_tokens: int
    output_tokens: int
    tokens_estimated: bool
    latency_s: float
    cost_usd: float | None
    attempts: int
    error: str | None
    created_at: float


_COLUMNS = tuple(field.name for field in dataclasses.fields(LedgerRow))


class CallLedger:
    """Persistent ledger rows in SQLite; ``path=None`` keeps nothing beyond the clients' memory."""

    def __init__(self, path: Path | None):
        self.path = Path(path) if path is not None else None
        self._file = SQLiteFile(self.path, _SCHEMA) if self.path is not None else None

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> CallLedger:
        return cls(Path(data_dir) / DEFAULT_LEDGER_FILE)

    def record(self, row: LedgerRow) -> None:
        if self._file is None:
            return
        values = dataclasses.astuple(row)
        with self._file.transaction() as connection:
            connection.execute(
                f"INSERT INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})",
                values,
            )

    def rows(
        self, *, run_id: str | None = None, asset: str | None = None, partition: str | None = None
    ) -> list[LedgerRow]:
        if self._file is None:
            return []
        conditions, parameters = [], []
        for column, value in (("run_id", run_id), ("asset", asset), ("partition", partition)):
            if value is not None:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        with self._file.transaction() as connection:
            found = connection.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM calls{where} ORDER BY created_at, rowid",
                parameters,
            ).fetchall()
        return [_row_from_sql(values) for values in found]

    def run_totals(self, run_id: str) -> tuple[float, int]:
        """(USD, tokens) spent so far by all processes of ``run_id``; unpriced calls add tokens
        but no dollars."""
        if self._file is None:
            return 0.0, 0
        with self._file.transaction() as connection:
            usd, tokens = connection.execute(
                "SELECT COALESCE(SUM(cost_usd), 0), COALESCE(SUM(input_tokens + output_tokens), 0) "
                "FROM calls WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        return float(usd), int(tokens)


def _row_from_sql(values: Sequence[object]) -> LedgerRow:
    row = dict(zip(_COLUMNS, values, strict=True))
    row["cache_hit"] = bool(row["cache_hit"])
    row["tokens_estimated"] = bool(row["tokens_estimated"])
    return LedgerRow(**row)  # type: ignore[arg-type]


@dataclass(frozen=True)
class CallProgress:
    """How far a client's work has come: items answered or failed (``done``) of those asked of it
    so far (``planned``: a batch counts all its items when it starts), and what they cost."""

    done: int
    planned: int
    input_tokens: int
    output_tokens: int
    cost_usd: float

    def spent(self) -> str:
        """Tokens and cost so far; nothing where nothing was spent (the offline provider)."""
        tokens = self.input_tokens + self.output_tokens
        return f"{tokens:,} tokens, ${self.cost_usd:.4f}" if tokens else ""

    def __str__(self) -> str:
        spent = self.spent()
        return f"{self.done} of {self.planned} model calls" + (f", {spent}" if spent else "")


@dataclass(frozen=True)
class RunSummary:
    """What one client did: the numbers an asset shows as metadata.

    ``calls`` counts every row; ``provider_calls`` those that reached a provider (answers and
    repairs, failed or not); ``repairs`` the repair requests. ``failed_items`` counts the ``run``s
    that ended without a value (a repaired answer is not a failure) and ``budget_refusals`` those
    the budget stopped before anything was sent; the client counts both, as rows cannot tell.
    ``recorded_failures`` are the failed items whose failure is final and recorded (invalid after a
    repair, refused): the next build answers them from the record, so only the rest are work undone.
    ``cost_usd`` sums the priced calls, and ``unpriced_calls`` says how many had no price.
    ``seconds`` sums the calls' time; ``trimmed_items`` counts the runs whose inputs were cut to fit
    the model's context window.
    """

    provider: str
    models: tuple[str, ...]
    calls: int
    provider_calls: int
    cache_hits: int
    repairs: int
    failed_items: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    unpriced_calls: int
    cost_note: str | None
    budget_refusals: int
    seconds: float = 0.0
    trimmed_items: int = 0
    recorded_failures: int = 0

    @property
    def failures_to_retry(self) -> int:
        """Failed items that a rebuild asks again (a server error, a timeout): work left undone."""
        return self.failed_items - self.recorded_failures

    @classmethod
    def from_rows(
        cls,
        provider_label: str,
        rows: Iterable[LedgerRow],
        *,
        failed_items: int = 0,
        recorded_failures: int = 0,
        budget_refusals: int = 0,
        trimmed_items: int = 0,
    ) -> RunSummary:
        rows = list(rows)
        network = [row for row in rows if not row.cache_hit and row.provider != "offline"]
        unpriced = [row for row in rows if row.cost_usd is None]
        note = None
        if unpriced:
            note = "; ".join(sorted({unpriced_note(row.provider, row.model) for row in unpriced}))
        return cls(
            provider=provider_label,
            models=tuple(sorted({row.model for row in rows})),
            calls=len(rows),
            provider_calls=len(network),
            cache_hits=sum(row.cache_hit for row in rows),
            repairs=sum(row.purpose == REPAIR for row in rows),
            failed_items=failed_items,
            recorded_failures=recorded_failures,
            input_tokens=sum(row.input_tokens for row in rows),
            output_tokens=sum(row.output_tokens for row in rows),
            cost_usd=sum(row.cost_usd or 0.0 for row in rows),
            unpriced_calls=len(unpriced),
            cost_note=note,
            budget_refusals=budget_refusals,
            seconds=sum(row.latency_s for row in rows),
            trimmed_items=trimmed_items,
        )

    def as_metadata(self) -> dict[str, str | int | float]:
        """Plain values keyed ``llm_*``; the Dagster layer wraps them as it likes."""
        metadata: dict[str, str | int | float] = {
            "llm_provider": self.provider,
            "llm_models": ", ".join(self.models),
            "llm_calls": self.calls,
            "llm_provider_calls": self.provider_calls,
            "llm_cache_hits": self.cache_hits,
            "llm_repairs": self.repairs,
            "llm_failed_items": self.failed_items,
            "llm_failures_to_retry": self.failures_to_retry,
            "llm_input_tokens": self.input_tokens,
            "llm_output_tokens": self.output_tokens,
            "llm_cost_usd": round(self.cost_usd, 6),
            "llm_budget_refusals": self.budget_refusals,
            "llm_seconds": round(self.seconds, 2),
        }
        if self.trimmed_items:
            metadata["llm_trimmed_items"] = self.trimmed_items
        if self.cost_note:
            metadata["llm_cost_note"] = f"{self.unpriced_calls} calls not priced: {self.cost_note}"
        return metadata
