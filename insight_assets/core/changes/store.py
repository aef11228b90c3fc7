"""The kept history of a collection's builds: each build's snapshot (the last ``KEEP_SNAPSHOTS``, so
that ``--since`` can compare with an older one), its change set, and one row per changed thing
(``changes``)."""

from __future__ import annotations

import datetime
import json
import zlib
from dataclasses import asdict

from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.stores import Warehouse, declare_tables

from .compare import Change, ChangeSet, compare
from .digest import as_data, when
from .snapshot import Snapshot

KEEP_SNAPSHOTS = 10
# The asset every build builds (it reads the collection's folder; nothing reuses it): its last run is
# the collection's last build, which changed nothing when it is not the last change set's.
FOLDER_ASSET = "source_documents"

TABLES = {
    "build_snapshots": """
        collection VARCHAR, build_id VARCHAR, built_at VARCHAR, snapshot BLOB""",
    "build_change_sets": """
        collection VARCHAR, build_id VARCHAR, built_at VARCHAR, previous_build_id VARCHAR,
        previous_built_at VARCHAR, changed BOOLEAN, unchanged VARCHAR, titles VARCHAR,
        settings_changed VARCHAR[]""",
    "changes": """
        collection VARCHAR, build_id VARCHAR, position INTEGER, kind VARCHAR, key VARCHAR,
        change VARCHAR, subject VARCHAR, doc_ids VARCHAR[], chunk_ids VARCHAR[], before VARCHAR,
        after VARCHAR, cause VARCHAR, section VARCHAR, method VARCHAR, detail VARCHAR""",
}
declare_tables(TABLES)


class NoSuchBuild(LookupError):
    """``--since`` names no build kept for the collection."""


def record(warehouse: Warehouse, change_set: ChangeSet, snapshot: Snapshot) -> None:
    """Keep ``snapshot`` and the change set it made, replacing what the same build kept before (a
    step retried in its run), and forget snapshots beyond the last ``KEEP_SNAPSHOTS``."""
    collection, build = change_set.collection, change_set.build_id
    change_set_row = {
        "collection": collection,
        "build_id": build,
        "built_at": change_set.built_at,
        "previous_build_id": change_set.previous_build_id,
        "previous_built_at": change_set.previous_built_at,
        "changed": change_set.changed,
        "unchanged": json.dumps(dict(change_set.unchanged), sort_keys=True),
        "titles": json.dumps(dict(change_set.titles), sort_keys=True),
        "settings_changed": list(change_set.settings_changed),
    }
    change_rows = [
        {
            **{name: value for name, value in asdict(change).items() if name != "detail"},
            "collection": collection,
            "build_id": build,
            "position": position,
            "doc_ids": list(change.doc_ids),
            "chunk_ids": list(change.chunk_ids),
            "detail": json.dumps(dict(change.detail), sort_keys=True, default=str),
        }
        for position, change in enumerate(change_set.changes)
    ]
    snapshot_row = {
        "collection": collection,
        "build_id": build,
        "built_at": snapshot.built_at,
        "snapshot": pack(snapshot),
    }
    this_build = ("collection = ? AND build_id = ?", [collection, build])
    # The new snapshot is the newest: of the others, the last KEEP_SNAPSHOTS - 1 stay.
    older = [row["build_id"] for row in _snapshot_rows(warehouse, collection) if row["build_id"] != build]
    forgotten = older[KEEP_SNAPSHOTS - 1 :]
    warehouse.replace_together(
        [
            ("build_snapshots", *this_build, _rows("build_snapshots", [snapshot_row])),
            ("build_change_sets", *this_build, _rows("build_change_sets", [change_set_row])),
            ("changes", *this_build, _rows("changes", change_rows)),
            *(
                [
                    (
                        "build_snapshots",
                        f"collection = ? AND build_id IN ({', '.join('?' * len(forgotten))})",
                        [collection, *forgotten],
                        _rows("build_snapshots", []),
                    )
                ]
                if forgotten
                else []
            ),
        ]
    )


def pack(snapshot: Snapshot) -> bytes:
    """A snapshot as kept: its JSON, compressed (its texts repeat from build to build, and shrink
    about tenfold)."""
    return zlib.compress(json.dumps(snapshot.to_json(), sort_keys=True).encode("utf-8"), 6)


def unpack(kept: bytes) -> Snapshot:
    return Snapshot.from_json(json.loads(zlib.decompress(kept)))


def _rows(table: str, rows: list[dict]) -> pa.Table:
    """``rows`` as a table with ``table``'s columns, in its order (none: nothing to insert)."""
    columns = [part.split()[0] for part in TABLES[table].split(",")]
    return pa.Table.from_pylist([{column: row.get(column) for column in columns} for row in rows])


def _snapshot_rows(warehouse: Warehouse, collection: str) -> list[dict]:
    """The kept snapshots' builds, newest first (without the snapshots)."""
    return warehouse.rows(
        "SELECT build_id, built_at FROM build_snapshots WHERE collection = ? ORDER BY built_at DESC, build_id",
        [collection],
    )


def _snapshot(warehouse: Warehouse, collection: str, build_id: str) -> Snapshot:
    (row,) = warehouse.rows(
        "SELECT snapshot FROM build_snapshots WHERE collection = ? AND build_id = ?", [collection, build_id]
    )
    return unpack(row["snapshot"])


def previous_snapshot(warehouse: Warehouse, collection: str, build_id: str) -> Snapshot | None:
    """The last snapshot kept before ``build_id``'s (None: the collection was never built before)."""
    for row in _snapshot_rows(warehouse, collection):
        if row["build_id"] != build_id:
            return _snapshot(warehouse, collection, row["build_id"])
    return None


def latest_change_set(warehouse: Warehouse, collection: str) -> ChangeSet | None:
    """The change set of the collection's last build that compared (None: never built)."""
    found = change_sets(warehouse, collection, limit=1)
    return found[0] if found else None


def change_set_of(warehouse: Warehouse, collection: str, build_id: str) -> ChangeSet:
    (found,) = _read_change_sets(warehouse, collection, "AND build_id = ?", [build_id])
    return found


def change_sets(warehouse: Warehouse, collection: str, limit: int | None = None) -> list[ChangeSet]:
    """The kept change sets of the collection, newest first (the last ``limit``)."""
    return _read_change_sets(warehouse, collection, "", [], limit)


def _read_change_sets(
    warehouse: Warehouse, collection: str, where: str, params: list, limit: int | None = None
) -> list[ChangeSet]:
    """The change sets matching ``where``, newest first, each with its changes: two queries."""
    with warehouse.session() as db:
        rows = db.rows(
            f"SELECT * FROM build_change_sets WHERE collection = ? {where} ORDER BY built_at DESC"
            + (f" LIMIT {int(limit)}" if limit else ""),
            [collection, *params],
        )
        builds = [row["build_id"] for row in rows]
        by_build: dict[str, list[Change]] = {build: [] for build in builds}
        if builds:
            for change in db.rows(
                f"SELECT * FROM changes WHERE collection = ? AND build_id IN ({', '.join('?' * len(builds))}) "
                "ORDER BY build_id, position",
                [collection, *builds],
            ):
                by_build[change["build_id"]].append(_change(change))
    return [
        ChangeSet(
            collection,
            row["build_id"],
            row["built_at"],
            row["previous_build_id"],
            row["previous_built_at"],
            by_build[row["build_id"]],
            json.loads(row["unchanged"] or "{}"),
            json.loads(row["titles"] or "{}"),
            tuple(row["settings_changed"] or ()),
        )
        for row in rows
    ]


def _change(row: dict) -> Change:
    return Change(
        row["kind"],
        row["key"],
        row["change"],
        row["subject"],
        tuple(row["doc_ids"] or ()),
        tuple(row["chunk_ids"] or ()),
        row["before"],
        row["after"],
        row["cause"],
        row["section"],
        row["method"],
        json.loads(row["detail"] or "{}"),
    )


def changes_since(warehouse: Warehouse, collection: str, since: str) -> ChangeSet:
    """What the builds after ``since`` changed, together: the last kept snapshot compared with the
    one of build ``since`` (an id, or the start of one), or with the last one built before the date
    ``since`` (YYYY-MM-DD, or a moment in ISO 8601; the oldest kept when none was)."""
    builds = _snapshot_rows(warehouse, collection)
    if not builds:
        raise NoSuchBuild(f"collection {collection!r} has no build on record")
    baseline = _baseline(builds, since)
    if baseline is None:
        raise NoSuchBuild(
            f"{since!r} is neither a date (YYYY-MM-DD) nor one of the {len(builds)} builds kept for "
            f"{collection!r} (`insight-assets changes -c {collection} --json` lists them)"
        )
    latest = _snapshot(warehouse, collection, builds[0]["build_id"])
    # The themes are matched with the baseline's by their chunks, as each build matches them with the
    # last one's: ids carried from build to build lose a theme that left and came back (a paper
    # added, then removed, gives the earlier graph back: core/themes/graph_archive.py).
    change_set, _ = compare(_snapshot(warehouse, collection, baseline), latest)
    return change_set


def _baseline(builds: list[dict], since: str) -> str | None:
    matching = [row["build_id"] for row in builds if row["build_id"].startswith(since)]
    if matching:
        return matching[0]
    try:
        moment = datetime.datetime.fromisoformat(since)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    earlier = [row for row in builds if datetime.datetime.fromisoformat(row["built_at"]) < moment]
    return (earlier[0] if earlier else builds[-1])["build_id"]


def digest_data(warehouse: Warehouse, collection: str, since: str | None = None) -> dict:
    """The digest's structured form (``digest.as_data``) of the collection's last build, or of every
    build after ``since``: what the command line, the MCP tool and the page show. A last build that
    reused everything changed nothing and says so. ``NoSuchBuild`` when nothing is on record."""
    if since is not None:
        return as_data(changes_since(warehouse, collection, since))
    change_set = latest_change_set(warehouse, collection)
    if change_set is None:
        raise NoSuchBuild(f"collection {collection!r} has no build on record: build it first")
    data = as_data(change_set)
    last = warehouse.builds(collection).get(FOLDER_ASSET)
    if last is None or last["run_id"] in (None, change_set.build_id):
        return data
    built_at = last["built_at"].replace(tzinfo=datetime.UTC).isoformat(timespec="seconds")
    if built_at <= change_set.built_at:
        return data
    return {
        **data,
        "build": last["run_id"],
        "built_at": built_at,
        "previous_build": change_set.build_id,
        "previous_built_at": change_set.built_at,
        "first": False,
        "changed": False,
        "headline": f"nothing changed since the build of {when(change_set.built_at)}",
        "papers": [],
        "themes": [],
        "findings": [],
        "through_collection": {},
    }
