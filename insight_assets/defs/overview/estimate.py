"""The collection page's dry-run step: every method asked the page's question, once the collection
has what the methods read (a method not built yet prices nothing)."""

from insight_assets.app import asking
from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core import curation
from insight_assets.core.curation.tables import first_question
from insight_assets.core.index import IndexMissing
from insight_assets.defs.overview.assets import CollectionReportConfig


def _page(config: CollectionReportConfig, run: DryRun) -> None:
    if not config.answer_question:
        return
    pairs = curation.kept_pairs(run.output("generated_answers", []))
    question = (
        config.question
        or first_question(run.storage.warehouse, run.collection)
        or (pairs[0].question if pairs else None)
    )
    if not question:
        return
    asked = asking.Asked(run.collection, question, run.storage, run.embedder)
    for flow in asking.ask_flows().values():
        try:
            flow.answer(asked, run.client)
        except (IndexMissing, asking.AskFailed):
            continue


ESTIMATE_STEPS = (EstimateStep("collection_report", CollectionReportConfig, _page),)
