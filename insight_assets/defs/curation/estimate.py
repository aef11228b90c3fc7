"""Curation's dry-run steps: compression, questions and answers, on the offline answers of each."""

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core import curation, ingest
from insight_assets.defs.curation.assets import (
    CurationAnswersConfig,
    CurationCompressionConfig,
    CurationQuestionsConfig,
)
from insight_assets.defs.partitions import collection_folder


def _compress(config: CurationCompressionConfig, run: DryRun) -> None:
    papers = curation.papers_to_compress(ingest.load_documents(run.storage.warehouse, run.collection))
    run.outputs["compressed_documents"] = curation.compress_documents(
        run.client, papers, config.settings()
    ).compressed


def _ask(config: CurationQuestionsConfig, run: DryRun) -> None:
    compressed = run.output("compressed_documents", [])
    user = curation.load_user_questions(
        collection_folder(run.storage.collections_root, run.collection) / curation.USER_QUESTIONS_FILE,
        known_document_ids={document.document_id for document in compressed},
    )
    generated = curation.generate_questions(run.client, compressed, config.settings(), run.embed)
    run.outputs["generated_questions"] = curation.merge_user_questions(user.questions, generated.questions)


def _answer(config: CurationAnswersConfig, run: DryRun) -> None:
    answered = curation.generate_answers(
        run.client,
        run.output("generated_questions", []),
        run.output("compressed_documents", []),
        config.settings(),
        run.embed,
    )
    run.outputs["generated_answers"] = answered.answers


ESTIMATE_STEPS = (
    EstimateStep("compressed_documents", CurationCompressionConfig, _compress),
    EstimateStep("generated_questions", CurationQuestionsConfig, _ask),
    EstimateStep("generated_answers", CurationAnswersConfig, _answer),
)
