"""Storage: where a project's tables and vectors live, and how several processes share them.

``project`` says where a project's data is (collections, warehouse, LanceDB, reports); ``stores``
holds the warehouse (DuckDB tables) and the vector store (LanceDB); ``lake`` is the shared
warehouse of several machines (DuckLake with a PostgreSQL catalog); ``duckdb_file`` and
``shared_file`` open one DuckDB file from several processes; ``migrations`` updates values an
older store kept under names a newer version renamed.
"""
