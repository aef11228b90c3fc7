"""Start-up: what loading our modules defers, so that a command starts without loading what it never uses.

``lazy`` defers numpy, pyarrow and DuckDB to their first use; ``imports`` imports libraries
without the parts of their packages we never use.
"""
