"""``insight-assets`` run as a person runs it: in a process of its own, piped or at a terminal; and
one project built that way, shared by the tests that start from a built collection."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, copy_stores

QUIETING_VARIABLES = ("LANCEDB_LOG", "HF_HUB_DISABLE_PROGRESS_BARS")
SMALLEST_DEMO_PDF = DEMO_PDFS_BY_SIZE[0]


def run_cli(
    project: Path, *args: str, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAGSTER_HOME": str(project / "home"), "HF_HUB_OFFLINE": "1", **(environment or {})}
    # The command must be quiet on its own, not thanks to settings this test process inherited.
    for name in QUIETING_VARIABLES:
        env.pop(name, None)
    (project / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "insight_assets.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def run_cli_in_terminal(project: Path, *args: str) -> tuple[int, str]:
    """``insight-assets`` in a pseudo-terminal, as a person at a terminal runs it: its exit status
    and everything it wrote to the terminal (escape sequences included)."""
    import pty

    env = {**os.environ, "DAGSTER_HOME": str(project / "home"), "HF_HUB_OFFLINE": "1", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "insight_assets.cli", *args],
        cwd=project,
        env=env,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
    )
    os.close(terminal)
    written = []
    while True:
        try:
            data = os.read(controller, 65536)
        except OSError:  # the terminal closes (EIO) once the command has exited
            break
        if not data:
            break
        written.append(data)
    os.close(controller)
    return process.wait(timeout=600), b"".join(written).decode(errors="replace")


@dataclass(frozen=True)
class BuiltProject:
    """A project folder whose collection ``tiny`` (the demo's smallest paper) one ``insight-assets
    build`` made, offline, under ``PYTHONHASHSEED=1``; ``build`` is what that command printed."""

    root: Path
    build: subprocess.CompletedProcess

    COLLECTION = "tiny"

    @classmethod
    def make(cls, root: Path) -> BuiltProject:
        folder = root / "data" / "collections" / cls.COLLECTION
        folder.mkdir(parents=True)
        shutil.copyfile(SMALLEST_DEMO_PDF, folder / SMALLEST_DEMO_PDF.name)
        built = run_cli(root, "build", "--collection", cls.COLLECTION, environment={"PYTHONHASHSEED": "1"})
        return cls(root, built)

    def copy(self, root: Path) -> Path:
        """The project (stores, Dagster home, cache) copied to ``root``, for a test that changes it.
        The stores are found relative to the project and the Dagster home by ``DAGSTER_HOME``, so the
        copy is built as it was (the build notes keep the first folder's paths, as metadata only)."""
        copy_stores(self.root, root, dirs_exist_ok=True)
        return root
