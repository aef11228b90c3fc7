"""A collection of one short paper without a references section builds every asset: what a method
cannot do there is skipped with the reason in metadata and a warning check, never a failure and
never a silent empty success."""

from __future__ import annotations

import dagster as dg

from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import ALL_ASSETS
from insight_assets_tests.conftest import add_collection
from insight_assets_tests.defs.helpers import BRIEF_TRAINING, check, materialize_collection, metadata
from insight_assets_tests.pdf_factory import english_pages, write_pdf


def test_a_one_paper_collection_without_references_builds_every_asset(
    instance, storage, hashing_embedder, tmp_path
):
    # Two pages of a paper's opening: in-text citations, but no references section.
    note = write_pdf(tmp_path / "note.pdf", english_pages(2))
    add_collection(storage, "note", [note])
    llm = LLMResource(data_dir=str(tmp_path / "llm"))
    result = materialize_collection(
        instance, storage, hashing_embedder, "note", llm=llm, run_config={"ops": BRIEF_TRAINING}
    )

    assert result.success
    built = {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}
    assert built == {key.to_user_string() for asset in ALL_ASSETS for key in asset.keys}

    warnings = {
        evaluation.check_name: evaluation
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed
    }
    assert all(e.severity == dg.AssetCheckSeverity.WARN for e in warnings.values())
    # No asset reports zero rows without a warning that says why.
    for name in sorted(built):
        if metadata(result, name).get("dagster/row_count") == 0:
            failing = [e for e in warnings.values() if e.asset_key.to_user_string() == name]
            assert failing and all(e.description for e in failing), f"{name}: zero rows, no warning"

    assert "has a references section" in check(result, "citation_links").description
    assert "at least three summarized papers" in check(result, "retrievals_made").description
    # Each method that reads citation links says what it skipped without them.
    for asset, part in [
        ("xsum_answers", "evaluation targets"),
        ("insight_rag_benchmark", "matching items"),
        ("scipip_retrievals", "co-citation route"),
        ("scipip_ideas", "co-citation route"),
    ]:
        skipped = metadata(result, asset)["skipped"]
        assert part in skipped and "citation links" in skipped, asset
