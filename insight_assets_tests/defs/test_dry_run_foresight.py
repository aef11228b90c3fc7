"""The dry run foresees what the build will not build again (``defs/foresight.py``): on the demo
built offline, a step whose inputs are those of its last build is foreseen as reused and one whose
inputs are again those of a kept earlier build as restored; neither is priced, and the build then
does exactly what was foreseen."""

from __future__ import annotations

import shutil

import dagster as dg

from insight_assets.app.build_plan import model_free_keys
from insight_assets.defs.dry_run import estimate_collection
from insight_assets.defs.resources import EmbedderResource
from insight_assets.defs.runs import ALL_ASSETS
from insight_assets_tests.defs.helpers import BRIEF_TRAINING, metadata

BUILT_WITH = {asset: values["config"] for asset, values in BRIEF_TRAINING.items()}


class Outcomes(dict):
    """The dry run's view: each step's outcome, by asset."""

    total = 0

    def started(self, asset: str) -> None:
        pass

    def finished(self, asset: str, outcome: str) -> None:
        self[asset] = outcome


def _foreseen(build) -> tuple[Outcomes, int]:
    """Each priced step's outcome, and the model calls the dry run planned."""
    outcomes = Outcomes()
    estimates = estimate_collection(
        build.storage, build.llm, EmbedderResource(provider="hashing"), "demo", outcomes, configs=BUILT_WITH
    )
    return outcomes, sum(estimate.items for estimate in estimates)


def _assets(*names: str) -> list:
    keys = {dg.AssetKey(name) for name in names} | set(model_free_keys())
    return [asset for asset in ALL_ASSETS if set(asset.keys) & keys]


def test_nothing_changed_every_model_calling_step_is_foreseen_as_reused_and_nothing_is_priced(demo_offline):
    outcomes, planned = _foreseen(demo_offline)

    assert len(outcomes) > 20
    assert {asset: why.split(":")[0] for asset, why in outcomes.items()} == dict.fromkeys(outcomes, "reused")
    assert planned == 0


def test_a_step_whose_inputs_are_again_those_of_a_kept_build_is_foreseen_restored_as_the_build_restores_it(
    demo_offline, tmp_path
):
    build = demo_offline.copy(tmp_path / "demo")
    folder = tmp_path / "demo" / "collections" / "demo"
    paper = min(folder.glob("*.pdf"))
    aside = tmp_path / paper.name
    # Without one paper, the papers' compressions are built again (the rest is left as it was) ...
    shutil.move(paper, aside)
    build.materialize(_assets("compressed_documents"))
    # ... and with it back, what needs no model is as the first build left it.
    shutil.move(aside, paper)
    build.materialize(_assets())

    outcomes, planned = _foreseen(build)
    rebuilt = build.materialize()

    assert outcomes["compressed_documents"].startswith("restored: its inputs are again those of its build")
    assert {why.split(":")[0] for asset, why in outcomes.items() if asset != "compressed_documents"} == {
        "reused"
    }
    assert planned == 0
    # The build does what the dry run foresaw, step by step.
    for asset, why in outcomes.items():
        assert metadata(rebuilt, asset)["build"].split(":")[0] == why.split(":")[0], asset
