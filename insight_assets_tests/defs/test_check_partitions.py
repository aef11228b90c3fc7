"""A check's result belongs to its collection: checks are recorded per partition, so that one
collection's later success does not hide another's failure (seen in the UI with an empty
collection's failed check), for a stage's checks and an ingestion asset's alike."""

from __future__ import annotations

import dagster as dg
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from insight_assets.defs.catalog import asset_named
from insight_assets.defs.resources import LLMResource
from insight_assets.defs.runs import INGESTION_ASSETS
from insight_assets_tests import pdf_factory as make
from insight_assets_tests.conftest import add_collection
from insight_assets_tests.defs.helpers import materialize_collection

PARSED_CHECK = dg.AssetCheckKey(dg.AssetKey("parsed_documents"), "every_file_parsed")
COMPRESSED_CHECK = dg.AssetCheckKey(dg.AssetKey("compressed_documents"), "every_document_compressed")


def latest_by_collection(instance: dg.DagsterInstance, key: dg.AssetCheckKey) -> dict[str | None, str]:
    return {
        info.partition_key: info.latest_execution_status.value
        for info in instance.event_log_storage.get_asset_check_partition_info([key])
    }


def test_one_collections_success_does_not_hide_anothers_failure(
    instance, storage, hashing_embedder, tmp_path
):
    bad = add_collection(storage, "with-a-broken-file", [make.DEMO_PAPER])
    (bad / "not-a-pdf.pdf").write_text("a text file that says it is a PDF")
    add_collection(storage, "all-good", [make.DEMO_PAPER])
    assets = [*INGESTION_ASSETS, asset_named("compressed_documents")]
    llm = LLMResource(data_dir=str(tmp_path / "data"))
    for collection in ("with-a-broken-file", "all-good"):  # the good one last: its success is the latest
        materialize_collection(instance, storage, hashing_embedder, collection, assets=assets, llm=llm)

    failed, succeeded = (
        AssetCheckExecutionRecordStatus.FAILED.value,
        AssetCheckExecutionRecordStatus.SUCCEEDED.value,
    )
    assert latest_by_collection(instance, PARSED_CHECK) == {
        "with-a-broken-file": failed,
        "all-good": succeeded,
    }
    # A stage's check (made by the stage factory) is recorded per collection too.
    assert set(latest_by_collection(instance, COMPRESSED_CHECK)) == {"with-a-broken-file", "all-good"}
