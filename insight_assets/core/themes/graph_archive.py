"""The theme graphs of a collection's last builds, kept by what each was built from.

Themes are carried from build to build (``theme_updates.py``), so a graph depends on the builds
before it: a collection that gains a paper (and is clustered afresh because the paper is more than
``refit_share`` of it) and then loses it again would keep the grown collection's themes minus that
paper, not the themes it had before. Every summary, context and judgement hanging on them would
be asked again for a collection that is exactly what it was two builds ago. So each built graph is
kept with the digest of its inputs (the chunks' ids and texts in order, every theme setting, the
embedder and the asset's code version); a build whose inputs have that digest gets that graph back
as it was. The last ``KEEP_GRAPHS`` per collection are kept.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.kept_builds import table_bytes, table_from_bytes
from insight_assets.core.storage.stores import Warehouse, declare_tables
from insight_assets.core.themes.clustering import ThemeGraph

if TYPE_CHECKING:
    from insight_assets.core.themes.clustering import ThemeGraphSettings

KEEP_GRAPHS = 5
_PARTS = ("theme_clusters", "theme_edges", "theme_assignments")

TABLES = {
    "theme_graph_archive": """
        collection VARCHAR, built_from VARCHAR, stored_at VARCHAR, theme_clusters BLOB,
        theme_edges BLOB, theme_assignments BLOB""",
}
declare_tables(TABLES)


def built_from(
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    settings: ThemeGraphSettings,
    embedder: str,
    code_version: str,
) -> str:
    """The digest of everything a theme graph is made from but the builds before it."""
    digest = hashlib.sha256()
    header = {"settings": settings.model_dump(mode="json"), "embedder": embedder, "code": code_version}
    digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        digest.update(f"\x00{chunk_id}\x00".encode())
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return digest.hexdigest()


def kept_graph(warehouse: Warehouse, collection: str, inputs: str) -> tuple[ThemeGraph, str] | None:
    """The graph a build of ``collection`` made from ``inputs`` (a ``built_from`` digest), with when
    it was kept; None if none is kept."""
    rows = warehouse.rows(
        f"SELECT stored_at, {', '.join(_PARTS)} FROM theme_graph_archive "
        "WHERE collection = ? AND built_from = ? ORDER BY stored_at DESC LIMIT 1",
        [collection, inputs],
    )
    if not rows:
        return None
    tables = [table_from_bytes(rows[0][part]) for part in _PARTS]
    return ThemeGraph.from_tables(*tables), rows[0]["stored_at"]


def replacements(
    warehouse: Warehouse, collection: str, inputs: str, tables: dict[str, pa.Table]
) -> list[tuple[str, str, list, pa.Table]]:
    """What keeps a graph (``tables``: its ``ThemeGraph.to_tables``) as the collection's graph and in
    its archive, for one ``Warehouse.replace_together``: its three tables, its archive row
    (replacing one of the same inputs) and the archive rows beyond the last ``KEEP_GRAPHS``."""
    older = [
        row["built_from"]
        for row in warehouse.rows(
            "SELECT built_from FROM theme_graph_archive WHERE collection = ? ORDER BY stored_at DESC",
            [collection],
        )
        if row["built_from"] != inputs
    ]
    forgotten = older[KEEP_GRAPHS - 1 :]
    row = {
        "collection": collection,
        "built_from": inputs,
        "stored_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds"),
        **{part: table_bytes(tables[part]) for part in _PARTS},
    }
    archive = pa.Table.from_pylist([row], schema=_archive_schema())
    return [
        *((name, "collection = ?", [collection], table) for name, table in tables.items()),
        ("theme_graph_archive", "collection = ? AND built_from = ?", [collection, inputs], archive),
        *(
            [
                (
                    "theme_graph_archive",
                    f"collection = ? AND built_from IN ({', '.join('?' * len(forgotten))})",
                    [collection, *forgotten],
                    archive.slice(0, 0),
                )
            ]
            if forgotten
            else []
        ),
    ]


def _archive_schema() -> pa.Schema:
    names = ("collection", "built_from", "stored_at")
    return pa.schema([*((name, pa.string()) for name in names), *((part, pa.binary()) for part in _PARTS)])
