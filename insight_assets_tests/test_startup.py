"""What a process pays before any work: loading the definitions (every Dagster run worker, the UI's
code server, every `insight-assets` command that builds) loads none of the libraries a step loads
when it runs: the PDF parser and its layout model, the embedder's stack, the clustering, LanceDB, the
local model, and numpy, pyarrow and DuckDB until a step computes. The commands a person types to look
around (`--help`, `collections`, `search --help`, `mcp --help`) load no Dagster either. Read from a
fresh interpreter's ``sys.modules``; no clock."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from insight_assets.core.startup.lazy import LazyModel, LazyModule, lazy_regex

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
    "numpy",
    "pyarrow",
    "duckdb",
    "lemminflect",
)
# What a command that only reads or prints help must not load either.
COMMAND_HEAVY = (*HEAVY, "dagster", "insight_assets.definitions")


def loaded_by(statement: str, heavy=HEAVY, cwd=None) -> list[str]:
    """The heavy libraries a fresh interpreter has loaded after ``statement``."""
    probe = f"import json, sys\n{statement}\nprint(json.dumps(sorted(set({heavy!r}) & set(sys.modules))))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=cwd)
    return json.loads(found.stdout.splitlines()[-1])


def test_loading_the_definitions_loads_no_library_a_step_loads_when_it_runs():
    assert loaded_by("import insight_assets.definitions") == []


def test_the_probe_sees_a_heavy_library_loaded():
    assert "pymupdf" in loaded_by("import insight_assets.core.ingestion.pdf")
    assert "numpy" in loaded_by("from insight_assets.core.startup.lazy import np\nnp.zeros(1)")


def test_tagging_a_sentence_loads_the_tagger_without_nltk():
    # textblob's package __init__ imports NLTK and scipy.stats (3 s) for classes the tagger never uses.
    statement = (
        "from insight_assets.core.methods.insight_rag.triples import tag\n"
        "assert tag('The model uses graphs.')[2] == ('uses', 'VBZ')"
    )
    assert loaded_by(statement, ("nltk", "scipy", "textblob.blob")) == []


def test_opening_the_vectors_loads_no_rest_client_and_the_client_still_imports_whole(tmp_path):
    # lance_namespace_urllib3_client's __init__ builds a REST API's clients (1.5 s) that LanceDB
    # only needs for a remote namespace; a later import of the package runs its __init__ after all.
    statement = (
        "from insight_assets.core.storage.stores import VectorStore\n"
        f"VectorStore({str(tmp_path)!r}).db\n"
        "assert 'lance_namespace_urllib3_client.api' not in sys.modules\n"
        "from lance_namespace_urllib3_client import ApiClient, TableApi"
    )
    assert loaded_by(statement, ("lancedb", "lance_namespace_urllib3_client.api")) == [
        "lance_namespace_urllib3_client.api",
        "lancedb",
    ]


# `collections` reads the warehouse: DuckDB, and the pyarrow and numpy its rows come through.
WAREHOUSE = {"duckdb", "pyarrow", "numpy"}


@pytest.mark.parametrize(
    ("args", "needed"),
    [
        (["--help"], set()),
        (["collections"], WAREHOUSE),
        (["search", "--help"], set()),
        (["mcp", "--help"], set()),
    ],
)
def test_looking_around_loads_no_dagster_and_no_model(args, needed, tmp_path):
    (tmp_path / "data" / "collections" / "empty").mkdir(parents=True)
    statement = (
        "import contextlib, io, runpy\n"
        f"sys.argv = ['insight-assets', *{args!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    runpy.run_module('insight_assets.cli', run_name='__main__')"
    )
    assert loaded_by(statement, tuple(set(COMMAND_HEAVY) - needed), cwd=tmp_path) == []


def test_a_lazy_module_imports_its_library_at_the_first_read_and_keeps_what_it_read():
    statement = (
        "import json, sys\n"
        "from insight_assets.core.startup.lazy import LazyModule\n"
        "stand_in = LazyModule('colorsys')\n"
        "print(json.dumps('colorsys' in sys.modules))\n"
        "assert stand_in.rgb_to_hsv(1, 0, 0) == (0, 1, 1) and 'rgb_to_hsv' in vars(stand_in)"
    )
    probe = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "false"  # not imported before the read


def test_a_process_that_used_pyarrow_and_duckdb_through_stand_ins_exits_cleanly(tmp_path):
    # Objects the stand-ins kept, freed after the libraries shut down, once crashed the exit.
    statement = (
        "from insight_assets.core.storage.stores import Warehouse\n"
        f"warehouse = Warehouse({str(tmp_path / 'w.duckdb')!r})\n"
        "print(warehouse.query('SELECT 1 AS n').to_pylist())"
    )
    done = subprocess.run([sys.executable, "-c", statement], check=False, capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "[{'n': 1}]"), done.stderr[-2000:]


def test_a_lazy_regex_matches_as_the_compiled_one_does():
    source, text = r"(?P<word>[a-z]+)-(\d+)", "alpha-12 beta-7 gamma"
    lazy, compiled = lazy_regex(source, re.IGNORECASE), re.compile(source, re.IGNORECASE)
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert lazy.match(text)["word"] == "alpha" and lazy.pattern == source and lazy.flags == compiled.flags


def test_a_lazy_model_validates_when_first_used():
    class Point(LazyModel):
        x: int

    assert not Point.__pydantic_complete__  # nothing built at class creation
    assert Point(x="3").x == 3
    with pytest.raises(ValueError):
        Point(x="three")


def test_a_lazy_module_says_what_it_stands_for():
    assert repr(LazyModule("json")) == "<lazy module 'json'>"
