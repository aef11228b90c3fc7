"""A step's last builds of a collection, kept by what each read, so that a step whose inputs are
again those of an earlier build gets that build's rows and report back instead of building again.

A paper added and then removed puts a collection back where it was two builds ago. Every model
answer of that state is in the cache, but each step would still do its own work again around
them (retrieval, reranking, embedding its texts, bookkeeping): most of a first build's CPU time.
The steps that keep everything they make in the warehouse (the declared stages) therefore keep
their last ``KEEP_BUILDS`` builds per collection: the rows of each table they wrote (Arrow IPC,
compressed), the vector table they keep beside them in LanceDB (a step's ``vectors``), the report
and the inputs' key (``defs/reuse.py``).

``content_version`` is a build's data version from the rows it wrote: a step rebuilt with the same
result then leaves the steps after it as they were (they read nothing else of it).
"""

from __future__ import annotations

import datetime
import hashlib
import io
from collections.abc import Mapping
from dataclasses import dataclass, field

from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.stores import VectorStore, Warehouse, declare_tables

KEEP_BUILDS = 3
# A kept vector table's name among the build's tables: the prefix, then its kind (``VectorStore``).
VECTORS_PREFIX = "lancedb:"
_TEXT_INDEXED = b"insight_assets.text_index"  # in a kept vector table's schema metadata

TABLES = {
    "kept_builds": """
        collection VARCHAR, asset VARCHAR, inputs_key VARCHAR, inputs VARCHAR, report VARCHAR,
        data_version VARCHAR, run_id VARCHAR, kept_at VARCHAR""",
    "kept_build_tables": """
        collection VARCHAR, asset VARCHAR, inputs_key VARCHAR, table_name VARCHAR, rows BLOB""",
}
declare_tables(TABLES)


@dataclass(frozen=True)
class KeptBuild:
    """An earlier build of one step for one collection: what it read (``inputs``, the JSON of its
    ``StepInputs``), its encoded report and data version, the run that made it, its tables and
    the vector tables it kept beside them, by kind."""

    inputs: str
    report: str
    data_version: str | None
    run_id: str
    tables: dict[str, pa.Table]
    kept_at: str = ""  # when it was kept (ISO 8601, UTC): set when read back
    vectors: dict[str, pa.Table] = field(default_factory=dict)


def table_bytes(table: pa.Table) -> bytes:
    """``table`` in Arrow's IPC stream format, compressed: read back exactly, floats included."""
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def table_from_bytes(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(io.BytesIO(data)).read_all()


def vectors_to_keep(store: VectorStore, collection: str) -> pa.Table | None:
    """The collection's whole vector table in ``store`` as it is, to keep with a build; its
    schema's metadata says whether it had its full-text index."""
    rows = store.read(collection)
    if rows is None:
        return None
    indexed = b"yes" if store.has_text_index(collection) else b"no"
    return rows.replace_schema_metadata({**(rows.schema.metadata or {}), _TEXT_INDEXED: indexed})


def put_back_vectors(store: VectorStore, collection: str, rows: pa.Table) -> None:
    """Make kept ``rows`` (``vectors_to_keep``) the collection's table in ``store`` again, with its
    full-text index if it had one."""
    metadata = dict(rows.schema.metadata or {})
    indexed = metadata.pop(_TEXT_INDEXED, b"no") == b"yes"
    store.replace(collection, rows.replace_schema_metadata(metadata or None))
    if indexed:
        store.build_text_index(collection)


def content_version(tables: Mapping[str, pa.Table]) -> str:
    """A digest of the rows of ``tables`` (names, schemas and values; not how they are chunked)."""
    digest = hashlib.sha256()
    for name in sorted(tables):
        table = tables[name].combine_chunks()
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        digest.update(name.encode("utf-8") + b"\x00")
        digest.update(hashlib.sha256(sink.getvalue()).digest())
    return digest.hexdigest()[:32]


def keep(
    warehouse: Warehouse,
    collection: str,
    asset: str,
    build: KeptBuild,
    inputs_key: str,
    *,
    last: int = KEEP_BUILDS,
) -> None:
    """Keep ``build`` (replacing one of the same inputs) and forget those beyond the ``last`` of the
    step and collection, in one transaction."""
    step = "collection = ? AND asset = ?"
    older = [
        row["inputs_key"]
        for row in warehouse.rows(
            f"SELECT inputs_key FROM kept_builds WHERE {step} ORDER BY kept_at DESC", [collection, asset]
        )
        if row["inputs_key"] != inputs_key
    ]
    gone = [inputs_key, *older[last - 1 :]]
    where = f"{step} AND inputs_key IN ({', '.join('?' * len(gone))})"
    kept_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
    row = {
        "collection": collection,
        "asset": asset,
        "inputs_key": inputs_key,
        "inputs": build.inputs,
        "report": build.report,
        "data_version": build.data_version,
        "run_id": build.run_id,
        "kept_at": kept_at,
    }
    table_rows = [
        {"collection": collection, "asset": asset, "inputs_key": inputs_key, "table_name": name}
        | {"rows": table_bytes(table)}
        for name, table in [
            *build.tables.items(),
            *((VECTORS_PREFIX + kind, table) for kind, table in build.vectors.items()),
        ]
    ]
    warehouse.replace_together(
        [
            ("kept_builds", where, [collection, asset, *gone], _kept_builds_table([row])),
            ("kept_build_tables", where, [collection, asset, *gone], _kept_tables_table(table_rows)),
        ]
    )


def kept(
    warehouse: Warehouse, collection: str, asset: str, inputs_key: str, *, contents: bool = True
) -> KeptBuild | None:
    """The kept build of ``asset`` for ``collection`` that read inputs of ``inputs_key``, if any;
    ``contents=False``: its tables and vector tables by name only (empty), not read back."""
    found = warehouse.rows(
        "SELECT inputs, report, data_version, run_id, kept_at FROM kept_builds "
        "WHERE collection = ? AND asset = ? AND inputs_key = ?",
        [collection, asset, inputs_key],
    )
    if not found:
        return None
    tables = warehouse.rows(
        f"SELECT table_name{', rows' if contents else ''} FROM kept_build_tables "
        "WHERE collection = ? AND asset = ? AND inputs_key = ?",
        [collection, asset, inputs_key],
    )
    every = {row["table_name"]: table_from_bytes(row["rows"]) if contents else pa.table({}) for row in tables}
    return KeptBuild(
        inputs=found[0]["inputs"],
        report=found[0]["report"],
        data_version=found[0]["data_version"],
        run_id=found[0]["run_id"],
        tables={name: table for name, table in every.items() if not name.startswith(VECTORS_PREFIX)},
        kept_at=found[0]["kept_at"],
        vectors={
            name.removeprefix(VECTORS_PREFIX): table
            for name, table in every.items()
            if name.startswith(VECTORS_PREFIX)
        },
    )


def _kept_builds_table(rows: list[dict]) -> pa.Table:
    names = ("collection", "asset", "inputs_key", "inputs", "report", "data_version", "run_id", "kept_at")
    return pa.Table.from_pylist(rows, schema=pa.schema([(name, pa.string()) for name in names]))


def _kept_tables_table(rows: list[dict]) -> pa.Table:
    names = ("collection", "asset", "inputs_key", "table_name")
    schema = pa.schema([*((name, pa.string()) for name in names), ("rows", pa.binary())])
    return pa.Table.from_pylist(rows, schema=schema)
