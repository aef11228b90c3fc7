"""Insight-RAG's answer assets: the answers of Insight-RAG and its baselines to the benchmark, their scores and the report."""

from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow as pa
from pydantic import Field

from insight_assets.core.embedding import one_torch_thread
from insight_assets.core.headlines import Headline, headline_table, played_offline
from insight_assets.core.ingest import paper_count
from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import accuracy, report, scores, stages, store
from insight_assets.core.methods.insight_rag.cpt import read_training
from insight_assets.core.methods.insight_rag.schemas import FAILED, MATCHING, MULTI, RETRIEVER_MODES
from insight_assets.core.methods.insight_rag.tasks import (
    ANSWER_TASKS,
    INSIGHT_RAG_ANSWER,
)
from insight_assets.core.retrieval.citing import (
    citation_problems,
    load_sources,
    strip_citations,
)
from insight_assets.core.retrieval.search import RETRIEVAL_MODES
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.insight_rag.assets import INSIGHT_RAG_GROUP, insight_rag_benchmark
from insight_assets.defs.insight_rag.retriever import insight_retriever, insight_retriever_accuracy
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    markdown_table,
    materialize_each,
    standin_note,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.pools import EMBEDDING_POOL, LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

# -- answers ---------------------------------------------------------------------------------------


class InsightRAGAnswersConfig(ModelCallConfig):
    """§2 and §5: Insight-RAG with each retriever mode, RAG with k = 1, 3, 5, 10 chunks, no context."""

    TASKS = ANSWER_TASKS

    retriever_modes: list[str] = Field(
        default=list(insight_rag.schemas.DEFAULT_RETRIEVER_MODES),
        description=f"Insight-retriever modes to answer with: some of {', '.join(RETRIEVER_MODES)}.",
    )
    rag_ks: list[int] = Field(default=list(insight_rag.schemas.RAG_KS), description="RAG's chunk counts.")
    rag_mode: str = Field(default="dense", description=f"RAG's retrieval: {', '.join(RETRIEVAL_MODES)}.")
    insight_search_mode: str = Field(
        default="hybrid", description="How the retriever searches triples and sentences."
    )
    max_items: int | None = Field(
        default=None, ge=1, description="Only the first N items per kind (cost control)."
    )

    def settings(self) -> insight_rag.AnswerSettings:
        return config_settings(self, insight_rag.AnswerSettings, "insight_rag_answers")

    def stage(self, scope: CollectionScope) -> stages.Answered | None:
        return stages.answers(scope, self.settings(), self.max_items)


@dg.asset(
    kinds={"duckdb"},
    deps=[insight_rag_benchmark, insight_retriever],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "answers_cite_given_passages",
            asset="insight_rag_answers",
            description="Every citation of every answer is a passage (insight or chunk) its method was given; an invented alias, or a writer rejected for citing sources it was not given, fails it.",
        )
    ],
    **INSIGHT_RAG_GROUP,
)
def insight_rag_answers(
    context: dg.AssetExecutionContext,
    config: InsightRAGAnswersConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """The identified insights of every benchmark item, and the answers of Insight-RAG (each
    retriever mode), RAG with k chunks and no retrieval, with their contexts' sizes and the
    retrieval rankings they came from."""
    config.settings()  # an invalid config fails before any collection is built
    return materialize_each(
        context, storage, lambda collection: _answers(context, config, storage, llm, embedder, collection)
    )


def _answers(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    answered, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    if answered is None:
        return _no_answers(warehouse, collection)
    items, setup, identified, answers = answered.items, answered.setup, answered.identified, answered.answers
    writer = client.writer_label(INSIGHT_RAG_ANSWER)
    identifier = client.writer_label(insight_rag.tasks.INSIGHT_RAG_IDENTIFY)
    warehouse.replace_partition(
        collection, store.answer_tables(collection, identified, answers, setup.sources, identifier, writer)
    )
    problems = [
        f"{a.method} on {a.item_id}: {problem}"
        for a in answers
        for problem in citation_problems(a.answer, a.passage_chunk_ids, a.error)
    ]
    statuses = {s: sum(i.status == s for i in identified) for s in {i.status for i in identified}}
    questions = {i.item_id: i.question for i in items}
    return CollectionReport(
        metadata={
            "dagster/row_count": len(answers),
            "items": len(items),
            "identifier": dg.MetadataValue.json(statuses),
            "methods": ", ".join(dict.fromkeys(a.method for a in answers)),
            "mean_context_tokens": dg.MetadataValue.json(_mean_context_tokens(answers)),
            "failures": dg.MetadataValue.md(
                markdown_table(
                    [
                        {"method": a.method, "item": questions[a.item_id] or a.item_id, "error": a.error}
                        for a in answers
                        if a.status == FAILED
                    ][:20],
                    ["method", "item", "error"],
                    empty="None.",
                )
            ),
            "writer": writer,
            **llm_metadata(client),
        },
        checks=[
            dg.AssetCheckResult(
                check_name="answers_cite_given_passages",
                passed=not problems,
                metadata={"problems": "; ".join(problems[:10]) or "none"},
            )
        ],
    )


def _mean_context_tokens(answers) -> dict[str, float]:
    methods = dict.fromkeys(a.method for a in answers)
    return {
        m: round(float(np.mean([a.context_tokens for a in answers if a.method == m])), 1) for m in methods
    }


def _no_answers(warehouse, collection: str) -> CollectionReport:
    """Nothing to answer: the benchmark is empty (its own check says why)."""
    warehouse.replace_partition(
        collection,
        {name: pa.Table.from_pylist([]) for name in ("insight_rag_insights", "insight_rag_answers")},
    )
    why = "no benchmark items: `insight_rag_benchmark` stored none (see its check benchmark_has_items)."
    return CollectionReport(
        metadata={"dagster/row_count": 0, "why_none": why},
        checks=[
            dg.AssetCheckResult(
                check_name="answers_cite_given_passages",
                passed=True,
                metadata={"problems": "none: no answers"},
            )
        ],
    )


# -- scores and report -------------------------------------------------------------------------


@dg.asset(
    kinds={"duckdb"},
    deps=[insight_rag_answers, insight_retriever_accuracy],
    code_version="1",
    **pooled(EMBEDDING_POOL),
    **INSIGHT_RAG_GROUP,
)
def insight_rag_scores(
    context: dg.AssetExecutionContext, storage: StorageResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    """Exact match and token F1 per question kind and method (accuracy for matching), Hits@50 and
    MRR of the gold documents and gold units in each retrieval ranking, context tokens, and the
    identifier's agreement with the gold (subject + relation) by embedding cosine. Table, chart and
    data/reports/<collection>/insight_rag_report.md."""
    return materialize_each(context, storage, lambda collection: _scores(storage, embedder, collection))


def _scores(storage, embedder, collection) -> CollectionReport:
    warehouse = storage.warehouse
    items = {item.item_id: item for item in store.load_benchmark(warehouse, collection)}
    writer = store.writer_of(warehouse, "insight_rag_answers", collection)
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
    written = write_report(
        storage,
        collection,
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


def _score_answers(warehouse, embedder, collection, items, answers) -> tuple[list[dict], dict]:
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


def _report_notes(storage, collection, writer, identifier, adapter, placeholders) -> list[str]:
    """What the numbers are (and are not): the measured ones, the models in each role, the adapter."""
    roles = {
        "triple extractor": ", ".join(storage.warehouse.labels("knowledge_triples", "extractor", collection)),
        "question writer": writers(storage, "insight_rag_benchmark", collection),
        "identifier": identifier,
        "writer": writer,
    }
    return [
        _measured_note(placeholders, played_offline(writer)),
        *report.report_notes(writer, identifier, adapter),
        *filter(None, [standin_note(roles)]),
    ]


def _headline(storage, collection, table, accuracy_table, placeholders, notes) -> Headline:
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
        writer=writers(storage, "insight_rag_answers", collection),
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
