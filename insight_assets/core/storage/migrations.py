"""Stored values that a newer version renamed, updated in place when an older store is opened.

Chunk profiles were first named after the methods whose papers set their sizes; they are now named
by what they are. A warehouse or vector table written before keeps working: its rows are renamed
the first time this process opens it. (The chunks themselves are then made again at the next
build, since a chunk's id hashes its profile's name; their vectors are reused by text.)
"""

from __future__ import annotations

RENAMED_PROFILES = {"insightgen": "section", "xsum": "passage"}

# Warehouse tables with a column naming a chunk profile.
_PROFILE_COLUMNS = {"chunks": "profile", "embedding_errors": "profile"}


def _case(column: str) -> str:
    cases = " ".join(f"WHEN '{old}' THEN '{new}'" for old, new in RENAMED_PROFILES.items())
    return f"CASE {column} {cases} ELSE {column} END"


def _old_names() -> str:
    return ", ".join(f"'{old}'" for old in RENAMED_PROFILES)


def warehouse_statements() -> list[str]:
    """SQL that renames old profile names in the warehouse; a no-op on a current one."""
    return [
        f"UPDATE {table} SET {column} = {_case(column)} WHERE {column} IN ({_old_names()})"
        for table, column in _PROFILE_COLUMNS.items()
    ]


def rename_vector_profiles(table) -> int:
    """Rename old profile names in a LanceDB table's ``profile`` and ``pooled_from`` columns;
    returns how many rows had them."""
    columns = set(table.schema.names)
    renamed = 0
    for column in ("profile", "pooled_from"):
        if column not in columns:
            continue
        for old, new in RENAMED_PROFILES.items():
            found = table.count_rows(f"{column} = '{old}'")
            if found:
                table.update(where=f"{column} = '{old}'", values={column: new})
                renamed += found
    return renamed
