"""Where artifacts live: tables in DuckDB (a file here, or a DuckLake shared by machines: ``lake.py``),
vectors in LanceDB.

Both stores write per collection: a write replaces exactly one collection's rows and never touches
another's, so partitions can be materialised at the same time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from insight_assets.core.startup import imports
from insight_assets.core.startup.lazy import duckdb, lazy_regex, pa
from insight_assets.core.storage import migrations
from insight_assets.core.storage.duckdb_file import LOCK_WAIT_S, StoreError, open_duckdb
from insight_assets.core.storage.shared_file import shared_file

SCHEMA = {
    # One row per collection and asset that was built: what downstream assets check before running,
    # so a step whose upstream partition was never built fails instead of reading empty tables; and
    # what the build read (``inputs``) and reported (``report``), so that a rerun whose inputs are
    # the same reuses it (defs/reuse.py). ``incomplete``: why the next run must build it again.
    "asset_builds": """
        collection VARCHAR, asset VARCHAR, rows BIGINT, data_version VARCHAR, run_id VARCHAR,
        built_at TIMESTAMP, inputs VARCHAR, report VARCHAR, incomplete VARCHAR, config VARCHAR""",
    "source_documents": """
        collection VARCHAR, file VARCHAR, doc_id VARCHAR, size_bytes BIGINT, pages INTEGER""",
    # ``title``: the library's title where the paper came from a library, else the PDF's
    # (``pdf_title``, what the parser found).
    "parsed_documents": """
        collection VARCHAR, doc_id VARCHAR, file VARCHAR, title VARCHAR, abstract VARCHAR,
        sections VARCHAR[], references_text VARCHAR, page_count INTEGER, char_count BIGINT,
        body_end BIGINT, parser_version VARCHAR, boilerplate VARCHAR, pdf_title VARCHAR""",
    # Library collections (core/papers.py): each file's library entry, the reader's notes, the
    # items without a usable PDF, and the source's signature as the last build read it.
    "library_items": """
        collection VARCHAR, file VARCHAR, doc_id VARCHAR, source VARCHAR, item_key VARCHAR,
        citekey VARCHAR, title VARCHAR, authors VARCHAR[], year INTEGER, venue VARCHAR, doi VARCHAR,
        link VARCHAR, matched_by VARCHAR""",
    "reader_notes": """
        collection VARCHAR, note_id VARCHAR, doc_id VARCHAR, file VARCHAR, item_key VARCHAR,
        kind VARCHAR, text VARCHAR, comment VARCHAR, page_label VARCHAR, page INTEGER""",
    "source_problems": """
        collection VARCHAR, item VARCHAR, kind VARCHAR, severity VARCHAR, message VARCHAR""",
    "source_states": """
        collection VARCHAR, kind VARCHAR, origin VARCHAR, signature VARCHAR""",
    # One row per parsed paper: the metadata every method cites it by (the library's, else what
    # the PDF gave), and where the library and the PDF disagree.
    "papers": """
        collection VARCHAR, doc_id VARCHAR, file VARCHAR, title VARCHAR, authors VARCHAR[],
        year INTEGER, venue VARCHAR, doi VARCHAR, item_key VARCHAR, citekey VARCHAR, link VARCHAR,
        source VARCHAR, pdf_title VARCHAR, differences VARCHAR[]""",
    "parsed_pages": """
        collection VARCHAR, doc_id VARCHAR, page INTEGER, text VARCHAR""",
    "parse_problems": """
        collection VARCHAR, file VARCHAR, doc_id VARCHAR, kind VARCHAR, severity VARCHAR,
        message VARCHAR, parser_version VARCHAR""",
    # The text-quality gate's measures and verdict per file (see text_quality.py).
    "text_quality": """
        collection VARCHAR, file VARCHAR, doc_id VARCHAR, verdict VARCHAR, language VARCHAR,
        pages INTEGER, chars BIGINT, junk_share DOUBLE, word_share DOUBLE, words_per_1000_chars DOUBLE,
        mean_token_chars DOUBLE, kind VARCHAR, reason VARCHAR, garbled_pages INTEGER[],
        poor_pages INTEGER[], parser_version VARCHAR""",
    "chunks": """
        collection VARCHAR, profile VARCHAR, chunk_id VARCHAR, doc_id VARCHAR, chunk_index INTEGER,
        text VARCHAR, char_start BIGINT, char_end BIGINT, page_start INTEGER, page_end INTEGER,
        token_count INTEGER, text_sha VARCHAR""",
    # Chunks left without a vector because their embedding batch failed; the next run retries them.
    "embedding_errors": """
        collection VARCHAR, variant VARCHAR, profile VARCHAR, chunk_id VARCHAR, doc_id VARCHAR,
        text_sha VARCHAR, error VARCHAR""",
    # What a collection's chunks were made from (documents, profiles, code), so reruns can skip.
    "chunk_runs": """
        collection VARCHAR, chunking_key VARCHAR""",
    # SCOpE-QA curation. A row whose status is "failed" records why a model call gave nothing.
    "compressed_documents": """
        collection VARCHAR, doc_id VARCHAR, title VARCHAR, main_topics VARCHAR[],
        contributions VARCHAR[], conclusions VARCHAR[], key_findings VARCHAR[], text VARCHAR,
        tokens INTEGER, source_tokens INTEGER, writer VARCHAR, status VARCHAR, error VARCHAR""",
    "question_combinations": """
        collection VARCHAR, combination_index INTEGER, doc_ids VARCHAR[], status VARCHAR,
        error VARCHAR""",
    "question_candidates": """
        collection VARCHAR, combination_index INTEGER, candidate_index INTEGER, question VARCHAR,
        word_count INTEGER, kept BOOLEAN, reason VARCHAR""",
    "generated_questions": """
        collection VARCHAR, question_id VARCHAR, position INTEGER, question VARCHAR,
        doc_ids VARCHAR[], combination_index INTEGER, source VARCHAR, user_answer VARCHAR""",
    "user_question_problems": """
        collection VARCHAR, line INTEGER, message VARCHAR""",
    "generated_answers": """
        collection VARCHAR, question_id VARCHAR, position INTEGER, question VARCHAR,
        answer VARCHAR, doc_ids VARCHAR[], cited_doc_ids VARCHAR[], source VARCHAR,
        answer_source VARCHAR, status VARCHAR, duplicate_of VARCHAR, error VARCHAR""",
    # The theme graph of a collection's chunks (see clustering.ThemeGraph.to_tables).
    "theme_clusters": """
        collection VARCHAR, cluster INTEGER, label VARCHAR, size BIGINT, centroid FLOAT[],
        method VARCHAR, cluster_rule VARCHAR, fit_key VARCHAR, fit_size BIGINT""",
    "theme_edges": """
        collection VARCHAR, source INTEGER, target INTEGER, distance DOUBLE""",
    "theme_assignments": """
        collection VARCHAR, chunk_id VARCHAR, position INTEGER, cluster INTEGER,
        distance_to_centroid DOUBLE, fitted BOOLEAN""",
    # The citation graph (citations/): every reference with its match, and the edges between papers.
    "paper_references": """
        collection VARCHAR, citing_doc_id VARCHAR, ref_index INTEGER, text VARCHAR, year INTEGER,
        first_author VARCHAR, cited_doc_id VARCHAR, candidate_doc_id VARCHAR, title_similarity DOUBLE,
        reason VARCHAR, label VARCHAR""",
    "citations": """
        collection VARCHAR, citing_doc_id VARCHAR, cited_doc_id VARCHAR, reference_text VARCHAR,
        match_score DOUBLE""",
    # Each report's headline for the collection's page (see headlines.py): one row per report.
    "report_headlines": """
        collection VARCHAR, report VARCHAR, tables VARCHAR, chart BLOB, chart_caption VARCHAR,
        notes VARCHAR[], writer VARCHAR, judge VARCHAR""",
}


# Views over the tables, created with them.
VIEWS = {
    # Two papers cited together: by how many papers of the collection (co-citation).
    "co_citations": """
        SELECT a.collection, a.cited_doc_id AS doc_a, b.cited_doc_id AS doc_b, count(*) AS co_cited_by
        FROM citations a JOIN citations b
          ON a.collection = b.collection AND a.citing_doc_id = b.citing_doc_id AND a.cited_doc_id < b.cited_doc_id
        GROUP BY ALL""",
}


# Tables a method declares for itself (``declare_tables`` in its store module), beside ``SCHEMA``.
_DECLARED: dict[str, str] = {}
# (warehouse, how many tables were known) for which the tables exist: a table declared later, by a
# method imported later in the process, is created at the next connection.
_SCHEMA_READY: set[tuple[str, int]] = set()


def declare_tables(tables: dict[str, str]) -> None:
    """Add a method's own tables (name -> column definitions) to the warehouse's schema. A method's
    store module calls this when imported, so its tables exist before any of its writes."""
    for name, columns in tables.items():
        known = SCHEMA.get(name, _DECLARED.get(name))
        if known is not None and known != columns:
            raise StoreError(f"warehouse table {name!r} is declared twice, with different columns")
        _DECLARED[name] = columns


def warehouse_tables() -> dict[str, str]:
    """Every table of the warehouse: the shared ones and those methods declared."""
    return {**SCHEMA, **_DECLARED}


def _existing_columns(connection: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The columns of each table and view of the connection's current database."""
    existing: dict[str, set[str]] = {}
    for table, column in connection.execute(
        """SELECT table_name, column_name FROM information_schema.columns
           WHERE table_catalog = current_database() AND table_schema = current_schema()"""
    ).fetchall():
        existing.setdefault(table, set()).add(column)
    return existing


def _create_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Create the tables that do not exist, add the columns a table gained since the warehouse was
    made (empty in old rows, so that a new version of a step can write to an old warehouse), run the
    migrations, and create or update the views."""
    existing = _existing_columns(connection)
    for table, columns in warehouse_tables().items():
        if table not in existing:
            connection.execute(f"CREATE TABLE {table} ({columns})")
            continue
        for definition in columns.split(","):
            name, kind = definition.split(maxsplit=1)
            if name not in existing[table]:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    for statement in migrations.warehouse_statements():
        connection.execute(statement)
    # A view's comment is the digest of the query it was made from, so that it is replaced only when
    # the query changed: in a shared warehouse every replacement is a catalog commit.
    made = dict(
        connection.execute(
            """SELECT view_name, comment FROM duckdb_views()
               WHERE database_name = current_database() AND schema_name = current_schema()"""
        ).fetchall()
    )
    for view, query in VIEWS.items():
        digest = hashlib.sha256(query.encode()).hexdigest()[:16]
        if made.get(view) != digest:
            connection.execute(f"CREATE OR REPLACE VIEW {view} AS {query}")
            connection.execute(f"COMMENT ON VIEW {view} IS '{digest}'")


def is_write_conflict(error: Exception) -> bool:
    """Whether ``error`` is a transaction that lost to a concurrent one (DuckLake refuses the
    second of two commits that changed the same table) and may simply be replayed."""
    return isinstance(error, duckdb.TransactionException) and "conflict" in str(error).lower()


def _in_transaction(
    connection: duckdb.DuckDBPyConnection, work: Callable[[duckdb.DuckDBPyConnection], None]
) -> None:
    """Run ``work`` in one transaction; replay it while it loses to a concurrent writer."""
    deadline = time.monotonic() + LOCK_WAIT_S
    attempt = 0
    while True:
        connection.execute("BEGIN TRANSACTION")
        try:
            work(connection)
            connection.execute("COMMIT")
            return
        except Exception as error:
            # A failed COMMIT has already ended the transaction.
            with contextlib.suppress(duckdb.TransactionException):
                connection.execute("ROLLBACK")
            if not is_write_conflict(error) or time.monotonic() > deadline:
                raise
        attempt += 1
        time.sleep(random.uniform(0.01, 0.05 * min(attempt, 10)))


class Warehouse:
    """Every tabular artifact, one row set per collection: here a DuckDB file on this machine; a
    ``lake.LakeWarehouse`` holds the same tables in a DuckLake shared by several machines."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def location(self) -> str:
        """Where the tables are, for people (and which warehouse the process has made current)."""
        return str(self.path.resolve())

    @contextlib.contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one piece of work: a cursor of the file this process keeps open while its
        queries come close together (``shared_file``)."""
        # The absolute path, bound now: a file closed while idle is opened again by this very path,
        # whatever the working directory has become since (a relative one would open another file).
        path = self.path.resolve()
        with shared_file(path, lambda: open_duckdb(path)).cursor() as connection:
            yield connection

    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection whose tables are current (made or migrated once per warehouse and process)."""
        with self._open() as connection:
            # Once per warehouse and process: these statements cost more than a small query.
            ready = (self.location, len(warehouse_tables()))
            if ready not in _SCHEMA_READY:
                _in_transaction(connection, _create_schema)
                _SCHEMA_READY.add(ready)
            yield connection

    def write(self, work: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        """Run ``work`` (statements on the connection it gets) as one transaction: all of it lands
        or none does, and it is replayed when a concurrent writer wins."""
        with self.connect() as connection:
            _in_transaction(connection, work)

    def replace_rows(self, table: str, where: str, params: Sequence, rows: pa.Table) -> None:
        """Replace the rows of ``table`` matching ``where`` (SQL with ``?`` for ``params``) by ``rows``."""
        self.replace_together([(table, where, params, rows)])

    def replace_partition(self, collection: str, tables: dict[str, pa.Table]) -> None:
        """Replace ``collection``'s rows of each named table, all in one transaction."""
        self.replace_together([(name, "collection = ?", [collection], rows) for name, rows in tables.items()])

    def replace_together(self, replacements: Sequence[tuple[str, str, Sequence, pa.Table]]) -> None:
        """Each ``(table, where, params, rows)``: delete the matching rows and insert ``rows`` (none:
        a deletion), all in one transaction."""
        for table, *_ in replacements:
            if table not in warehouse_tables():
                raise StoreError(f"Unknown warehouse table {table!r}")

        def replace(connection: duckdb.DuckDBPyConnection) -> None:
            for table, where, params, rows in replacements:
                connection.execute(f"DELETE FROM {table} WHERE {where}", list(params))
                if rows.num_rows:
                    connection.register("incoming_rows", rows)
                    columns = ", ".join(rows.column_names)
                    connection.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM incoming_rows")
                    connection.unregister("incoming_rows")

        self.write(replace)

    def record_build(
        self,
        collection: str,
        asset: str,
        *,
        rows: int | None,
        data_version: str | None,
        run_id: str | None,
        inputs: str | None = None,
        report: str | None = None,
        incomplete: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        """Note that ``asset`` was built for ``collection`` (replacing an earlier note), with what
        it read and reported when the caller keeps those for reuse, and the config it was built with."""
        config_json = None if config is None else json.dumps(config, sort_keys=True, default=str)

        def record(connection: duckdb.DuckDBPyConnection) -> None:
            connection.execute(
                "DELETE FROM asset_builds WHERE collection = ? AND asset = ?", [collection, asset]
            )
            connection.execute(
                """INSERT INTO asset_builds (collection, asset, rows, data_version, run_id, built_at,
                                             inputs, report, incomplete, config)
                   VALUES (?, ?, ?, ?, ?, now(), ?, ?, ?, ?)""",
                [collection, asset, rows, data_version, run_id, inputs, report, incomplete, config_json],
            )

        self.write(record)

    def forget_build_inputs(self, collection: str, asset: str) -> None:
        """Before ``asset`` rewrites ``collection``'s rows: its earlier build can no longer be
        reused, even if this one fails halfway."""
        self.write(
            lambda connection: connection.execute(
                "UPDATE asset_builds SET inputs = NULL WHERE collection = ? AND asset = ? AND inputs IS NOT NULL",
                [collection, asset],
            )
        )

    def builds(self, collection: str) -> dict[str, dict]:
        """Each asset built for ``collection``: its note (data version, run, inputs), without the
        report (``build_report``)."""
        return {
            row["asset"]: row
            for row in self.rows(
                "SELECT asset, rows, data_version, run_id, built_at, inputs, incomplete, report IS NOT NULL AS reported "
                "FROM asset_builds WHERE collection = ?",
                [collection],
            )
        }

    def build_report(self, collection: str, asset: str) -> str | None:
        """The report kept with ``asset``'s last build for ``collection``."""
        found = self.rows(
            "SELECT report FROM asset_builds WHERE collection = ? AND asset = ?", [collection, asset]
        )
        return found[0]["report"] if found else None

    def build_config(self, collection: str, asset: str) -> dict[str, Any] | None:
        """The config ``asset``'s last build for ``collection`` ran with (defaults included); ``None``
        when it was never built, or built before builds kept their config."""
        found = self.rows(
            "SELECT config FROM asset_builds WHERE collection = ? AND asset = ? AND config IS NOT NULL",
            [collection, asset],
        )
        return json.loads(found[0]["config"]) if found else None

    def unbuilt(self, collection: str, assets: Sequence[str]) -> list[str]:
        """Those of ``assets`` never built for ``collection``, in the given order."""
        built = self.builds(collection)
        return [asset for asset in assets if asset not in built]

    @contextlib.contextmanager
    def session(self) -> Iterator[WarehouseSession]:
        """One connection for several queries in a row."""
        with self.connect() as connection:
            yield WarehouseSession(connection)

    def query(self, sql: str, params: Sequence | None = None) -> pa.Table:
        with self.session() as session:
            return session.query(sql, params)

    def rows(self, sql: str, params: Sequence | None = None) -> list[dict]:
        return self.query(sql, params).to_pylist()

    def labels(self, table: str, column: str, collection: str) -> list[str]:
        """``table``'s distinct non-NULL ``column`` values for ``collection``, sorted (its writers, say)."""
        sql = f"SELECT DISTINCT {column} AS v FROM {table} WHERE collection = ? AND {column} IS NOT NULL ORDER BY v"
        return [row["v"] for row in self.rows(sql, [collection])]

    def writers(self, table: str, collection: str) -> str:
        """The models that wrote ``table``'s rows for ``collection`` (its ``writer`` column), joined."""
        return ", ".join(self.labels(table, "writer", collection))


class WarehouseSession:
    """Queries over one open warehouse connection."""

    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection

    def query(self, sql: str, params: Sequence | None = None) -> pa.Table:
        return self.connection.sql(sql, params=list(params or [])).to_arrow_table()

    def rows(self, sql: str, params: Sequence | None = None) -> list[dict]:
        return self.query(sql, params).to_pylist()


_TABLE_NAME = lazy_regex(r"[^A-Za-z0-9_.-]")
# Vector tables this process has brought up to date (see ``migrations``), by (uri, table name).
_VECTORS_CURRENT: set[tuple[str, str]] = set()


class VectorStore:
    """LanceDB tables of vectors, one table per collection: the chunks' by default, or another
    ``kind`` of searchable unit that a method declares (triples, sentences, paper summaries).

    A table per collection keeps partitions physically apart: two collections written at once never
    contend for one table's commits. Rows still carry ``collection``, ``profile`` and ``chunk_id``
    (their key: a chunk's id, or a unit's) and the embedder ``variant`` that made the vector.
    """

    def __init__(self, uri: str, kind: str = "chunk_embeddings"):
        self.uri = uri
        self.kind = kind

    @functools.cached_property
    def db(self):
        lancedb = imports.lancedb()
        if "://" not in self.uri:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        return lancedb.connect(self.uri)

    def table_name(self, collection: str) -> str:
        return f"{self.kind}__" + _TABLE_NAME.sub("_", collection)

    def _open(self, collection: str):
        name = self.table_name(collection)
        if "://" not in self.uri and not (Path(self.uri) / f"{name}.lance").exists():
            return None  # a local table not made yet: known without loading LanceDB (most of a second)
        try:
            table = self.db.open_table(name)
        except ValueError:  # LanceDB's answer for a table that does not exist yet
            return None
        if (self.uri, name) not in _VECTORS_CURRENT:
            migrations.rename_vector_profiles(table)
            _VECTORS_CURRENT.add((self.uri, name))
        return table

    def exists(self, collection: str) -> bool:
        """Whether the collection has a table here."""
        return self._open(collection) is not None

    def read(self, collection: str, columns: Sequence[str] | None = None) -> pa.Table | None:
        table = self._open(collection)
        if table is None:
            return None
        arrow = table.to_arrow()
        return arrow.select(list(columns)) if columns else arrow

    def replace(self, collection: str, rows: pa.Table) -> None:
        """Make ``rows`` the collection's whole vector table."""
        name = self.table_name(collection)
        self.db.create_table(name, data=rows, mode="overwrite")

    def has_text_index(self, collection: str) -> bool:
        """Whether the collection's table has its full-text index on ``text``."""
        table = self._open(collection)
        return table is not None and any(
            index.index_type == "FTS" and list(index.columns) == ["text"] for index in table.list_indices()
        )

    def build_text_index(self, collection: str) -> None:
        """(Re)build LanceDB's native full-text index (BM25) on the chunks' ``text``: English
        stemming, stop words removed, accents folded."""
        from lancedb.index import FTS

        table = self._open(collection)
        if table is None:
            raise StoreError(f"no {self.kind} table for collection {collection!r} to index")
        table.create_index("text", config=FTS(), replace=True)

    def text_search(self, collection: str, query: str, where: str, k: int) -> list[tuple[str, float]]:
        """``(chunk_id, bm25 score)`` of the ``k`` best full-text matches among rows matching the
        SQL filter ``where``, best first; empty when the query has no indexed word."""
        table = self._open(collection)
        if table is None or k <= 0:
            return []
        found = (
            table.search(query, query_type="fts")
            .where(where, prefilter=True)
            .select(["chunk_id", "_score"])
            .limit(k)
            .to_arrow()
        )
        return list(zip(found["chunk_id"].to_pylist(), found["_score"].to_pylist(), strict=True))


def sql_text(value: str) -> str:
    """``value`` as a single-quoted SQL string literal (for LanceDB filters)."""
    return "'" + value.replace("'", "''") + "'"
