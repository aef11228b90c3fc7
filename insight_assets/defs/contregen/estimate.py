"""ConTReGen's dry-run steps: trees and answers (once the collection has chunk vectors), scores."""

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core import curation
from insight_assets.core.citations.paragraphs import collection_paragraphs
from insight_assets.core.methods import contregen
from insight_assets.core.methods.contregen import scores as contregen_scores
from insight_assets.defs.contregen.assets import (
    ConTReGenAnswersConfig,
    ConTReGenScoresConfig,
    ConTReGenTreesConfig,
)


def _trees(config: ConTReGenTreesConfig, run: DryRun) -> None:
    """Priced once the collection has chunk vectors (like `insights`)."""
    retriever = run.open_retriever(contregen.PROFILE)
    if retriever is None:
        return
    asked = contregen.references.questions_to_explore(
        run.output("generated_questions", []),
        config.questions,
        config.max_questions,
        collection_paragraphs(run.storage.warehouse, run.collection),
        config.reference_questions,
    )
    trees, sources = contregen.grow_trees(run.client, retriever, asked, config.settings())
    run.outputs["contregen_trees"] = (retriever, trees, sources)


def _answers(config: ConTReGenAnswersConfig, run: DryRun) -> None:
    grown = run.output("contregen_trees")
    if grown is None or not grown[1]:
        return
    retriever, trees, sources = grown
    run.outputs["contregen_answers"] = contregen.write_answers(
        run.client, retriever, trees, sources, config.settings(), config.baselines
    )


def _scores(config: ConTReGenScoresConfig, run: DryRun) -> None:
    references = curation.reference_answers(run.output("generated_answers", []))
    _, trees, _ = run.output("contregen_trees", (None, [], {}))
    questions = [tree.question for tree in trees]
    paragraphs = contregen.references.reference_texts(
        collection_paragraphs(run.storage.warehouse, run.collection)
    )
    contregen_scores.score_answers(
        run.client, questions, run.output("contregen_answers", []), {}, references, paragraphs
    )


ESTIMATE_STEPS = (
    EstimateStep("contregen_trees", ConTReGenTreesConfig, _trees),
    EstimateStep("contregen_answers", ConTReGenAnswersConfig, _answers),
    EstimateStep("contregen_scores", ConTReGenScoresConfig, _scores),
)
