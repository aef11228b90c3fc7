"""A method is a plug-in: one stage declaration (``core/runtime/stage.py``) and a defs folder that makes its
asset are found by the catalog, the dry run, the bundles and the CLI, and its own tables join the
warehouse, with nothing shared edited; a part misnamed is an error, not a part left out."""

from __future__ import annotations

import json
import sys
import textwrap

import dagster as dg
import pytest

import insight_assets.app.cli
import insight_assets.definitions
import insight_assets.defs
from insight_assets.core.storage import stores
from insight_assets.core.storage.stores import Warehouse, warehouse_tables
from insight_assets.defs import materialization, stage_assets

# The whole toy method: its table, its settings, its work, what it keeps, and its declaration.
STAGES = '''
    from pydantic import Field

    from insight_assets.core.curation.stages import kept_pairs_of
    from insight_assets.core.runtime.stage import Stage, StageSettings
    from insight_assets.core.runtime.stage_output import StageOutput, table
    from insight_assets.core.storage.stores import declare_tables

    declare_tables({"toy_method_rows": "collection VARCHAR, pairs INTEGER"})


    class ToySettings(StageSettings):
        """How many question-answer pairs the toy counts, at most."""

        max_pairs: int = Field(default=10, ge=1, description="Pairs counted, at most.")


    def count_pairs(scope, settings: ToySettings) -> int:
        return len(kept_pairs_of(scope, settings.max_pairs))


    def keep(scope, settings: ToySettings, pairs: int) -> StageOutput:
        return StageOutput({"toy_method_rows": table(scope.collection, [{"pairs": pairs}])}, {"pairs": pairs})


    STAGES = (
        Stage(
            "toy_method_rows",
            "toy_method",
            "The collection's kept pairs, counted.",
            ToySettings,
            reads=("generated_answers",),
            run=count_pairs,
            output=keep,
        ),
    )
'''
ASSETS = """
    from insight_assets.defs.stage_assets import stage_assets
    from insight_assets.defs.toy_method.stages import STAGES

    ASSETS = stage_assets(STAGES)
"""
ASK = """
    from insight_assets.defs.asking import AskFlow, MethodAnswer

    ASK = AskFlow("toy", "a toy flow", lambda asked, client: MethodAnswer(f"toy says: {asked.question}"))
"""
CLI = """
    from insight_assets.app.commands import Command

    COMMANDS = (Command("toy", "a toy command", lambda args: 7),)
"""


@pytest.fixture
def toy_method(tmp_path, monkeypatch):
    """A defs folder ``toy_method`` on the defs package's path, as a new method would add it."""
    folder = tmp_path / "defs" / "toy_method"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text('"""A toy method."""\n')
    for name, source in (("stages", STAGES), ("assets", ASSETS), ("ask", ASK)):
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    # Its face on the command line, a module of app/cli named after the folder.
    faces = tmp_path / "cli"
    faces.mkdir()
    (faces / "toy_method.py").write_text(textwrap.dedent(CLI))
    monkeypatch.setattr(insight_assets.defs, "__path__", [*insight_assets.defs.__path__, str(folder.parent)])
    monkeypatch.setattr(insight_assets.app.cli, "__path__", [*insight_assets.app.cli.__path__, str(faces)])
    # The toy's table and stage are declared for this test only (every real method's were, at import, for good).
    monkeypatch.setattr(stores, "_DECLARED", dict(stores._DECLARED))
    monkeypatch.setattr(materialization, "_DECLARED", dict(materialization._DECLARED))
    yield folder
    toy = ("insight_assets.defs.toy_method", "insight_assets.app.cli.toy_method")
    for module in [name for name in sys.modules if name.startswith(toy)]:
        del sys.modules[module]


def test_a_new_stage_joins_the_assets_the_dry_run_and_the_warehouse(toy_method, tmp_path):
    from insight_assets.defs.catalog import domain_assets, domains
    from insight_assets.defs.dry_run import estimate_steps

    assert "toy_method" in domains()
    assets = {key.to_user_string(): asset for asset in domain_assets() for key in asset.keys}
    toy = assets["toy_method_rows"]
    assert {"toy_method_rows", "generated_answers"} <= set(assets)
    assert toy.group_names_by_key[dg.AssetKey("toy_method_rows")] == "toy_method"
    assert {dg.AssetKey("generated_answers"), dg.AssetKey("collection_files")} <= toy.dependency_keys
    # The asset's config is the settings model: its own field, with its default and bound, and the model's.
    fields = toy.op.config_schema.config_type.fields
    assert {"max_pairs", "model", "temperature", "max_tokens"} <= set(fields)
    assert fields["max_pairs"].default_value == 10
    order = [step.asset for step in estimate_steps()]
    assert order.index("generated_answers") < order.index("toy_method_rows")
    assert "toy_method_rows" in warehouse_tables()
    warehouse = Warehouse(tmp_path / "w.duckdb")
    assert warehouse.rows("SELECT count(*) AS n FROM toy_method_rows") == [{"n": 0}]


def test_every_asset_of_a_collection_is_made_from_its_source():
    # Dagster judges staleness by direct inputs: a folder observed with new papers must show every
    # asset stale, so each depends on the source asset itself, not only through the first.
    from insight_assets.defs.catalog import ALL_ASSETS

    without = [
        key.to_user_string()
        for asset in ALL_ASSETS
        for key in asset.keys
        if dg.AssetKey("collection_files") not in asset.asset_deps[key]
    ]
    assert len(ALL_ASSETS) > 30 and without == []


def test_a_new_defs_folder_adds_its_command_and_its_ask_flow(toy_method, tmp_path, monkeypatch, capsys):
    from insight_assets import cli

    (tmp_path / "data" / "collections" / "papers").mkdir(parents=True)
    (tmp_path / "data" / "collections" / "papers" / "a.pdf").write_bytes(b"%PDF-1.4\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["toy"]) == 7
    capsys.readouterr()
    assert cli.main(["ask", "--collection", "papers", "--method", "toy", "why?"]) == 0
    assert capsys.readouterr().out.startswith("Question: why?\n\ntoy says: why?\n\n0 model calls")
    with pytest.raises(SystemExit):
        cli.main(["ask", "--collection", "papers", "--method", "no-such-method", "why?"])


def test_a_bundle_setting_a_field_its_stage_lacks_or_no_asset_is_an_error(toy_method, tmp_path, monkeypatch):
    from insight_assets.defs.catalog import domain_assets

    assets = domain_assets()
    monkeypatch.setattr(stage_assets, "BUNDLES", tmp_path)
    (tmp_path / "quick.json").write_text(json.dumps({"toy_method_rows": {"max_pairs": 2, "max_tokens": 50}}))
    assert stage_assets.load_bundle("quick", assets=assets) == {
        "toy_method_rows": {"max_pairs": 2, "max_tokens": 50}
    }
    (tmp_path / "quick.json").write_text(json.dumps({"toy_method_rows": {"max_pair": 2}}))
    with pytest.raises(stage_assets.BundleError, match="quick.*toy_method_rows.*max_pair"):
        stage_assets.load_bundle("quick", assets=assets)
    (tmp_path / "quick.json").write_text(json.dumps({"toy_method_row": {"max_pairs": 2}}))
    with pytest.raises(stage_assets.BundleError, match="sets 'toy_method_row', which is not an asset"):
        stage_assets.load_bundle("quick", assets=assets)
    (tmp_path / "quick.json").write_text(json.dumps({"theme_graph": {"max_cluster": 2}}))
    with pytest.raises(stage_assets.BundleError, match="theme_graph: no setting 'max_cluster'"):
        stage_assets.load_bundle("quick", assets=assets)
    with pytest.raises(stage_assets.BundleError, match="no bundle 'slow'; the bundles are quick"):
        stage_assets.load_bundle("slow", assets=assets)


def test_the_shipped_bundles_set_only_settings_that_exist_and_lay_over_one_another():
    for name in ("smoke", "brief_training", "every_baseline"):
        assert stage_assets.load_bundle(name)
    smoke = stage_assets.load_bundle("smoke")
    assert smoke["contregen_answers"]["baselines"] is False
    both = stage_assets.load_bundle("smoke", "every_baseline")
    assert both["contregen_answers"] == {**smoke["contregen_answers"], "baselines": True}


def test_two_stages_of_one_name_are_an_error(toy_method):
    from insight_assets.defs.toy_method.stages import STAGES

    (stage,) = STAGES
    stage_assets.stage_asset(stage)
    with pytest.raises(stage_assets.DeclarationError, match="two stages are named 'toy_method_rows'"):
        stage_assets.stage_asset(stage.__class__(**{**stage.__dict__, "method": "other"}))


def test_a_domain_named_after_another_folder_is_an_error(toy_method):
    from insight_assets.defs.domain import DomainError, all_domains

    (toy_method / "domain.py").write_text(
        'from insight_assets.defs.domain import Domain\n\nDOMAIN = Domain("toy")\n'
    )
    with pytest.raises(
        DomainError, match="defs/toy_method/domain.py declares the domain 'toy'; name it 'toy_method'"
    ):
        all_domains()
