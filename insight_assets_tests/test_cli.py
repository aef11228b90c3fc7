"""The command line, as a person without the UI uses it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from insight_assets_tests.command_line import BuiltProject, run_cli, run_cli_in_terminal
from insight_assets_tests.fake_model_server import FakeModelServer, Reply
from insight_assets_tests.toy_model import answer as toy_answer
from insight_assets_tests.toy_model import first_prompt


@pytest.fixture
def cli(monkeypatch, capsys):
    """``insight-assets`` run in this process (``cli.main``), as ``run_cli`` runs it in another: for
    the commands whose own process is not what is tested, without a Python start-up, the imports and
    the model loads each time."""
    from insight_assets import cli as command

    def run(project: Path, *args: str, environment: dict[str, str] | None = None):
        with monkeypatch.context() as patch:
            patch.chdir(project)
            patch.setenv("DAGSTER_HOME", str(project / "home"))
            for name, value in (environment or {}).items():
                patch.setenv(name, value)
            capsys.readouterr()
            try:
                code = command.main(list(args))
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 2
            captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, captured.out, captured.err)

    return run


@pytest.mark.long
def test_build_a_collection_with_the_bundled_model_then_list_it(tmp_path, cli, built_by_cli: BuiltProject):
    built = built_by_cli.build
    built_by_cli.copy(tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    summary = built.stdout.splitlines()
    # Piped, the build says each step as it ends, in plain lines, and Dagster's own log stays out.
    steps = [text.split() for text in summary if text.startswith("  [")]
    total = len(steps)
    assert total > 20 and steps[0][:3] == [f"[1/{total}]", "source_documents", "built"]
    assert [step[0] for step in steps] == [f"[{done}/{total}]" for done in range(1, total + 1)]
    assert "\x1b[" not in built.stdout and "STEP_SUCCESS" not in built.stdout + built.stderr
    line = next(text for text in summary if text.startswith("tiny:"))
    assert "1 documents" in line and "section chunks" in line and "passage chunks" in line
    assert "http://127.0.0.1:3000" in built.stdout
    reports = next(text for text in summary if text.startswith("Reports: ")).split()[1:]
    assert reports[0].endswith("tiny/index.html") and all(Path(report).is_file() for report in reports)
    # No library chatter: LanceDB's "No existing dataset ... it will be created", Dagster's beta notices.
    chatter = [text for text in built.stderr.splitlines() if "WARN" in text or "Warning" in text]
    assert chatter == []

    # At a terminal the same build draws a live view: steps done of total, the running step.
    code, shown = run_cli_in_terminal(tmp_path, "build", "--collection", "tiny")
    assert code == 0, shown[-3000:]
    assert "\x1b[" in shown and f"{total}/{total} steps" in shown and f"0/{total} steps" in shown
    assert "source_documents" in shown and "reused" in shown and "[1/" not in shown

    listed = cli(tmp_path, "collections")
    assert listed.returncode == 0
    assert next(text for text in listed.stdout.splitlines() if text.startswith("tiny:")) == line

    exported = cli(tmp_path, "export", "--collection", "tiny", "--output", "pairs/tiny.jsonl")
    assert exported.returncode == 0, exported.stderr[-3000:]
    records = [json.loads(text) for text in (tmp_path / "pairs" / "tiny.jsonl").read_text().splitlines()]
    pairs = int(line.split(" question-answer pairs")[0].rsplit(" ", 1)[-1])
    assert len(records) == pairs > 0
    assert {"collection", "question", "answer", "document_ids", "source"} <= set(records[0])
    assert records[0]["collection"] == "tiny" and records[0]["source"] == "generated"

    estimated = cli(
        tmp_path, "estimate", "--collection", "tiny", "--provider", "openai", "--model", "gpt-4o-mini"
    )
    assert estimated.returncode == 0, estimated.stderr[-3000:]
    rows = {
        cells[1].strip(): cells
        for cells in (row.split("|") for row in estimated.stdout.splitlines())
        if len(cells) > 5
    }
    assert {
        "compress_document@v1",
        "generate_questions@v1",
        "answer_question@v1",
        "generate_insights@v1",
        "judge_insight_set@v2",
        "judge_single_insights@v2",
        "xsum_questions@v1",
        "xsum_answer@v1",
        "xsum_editor@v1",
        "insight_rag_triples@v1",
        "insight_rag_question@v1",
        "insight_rag_identify@v1",
        "insight_rag_answer@v1",
        "scipip_digest@v1",
        "scipip_entities@v1",
        "total",
    } <= set(rows)
    total_cost = float(rows["total"][8])
    assert total_cost > 0 and "Traceback" not in estimated.stderr

    # The bundled local model: free, counted by its own tokenizer, timed by its speed measured here.
    local = cli(tmp_path, "estimate", "--collection", "tiny", "--provider", "local")
    assert local.returncode == 0, local.stderr[-3000:]
    header, _, *table = [row.split("|")[1:-1] for row in local.stdout.splitlines() if row.startswith("|")]
    local_rows = {
        cells[0].strip(): dict(zip((h.strip() for h in header), (c.strip() for c in cells)))
        for cells in table
    }
    compress = local_rows["compress_document@v1"]
    assert (compress["provider"], compress["model"], compress["cost_usd"]) == (
        "local",
        "SmolLM2-135M-Instruct.Q4_1",
        "0.0000",
    )
    assert int(compress["input_tokens"]) > 0 and float(local_rows["total"]["expected_s"]) > 0
    assert "Expected wall time of the model calls: about" in local.stdout
    assert "tokens/s written" in local.stdout

    asked = cli(tmp_path, "ask", "--collection", "tiny", "How are citation contexts used to relate papers?")
    assert asked.returncode == 0, asked.stderr[-3000:]
    assert asked.stdout.startswith("Question: How are citation contexts used")
    assert "Related insights (offline (extractive)):" in asked.stdout
    assert "Sources: " in asked.stdout and ", p" in asked.stdout  # a title and its pages

    tree = cli(tmp_path, "ask", "-c", "tiny", "--method", "contregen", "How are citation contexts used?")
    assert tree.returncode == 0, tree.stderr[-3000:]
    assert tree.stdout.startswith(
        "Question: How are citation contexts used?\n\nAnswer (offline (extractive)):"
    )
    assert "Tree (sub-questions" in tree.stdout and "- How are citation contexts used?  (root)" in tree.stdout
    assert "    · " in tree.stdout and "model calls" in tree.stdout  # a kept node's sources

    # Asked in other words than the paper's "Our approach to address both entity and relation
    # coverage is based on distant supervision".
    for retriever in ("index", "sentences"):
        insight = cli(
            tmp_path,
            "ask",
            "-c",
            "tiny",
            "--method",
            "insight-rag",
            "--retriever",
            retriever,
            "What is the approach to entity and relation coverage based on?",
        )
        assert insight.returncode == 0, insight.stderr[-3000:]
        shown = insight.stdout
        assert "Identified insights (offline (extractive)):\n- " in shown and "based on …" in shown
        assert (
            f"Retrieved insights ({retriever} retriever, hybrid search):\n1. " in shown
            and "   Source: " in shown
        )
        answer = shown.split("Answer (offline (extractive)):\n")[1]
        assert answer.startswith("distant supervision (") and ", p. " in answer

    backgrounds = tmp_path / "backgrounds.jsonl"
    backgrounds.write_text(
        '{"background": "1. The need to link papers to the entities they mention."}\n{"topic": 1}\n'
    )
    proposed = cli(tmp_path, "ideas", "-c", "tiny", "--file", str(backgrounds))
    assert proposed.returncode == 0, proposed.stderr[-3000:]
    assert 'line 2: "background" is missing or empty' in proposed.stderr
    assert (
        "Retrieved papers (SKC, then the filter):\n- Construction of the Literature Graph" in proposed.stdout
    )
    assert "Ideas (offline (extractive)):\n\n1. [offline template]" in proposed.stdout

    # Every method answers the same question, side by side: as text, and as one JSON document.
    question = "How are citation contexts used to relate papers?"
    every = cli(tmp_path, "ask", "-c", "tiny", "--method", "all", question)
    assert every.returncode in (0, 1) and "Traceback" not in every.stderr
    headers = [line for line in every.stdout.splitlines() if line.startswith("=== ")]
    assert [header.split(":")[0] for header in headers] == [
        "=== insightgen",
        "=== contregen",
        "=== insight-rag",
        "=== scipip",
        "=== xsum",
    ]
    as_json = cli(tmp_path, "ask", "-c", "tiny", "--method", "all", "--json", question)
    document = json.loads(as_json.stdout)
    assert document["question"] == question and len(document["methods"]) == 5
    for method in document["methods"]:
        # An answer with its citations and costs, or the reason there is none (also on stderr).
        assert (method["answer"] is None) != (method["error"] is None)
        assert method["model"] == "offline (extractive)" and method["seconds"] > 0
        if method["error"]:
            assert f"{method['method']}: {method['error']}" in as_json.stderr
    answered = {method["method"]: method for method in document["methods"] if method["answer"]}
    assert {"insightgen", "contregen", "xsum"} <= set(answered)
    (cited,) = answered["xsum"]["answer"]["citations"]  # one paper, with the pages it cites
    assert cited["title"].startswith("Construction of the Literature Graph") and cited["pages"]
    assert answered["insightgen"]["calls"] > 0 and answered["xsum"]["seconds"] > 0
    assert as_json.returncode == (0 if len(answered) == 5 else 1)

    # A hosted model's tokens and cost are counted per method (a toy model behind a fake server).
    server = FakeModelServer().start()
    server.responder = lambda request: Reply(json.dumps(toy_answer(first_prompt(request))), input_tokens=30)
    hosted = {
        "INSIGHT_ASSETS_LLM_PROVIDER": "openai",
        "INSIGHT_ASSETS_LLM_MODEL": "gpt-4o-mini",
        "INSIGHT_ASSETS_LLM_BASE_URL": f"{server.url}/v1",
        "OPENAI_API_KEY": "test-key",
    }
    try:
        priced = cli(tmp_path, "ask", "-c", "tiny", "--json", question, environment=hosted)
    finally:
        server.stop()
    (insightgen,) = json.loads(priced.stdout)["methods"]
    assert insightgen["answer"] is not None, insightgen["error"]
    assert insightgen["model"] == "openai" and insightgen["calls"] == len(server.requests) > 0
    assert insightgen["input_tokens"] == 30 * insightgen["calls"] and insightgen["cost_usd"] > 0

    reported = run_cli(tmp_path, "report", "-c", "tiny")  # a Dagster run: in a process of its own, as built
    assert reported.returncode == 0, reported.stderr[-3000:]
    page = Path(reported.stdout.strip())
    assert page == (tmp_path / "data" / "reports" / "tiny" / "index.html").resolve()
    assert 'data-section="collection"' in page.read_text()

    given = cli(tmp_path, "ask", "-c", "tiny", "Why cite?", "--answer", "Citations credit prior work.")
    assert given.returncode == 0, given.stderr[-3000:]
    assert "Answer (given):\nCitations credit prior work." in given.stdout

    searched = cli(tmp_path, "search", "-c", "tiny", "citation context", "-k", "3")
    assert searched.returncode == 0, searched.stderr[-3000:]
    hits = [line for line in searched.stdout.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert len(hits) == 3 and all(", p" in hit and "reranked by late-interaction" in hit for hit in hits)
    lexical = cli(tmp_path, "search", "-c", "tiny", "zzzqqq", "--mode", "lexical", "--rerank", "none")
    assert (
        lexical.returncode == 1 and "No chunk of 'tiny' matches 'zzzqqq' (lexical search)." in lexical.stdout
    )


def test_search_and_ask_offer_the_modes_their_packages_define():
    from insight_assets.app.passages import SEARCH_MODES, SEARCH_RERANKERS
    from insight_assets.core.methods.insight_rag.schemas import INDEX, RETRIEVER_MODES
    from insight_assets.core.retrieval import RERANKERS, RETRIEVAL_MODES
    from insight_assets.defs.insight_rag.ask import INSIGHT_RETRIEVERS

    assert (SEARCH_MODES, SEARCH_RERANKERS) == (RETRIEVAL_MODES, RERANKERS)
    assert set(INSIGHT_RETRIEVERS) == set(RETRIEVER_MODES) and INSIGHT_RETRIEVERS[0] == INDEX


def test_unknown_or_invalid_collections_are_refused_with_a_reason(tmp_path, cli):
    (tmp_path / "data" / "collections" / "real").mkdir(parents=True)
    unknown = cli(tmp_path, "build", "--collection", "missing")
    assert unknown.returncode == 2
    assert "No folder for collection 'missing'" in unknown.stderr and "real" in unknown.stderr

    escaping = cli(tmp_path, "build", "--collection", "../etc")
    assert escaping.returncode == 2 and "is refused" in escaping.stderr
    assert "Traceback" not in unknown.stderr + escaping.stderr


def test_a_hosted_provider_without_its_key_is_refused_before_any_run(tmp_path, cli):
    (tmp_path / "data" / "collections" / "real").mkdir(parents=True)
    without_key = {"INSIGHT_ASSETS_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": ""}
    for command in (["build", "--collection", "real"], ["ask", "-c", "real", "Why?"]):
        refused = cli(tmp_path, *command, environment=without_key)
        assert refused.returncode == 2
        assert "ANTHROPIC_API_KEY" in refused.stderr and "Traceback" not in refused.stderr
    typo = cli(tmp_path, "build", "-c", "real", environment={"INSIGHT_ASSETS_LLM_PROVIDER": "opena"})
    assert typo.returncode == 2 and "is not a provider" in typo.stderr


def test_a_local_model_that_is_missing_or_not_a_gguf_is_refused_before_any_run(tmp_path, cli):
    (tmp_path / "data" / "collections" / "real").mkdir(parents=True)
    not_a_model = tmp_path / "weights.gguf"
    not_a_model.write_text("not weights")
    for model, problem in (
        (tmp_path / "missing.gguf", "does not exist"),
        (not_a_model, "is not a GGUF file"),
    ):
        environment = {"INSIGHT_ASSETS_LLM_PROVIDER": "local", "INSIGHT_ASSETS_LLM_MODEL": str(model)}
        refused = cli(tmp_path, "build", "--collection", "real", environment=environment)
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert f"local model '{model}' {problem}" in refused.stderr
        assert "Building collection" not in refused.stdout and "Traceback" not in refused.stderr


def test_empty_and_unusable_collections_end_with_one_sentence_each(tmp_path):
    from insight_assets_tests import pdf_factory as make

    collections = tmp_path / "data" / "collections"
    (collections / "empty").mkdir(parents=True)
    (collections / "unusable").mkdir()
    make.write_pdf(collections / "unusable" / "cipher.pdf", make.english_pages(3), remap=make.caesar)
    (collections / "unusable" / "notes.pdf").write_bytes(b"not a PDF\n")

    built = run_cli(tmp_path, "build", "--collection", "empty", "--collection", "unusable")
    assert built.returncode == 1
    assert "Traceback" not in built.stderr and "Stack Trace" not in built.stderr
    assert "Not executing" not in built.stderr
    reasons = [
        line.strip() for line in built.stderr.splitlines() if line.startswith("  ") and ": collection" in line
    ]
    assert len(reasons) == 2, built.stderr[-3000:]
    assert reasons[0].startswith("source_documents: collection 'empty': no usable documents: the folder ")
    assert reasons[1].startswith(
        "parsed_documents: collection 'unusable': no usable documents: 2 files, none usable (garbled: cipher.pdf; "
        "not_a_pdf: notes.pdf)."
    )
    assert "unusable: 0 documents" in built.stdout


# A command started in the background from a script: SIGINT (and, under some supervisors, SIGTERM)
# arrive ignored. Then, at its first run in process, Dagster maps SIGTERM to SIGINT's handler, which
# would leave SIGTERM ignored in the command and in everything it starts after (the step's log
# `tail` outliving its terminate() by 30 s, a Dask build going from 2 to 15 minutes).
STARTED_IN_THE_BACKGROUND = """
import signal, subprocess
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
from insight_assets import cli
try:
    cli.main(["collections"])
except SystemExit:
    pass
from dagster._utils.interrupts import setup_interrupt_handlers
setup_interrupt_handlers()  # what every run in process does to the signals
child = subprocess.Popen(["sleep", "30"])
child.terminate()
try:
    print(child.wait(timeout=10))
except subprocess.TimeoutExpired:
    child.kill()
    print("SIGTERM ignored")
"""


def test_a_command_started_with_signals_ignored_can_stop_what_it_starts(tmp_path):
    ran = subprocess.run(
        [sys.executable, "-c", STARTED_IN_THE_BACKGROUND],
        cwd=tmp_path,
        env={**os.environ, "DAGSTER_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.stdout.strip().splitlines()[-1] == str(-signal.SIGTERM), ran.stdout + ran.stderr[-2000:]


def test_a_zotero_library_is_added_listed_shown_stale_when_changed_and_removed(tmp_path, cli, monkeypatch):
    import dagster as dg

    from insight_assets.defs.ingestion.assets import source_documents
    from insight_assets.defs.resources import StorageResource
    from insight_assets_tests.conftest import DEMO_COLLECTION
    from insight_assets_tests.zotero_library import demo_library

    library, ids = demo_library(tmp_path / "home-dir", DEMO_COLLECTION)
    (tmp_path / "data" / "collections").mkdir(parents=True)

    added = cli(
        tmp_path, "library", "add", "zotero", str(tmp_path / "home-dir" / "Zotero"), "--name", "mylib"
    )
    assert added.returncode == 0, added.stderr
    assert "Added zotero library 'mylib'" in added.stdout
    assert "mylib-evaluation: 5 item(s), 2 with a PDF" in added.stdout
    assert "- [attachment-missing]" in added.stdout  # the first problems, each with what to do
    assert json.loads((tmp_path / "data" / "libraries.json").read_text())["libraries"][0]["name"] == "mylib"
    listed = cli(tmp_path, "library", "list")
    assert (
        listed.stdout.startswith("mylib [zotero]")
        and "mylib-embeddings: 3 item(s), 3 with a PDF" in listed.stdout
    )

    before = cli(tmp_path, "collections")
    assert (
        "mylib-embeddings [zotero: " in before.stdout and "not built: insight-assets build" in before.stdout
    )
    # The collection's source as a build reads it (its first step), in the project's own stores.
    monkeypatch.chdir(tmp_path)
    storage = StorageResource()
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("collection", ["mylib-embeddings"])
        dg.materialize(
            [source_documents],
            instance=instance,
            partition_key="mylib-embeddings",
            resources={"storage": storage},
        )
    fresh = cli(tmp_path, "collections")
    assert next(line for line in fresh.stdout.splitlines() if line.startswith("mylib-embeddings ")).endswith(
        "up to date"
    )
    library.set_field(ids["s2orc"][0], "title", "S2ORC, retitled")
    stale = cli(tmp_path, "collections")
    line = next(line for line in stale.stdout.splitlines() if line.startswith("mylib-embeddings "))
    assert "STALE: its zotero changed since the last build" in line

    refused = cli(
        tmp_path,
        "library",
        "add",
        "csl",
        str(tmp_path / "home-dir" / "Zotero" / "zotero.sqlite"),
        "--name",
        "x",
    )
    assert (
        refused.returncode == 2
        and "is not UTF-8 text" in refused.stderr
        and "Traceback" not in refused.stderr
    )
    missing = cli(tmp_path, "library", "add", "bibtex", str(tmp_path / "nowhere.bib"), "--name", "nowhere")
    assert missing.returncode == 2 and "No bibtex library at" in missing.stderr

    removed = cli(tmp_path, "library", "remove", "mylib")
    assert removed.returncode == 0 and "untouched" in removed.stdout
    assert "mylib-" not in cli(tmp_path, "collections").stdout
    unknown = cli(tmp_path, "build", "--collection", "mylib-embeddings")
    assert unknown.returncode == 2 and "no library collection of that name" in unknown.stderr
    library.close()
