"""ConTReGen's scores stage: each answer scored against the collection's references."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.citations.paragraphs import collection_paragraphs
from insight_assets.core.curation.answers import reference_answers
from insight_assets.core.curation.stages import ANSWERS as CURATED_ANSWERS
from insight_assets.core.curation.stages import answers_of
from insight_assets.core.ingestion.ingest import paper_count
from insight_assets.core.methods.contregen import PROFILE, records, references, report, scores, tasks
from insight_assets.core.methods.contregen.schemas import METHODS
from insight_assets.core.methods.contregen.scores import ScoredAnswer, score_answers
from insight_assets.core.methods.contregen.settings import ScoresSettings
from insight_assets.core.methods.contregen.stages.answers import ANSWERS
from insight_assets.core.methods.contregen.stages.trees import TREES
from insight_assets.core.methods.contregen.tasks import JUDGE_TASKS
from insight_assets.core.page.headlines import Headline, headline_table, played_offline
from insight_assets.core.retrieval.citing import Source, load_sources, render_citations
from insight_assets.core.runtime.stage import CollectionScope, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import (
    StageOutput,
    judge_note,
    preview,
    standin_note,
    write_report,
)
from insight_assets.core.startup.lazy import pa

if TYPE_CHECKING:
    from insight_assets.core.methods.contregen.schemas import Answer, Tree


SCORES = "contregen_scores"


@dataclass(frozen=True)
class Scored:
    trees: list[Tree]
    answers: list[Answer]
    sources: dict[str, Source]
    scored: list[ScoredAnswer]


def score(scope: CollectionScope, settings: ScoresSettings) -> Scored:
    """Each answer scored against the collection's reference answers, related-work paragraphs and
    passage themes."""
    warehouse, collection = scope.warehouse, scope.collection
    grown = scope.upstream(TREES)
    written = scope.upstream(ANSWERS)
    if not written or not grown:
        raise NothingToDo("no answers to score: `contregen_answers` stored none.")
    sources = load_sources(warehouse, collection, PROFILE)
    scored = score_answers(
        scope.client,
        [tree.question for tree in grown],
        written,
        {chunk_id: source.doc_id for chunk_id, source in sources.items()},
        reference_answers(answers_of(scope)),
        references.reference_texts(collection_paragraphs(warehouse, collection)),
        references.passage_themes(warehouse, collection),
    )
    return Scored(grown, written, sources, scored)


def output(scope: CollectionScope, settings: ScoresSettings, result: Scored) -> StageOutput:
    grown, found, sources, scored = result.trees, result.answers, result.sources, result.scored
    collection = scope.collection
    questions = [tree.question for tree in grown]
    collection_size = paper_count(scope.warehouse, collection)
    judge = scope.client.writer_label(tasks.CONTREGEN_JUDGE_ANSWER)
    rows = scores.method_table(scored, questions, collection_size)
    answer_writers = scope.warehouse.writers("contregen_answers", scope.collection)
    notes = _score_notes(scope, judge, answer_writers, collection_size)
    example = max(grown, key=lambda tree: len(tree.nodes))
    files = write_report(
        scope,
        "contregen_report.md",
        report.render_report(collection, rows, example, _examples(example, found, sources), notes),
        report.CHART_FILE,
        report.render_chart(rows),
        "recall per method",
        Headline(
            tables=(
                headline_table("Retrieval and answers", rows, report.headline_columns(played_offline(judge))),
            ),
            notes=tuple(notes),
            writer=answer_writers,
            judge=judge,
        ),
    )
    return StageOutput(
        tables={"contregen_scores": pa.Table.from_pylist(records.score_rows(collection, scored, judge))},
        metadata={
            "dagster/row_count": len(scored),
            "scores": preview(rows, report.TABLE_COLUMNS),
            "judge": judge,
            **files,
        },
    )


def _score_notes(scope, judge: str, answer_writers: str, collection_size: int) -> list[str]:
    roles = {
        "planner": scope.warehouse.writers("contregen_trees", scope.collection),
        "writer": answer_writers,
        "judge": judge,
    }
    return [
        report.measured_line(played_offline(judge)),
        judge_note(
            judge,
            answer_writers,
            "coverage and relevance here are lexical stand-ins, not a model's judgement",
        ),
        *filter(None, [standin_note(roles)]),
        *report.method_notes(collection_size),
    ]


def _examples(tree, found, sources) -> list[dict]:
    """Every method's answer to ``tree``'s question, its citations rendered."""
    by_method = {a.method: a for a in found if a.question_id == tree.question.question_id and a.text}
    return [
        {"method": method, "text": render_citations(by_method[method].text, sources)}
        for method in METHODS
        if method in by_method
    ]


SCORES_STAGE = Stage(
    SCORES,
    "contregen",
    "Retrieval recall of each question's gold documents (its combination) for ConTReGen (the "
    "whole tree) and the baselines, with chance; facet coverage of the gold papers' themes; the "
    "judge's coverage and relevance; for reference questions ROUGE-L and NLI entailment and "
    "contradiction against the paragraph; model calls, tokens and seconds per question. Table, "
    "chart and data/reports/<collection>/contregen_report.md.",
    ScoresSettings,
    reads=(ANSWERS.name, CURATED_ANSWERS.name, "theme_graph"),
    run=score,
    output=output,
    tasks=JUDGE_TASKS,
    judges=ScoresSettings.panel,
)
