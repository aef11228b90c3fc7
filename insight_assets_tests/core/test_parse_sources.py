"""``core.ingestion.ingest.parse_sources``: the same results on forked workers as in this process, earlier
results reused, and a file whose parse kills its worker recorded as unreadable."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from insight_assets.core.ingestion.documents import sha256_file
from insight_assets.core.ingestion.ingest import SourceFile, parse_sources
from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets.core.runtime.forked import can_fork
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE

needs_fork = pytest.mark.skipif(not can_fork(), reason="forked workers run on Linux only")


def sources_of(paths: list[Path]) -> list[SourceFile]:
    return [SourceFile(path.name, path, sha256_file(path), path.stat().st_size) for path in paths]


def described(results) -> list[tuple]:
    return [
        (
            result.file,
            result.doc_id,
            [problem.kind for problem in result.problems],
            result.document.page_texts if result.document else None,
            result.document.title if result.document else None,
        )
        for result in results
    ]


@needs_fork
def test_forked_workers_give_what_one_process_gives():
    sources = sources_of(DEMO_PDFS_BY_SIZE[:3])
    progress = []
    forked = parse_sources(
        sources, {}, workers=2, on_parsed=lambda done, total: progress.append((done, total))
    )
    here = parse_sources(sources, {}, workers=1)
    assert described(forked.results) == described(here.results)
    assert [result.document.file for result in forked.results] == [source.file for source in sources]
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert (forked.parsed, forked.reused) == (3, 0)


def test_earlier_results_are_reused_under_the_files_new_names(tmp_path):
    first, second = DEMO_PDFS_BY_SIZE[:2]
    earlier = parse_sources(sources_of([first]), {})
    moved = tmp_path / "renamed.pdf"
    shutil.copy(first, moved)
    outcome = parse_sources(sources_of([moved, second]), {earlier.results[0].doc_id: earlier.results[0]})
    assert (outcome.parsed, outcome.reused) == (1, 1)
    assert [result.file for result in outcome.results] == ["renamed.pdf", second.name]
    assert outcome.results[0].document.file == "renamed.pdf"


def test_two_files_with_the_same_bytes_keep_their_own_names(tmp_path):
    paper = DEMO_PDFS_BY_SIZE[0]
    copies = [tmp_path / "a.pdf", tmp_path / "b.pdf"]
    for copy in copies:
        shutil.copy(paper, copy)
    outcome = parse_sources(sources_of(copies), {}, workers=2)
    assert [result.file for result in outcome.results] == ["a.pdf", "b.pdf"]
    assert [result.document.file for result in outcome.results] == ["a.pdf", "b.pdf"]


@needs_fork
def test_a_file_whose_parse_kills_the_worker_is_unreadable_and_the_rest_are_parsed(tmp_path):
    poison = tmp_path / "poison.pdf"
    shutil.copy(DEMO_PDFS_BY_SIZE[0], poison)

    def parse_or_crash(path: Path, **options):
        if path == poison:  # what a MuPDF crash does to the process parsing the file
            os.kill(os.getpid(), signal.SIGSEGV)
        return parse_pdf(path, **options)

    sources = sources_of([poison, *DEMO_PDFS_BY_SIZE[1:3]])
    outcome = parse_sources(sources, {}, parse_or_crash, workers=2)
    crashed, *others = outcome.results
    assert crashed.document is None
    assert [problem.kind for problem in crashed.problems] == ["unreadable"]
    assert "parser crashed" in crashed.problems[0].message
    assert "SIGSEGV" in crashed.problems[0].message
    assert crashed.problems[0].message.startswith("poison.pdf: ")
    assert all(result.document is not None for result in others)
