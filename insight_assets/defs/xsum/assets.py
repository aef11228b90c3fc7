"""XSum's assets: questions per paper, answers per target, summaries (XSum and its two baselines),
and their scores with the report."""

from pathlib import Path

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core.citations import citation_links
from insight_assets.core.methods import xsum
from insight_assets.core.methods.xsum import load, stages
from insight_assets.core.methods.xsum.schemas import RETRIEVAL_SCOPES
from insight_assets.core.retrieval.rerank import RERANKERS
from insight_assets.core.retrieval.search import RETRIEVAL_MODES
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.ingestion.assets import parsed_documents
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.insightgen.themes import theme_graph
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    markdown_table,
    materialize_each,
    nothing_to_do,
    skipped_metadata,
)
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.partitions import asset_settings, existing_collection_folder
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

XSUM_GROUP = asset_settings("xsum")


# -- questions --------------------------------------------------------------------------------


class XSumQuestionsConfig(ModelCallConfig):
    """§3.2: k = 5 questions per paper from its title and abstract; temperature 0.3, top-p 0.95."""

    TASKS = (xsum.tasks.XSUM_QUESTIONS,)

    questions_per_paper: int = Field(default=xsum.QUESTIONS_PER_PAPER, ge=1, description="§3.2: k = 5.")
    abstract_fallback_tokens: int = Field(
        default=xsum.ABSTRACT_FALLBACK_TOKENS,
        ge=20,
        description="Body tokens read when a paper has no abstract.",
    )

    def stage(self, scope: CollectionScope) -> stages.Asked:
        return stages.questions(scope, self.questions_per_paper, self.abstract_fallback_tokens)


@dg.asset(kinds={"duckdb"}, deps=[parsed_documents], code_version="1", **pooled(LLM_POOL), **XSUM_GROUP)
def xsum_questions(
    context: dg.AssetExecutionContext, config: XSumQuestionsConfig, storage: StorageResource, llm: LLMResource
) -> dg.MaterializeResult:
    """Broad questions about each paper, from its title and abstract (or, without an abstract, the
    first ~300 tokens of its body, recorded in `abstract_source`)."""
    return materialize_each(
        context, storage, lambda collection: _questions(context, config, storage, llm, collection)
    )


def _questions(context, config, storage, llm, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection)
    asked = run_stage(config, scope)
    papers, outcome, client = asked.papers, asked.outcome, scope.client
    writer = client.writer_label(xsum.tasks.XSUM_QUESTIONS)
    by_doc = {paper.doc_id: paper for paper in papers}
    rows = [
        {
            "collection": collection,
            "doc_id": q.doc_id,
            "question_id": q.question_id,
            "position": q.position,
            "question": q.question,
            "abstract_source": by_doc[q.doc_id].abstract_source,
            "status": "ok",
            "writer": writer,
        }
        for q in outcome.questions
    ]
    rows += [
        {"collection": collection, "doc_id": doc_id, "status": "failed", "error": error, "writer": writer}
        for doc_id, error in outcome.failures.items()
    ]
    if not outcome.questions:
        raise nothing_to_do(
            collection, f"no paper got questions; failures: {list(outcome.failures.values())[:3]}"
        )
    storage.warehouse.replace_partition(collection, {"xsum_questions": pa.Table.from_pylist(rows)})
    fallbacks = sorted(p.title for p in papers if p.abstract_source != "abstract")
    return CollectionReport(
        metadata={
            "dagster/row_count": len(outcome.questions),
            "papers": len(papers),
            "papers_failed": len(outcome.failures),
            "abstract_fallbacks": dg.MetadataValue.json(fallbacks),
            "preview": dg.MetadataValue.md(
                markdown_table([{"question": q.question} for q in outcome.questions], ["question"])
            ),
            **llm_metadata(client),
        }
    )


# -- answers ----------------------------------------------------------------------------------


class XSumAnswersConfig(ModelCallConfig):
    """§3.4: top 100 chunks by cosine, reranked to 20 (late interaction), answers at temperature
    0.3, top-p 0.95; the public code's refine pass off. Targets of up to 10 papers."""

    TASKS = (xsum.tasks.XSUM_ANSWER, xsum.tasks.XSUM_REFINE)

    retrieval_scope: str = Field(default="paper", description=f"One of {', '.join(RETRIEVAL_SCOPES)}.")
    candidates: int = Field(default=xsum.CANDIDATES, description="§3.4: chunks retrieved per question.")
    top_n: int = Field(default=xsum.TOP_N, description="§3.4: chunks kept after the rerank.")
    retrieval_mode: str = Field(default="dense", description=f"One of {', '.join(RETRIEVAL_MODES)}.")
    reranker: str = Field(default="late-interaction", description=f"One of {', '.join(RERANKERS)}.")
    refine: bool = Field(default=False, description="The public code's second pass over the same context.")
    max_target_papers: int = Field(default=xsum.MAX_TARGET_PAPERS, description="Papers per target, at most.")
    max_targets: int | None = Field(
        default=None,
        ge=1,
        description="Targets summarised, at most, in the order they are found; unset: every target.",
    )
    min_cited_for_evaluation: int = Field(
        default=xsum.MIN_CITED_FOR_EVALUATION,
        description="Collection papers a related-work section must cite to make an evaluation target.",
    )

    def settings(self) -> xsum.XSumSettings:
        return config_settings(self, xsum.XSumSettings, "xsum_answers")

    def stage(self, scope: CollectionScope) -> stages.Answered:
        return stages.answers(scope, self.settings(), self.min_cited_for_evaluation, self.max_targets)


@dg.asset(
    kinds={"duckdb", "lancedb"},
    deps=[xsum_questions, chunk_embeddings, theme_graph, citations],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "summary_targets_readable",
            asset="xsum_answers",
            description="Every line of the collection's summaries.jsonl is usable.",
        )
    ],
    **XSUM_GROUP,
)
def xsum_answers(
    context: dg.AssetExecutionContext,
    config: XSumAnswersConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """The summary targets (theme clusters, the whole collection when small, the user's
    summaries.jsonl, evaluation targets from the citation graph), and every target question's
    answer from its 20 reranked chunks, or an explicit abstention."""
    settings = config.settings()
    return materialize_each(
        context,
        storage,
        lambda collection: _answers(context, config, settings, storage, llm, embedder, collection),
    )


def _answers(context, config, settings, storage, llm, embedder, collection) -> CollectionReport:
    folder = existing_collection_folder(storage.collections_root, collection)
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    answered = run_stage(config, scope)
    targets, problems, answers, client = answered.targets, answered.problems, answered.answers, scope.client
    writer = client.writer_label(xsum.tasks.XSUM_ANSWER)
    warehouse = scope.warehouse
    warehouse.replace_partition(collection, _answer_tables(collection, targets, problems, answers, writer))
    skipped = {}
    if not any(t.is_evaluation for t in targets):
        links = citation_links(warehouse, collection)
        skipped["evaluation targets"] = load.why_no_evaluation_targets(links, config.min_cited_for_evaluation)
    return CollectionReport(
        metadata={
            **_answers_metadata(targets, problems, answers, settings),
            **skipped_metadata(skipped),
            **llm_metadata(client),
        },
        checks=[
            dg.AssetCheckResult(
                check_name="summary_targets_readable",
                passed=not problems,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"bad_lines": len(problems), "file": str(Path(folder) / load.USER_TARGETS_FILE)},
            )
        ],
    )


def _answers_metadata(targets, problems, answers, settings: xsum.XSumSettings) -> dict:
    """Targets per kind and listed, answers per status, the retrieval used, the summaries.jsonl problems."""
    counts = {
        status: sum(a.status == status for a in answers)
        for status in (xsum.ANSWERED, xsum.ABSTAINED, xsum.FAILED)
    }
    return {
        "dagster/row_count": len(answers),
        "targets": dg.MetadataValue.json(
            {kind: sum(t.kind == kind for t in targets) for kind in xsum.schemas.TARGET_KINDS}
        ),
        "answers": dg.MetadataValue.json(counts),
        "retrieval": f"{settings.retrieval_mode} top {settings.candidates} -> {settings.reranker} top {settings.top_n}, scope {settings.retrieval_scope}",
        "target_list": dg.MetadataValue.md(
            markdown_table(
                [{"kind": t.kind, "topic": t.topic, "papers": len(t.doc_ids)} for t in targets],
                ["kind", "topic", "papers"],
            )
        ),
        "summary_target_problems": dg.MetadataValue.md(
            markdown_table([p.__dict__ for p in problems], ["line", "message"], empty="None.")
        ),
    }


def _answer_tables(collection, targets, problems, answers, writer) -> dict[str, pa.Table]:
    return {
        "xsum_targets": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "target_id": t.target_id,
                    "kind": t.kind,
                    "topic": t.topic,
                    "doc_ids": list(t.doc_ids),
                    "reference": t.reference or None,
                    "reference_doc_id": t.reference_doc_id,
                    "reference_section": t.reference_section or None,
                }
                for t in targets
            ]
        ),
        "xsum_target_problems": pa.Table.from_pylist(
            [{"collection": collection, "line": p.line, "message": p.message} for p in problems],
            schema=pa.schema([("collection", pa.string()), ("line", pa.int32()), ("message", pa.string())]),
        ),
        "xsum_answers": pa.Table.from_pylist(
            [
                {
                    "collection": collection,
                    "target_id": a.target_id,
                    "question_id": a.question_id,
                    "doc_id": a.doc_id,
                    "status": a.status,
                    "answer": a.text or None,
                    "cited_chunk_ids": list(a.cited),
                    "passage_chunk_ids": list(a.passages),
                    "scope_doc_ids": list(a.scope_doc_ids),
                    "error": a.error,
                    "writer": writer,
                }
                for a in answers
            ]
        ),
    }
