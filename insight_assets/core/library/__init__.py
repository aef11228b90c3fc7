"""Reference-manager libraries as collections: what a Zotero database, a BibTeX file or a CSL-JSON
export says about each paper (its metadata, its PDF, the reader's highlights and notes), read
without ever writing to the library.

A library is read into ``LibraryCollection`` values, one per collection it holds; each item names
its PDF (or says, as a ``LibraryProblem``, why it has none). Nothing here imports Dagster.
"""

from insight_assets.core.library.model import (
    LibraryCollection,
    LibraryError,
    LibraryItem,
    LibraryProblem,
    ReaderNote,
    slug,
)

__all__ = ["LibraryCollection", "LibraryError", "LibraryItem", "LibraryProblem", "ReaderNote", "slug"]
