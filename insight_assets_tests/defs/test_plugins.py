"""A method is a plug-in: a new defs folder is found by the catalog, the dry run and the CLI, and
its own tables join the warehouse, with nothing shared edited; what it plugs in besides its assets
is one typed ``Domain``, and a part misnamed or missing is an error, not a part left out."""

from __future__ import annotations

import sys
import textwrap

import pytest

import insight_assets.app.cli
import insight_assets.definitions
import insight_assets.defs
from insight_assets.core import stores
from insight_assets.core.stores import Warehouse, warehouse_tables

ASSETS = '''
    import dagster as dg

    from insight_assets.core.curation.stages import kept_pairs_of
    from insight_assets.core.stores import declare_tables
    from insight_assets.defs.curation.assets import generated_answers
    from insight_assets.defs.model_calls import ModelCallConfig

    declare_tables({"toy_method_rows": "collection VARCHAR, pairs INTEGER"})


    class ToyMethodConfig(ModelCallConfig):
        def stage(self, scope):
            return len(kept_pairs_of(scope))


    @dg.asset(deps=[generated_answers])
    def toy_method_rows() -> None:
        """Nothing: the test only plugs it in."""
'''
DOMAIN = """
    from insight_assets.app.dry_run import EstimateStep
    from insight_assets.defs.domain import Domain
    from insight_assets.app.cli import toy_method as cli
    from insight_assets.defs.toy_method.assets import ToyMethodConfig

    SMOKE_SETTINGS = {"toy_method_rows": {"max_tokens": 50}}

    DOMAIN = Domain(
        "toy_method",
        estimate_steps=(EstimateStep("toy_method_rows", ToyMethodConfig),),
        smoke_settings=SMOKE_SETTINGS,
        ask=cli.ASK,
    )
"""
CLI = """
    from insight_assets.app.asking import MethodAnswer
    from insight_assets.app.commands import AskFlow, Command

    COMMANDS = (Command("toy", "a toy command", lambda args: 7),)
    ASK = AskFlow("toy", "a toy flow", lambda asked, client: MethodAnswer(f"toy says: {asked.question}"))
"""


@pytest.fixture
def toy_method(tmp_path, monkeypatch):
    """A defs folder ``toy_method`` on the defs package's path, as a new method would add it."""
    folder = tmp_path / "defs" / "toy_method"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text('"""A toy method."""\n')
    for name, source in (("assets", ASSETS), ("domain", DOMAIN)):
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    # Its face on the command line, a module of app/cli named after the folder.
    faces = tmp_path / "cli"
    faces.mkdir()
    (faces / "toy_method.py").write_text(textwrap.dedent(CLI))
    monkeypatch.setattr(insight_assets.defs, "__path__", [*insight_assets.defs.__path__, str(folder.parent)])
    monkeypatch.setattr(insight_assets.app.cli, "__path__", [*insight_assets.app.cli.__path__, str(faces)])
    # The toy's table is declared for this test only (every real method's was, at import, for good).
    monkeypatch.setattr(stores, "_DECLARED", dict(stores._DECLARED))
    yield folder
    toy = ("insight_assets.defs.toy_method", "insight_assets.app.cli.toy_method")
    for module in [name for name in sys.modules if name.startswith(toy)]:
        del sys.modules[module]


def test_a_new_defs_folder_joins_the_assets_the_dry_run_and_the_warehouse(toy_method, tmp_path):
    from insight_assets.app.estimating import estimate_steps
    from insight_assets.defs.catalog import domain_assets, domains
    from insight_assets.defs.domain import smoke_settings

    assert "toy_method" in domains()
    keys = {key.to_user_string() for asset in domain_assets() for key in asset.keys}
    assert {"toy_method_rows", "generated_answers"} <= keys
    order = [step.asset for step in estimate_steps()]
    assert order.index("generated_answers") < order.index("toy_method_rows")
    assert smoke_settings(keys)["toy_method_rows"] == {"max_tokens": 50}
    assert "toy_method_rows" in warehouse_tables()
    warehouse = Warehouse(tmp_path / "w.duckdb")
    assert warehouse.rows("SELECT count(*) AS n FROM toy_method_rows") == [{"n": 0}]


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


def test_a_defs_folder_that_declares_no_domain_or_a_smoke_setting_for_no_asset_is_an_error(toy_method):
    from insight_assets.defs.catalog import domain_assets
    from insight_assets.defs.domain import DomainError, all_domains, smoke_settings

    (toy_method / "domain.py").write_text(
        textwrap.dedent(DOMAIN).replace('"toy_method_rows": {"max_tokens"', '"toy_method_row": {"max_tokens"')
    )
    keys = {key.to_user_string() for asset in domain_assets() for key in asset.keys}
    with pytest.raises(DomainError, match="smoke settings for assets that do not exist: toy_method_row$"):
        smoke_settings(keys)

    (toy_method / "domain.py").unlink()
    del sys.modules["insight_assets.defs.toy_method.domain"]
    with pytest.raises(DomainError, match="defs folder[(]s[)] toy_method declare no DOMAIN"):
        all_domains()


def test_a_page_section_belongs_to_the_ask_flow_of_its_method():
    from insight_assets.app.commands import AskFlow
    from insight_assets.defs.domain import Domain, DomainError
    from insight_assets.defs.pages import MethodPage
    from insight_assets.defs.xsum.summaries import xsum_scores

    page = MethodPage("xsum", "XSum", "a paper", xsum_scores, "xsum_report.md")
    flow = AskFlow("xsum", "a summary", lambda asked, client: None)
    assert Domain("xsum", ask=flow, page=page).page is page
    with pytest.raises(DomainError, match="its page is method 'xsum' but its ask flow is 'missing'"):
        Domain("xsum", page=page)
    with pytest.raises(DomainError, match="its ask flow is 'contregen'"):
        Domain("xsum", ask=AskFlow("contregen", "a tree", lambda asked, client: None), page=page)


def test_a_dry_run_step_whose_config_names_no_stage_is_an_error():
    from insight_assets.app.dry_run import EstimateStep
    from insight_assets.defs.domain import Domain, DomainError
    from insight_assets.defs.model_calls import ModelCallConfig
    from insight_assets.defs.xsum.assets import XSumQuestionsConfig

    class NoStage(ModelCallConfig):
        pass

    assert Domain("xsum", estimate_steps=(EstimateStep("xsum_questions", XSumQuestionsConfig),))
    with pytest.raises(DomainError, match="'toy_rows' has no stage: give NoStage a `stage"):
        Domain("toy", estimate_steps=(EstimateStep("toy_rows", NoStage),))
