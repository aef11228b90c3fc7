"""The README and the documentation site: short, buildable, and made from the code where it can be."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def build_site(project: Path, site: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs", reason="mkdocs-material is a dev dependency")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_readme_fits_on_a_page_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)```", quick_start, flags=re.DOTALL)
    assert commands == ["./run demo\n./run test\n"]
    picture = re.search(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert picture and (ROOT / picture.group(1)).read_bytes().startswith(b"\x89PNG")
    assert "CI (`.ci/run`) runs exactly that command" in text
    assert "./run test" in (ROOT / ".ci" / "run").read_text()
    # Every page the README sends a reader to exists.
    for target in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / target).is_file(), target


# A time or a date as prose writes one: "5 minutes", "in seconds", "a quarter of an hour", "2026-12-02".
_TIME = re.compile(
    r"\b(\d+(\.\d+)? ?(ms|s|min|seconds?|minutes?|hours?)|seconds|minutes|hours|an? (second|minute|hour))\b"
)
_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_the_readme_is_a_front_page_not_a_lab_notebook():
    """Measured times live in docs/performance.md's dated table; the README says roughly how long."""
    text = README.read_text(encoding="utf-8")
    assert not _DATE.findall(text)
    assert len(_TIME.findall(text)) <= 3, [match.group(0) for match in _TIME.finditer(text)]


def test_the_site_builds_strictly_with_every_asset_in_its_table(tmp_path):
    from insight_assets.definitions import defs

    built = build_site(ROOT, tmp_path / "site")
    assert built.returncode == 0, built.stderr[-3000:]
    assets_page = (tmp_path / "site" / "assets" / "index.html").read_text(encoding="utf-8")
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    keys.discard("collection_files")  # the folder itself, said under the table
    missing = {key for key in keys if f"<code>{key}</code>" not in assets_page}
    assert not missing
    # The README is the home page, its links made relative to the site.
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "./run demo" in home and 'href="methods/xsum/"' in home


def test_a_broken_link_fails_the_site_build(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copy(README, project / "README.md")
    (project / "insight_assets").symlink_to(ROOT / "insight_assets")  # the hook reads the code
    page = project / "docs" / "ui.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    built = build_site(project, tmp_path / "site")
    assert built.returncode != 0
    assert "no-such-page.md" in built.stderr
