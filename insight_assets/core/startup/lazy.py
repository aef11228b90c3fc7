"""What loading our modules defers to first use: numpy, pyarrow and DuckDB (``np``, ``pa``, ``pc``,
``duckdb``), the validators of our pydantic models (``LazyModel``) and our module-level regular
expressions (``lazy_regex``).

Loading the definitions (every Dagster run worker, the UI's code server, every command) imports
most of our modules, and these three libraries cost about a fifth of a second together, although
only the steps that compute anything use them. A module writes ``from insight_assets.core.startup.lazy
import np`` in place of ``import numpy as np`` and uses ``np`` as before: the library is imported at
the first attribute read (``np.asarray``), through ``importlib`` and so under Python's import lock,
from any thread. Module-level code must not read such an attribute, or the import happens anyway.
"""

from __future__ import annotations

import atexit
import importlib
import re
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict


class LazyModule(types.ModuleType):
    """A stand-in for the module ``name`` that imports it on the first attribute read, and keeps
    each attribute read on itself, so that a later read costs what a module's does."""

    def __init__(self, name: str):
        super().__init__(name)
        _STAND_INS.append(self)

    def __getattr__(self, attribute: str) -> Any:
        # Reached once per attribute (``np.asarray``, then ``np.zeros``...), or for a submodule
        # the library imports later.
        value = getattr(importlib.import_module(self.__name__), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


_STAND_INS: list[LazyModule] = []


@atexit.register
def _forget_attributes() -> None:
    # Drop what the stand-ins keep before the interpreter tears the libraries down: an object of
    # pyarrow's or DuckDB's freed after its library has shut down crashes the process on exit.
    for stand_in in _STAND_INS:
        for attribute in [name for name in vars(stand_in) if not name.startswith("__")]:
            delattr(stand_in, attribute)


def prefetch(*imports: Callable[[], Any]) -> threading.Thread:
    """Run ``imports`` (functions that import a module, e.g. ``core.startup.imports.lancedb``) in a background
    thread, for work that will need them after work that leaves the interpreter free meanwhile (the
    model's forward passes run in torch's threads, without Python's lock). Safe to race: a module is
    imported once, and an import of it elsewhere waits for this one to finish."""
    thread = threading.Thread(target=lambda: [load() for load in imports], name="prefetch", daemon=True)
    thread.start()
    return thread


class LazyModel(BaseModel):
    """The base of our pydantic models: each builds its validator when first used (pydantic's
    ``defer_build``), not when its module is imported. Loading the definitions imports about a
    hundred models (settings, the methods' reply schemas) that a command mostly never validates."""

    model_config = ConfigDict(defer_build=True)


class LazyPattern:
    """A regular expression compiled at its first use: ``_WORD = lazy_regex(r"\\w+")`` at module level,
    then ``_WORD.findall(text)`` as with ``re.compile``'s result. Each method read is kept on the
    object, so later calls cost what a compiled pattern's do. The modules the definitions load hold
    about eighty such expressions: compiling them all took a tenth of our share of the load."""

    def __init__(self, source: str, flags: int = 0):
        self._source, self._flags = source, flags

    def __getattr__(self, name: str) -> Any:
        # Reached once per attribute (``findall``, ``sub``, ``pattern``...): re's cache compiles once.
        value = getattr(re.compile(self._source, self._flags), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy_regex({self._source!r})"


def lazy_regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled when first used (see ``LazyPattern``)."""
    return LazyPattern(source, flags)  # type: ignore[return-value]  (it answers as a Pattern does)


if TYPE_CHECKING:
    import duckdb
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = LazyModule("numpy")
    pa = LazyModule("pyarrow")
    pc = LazyModule("pyarrow.compute")
    duckdb = LazyModule("duckdb")

__all__ = ["LazyModel", "LazyModule", "LazyPattern", "duckdb", "lazy_regex", "np", "pa", "pc", "prefetch"]
