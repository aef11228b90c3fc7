"""Insight-RAG's scores of its answers and its baselines' (``insight_rag_answers``, a declared
stage), and the report."""

from pathlib import Path

import dagster as dg

from insight_assets.core.embedding.models import one_torch_thread
from insight_assets.core.ingestion.ingest import paper_count
from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import accuracy, report, scores, stages, store
from insight_assets.core.methods.insight_rag.cpt import read_training
from insight_assets.core.methods.insight_rag.schemas import MATCHING, MULTI
from insight_assets.core.page.headlines import Headline, headline_table, played_offline
from insight_assets.core.retrieval.citing import load_sources, strip_citations
from insight_assets.core.runtime.stage_output import ReportPlace, standin_note
from insight_assets.core.startup.lazy import pa
from insight_assets.core.storage.stores import Warehouse
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import markdown_table, report_metadata
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import EMBEDDING_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, StorageResource


@dg.asset(
    kinds={"duckdb"},
    code_version="1",
    **pooled(EMBEDDING_POOL),
    **asset_settings("insight_rag", deps=[stages.ANSWERS, stages.ACCURACY]),
)
def insight_rag_scores(
    context: dg.AssetExecutionContext, storage: StorageResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    """Exact match and token F1 per question kind and method (accuracy for matching), Hits@50 and
    MRR of the gold documents and gold units in each retrieval ranking, context tokens, and the
    identifier's agreement with the gold (subject + relation) by embedding cosine. Table, chart and
    data/reports/<collection>/insight_rag_report.md."""
    return materialize_each(context, storage, lambda collection: _scores(storage, embedder, collection))


def _scores(storage: StorageResource, embedder: EmbedderResource, collection: str) -> CollectionReport:
    warehouse = storage.warehouse
    items = {item.item_id: item for item in store.load_benchmark(warehouse, collection)}
    writer = store.writer_of(warehouse, stages.ANSWERS, collection)
    if writer is None or not items:
        warehouse.replace_partition(collection, {"insight_rag_scores": pa.Table.from_pylist([])})
        return CollectionReport(
            metadata={
                "dagster/row_count": 0,
                "why_none": "no answers to score: the benchmark is empty (see insight_rag_benchmark's check).",
            }
        )
    answers = store.load_answers(warehouse, collection)
    scored, agreement = _score_answers(warehouse, embedder, collection, items, answers)
    gold_labels = {item_id: item.gold_answers[0] for item_id, item in items.items() if item.kind == MATCHING}
    table = scores.method_table(scored, agreement, gold_labels)
    warehouse.replace_partition(
        collection,
        {"insight_rag_scores": pa.Table.from_pylist([{"collection": collection, **s} for s in scored])},
    )
    chart = report.render_chart(table)
    examples = _examples(items, answers)
    adapter = store.stored_adapter(warehouse, collection)
    training = read_training(Path(adapter["adapter_path"])) if adapter and adapter["adapter_path"] else None
    identifier_label = store.writer_of(warehouse, "insight_rag_insights", collection) or ""
    placeholders = _placeholders(writer, identifier_label)
    notes = _report_notes(storage, collection, writer, identifier_label, adapter, placeholders)
    notes += scores.table_caveats(table, paper_count(warehouse, collection))
    accuracy_table = accuracy.accuracy_table(store.load_retriever_accuracy(warehouse, collection))
    written = report_metadata(
        ReportPlace(storage.warehouse, Path(storage.reports_dir), collection),
        "insight_rag_report.md",
        report.render_report(collection, table, examples, notes, accuracy_table, training is not None),
        report.CHART_FILE,
        chart,
        "exact match per method",
        _headline(storage, collection, table, accuracy_table, placeholders, notes),
    )
    if training is not None:
        (Path(storage.reports_dir) / collection / report.TRAINING_CHART_FILE).write_bytes(
            report.render_training_chart(training)
        )
    return CollectionReport(
        metadata={
            "dagster/row_count": len(scored),
            "scores": dg.MetadataValue.md(markdown_table(table, report.TABLE_COLUMNS)),
            "retriever_accuracy": dg.MetadataValue.md(
                markdown_table(accuracy_table, accuracy.TABLE_COLUMNS, empty="Not measured.")
            ),
            **written,
        }
    )


def _score_answers(
    warehouse: Warehouse, embedder: EmbedderResource, collection: str, items: dict, answers: list
) -> tuple[list[dict], dict]:
    """Each answer's scores against its item's gold (answers, documents, units), and the identifier's
    agreement with the gold."""
    sources = load_sources(warehouse, collection, insight_rag.PROFILE)
    sentence_ids = store.sentence_ids(warehouse, collection)
    units = {
        item_id: scores.gold_units(item, sources, sentence_ids)
        for item_id, item in items.items()
        if item.kind != MATCHING
    }
    scored = [
        scores.score_answer(a, items[a.item_id], units.get(a.item_id, set()))
        for a in answers
        if a.item_id in items
    ]
    with one_torch_thread():
        agreement = scores.identifier_agreement(
            store.identified_fragments(warehouse, collection), items, embedder.get_embedder().embed
        )
    return scored, agreement


def _examples(items, answers) -> list[dict]:
    """The first buried and multi-hop question, with its gold and every method's answer."""
    by_key = {(a.item_id, a.method): a for a in answers}
    examples = []
    for kind in (insight_rag.schemas.BURIED, MULTI):
        item = next((i for i in items.values() if i.kind == kind), None)
        if item:
            examples.append(
                {
                    "question": item.question,
                    "gold": "; ".join(item.gold_answers),
                    "answers": [
                        (a.method, strip_citations(a.answer) or f"({a.status}: {a.error})")
                        for (item_id, _), a in by_key.items()
                        if item_id == item.item_id
                    ],
                }
            )
    return examples


def _report_notes(
    storage: StorageResource,
    collection: str,
    writer: str,
    identifier: str,
    adapter: dict | None,
    placeholders: dict[str, str],
) -> list[str]:
    """What the numbers are (and are not): the measured ones, the models in each role, the adapter."""
    roles = {
        "triple extractor": ", ".join(storage.warehouse.labels(stages.TRIPLES.name, "extractor", collection)),
        "question writer": storage.warehouse.writers(stages.BENCHMARK.name, collection),
        "identifier": identifier,
        "writer": writer,
    }
    return [
        _measured_note(placeholders, played_offline(writer)),
        *report.report_notes(writer, identifier, adapter),
        *filter(None, [standin_note(roles)]),
    ]


def _headline(
    storage: StorageResource,
    collection: str,
    table: list[dict],
    accuracy_table: list[dict],
    placeholders: dict[str, str],
    notes: list[str],
) -> Headline:
    """The page shows no placeholder (the report keeps them, said so)."""
    return Headline(
        tables=(
            headline_table(
                "Answers per question kind and method",
                [row for row in table if not (MATCHING in placeholders and row["kind"] == MATCHING)],
                [column for column in report.TABLE_COLUMNS if column not in placeholders],
            ),
            *(
                [headline_table("Insight retrievers alone (Table 3)", accuracy_table, accuracy.TABLE_COLUMNS)]
                if accuracy_table
                else []
            ),
        ),
        notes=tuple(notes),
        writer=storage.warehouse.writers(stages.ANSWERS, collection),
    )


def _placeholders(generator: str, identifier: str) -> dict[str, str]:
    """The numbers an offline stand-in made meaningless, each with why: the matching rows when the
    reader is the offline rule (it reads no context), identifier_agreement when the identifier is
    (it inverts the offline benchmark's question templates)."""
    found = {}
    if played_offline(generator):
        found[MATCHING] = (
            "the matching rows: the offline rule reads no context, so every method answers alike"
        )
    if played_offline(identifier):
        found["identifier_agreement"] = (
            "identifier_agreement: the offline identifier inverts the templates the offline questions were written with"
        )
    return found


def _measured_note(placeholders: dict[str, str], offline_reader: bool) -> str:
    """Which numbers are measured and which are placeholders until a model runs."""
    reading = (
        " (the offline reader extracts the gold triple's object from the context it was given, so "
        "offline these say whether retrieval found the evidence)"
        if offline_reader
        else ""
    )
    line = (
        "measured: doc_hits50, doc_mrr, unit_hits50, unit_mrr (the retrieval ranking), exact_match and f1"
        f"{reading}, context_tokens, the retriever accuracy (Table 3); the rows of index and llm modes are "
        "circular (the caveat column)"
    )
    if placeholders:
        line += "; placeholders until a model runs: " + "; ".join(placeholders.values())
    return line
