"""Fixtures shared by the test suite: the shared corpus, temporary stores, an ephemeral instance."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from insight_assets.core import deployment
from insight_assets.core.runtime.signals import restore_default_interrupts
from insight_assets.core.storage.shared_file import release_all
from insight_assets.defs.resources import EmbedderResource, StorageResource
from insight_assets_tests.fake_model_server import FakeModelServer
from insight_assets_tests.servers import PostgresServer, ServerMissing

# A deployment's variables would send every test's stores to a shared database: the tests that need
# one set their own.
for _variable in deployment.VARIABLES:
    os.environ.pop(_variable, None)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_COLLECTION = REPO_ROOT / "data" / "collections" / "scholarly-docs"
# The demo's papers, smallest file first: a test that needs one or two takes the quickest.
DEMO_PDFS_BY_SIZE = sorted(DEMO_COLLECTION.glob("*.pdf"), key=lambda path: path.stat().st_size)


def corpus_root() -> Path:
    """The shared corpus of real PDFs (``../shared/corpus`` beside the repository)."""
    return Path(os.environ.get("INSIGHT_ASSETS_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    root = corpus_root()
    if not root.is_dir():
        pytest.skip(f"shared corpus not found at {root} (set INSIGHT_ASSETS_CORPUS to its folder)")
    return root


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A fake model server on 127.0.0.1 (OpenAI, Anthropic and Gemini protocols)."""
    fake = FakeModelServer().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on 127.0.0.1, made for this session and removed after it."""
    try:
        server = PostgresServer().start()
    except ServerMissing as error:
        pytest.fail(str(error))
    yield server
    server.stop()


@pytest.fixture
def storage(tmp_path: Path) -> StorageResource:
    (tmp_path / "collections").mkdir()
    return StorageResource(
        collections_root=str(tmp_path / "collections"),
        warehouse_path=str(tmp_path / "warehouse.duckdb"),
        lancedb_uri=str(tmp_path / "lancedb"),
        reports_dir=str(tmp_path / "reports"),
        adapters_dir=str(tmp_path / "adapters"),
    )


@pytest.fixture
def instance() -> dg.DagsterInstance:
    """An in-memory Dagster instance, for runs in this process. A SQLite instance on disk (what
    ``instance_for_test`` makes) opens its event log file again for every event: a quarter of an
    offline demo build's time. The tests of what persists across processes (the command line,
    ``dagster dev``, the scale deployment) use the instance those make."""
    with dg.DagsterInstance.ephemeral() as test_instance:
        yield test_instance


@pytest.fixture
def persistent_instance() -> dg.DagsterInstance:
    """A SQLite instance in a temporary folder, as the daemon has: what a schedule's evaluation
    needs (it reaches its instance through a reference, which an in-memory one has not)."""
    with dg.instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture
def hashing_embedder() -> EmbedderResource:
    """A deterministic, instant embedder: the assets' behaviour, without model load times."""
    return EmbedderResource(provider="hashing")


def copy_stores(source: Path, target: Path, **options) -> None:
    """``source`` (a project or a build's stores) copied to ``target`` once this process has let go
    of the DuckDB files in it. An idle warehouse is closed a moment after its last query, and closing
    folds its log into the file: a log that vanished in the middle of a copy failed one."""
    release_all()
    shutil.copytree(source, target, **options)


def add_collection(storage: StorageResource, name: str, pdfs: list[Path]) -> Path:
    folder = Path(storage.collections_root) / name
    folder.mkdir(parents=True, exist_ok=True)
    for pdf in pdfs:
        shutil.copyfile(pdf, folder / pdf.name)
    return folder


# The markers of tests that need more than this process: the real model, servers, subprocess builds,
# a browser. Every other test is marked `quick` (`./run test -m quick`).
SLOW_MARKERS = ("local_model", "scale", "long", "browser")
UNIT_TESTS = "insight_assets_tests/core/"
# The longest work units measured, handed out before all others in this order. pytest-xdist gives
# each worker one unit, then one more to each (a worker holds its last test until it has a next),
# so the two halves of the local model's build start on different workers, and the next two
# longest units go to them in turn, the longer one beside the shorter half.
LONGEST_FILES = (
    "insight_assets_tests/defs/test_local_model.py",
    "insight_assets_tests/defs/test_local_model_summaries_and_ideas.py",
    "insight_assets_tests/test_cli.py",
    "insight_assets_tests/defs/test_scale.py",
)


def pytest_report_header(config: pytest.Config) -> str:
    """The machine, first thing in every run: a suite's time means nothing without it."""
    from insight_assets.core.runtime.cores import machine_line

    return f"machine: {machine_line()}"


def pytest_configure(config: pytest.Config) -> None:
    """Leave no signal ignored (below), and give each pytest-xdist worker its own share of the
    cores, before torch or llama.cpp start.

    Both size their thread pools to the cores a process may use; two workers that each spin two
    threads on two cores take turns at every barrier: 400 texts embedded in two workers at once took
    20 s each unpinned and 11.6 s pinned to a core each. Subprocesses (the CLI, servers) inherit it."""
    # A suite started in the background from a script (CI) would otherwise ignore SIGTERM after its
    # first in-process Dagster run, and so would every subprocess a later test starts (core/runtime/signals.py).
    restore_default_interrupts()
    # rouge-score (XSum's scores) imports absl, whose log handler keeps the stderr of that moment: in
    # a test, pytest's capture file. Dagster's logging setup later closes every handler, and absl's
    # closes that stream, so the worker's next test failed in pytest's own capture ("I/O operation on
    # closed file"), depending on which tests a worker ran before. Keep it on the real stderr.
    import absl.logging

    absl.logging.get_absl_handler().python_handler.setStream(sys.__stderr__)
    worker, count = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker or not count or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    index, count = int(worker.removeprefix("gw")), int(count)
    share = max(1, len(cores) // count)
    first = (index * share) % len(cores)
    os.sched_setaffinity(0, set(cores[first : first + share]))


# Builds shared by the tests that start from them, each made once per session by the fixture named:
# the files that use one are a single pytest-xdist work unit, so that one worker builds it once for
# all of them.
SHARED_BUILDS = {
    # every asset of the demo, offline (defs/conftest.py)
    "demo_offline": (
        "insight_assets_tests/defs/test_insightgen.py",
        "insight_assets_tests/defs/test_collection_report.py",
        "insight_assets_tests/defs/test_boilerplate_kept_out.py",
        "insight_assets_tests/defs/test_paper_comparisons.py",
        "insight_assets_tests/defs/test_dry_run_parity.py",
        "insight_assets_tests/defs/test_dry_run_foresight.py",
    ),
    # one paper built by `insight-assets build` in a process of its own (below)
    "built_by_cli": (
        "insight_assets_tests/test_cli.py",
        "insight_assets_tests/test_rebuild.py",
        "insight_assets_tests/test_mcp.py",
        "insight_assets_tests/test_mcp_long_calls.py",
        "insight_assets_tests/test_mcp_clients.py",
        "insight_assets_tests/test_changes.py",
    ),
}


@pytest.fixture(scope="session")
def built_by_cli(tmp_path_factory):
    """A project whose collection ``tiny`` `insight-assets build` built, offline (a
    ``command_line.BuiltProject``); read it, or ``copy()`` it to change it."""
    from insight_assets_tests.command_line import BuiltProject  # it reads this module's paths

    return BuiltProject.make(tmp_path_factory.mktemp("built_by_cli"))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, but with the files of each of ``SHARED_BUILDS`` handed out as one."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    unit = {path: files[0] for files in SHARED_BUILDS.values() for path in files}

    class SharedBuildScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return unit.get(scope, scope)

    return SharedBuildScheduling(config, log)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the quick tests, and put ``LONGEST_FILES`` first, then the files of the slow ones (the
    slowest kind first, each file's tests in their order): pytest-xdist hands out whole files in
    this order, so a long file starts early instead of leaving one worker busy while the others are
    done. Within a kind, the
    library's unit tests (``core/``: no Dagster run, seconds a file) come last, to fill the workers'
    last minutes evenly; a file of Dagster builds handed out last kept one worker busy for a minute
    after the other was done."""

    def rank(item: pytest.Item) -> int:
        return next(
            (n for n, name in enumerate(SLOW_MARKERS) if item.get_closest_marker(name)), len(SLOW_MARKERS)
        )

    for fixture, files in SHARED_BUILDS.items():
        unlisted = {
            item.nodeid.split("::")[0] for item in items if fixture in getattr(item, "fixturenames", ())
        } - set(files)
        if unlisted:
            raise pytest.UsageError(
                f"{', '.join(sorted(unlisted))} read {fixture}: "
                "add them to its files in SHARED_BUILDS, insight_assets_tests/conftest.py"
            )
    by_file: dict[str, int] = {}
    for item in items:
        if rank(item) == len(SLOW_MARKERS):
            item.add_marker(pytest.mark.quick)
        by_file[item.nodeid.split("::")[0]] = min(by_file.get(item.nodeid.split("::")[0], 99), rank(item))
    order = {id(item): position for position, item in enumerate(items)}
    longest = {path: position for position, path in enumerate(LONGEST_FILES)}
    items.sort(
        key=lambda item: (
            longest.get(item.nodeid.split("::")[0], len(longest)),
            by_file[item.nodeid.split("::")[0]],
            item.nodeid.startswith(UNIT_TESTS),
            order[id(item)],
        )
    )
