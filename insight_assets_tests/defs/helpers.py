"""Read what a materialization reported."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import ALL_ASSETS, materialize_collection
from insight_assets.defs.stage_assets import load_bundle, op_config
from insight_assets_tests.fake_model_server import FakeModelServer

__all__ = [
    "BRIEF_TRAINING",
    "assets_up_to",
    "check",
    "failure",
    "hosted_llm",
    "materialize_collection",
    "metadata",
]

# Op config for tests of other parts than Insight-RAG's parametric retriever that build it anyway
# (the bundle ``brief_training``): one short epoch of training where it trains (a GPU; on a CPU it
# records why it did not), and Table 3 without the models (their own tests train for real).
BRIEF_TRAINING = op_config(load_bundle("brief_training"))


def assets_up_to(*names: str) -> list:
    """The assets ``names`` and everything upstream of them: what a test of those assets builds,
    rather than every method's."""
    from insight_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    keys = dg.AssetSelection.assets(*names).upstream().resolve(graph)
    return [asset for asset in ALL_ASSETS if set(asset.keys) & keys]


def hosted_llm(server: FakeModelServer, tmp_path: Path, **changes) -> LLMResource:
    """The ``llm`` resource with the OpenAI provider, its requests going to ``server``; no retries."""
    settings = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": f"{server.url}/v1",
        "api_key": "test-key",
        "max_retries": 0,
        "data_dir": str(tmp_path / "data"),
        **changes,
    }
    return LLMResource(**settings)


def metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    """The metadata values of ``asset``'s materialization in ``result``."""
    (materialization,) = result.asset_materializations_for_node(asset)
    return {key: value.value for key, value in materialization.metadata.items()}


def check(result: dg.ExecuteInProcessResult, name: str) -> dg.AssetCheckEvaluation:
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    return evaluation


def failure(result: dg.ExecuteInProcessResult) -> tuple[str, str]:
    """The failed step and its message (there must be exactly one)."""
    (event,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    return event.step_key, event.step_failure_data.user_failure_data.description
