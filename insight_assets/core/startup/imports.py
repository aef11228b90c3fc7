"""Libraries imported without the parts of their packages we never use.

A package's ``__init__`` runs whenever any of its modules is imported, and two of ours import far
more than we use (seconds on a 2-core machine, in every process that needs them):

- TextBlob's imports NLTK, and with it scipy.stats, for TextBlob's own classes; Insight-RAG's
  offline triple extractor uses only the pattern tagger of ``textblob.en``.
- LanceDB imports ``lance_namespace_urllib3_client``, whose ``__init__`` builds the REST namespace
  API's clients; LanceDB needs only its ``models`` to describe namespaces, and we open local folders.

``without_package_init`` stands an empty package in for such a one while the import runs: its
submodules import from its folder as usual, its ``__init__`` does not run. The stand-in is removed
afterwards, so that a later ``import`` of the package itself runs the real one.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType


@contextlib.contextmanager
def without_package_init(package: str) -> Iterator[None]:
    """Inside the block, ``package``'s modules import without its ``__init__`` (unless the package
    was already imported)."""
    if package in sys.modules:
        yield
        return
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"no package named {package!r}", name=package)
    sys.modules[package] = importlib.util.module_from_spec(spec)
    try:
        yield
    finally:
        sys.modules.pop(package, None)


def textblob_english() -> ModuleType:
    """``textblob.en``: the pattern tagger, its lexicon in the wheel."""
    with without_package_init("textblob"):
        return importlib.import_module("textblob.en")


def lancedb() -> ModuleType:
    """``lancedb``, its namespace REST client's API modules not loaded."""
    with without_package_init("lance_namespace_urllib3_client"):
        return importlib.import_module("lancedb")
