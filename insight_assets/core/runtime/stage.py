"""A method's stage, declared once: what the build, the dry run, the smoke run and ``ask`` run.

A stage (a module of ``core/methods/<method>/stages/``) is the model-calling work of one asset. Its
declaration (``Stage``) names the asset, its settings (a ``StageSettings`` model: every default and
bound written once; the Dagster config is generated from it), the assets it reads, the work
(``run(scope, settings)``), what it hands the stages after it (``hands``) and what is kept of it
(``output``: the tables it writes and its report, in the words of ``core/runtime/stage_output.py``).
``defs/stage_assets.py`` makes the Dagster asset from it; the dry run (``insight-assets estimate``)
runs the same ``run`` on an estimate-only client and writes nothing.

A stage reads what the stages before it made as typed values, by their ``Handoff``
(``scope.upstream(QUESTIONS)``), and runs in a scope of one of three modes: a build, where each
hand-off is read back from the warehouse as the stage before wrote it; a dry run, where nothing is
written and each stage's hand-offs are taken from its result (``scope.run``); and one question
(``ask``), where the question stands in for some hand-offs and the rest are the build's.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from insight_assets.core.retrieval import Retriever
from insight_assets.core.runtime.stage_settings import JudgedSettings, JudgeModel, Settings, StageSettings

if TYPE_CHECKING:
    from insight_assets.core.embedding.models import Embedder
    from insight_assets.core.llm import LLMClient, Task
    from insight_assets.core.runtime.stage_output import StageOutput
    from insight_assets.core.storage.stores import VectorStore, Warehouse

__all__ = [
    "Check",
    "CollectionScope",
    "HandedOn",
    "Handoff",
    "Judge",
    "JudgeModel",
    "JudgedSettings",
    "Mode",
    "NothingToDo",
    "Settings",
    "Stage",
    "StageSettings",
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


class Mode(enum.Enum):
    """What a scope runs stages for (see ``CollectionScope``)."""

    BUILD = "build"
    DRY_RUN = "dry run"
    QUESTION = "one question"


@dataclass(frozen=True)
class Handoff(Generic[T]):
    """What a stage hands the stages after it, named (by convention as the table a build writes it
    to). In a build it is read back from the warehouse (``load(warehouse, collection)``), in the
    shape the stage's result gives it (see ``Stage.hands``). One without ``load`` is an input only a
    question stands in (``CollectionScope.stood_in``)."""

    name: str
    load: Callable[[Warehouse, str], T] | None = None

    def of(self, value: Callable[[Any], T]) -> HandedOn[T]:
        """This hand-off as a stage's result holds it (``value(result)``)."""
        return HandedOn(self, value)


@dataclass(frozen=True)
class HandedOn(Generic[T]):
    """One of a stage's hand-offs and how its result holds it."""

    handoff: Handoff[T]
    value: Callable[[Any], T]


@dataclass
class CollectionScope:
    """One collection as a stage sees it, in one of three modes (``mode``):

    - a build (``Mode.BUILD``): each stage reads its upstream hand-offs from the warehouse;
    - a dry run (``dry_run()``): nothing is written; each stage run through ``run`` keeps its
      hand-offs here for the stages after it, and the settings it was priced with;
    - one question (``for_question(stand_ins)``): the question stands in for some hand-offs (the
      questions asked, say), the stages run for it keep theirs here, and the rest are read from the
      build.

    ``panel``: a judging stage's judges, each with a client of its own (in a dry run, all the
    estimate-only client). ``retrievers``: retrievers to use instead of the collection's, by
    profile (the reader's notes beside the papers')."""

    warehouse: Warehouse
    vectors: VectorStore
    vectors_uri: str
    embedder: Embedder | None
    client: LLMClient
    collection: str
    folder: Path
    retrievers: dict[str, Any] | None = None
    panel: tuple[Judge, ...] = ()
    reports_dir: Path = Path("data/reports")
    adapters_dir: Path = Path("data/adapters")
    mode: Mode = Mode.BUILD
    # What the stages run here handed on (a dry run, a question), by hand-off name.
    handed: dict[str, Any] = field(default_factory=dict)
    # The settings each stage of a dry run was priced with, by stage name.
    priced: dict[str, StageSettings] = field(default_factory=dict)

    def dry_run(self) -> CollectionScope:
        """This scope for a dry run: nothing handed on yet."""
        return dataclasses.replace(self, mode=Mode.DRY_RUN, handed={}, priced={})

    def for_question(self, stand_ins: Mapping[Handoff, Any]) -> CollectionScope:
        """This scope for one question: ``stand_ins`` in place of those hand-offs (what the stages
        run here hand on is kept beside them; the rest is the build's)."""
        handed = {handoff.name: value for handoff, value in stand_ins.items()}
        return dataclasses.replace(self, mode=Mode.QUESTION, handed=handed, priced={})

    @property
    def estimating(self) -> bool:
        """Whether this is a dry run (nothing is written; the client prices its calls)."""
        return self.mode is Mode.DRY_RUN

    @property
    def embed(self) -> Callable:
        return self._embedder().embed

    def run(self, stage: Stage[S, R], settings: S) -> R:
        """Run ``stage`` here with ``settings``. Outside a build, what it hands on is kept for the
        stages after it (a build writes its output instead); in a dry run, its settings too."""
        if self.mode is Mode.DRY_RUN:
            self.priced[stage.name] = settings
        result = stage.run(self, settings)
        if self.mode is not Mode.BUILD:
            for hand in stage.hands:
                self.handed[hand.handoff.name] = hand.value(result)
        return result

    def upstream(self, handoff: Handoff[T]) -> T:
        """What the stage before handed on as ``handoff``: kept here (a dry run, a question), else
        read from the warehouse as the build wrote it."""
        if handoff.name in self.handed:
            return self.handed[handoff.name]
        if handoff.load is None:
            raise TypeError(f"{handoff.name} is only stood in by a question: read it with `stood_in`")
        return handoff.load(self.warehouse, self.collection)

    def stood_in(self, handoff: Handoff[T]) -> T | None:
        """What the question stands in for ``handoff``, if it does (``None`` in a build or a dry run):
        for an input a stage otherwise reads with settings of its own."""
        return self.handed.get(handoff.name) if self.mode is Mode.QUESTION else None

    def built_settings(self, stage: str, settings: type[S]) -> S:
        """The settings stage ``stage`` was last built with for this collection (in a dry run, those
        it was priced with), the defaults for any it did not keep: a later stage that must work as
        an earlier one did (retrieve with the same k) reads them here instead of repeating them."""
        if stage in self.priced:
            return self.priced[stage]
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
    work, also what the dry run prices; ``hands``: what the stages after it read of its result
    (``QUESTIONS.of(lambda asked: asked.questions)``), which its output writes where the hand-off's
    ``load`` reads it back; ``output(scope, settings, result)``: the tables it writes and its report
    (a ``StageOutput``); ``tasks``: the model tasks its settings override; ``judges``:
    for a judging stage, the panel its settings name (each judge gets a client of its own, and the
    asset reports their calls summed); ``embedder``: whether it embeds or retrieves;
    ``vectors(vectors_uri)``: the vector table it writes beside its rows, if any: a rerun reuses
    the last build only while the table is there, and a kept earlier build brings it back with
    its rows. Named bundles of settings (a
    smoke run's) are files: see ``defs/stage_assets.py``."""

    name: str
    method: str
    description: str
    settings: type[S]
    reads: tuple[str, ...]
    run: Callable[[CollectionScope, S], R]
    output: Callable[[CollectionScope, S, R], StageOutput]
    hands: tuple[HandedOn, ...] = ()
    tasks: tuple[Task[Any], ...] = ()
    checks: tuple[Check, ...] = ()
    kinds: tuple[str, ...] = ("duckdb",)
    code_version: str = "1"
    embedder: bool = False
    judges: Callable[[S], list[JudgeModel]] | None = None
    vectors: Callable[[str], VectorStore] | None = None

    def settings_from(self, values: dict[str, Any] | None) -> S:
        """The settings ``values`` give (by field name), the defaults for the rest."""
        return self.settings(**(values or {}))

    def panel(self, settings: S) -> list[JudgeModel]:
        return self.judges(settings) if self.judges is not None else []
