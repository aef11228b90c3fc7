"""A method's stage, declared once: what the build, the dry run, the smoke run and ``ask`` run.

A stage (``core/methods/<method>/stages.py``) is the model-calling work of one asset. Its
declaration (``Stage``) names the asset, its settings (a ``StageSettings`` model: every default and
bound written once; the Dagster config is generated from it), the assets it reads, the work
(``run(scope, settings)``) and what is kept of it (``output``: the tables it writes and its report,
in the words of ``core/runtime/stage_output.py``). ``defs/stage_assets.py`` makes the Dagster asset from it;
the dry run (``insight-assets estimate``) runs the same ``run`` on an estimate-only client and
writes nothing.

A stage reads what its upstream stages made through ``scope.upstream`` (the warehouse in a build;
in a dry run, what the upstream stage planned, since nothing was written; for one question, what
``ask`` gave in its place) and hands what its downstream stages read to ``scope.plan`` (a no-op in
a build, where ``output``'s tables are written).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from insight_assets.core.retrieval import Retriever
from insight_assets.core.runtime.stage_settings import JudgedSettings, JudgeModel, Settings, StageSettings

if TYPE_CHECKING:
    from insight_assets.core.embedding.models import Embedder
    from insight_assets.core.llm import LLMClient, Task
    from insight_assets.core.storage.stores import VectorStore, Warehouse

__all__ = [
    "Check",
    "CollectionScope",
    "Judge",
    "JudgeModel",
    "JudgedSettings",
    "NothingToDo",
    "Settings",
    "Stage",
    "StageSettings",
    "settings_key",
]

T = TypeVar("T")
S = TypeVar("S", bound=StageSettings)
R = TypeVar("R")


class NothingToDo(Exception):
    """A stage whose inputs are not there; the message says what is missing. The asset fails with
    it rather than reporting an empty success; the dry run prices nothing for that stage."""


@dataclass(frozen=True)
class Judge:
    """One judge of a panel as a stage sees it: its configured name and its own client."""

    name: str
    client: LLMClient


@dataclass
class CollectionScope:
    """One collection as a stage sees it. ``planned`` is ``None`` in a build; in a dry run it holds
    what the stages before produced, by the name of the table they would have written. ``given``:
    stand-ins for upstream tables when a stage answers one question (``ask``: the question, or the
    answer to find insights for) and what the stages of that question hand on; the rest is read
    from the build. ``panel``: a judging stage's judges, each with a client of its own (in a dry
    run, all the estimate-only client)."""

    warehouse: Warehouse
    vectors: VectorStore
    vectors_uri: str
    embedder: Embedder | None
    client: LLMClient
    collection: str
    folder: Path
    planned: dict[str, Any] | None = None
    given: dict[str, Any] | None = None
    # Retrievers to use instead of the collection's, by profile (the reader's notes beside the papers').
    retrievers: dict[str, Any] | None = None
    panel: tuple[Judge, ...] = ()
    reports_dir: Path = Path("data/reports")
    adapters_dir: Path = Path("data/adapters")

    @property
    def estimating(self) -> bool:
        """Whether this is a dry run (nothing is written; the client prices its calls)."""
        return self.planned is not None

    @property
    def embed(self) -> Callable:
        return self._embedder().embed

    def upstream(self, table: str, load: Callable[[], T]) -> T:
        """What an upstream stage made for ``table``: planned earlier in this dry run, or given for
        one question, else ``load()`` (read from the warehouse, as the build wrote it)."""
        for held in (self.planned, self.given):
            if held is not None and table in held:
                return held[table]
        return load()

    def plan(self, table: str, value: Any) -> None:
        """Hand the stages downstream what ``table`` would hold (in the shape ``upstream``'s loader
        returns); in a build the asset writes it instead."""
        for held in (self.planned, self.given):
            if held is not None:
                held[table] = value

    def give(self, table: str, value: Any) -> None:
        """Stand ``value`` in for what ``table`` holds, for the one question this scope answers:
        the stages read it there, and what they plan is handed on beside it (see ``given``)."""
        if self.given is None:
            self.given = {}
        self.given[table] = value

    def built_settings(self, stage: str, settings: type[S]) -> S:
        """The settings stage ``stage`` was last built with for this collection (in a dry run, those
        it was priced with), the defaults for any it did not keep: a later stage that must work as
        an earlier one did (retrieve with the same k) reads them here instead of repeating them."""
        if self.planned is not None and settings_key(stage) in self.planned:
            return self.planned[settings_key(stage)]
        found = self.warehouse.build_config(self.collection, stage) or {}
        return settings(**{name: value for name, value in found.items() if name in settings.model_fields})

    def retriever(self, profile: str) -> Retriever:
        """The collection's ``profile`` retriever (``IndexMissing`` before its vectors are built)."""
        if self.retrievers is not None and profile in self.retrievers:
            return self.retrievers[profile]
        return Retriever.open(self.warehouse, self.vectors, self.collection, self._embedder(), profile)

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            raise TypeError("this stage was given no embedder; declare it with `embedder=True`")
        return self.embedder


def settings_key(stage: str) -> str:
    """Where a dry run keeps the settings it priced ``stage`` with (see ``built_settings``)."""
    return f"{stage}:settings"


@dataclass(frozen=True)
class Check:
    """A check of a stage's output: its name and what it checks (``description``)."""

    name: str
    description: str = ""


@dataclass(frozen=True)
class Stage(Generic[S, R]):
    """One asset's model-calling work, declared once.

    ``name``: the asset's (and, by convention, its main table's); ``method``: its group;
    ``settings``: its settings model; ``reads``: the assets it reads; ``run(scope, settings)``: the
    work, also what the dry run prices; ``output(scope, settings, result)``: the tables it writes and
    its report (a ``StageOutput``); ``tasks``: the model tasks its settings override; ``judges``:
    for a judging stage, the panel its settings name (each judge gets a client of its own, and the
    asset reports their calls summed); ``embedder``: whether it embeds or retrieves;
    ``outputs_present(vectors_uri, collection)``: whether what it keeps outside the warehouse (a
    vector table) is still there, for a rerun to reuse the last build. Named bundles of settings (a
    smoke run's) are files: see ``defs/stage_assets.py``."""

    name: str
    method: str
    description: str
    settings: type[S]
    reads: tuple[str, ...]
    run: Callable[[CollectionScope, S], R]
    output: Callable[[CollectionScope, S, R], Any]
    tasks: tuple[Task[Any], ...] = ()
    checks: tuple[Check, ...] = ()
    kinds: tuple[str, ...] = ("duckdb",)
    code_version: str = "1"
    embedder: bool = False
    judges: Callable[[S], list[JudgeModel]] | None = None
    outputs_present: Callable[[str, str], bool] | None = None

    def settings_from(self, values: dict[str, Any] | None) -> S:
        """The settings ``values`` give (by field name), the defaults for the rest."""
        return self.settings(**(values or {}))

    def panel(self, settings: S) -> list[JudgeModel]:
        return self.judges(settings) if self.judges is not None else []
