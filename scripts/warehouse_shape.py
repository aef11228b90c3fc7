"""Print a collection's built shape as JSON: warehouse tables and views with their columns and the
collection's row count in each, LanceDB tables with theirs, and the report files.

Used to check that a restructuring changed nothing a user sees: build the demo before and after,
run this on both, and diff (``python scripts/warehouse_shape.py scholarly-docs > before.json``).
"""

import argparse
import json
import sys
from pathlib import Path

import duckdb
import lancedb


def warehouse_shape(path: Path, collection: str) -> dict:
    connection = duckdb.connect(str(path), read_only=True)
    try:
        columns: dict[str, list[str]] = {}
        for table, column, kind in connection.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "ORDER BY table_name, ordinal_position"
        ).fetchall():
            columns.setdefault(table, []).append(f"{column} {kind}")
        shape = {}
        for table, table_columns in columns.items():
            rows = None
            if any(column.split()[0] == "collection" for column in table_columns):
                rows = connection.execute(
                    f'SELECT count(*) FROM "{table}" WHERE collection = ?', [collection]
                ).fetchone()[0]
            shape[table] = {"columns": table_columns, "rows": rows}
        return shape
    finally:
        connection.close()


def vectors_shape(uri: str, collection: str) -> dict:
    database = lancedb.connect(uri)
    shape = {}
    for name in database.list_tables().tables:
        if name.endswith(f"__{collection}"):
            table = database.open_table(name)
            shape[name] = {"columns": sorted(table.schema.names), "rows": table.count_rows()}
    return shape


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection")
    parser.add_argument("--data", default="data", help="the data folder (default: %(default)s)")
    args = parser.parse_args()
    data = Path(args.data)
    reports = sorted(p.name for p in (data / "reports" / args.collection).glob("*"))
    json.dump(
        {
            "warehouse": warehouse_shape(data / "warehouse.duckdb", args.collection),
            "vectors": vectors_shape(str(data / "lancedb"), args.collection),
            "reports": reports,
        },
        sys.stdout,
        indent=1,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
