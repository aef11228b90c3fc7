"""What a process pays before any work: loading the definitions (every Dagster run worker, the UI's
code server, every `insight-assets` command that builds) loads none of the libraries a step loads
when it runs: the PDF parser and its layout model, the embedder's stack, the clustering, LanceDB, the
local model. Read from a fresh interpreter's ``sys.modules``; no clock."""

from __future__ import annotations

import json
import subprocess
import sys

# Each loads in a tenth of a second or more, and only the steps that use it need it.
HEAVY = (
    "pymupdf",
    "pymupdf4llm",
    "onnxruntime",
    "torch",
    "tokenizers",
    "transformers",
    "sentence_transformers",
    "lancedb",
    "sklearn",
    "scipy",
    "bpe_openai",
    "llama_cpp",
)


def loaded_by(statement: str) -> list[str]:
    """The heavy libraries a fresh interpreter has loaded after ``statement``."""
    probe = f"import json, sys; {statement}; print(json.dumps(sorted(set({HEAVY!r}) & set(sys.modules))))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(found.stdout.splitlines()[-1])


def test_loading_the_definitions_loads_no_library_a_step_loads_when_it_runs():
    assert loaded_by("import insight_assets.definitions") == []


def test_the_probe_sees_a_heavy_library_loaded():
    assert "pymupdf" in loaded_by("import insight_assets.core.pdf")
