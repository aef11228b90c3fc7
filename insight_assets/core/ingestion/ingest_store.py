"""What ingestion reads back from the warehouse: the files scanned, the parses and their problems,
the text-quality verdicts, the chunks and their run key, the embedding errors.

Each reader takes the warehouse or one of its sessions (several reads in one session see one
state of the file). The tables are declared in ``stores.SCHEMA``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.storage.stores import Warehouse, WarehouseSession

if TYPE_CHECKING:
    from insight_assets.core.startup.lazy import pa

Reader = Warehouse | WarehouseSession


def stored_sources(db: Reader, collection: str) -> list[dict]:
    """The collection's files as last scanned (file, doc_id, size_bytes, pages), in file order."""
    return db.rows(
        "SELECT file, doc_id, size_bytes, pages FROM source_documents WHERE collection = ? ORDER BY file",
        [collection],
    )


def stored_parse(db: Reader, collection: str) -> tuple[list[dict], list[dict]]:
    """The collection's parsed documents (without their text) and parse problems, as stored."""
    documents = db.rows(
        """SELECT file, doc_id, left(title, 80) AS title, page_count AS pages, char_count AS characters,
                  len(sections) AS sections, CASE WHEN references_text <> '' THEN 'yes' ELSE 'no' END AS "references",
                  parser_version
           FROM parsed_documents WHERE collection = ? ORDER BY file""",
        [collection],
    )
    problems = db.rows(
        "SELECT file, doc_id, kind, severity, message, parser_version FROM parse_problems "
        "WHERE collection = ? ORDER BY file, kind",
        [collection],
    )
    return documents, problems


def quality_rows(db: Reader, collection: str) -> list[dict]:
    """Each file's text-quality measures and verdict, rounded for people."""
    return db.rows(
        """SELECT file, verdict, language, pages, chars, round(chars / greatest(pages, 1)) AS chars_per_page,
                  round(junk_share, 3) AS junk_share, round(word_share, 3) AS word_share,
                  round(words_per_1000_chars) AS words_per_1000_chars, round(mean_token_chars, 1) AS mean_token_chars,
                  garbled_pages, poor_pages
           FROM text_quality WHERE collection = ? ORDER BY file""",
        [collection],
    )


def parses_of(
    warehouse: Warehouse, collection: str, doc_ids: Sequence[str], parser_version: str
) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Earlier parses of these documents by this parser, from any collection: their documents,
    pages, problems and text-quality rows (one stored copy per document: ``collection``'s own when
    it has one)."""
    picked = """
        SELECT doc_id, arg_min(collection, collection <> ?) AS collection
        FROM parsed_documents WHERE parser_version = ? AND list_contains(?, doc_id) GROUP BY doc_id"""
    params = [collection, parser_version, list(doc_ids)]
    with warehouse.session() as db:
        documents = db.rows(
            f"SELECT d.* FROM parsed_documents d JOIN ({picked}) p USING (doc_id, collection)", params
        )
        pages = db.rows(
            f"SELECT pg.doc_id, pg.page, pg.text FROM parsed_pages pg JOIN ({picked}) p USING (doc_id, collection)",
            params,
        )
        problems = db.rows(
            "SELECT * FROM parse_problems WHERE parser_version = ? AND list_contains(?, doc_id)",
            [parser_version, list(doc_ids)],
        )
        quality = db.rows(
            "SELECT * FROM text_quality WHERE parser_version = ? AND list_contains(?, doc_id)",
            [parser_version, list(doc_ids)],
        )
    return documents, pages, problems, quality


def chunking_keys(db: Reader, collection: str) -> list[str]:
    """The key of the chunking run that made the stored chunks (none before the first)."""
    rows = db.rows("SELECT chunking_key FROM chunk_runs WHERE collection = ?", [collection])
    return [row["chunking_key"] for row in rows]


def chunk_stats(db: Reader, collection: str) -> list[dict]:
    """Chunks, tokens and empty chunks per profile and document."""
    return db.rows(
        """SELECT profile, doc_id, count(*) AS chunks, sum(token_count)::BIGINT AS tokens,
                  count(*) FILTER (WHERE trim(text) = '') AS empty
           FROM chunks WHERE collection = ? GROUP BY profile, doc_id""",
        [collection],
    )


def chunks_to_embed(db: Reader, collection: str) -> list[dict]:
    """Every chunk with what embedding it needs, in profile, document and chunk order."""
    return db.rows(
        "SELECT profile, chunk_id, doc_id, text, text_sha, char_start, char_end, token_count FROM chunks "
        "WHERE collection = ? ORDER BY profile, doc_id, chunk_index",
        [collection],
    )


def embedding_error_count(db: Reader, collection: str) -> int:
    """How many chunks the last embedding left without a vector."""
    return db.rows("SELECT count(*) AS n FROM embedding_errors WHERE collection = ?", [collection])[0]["n"]


def problems_by_severity(db: Reader, collection: str) -> list[dict]:
    """Every parse problem and every library item left out (file, kind, severity, message),
    errors first; a library item without a file is named by its key and title."""
    return db.rows(
        """SELECT file, kind, severity, message FROM parse_problems WHERE collection = ?
           UNION ALL
           SELECT item AS file, kind, severity, message FROM source_problems WHERE collection = ?
           ORDER BY severity, file, kind""",
        [collection, collection],
    )


def chunk_counts(db: Reader, collection: str) -> dict[str, int]:
    """Chunks per profile."""
    rows = db.rows(
        "SELECT profile, count(*) AS n FROM chunks WHERE collection = ? GROUP BY profile", [collection]
    )
    return {row["profile"]: row["n"] for row in rows}


def citing_documents(db: Reader, collection: str) -> list[dict]:
    """Each paper's doc id, title (its file name where it has none), references, first page and
    DOI (its library's; '' for none): what citations are matched on."""
    return db.rows(
        """SELECT d.doc_id, coalesce(nullif(d.title, ''), d.file) AS title, d.references_text,
                  coalesce(p.text, '') AS first_page, coalesce(pa.doi, '') AS doi
           FROM parsed_documents d LEFT JOIN parsed_pages p
             ON p.collection = d.collection AND p.doc_id = d.doc_id AND p.page = 1
           LEFT JOIN papers pa ON pa.collection = d.collection AND pa.doc_id = d.doc_id
           WHERE d.collection = ? ORDER BY d.file""",
        [collection],
    )


def built_source_signatures(db: Reader) -> dict[str, str]:
    """Each collection's source signature as its last ``source_documents`` build read it."""
    return {
        row["collection"]: row["signature"]
        for row in db.rows("SELECT collection, signature FROM source_states")
    }


def rows_differ(db: Reader, collection: str, tables: dict[str, pa.Table]) -> bool:
    """Whether any of ``tables`` (name -> the rows a step would write) differs from the stored rows
    of ``collection``, in any order: a step that would write the same rows writes nothing."""

    def as_set(rows: list[dict]) -> list[str]:
        return sorted(repr(sorted(row.items())) for row in rows)

    for name, rows in tables.items():
        stored = db.rows(f"SELECT * EXCLUDE (collection) FROM {name} WHERE collection = ?", [collection])
        if as_set(stored) != as_set(rows.drop(["collection"]).to_pylist()):
            return True
    return False
