"""XSum's dry-run steps: questions; answers, summaries and scores once the collection has passage vectors."""

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core.methods import xsum
from insight_assets.core.methods.xsum import load as xsum_load
from insight_assets.core.methods.xsum import scores as xsum_scores
from insight_assets.core.retrieval.citing import load_sources
from insight_assets.core.retrieval.rerank import LateInteraction
from insight_assets.defs.partitions import collection_folder
from insight_assets.defs.xsum.assets import XSumAnswersConfig, XSumQuestionsConfig
from insight_assets.defs.xsum.summaries import XSumScoresConfig, XSumSummariesConfig


def _questions(config: XSumQuestionsConfig, run: DryRun) -> None:
    papers = xsum_load.load_papers(run.storage.warehouse, run.collection, config.abstract_fallback_tokens)
    asked = [paper for paper in papers if paper.abstract]
    run.outputs["xsum_questions"] = xsum.generate_questions(
        run.client, asked, config.questions_per_paper
    ).questions


def _answers(config: XSumAnswersConfig, run: DryRun) -> None:
    """Priced once the collection has chunk vectors (its targets come from the build)."""
    retriever = run.open_retriever(xsum.PROFILE)
    if retriever is None:
        return
    targets, _ = xsum_load.build_targets(
        run.storage.warehouse,
        run.collection,
        collection_folder(run.storage.collections_root, run.collection),
        retriever.documents,
        max_papers=config.max_target_papers,
        min_cited=config.min_cited_for_evaluation,
        max_targets=config.max_targets,
    )
    answers = xsum.answer_target_questions(
        run.client,
        retriever,
        targets,
        run.output("xsum_questions", []),
        config.settings(),
        LateInteraction(),
    )
    run.outputs["xsum_answers"] = (retriever, targets, answers)


def _summaries(config: XSumSummariesConfig, run: DryRun) -> None:
    answered = run.output("xsum_answers")
    if answered is None or not answered[1]:
        return
    retriever, targets, answers = answered
    warehouse = run.storage.warehouse
    sources = load_sources(warehouse, run.collection, xsum.PROFILE)
    asked = {q.question_id: q.question for q in run.output("xsum_questions", [])}
    papers = {paper.doc_id: paper for paper in xsum_load.load_papers(warehouse, run.collection)}
    records = xsum.summarize_targets(
        run.client,
        targets,
        answers,
        asked,
        sources,
        baselines=config.baseline_settings(),
        retriever=retriever,
        papers=papers,
    ).records
    run.outputs["xsum_summaries"] = (targets, [record for record in records if record.text])


def _scores(config: XSumScoresConfig, run: DryRun) -> None:
    targets, summaries = run.output("xsum_summaries", ([], []))
    if not summaries:
        return
    warehouse = run.storage.warehouse
    sources = load_sources(warehouse, run.collection, xsum.PROFILE)
    abstracts = {p.doc_id: p.abstract for p in xsum_load.load_papers(warehouse, run.collection)}
    chunk_docs = {chunk_id: source.doc_id for chunk_id, source in sources.items()}
    xsum_scores.score_summaries(run.client, targets, summaries, chunk_docs, run.embed, abstracts)


ESTIMATE_STEPS = (
    EstimateStep("xsum_questions", XSumQuestionsConfig, _questions),
    EstimateStep("xsum_answers", XSumAnswersConfig, _answers),
    EstimateStep("xsum_summaries", XSumSummariesConfig, _summaries),
    EstimateStep("xsum_scores", XSumScoresConfig, _scores),
)
