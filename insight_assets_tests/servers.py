"""Real servers for the scale tests (and ``bench/scale.py``): a PostgreSQL made by ``initdb`` in a
temporary folder and started with ``pg_ctl`` on 127.0.0.1 and a free port; and runs started as from a
shell, which take the engines the environment selects."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

# Where Debian and Ubuntu put the server binaries (they are not on PATH there).
_SERVER_BIN_GLOB = "/usr/lib/postgresql/*/bin"
INSTALL_HINT = (
    "The scale tests run a real PostgreSQL server and need its binaries (initdb, pg_ctl): install "
    "Debian's `postgresql` package (apt-get install postgresql; ./run test does where it can), or put "
    "a PostgreSQL server's bin folder on PATH."
)


class ServerMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 120) -> None:
    """Until ``process`` listens on ``port`` of 127.0.0.1; fails with its error output if it ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else process.returncode
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listened on port {port} within {seconds} s")


@contextlib.contextmanager
def mcp_over_http(project: Path, environment: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen]]:
    """``insight-assets mcp --http`` serving ``project`` on a free port of 127.0.0.1: its URL and
    process while the block runs; stopped after it."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "insight_assets.cli", "mcp", "--http", "--port", str(port)],
        cwd=project,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, server)
        yield f"http://127.0.0.1:{port}/mcp", server
    finally:
        server.terminate()
        server.wait(timeout=60)


def server_bin() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: on PATH, else Debian's newest."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    for folder in sorted(
        glob.glob(_SERVER_BIN_GLOB), key=lambda path: int(Path(path).parent.name), reverse=True
    ):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    raise ServerMissing(INSTALL_HINT)


class PostgresServer:
    """A throwaway PostgreSQL cluster. Both ``initdb`` and the server refuse to run as root, so as
    root they run as the ``postgres`` user, in a folder of its own outside pytest's (root-only) one."""

    def __init__(self):
        self.bin = server_bin()
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="insight_assets_pg_"))
        self.data = self.folder / "data"
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            owner = pwd.getpwnam(self.user)
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        completed = subprocess.run(
            [*prefix, *command], check=False, capture_output=True, text=True, cwd=self.folder
        )
        if completed.returncode != 0:
            raise RuntimeError(f"{Path(command[0]).name} failed: {completed.stdout}{completed.stderr}")

    def start(self) -> PostgresServer:
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-o",
            f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off -c max_connections=200",
            "start",
        )
        return self

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "test") -> str:
        """A new, empty database; its URL."""
        import psycopg2

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        connection = psycopg2.connect(self.url())
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            connection.close()
        return self.url(name)


def materialize_from_shell(
    selection: list[str], collection: str, run_config: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """``dagster asset materialize`` of ``selection`` for one collection, in a process of its own as
    from a shell: the run takes the executor and stores that the environment's variables select."""
    dagster = Path(sys.executable).parent / "dagster"
    return subprocess.run(
        [
            str(dagster),
            "asset",
            "materialize",
            "-m",
            "insight_assets.definitions",
            "--select",
            ",".join(selection),
        ]
        + ["--partition", collection, "--config", str(run_config)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
