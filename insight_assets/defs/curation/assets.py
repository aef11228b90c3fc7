"""SCOpE-QA curation assets: compressed documents -> generated questions -> generated answers.

InsightGen §3 and Appendix A, C. Each asset reads its inputs from the warehouse, calls one core
function (``insight_assets.core.curation``) through the configured model, replaces its partition's
rows and reports counts, previews and the model calls' tokens and cost.
"""

from collections import Counter
from pathlib import Path

import dagster as dg
import numpy as np
from pydantic import Field

from insight_assets.core import curation
from insight_assets.core.curation import stages
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.ingestion.assets import parsed_documents
from insight_assets.defs.metadata import CollectionReport, config_settings, markdown_table, materialize_each
from insight_assets.defs.model_calls import (
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
    stop_if_over_budget,
)
from insight_assets.defs.partitions import asset_settings, existing_collection_folder
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

MODEL_CALLING = {**asset_settings("curation"), **pooled(LLM_POOL)}


class CurationCompressionConfig(ModelCallConfig):
    TASKS = (curation.COMPRESS_DOCUMENT,)

    max_input_tokens: int = Field(
        default=curation.CompressionSettings.max_input_tokens,
        description="Tokens of each paper's body the compression reads (the rest is cut).",
    )
    max_items_per_field: int = Field(
        default=curation.CompressionSettings.max_items_per_field,
        description="Most topics / contributions / conclusions / findings kept per paper.",
    )

    def settings(self) -> curation.CompressionSettings:
        return config_settings(self, curation.CompressionSettings, "compressed_documents")

    def stage(self, scope: CollectionScope) -> curation.CompressionOutcome:
        return stages.compress(scope, self.settings())


@dg.asset(
    kinds={"duckdb"},
    deps=[parsed_documents],
    code_version="1",
    check_specs=[dg.AssetCheckSpec("every_document_compressed", asset="compressed_documents")],
    **MODEL_CALLING,
)
def compressed_documents(
    context: dg.AssetExecutionContext,
    config: CurationCompressionConfig,
    storage: StorageResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    """Each paper's main topics, contributions, conclusions and key findings, without references,
    formatting or boilerplate: compact enough that several papers fit in one prompt."""
    return materialize_each(
        context, storage, lambda collection: _compressed_documents(context, config, storage, llm, collection)
    )


def _compressed_documents(context, config, storage, llm, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection)
    outcome, client = run_stage(config, scope), scope.client
    stop_if_over_budget(client, collection, outcome.budget_error)
    storage.warehouse.replace_partition(
        collection,
        {
            "compressed_documents": curation.compressed_table(
                collection, outcome, client.writer_label(curation.COMPRESS_DOCUMENT)
            )
        },
    )
    rows = [
        {
            "title": doc.title[:80],
            "tokens": doc.tokens,
            "source_tokens": doc.source_tokens,
            "topics": "; ".join(doc.main_topics),
        }
        for doc in outcome.compressed
    ]
    failures = [{"document": failure.item, "error": failure.error} for failure in outcome.failures]
    source_tokens = sum(doc.source_tokens for doc in outcome.compressed)
    tokens = sum(doc.tokens for doc in outcome.compressed)
    return CollectionReport(
        metadata={
            "dagster/row_count": len(outcome.compressed),
            "documents_failed": len(outcome.failures),
            "compressed_tokens": tokens,
            "source_tokens": source_tokens,
            "compression_ratio": round(tokens / source_tokens, 4) if source_tokens else 0.0,
            "preview": dg.MetadataValue.md(
                markdown_table(rows, ["title", "tokens", "source_tokens", "topics"], empty="No documents.")
            ),
            "failures": dg.MetadataValue.md(markdown_table(failures, ["document", "error"], empty="None.")),
            **llm_metadata(client),
        },
        checks=[
            dg.AssetCheckResult(
                check_name="every_document_compressed",
                passed=not outcome.failures,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"failed": len(outcome.failures)},
            )
        ],
    )


class CurationQuestionsConfig(ModelCallConfig):
    """InsightGen §3 / Appendix A, C: the defaults are the paper's."""

    TASKS = (curation.GENERATE_QUESTIONS, curation.REFINE_QUESTIONS)

    combination_size: int | None = Field(
        default=None,
        description="Documents per combination; unset: 5 for collections of at most 15 documents, else 10.",
    )
    num_combinations: int = Field(default=50, description="Document combinations sampled per collection.")
    candidates_per_combination: int = Field(
        default=10, description="Candidate questions asked per combination."
    )
    target_count: int = Field(
        default=200, description="Questions kept per collection (fewer for small ones)."
    )
    min_words: int = Field(default=15, description="Shortest question, in words.")
    max_words: int = Field(default=35, description="Longest question, in words.")
    duplicate_threshold: float = Field(
        default=0.9, description="Cosine at which a question is a near-duplicate."
    )
    seed: int = Field(default=42, description="Seed of the combination sampling.")
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")
    max_tokens: int | None = Field(default=2000, description="Appendix C: max_tokens 2000.")

    def settings(self) -> curation.QuestionSettings:
        return config_settings(self, curation.QuestionSettings, "generated_questions")

    def stage(self, scope: CollectionScope) -> stages.Asked:
        return stages.ask(scope, self.settings())


@dg.asset(
    kinds={"duckdb"},
    deps=[compressed_documents],
    code_version="1",
    check_specs=[dg.AssetCheckSpec("user_questions_readable", asset="generated_questions")],
    **MODEL_CALLING,
)
def generated_questions(
    context: dg.AssetExecutionContext,
    config: CurationQuestionsConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Open-ended, conceptual questions spanning several papers, plus the collection's own
    `questions.jsonl`. Each question keeps the ids of the documents it was asked about."""
    return materialize_each(
        context,
        storage,
        lambda collection: _generated_questions(context, config, storage, llm, embedder, collection),
    )


def _generated_questions(context, config, storage, llm, embedder, collection) -> CollectionReport:
    folder = existing_collection_folder(storage.collections_root, collection)
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    asked, client = run_stage(config, scope), scope.client
    user, outcome, questions = asked.user, asked.outcome, asked.questions
    stop_if_over_budget(client, collection, outcome.budget_error)
    storage.warehouse.replace_partition(
        collection, curation.question_tables(collection, outcome, questions, user.problems)
    )
    kept = [candidate for candidate in outcome.candidates if candidate.kept]
    # "near-duplicate of q-…" counts as one reason
    reasons = Counter(c.reason.split(" of ")[0] for c in outcome.candidates if not c.kept)
    problems = [{"line": problem.line, "message": problem.message} for problem in user.problems]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(questions),
            "generated_questions": len(outcome.questions),
            "user_questions": len(user.questions),
            "target_questions": outcome.target,
            "combinations": len(outcome.combinations),
            "combinations_failed": len(outcome.failures),
            "candidates": len(outcome.candidates),
            "candidates_kept": len(kept),
            "dropped_by_reason": dg.MetadataValue.json(dict(reasons)),
            "preview": dg.MetadataValue.md(
                markdown_table(
                    [
                        {"source": q.source, "question": q.question, "documents": len(q.document_ids)}
                        for q in questions
                    ],
                    ["source", "question", "documents"],
                    empty="No questions.",
                )
            ),
            "user_question_problems": dg.MetadataValue.md(
                markdown_table(problems, ["line", "message"], empty="None.")
            ),
            **llm_metadata(client),
        },
        checks=[_user_questions_readable(user.problems, Path(folder) / curation.USER_QUESTIONS_FILE)],
    )


def _user_questions_readable(problems: list, file: Path) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name="user_questions_readable",
        passed=not problems,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"bad_lines": len(problems), "file": str(file)},
    )


class CurationAnswersConfig(ModelCallConfig):
    TASKS = (curation.ANSWER_QUESTION,)

    duplicate_threshold: float = Field(
        default=0.9, description="§3: an answer this similar (cosine) to a kept answer is removed."
    )
    max_documents_for_user_questions: int = Field(
        default=5, description="Most similar documents given to a user question that names none."
    )
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")

    def settings(self) -> curation.AnswerSettings:
        return config_settings(self, curation.AnswerSettings, "generated_answers")

    def stage(self, scope: CollectionScope) -> curation.AnswerOutcome:
        return stages.answer(scope, self.settings())


@dg.asset(
    kinds={"duckdb"},
    deps=[generated_questions],
    code_version="1",
    check_specs=[
        dg.AssetCheckSpec(
            "citations_name_combination_documents",
            asset="generated_answers",
            description="Every kept answer, as stored, cites at least one document, and only documents "
            "it was written from.",
        ),
        dg.AssetCheckSpec("every_question_answered", asset="generated_answers"),
    ],
    **MODEL_CALLING,
)
def generated_answers(
    context: dg.AssetExecutionContext,
    config: CurationAnswersConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """An answer per question from its combination's compressed documents, citing them by exact
    title; answers nearly identical (cosine >= 0.9) to a kept answer are removed."""
    return materialize_each(
        context,
        storage,
        lambda collection: _generated_answers(context, config, storage, llm, embedder, collection),
    )


def _generated_answers(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    outcome, client = run_stage(config, scope), scope.client
    stop_if_over_budget(client, collection, outcome.budget_error)
    storage.warehouse.replace_partition(
        collection, {"generated_answers": curation.answers_table(collection, outcome.answers)}
    )
    by_status: dict[str, int] = {}
    for answer in outcome.answers:
        by_status[answer.status] = by_status.get(answer.status, 0) + 1
    kept = [answer for answer in outcome.answers if answer.status == "kept"]
    stored = curation.load_answers(storage.warehouse, collection)
    invalid = [answer.question_id for answer in stored if not curation.citations_valid(answer)]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(kept),
            "answers_by_status": dg.MetadataValue.json(by_status),
            "mean_citations": round(float(np.mean([len(a.cited_document_ids) for a in kept])), 2)
            if kept
            else 0.0,
            "preview": dg.MetadataValue.md(
                markdown_table(
                    [
                        {"question": a.question, "answer": a.answer[:300], "cited": len(a.cited_document_ids)}
                        for a in kept
                    ],
                    ["question", "answer", "cited"],
                    empty="No answers.",
                )
            ),
            **llm_metadata(client),
        },
        checks=[
            dg.AssetCheckResult(
                check_name="citations_name_combination_documents",
                passed=not invalid,
                metadata={"answers_checked": len(kept), "invalid": ", ".join(invalid) or "none"},
            ),
            _every_question_answered(outcome.answers),
        ],
    )


def _every_question_answered(answers) -> dg.AssetCheckResult:
    failed = [{"question": a.question, "error": a.error} for a in answers if a.status == "failed"]
    return dg.AssetCheckResult(
        check_name="every_question_answered",
        passed=not failed,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "failed": dg.MetadataValue.md(markdown_table(failed, ["question", "error"], empty="None."))
        },
    )
