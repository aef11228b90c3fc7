"""``insight-assets ideas`` and ``insight-assets ask --method scipip`` are one piece of code
(``scipip.stages.ideas_for``): for the same background they retrieve with the settings the
collection was built with and give the same ideas (the MCP server's ``ask`` runs the same flow)."""

from __future__ import annotations

import re

from insight_assets import cli
from insight_assets.core.methods.scipip.settings import RetrievalSettings
from insight_assets.core.methods.scipip.stages import IDEAS, RETRIEVALS
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets_tests.conftest import DEMO_PDFS_BY_SIZE, add_collection
from insight_assets_tests.defs.helpers import assets_up_to, materialize_collection

BACKGROUND = (
    "Scientific papers are read by machines as well as people, but their representations are "
    "trained on citations alone and judged on few tasks."
)
# The build's settings, away from the defaults: one paper kept after the filter.
BUILT_WITH = {RETRIEVALS: {"n_papers": 1}, IDEAS: {"field": "natural language processing"}}


def run(*args: str, capsys) -> str:
    capsys.readouterr()
    assert cli.main(list(args)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def ideas_of(output: str) -> str:
    """The retrieved papers and the ideas, as both commands print them."""
    return re.split(r"\n+\d+ model calls", output[output.index("Retrieved papers") :])[0].rstrip()


def retrieved(output: str) -> int:
    listed = output.split("Retrieved papers", 1)[1].split("\nIdeas", 1)[0]
    return sum(1 for line in listed.splitlines() if line.startswith("- "))


def test_ideas_and_ask_give_the_same_ideas_with_the_builds_settings(instance, tmp_path, monkeypatch, capsys):
    assert RetrievalSettings().n_papers > 1  # the build's setting differs from the default
    data = tmp_path / "data"
    # The command line's stores are the defaults under the working directory: build into those.
    storage = StorageResource(
        collections_root=str(data / "collections"),
        warehouse_path=str(data / "warehouse.duckdb"),
        lancedb_uri=str(data / "lancedb"),
        reports_dir=str(data / "reports"),
    )
    (data / "collections").mkdir(parents=True)
    add_collection(storage, "demo", DEMO_PDFS_BY_SIZE[:3])
    materialize_collection(
        instance,
        storage,
        EmbedderResource(),
        "demo",
        llm=LLMResource(data_dir=str(data)),
        assets=assets_up_to(*BUILT_WITH),
        run_config={"ops": {asset: {"config": values} for asset, values in BUILT_WITH.items()}},
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INSIGHT_ASSETS_LLM_PROVIDER", raising=False)

    from_ideas = run("ideas", "--collection", "demo", BACKGROUND, capsys=capsys)
    from_ask = run("ask", "--collection", "demo", "--method", "scipip", BACKGROUND, capsys=capsys)

    assert f"Background: {BACKGROUND}" in from_ideas and f"Question: {BACKGROUND}" in from_ask
    assert retrieved(from_ideas) == retrieved(from_ask) == 1
    assert re.search(r"\n1\. ", ideas_of(from_ideas))  # some idea was proposed
    assert ideas_of(from_ideas) == ideas_of(from_ask)
