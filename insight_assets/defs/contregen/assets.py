"""ConTReGen's assets: the trees (top-down planning, retrieval and verification), the answers
(bottom-up synthesis, and the baselines on the same questions), and their scores with the report."""

import dagster as dg
import pyarrow as pa
from pydantic import Field

from insight_assets.core import curation
from insight_assets.core.headlines import Headline, headline_table, played_offline
from insight_assets.core.ingest import paper_count
from insight_assets.core.methods import contregen
from insight_assets.core.methods.contregen import records, report, scores, stages
from insight_assets.core.methods.contregen.schemas import KEPT, PRUNED_NO_PASSAGE, PRUNED_NOT_NEEDED, ROOT
from insight_assets.core.methods.contregen.tasks import JUDGE_TASKS, TREE_TASKS, WRITE_TASKS
from insight_assets.core.retrieval.citing import citation_problems, render_citations
from insight_assets.core.retrieval.search import RETRIEVAL_MODES
from insight_assets.core.stage import CollectionScope
from insight_assets.defs.citations.assets import citations
from insight_assets.defs.curation.assets import generated_answers, generated_questions
from insight_assets.defs.ingestion.embeddings import chunk_embeddings
from insight_assets.defs.insightgen.themes import theme_graph
from insight_assets.defs.metadata import (
    CollectionReport,
    config_settings,
    judge_note,
    markdown_table,
    materialize_each,
    nothing_to_do,
    standin_note,
    write_report,
    writers,
)
from insight_assets.defs.model_calls import (
    JudgeCallConfig,
    ModelCallConfig,
    collection_scope,
    llm_metadata,
    run_stage,
)
from insight_assets.defs.partitions import asset_settings
from insight_assets.defs.pools import LLM_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

CONTREGEN_GROUP = asset_settings("contregen")
QUESTION_SOURCES = ("all", curation.GENERATED, curation.USER)


class ConTReGenRetrievalConfig(ModelCallConfig):
    """What the tree and the baselines retrieve with; keep both assets' values the same."""

    top_k: int = Field(default=contregen.schemas.TOP_K, description="§4.3: passages per retrieval (k = 5).")
    retrieval_mode: str = Field(default="dense", description=f"One of {', '.join(RETRIEVAL_MODES)}.")


# -- trees ----------------------------------------------------------------------------------------


class ConTReGenTreesConfig(ConTReGenRetrievalConfig):
    """§2.1 with §4.3's and Appendix A.1's defaults: depth 2, 5 sub-questions per plan; planning
    and verification at temperature 0. The thresholds are the offline verifier's."""

    TASKS = TREE_TASKS

    questions: str = Field(default="all", description=f"Which questions: {', '.join(QUESTION_SOURCES)}.")
    max_questions: int | None = Field(
        default=20, ge=1, description="Only the first N questions (cost control); null for all."
    )
    max_depth: int = Field(default=contregen.schemas.MAX_DEPTH, ge=0, description="§4.3: depth 2.")
    max_sub_questions: int = Field(
        default=contregen.schemas.MAX_SUB_QUESTIONS, ge=1, description="Appendix A.1: 5 per plan."
    )
    need_similarity: float = Field(
        default=contregen.schemas.NEED_SIMILARITY,
        description="Offline: a sub-question's least cosine with the question to be needed.",
    )
    repeat_similarity: float = Field(
        default=contregen.schemas.REPEAT_SIMILARITY,
        description="Offline: the cosine with an explored question at which a sub-question repeats it.",
    )
    relevance_ratio: float = Field(
        default=contregen.schemas.RELEVANCE_RATIO,
        description="Offline: a passage is relevant at this share of the question's best passage's cosine.",
    )
    reference_questions: int = Field(
        default=3, ge=0, description="Also ask this many reference paragraphs' topics, scored against them."
    )

    def settings(self) -> contregen.ConTReGenSettings:
        if self.questions not in QUESTION_SOURCES:
            raise dg.Failure(
                description=f"Invalid contregen_trees config: questions must be one of {', '.join(QUESTION_SOURCES)}"
            )
        return config_settings(self, contregen.ConTReGenSettings, "contregen_trees")

    def stage(self, scope: CollectionScope) -> list[contregen.schemas.Tree]:
        return stages.trees(
            scope, self.settings(), self.questions, self.max_questions, self.reference_questions
        )


@dg.asset(
    kinds={"duckdb", "lancedb"},
    deps=[generated_questions, chunk_embeddings, citations],
    code_version="1",
    **pooled(LLM_POOL),
    **CONTREGEN_GROUP,
)
def contregen_trees(
    context: dg.AssetExecutionContext,
    config: ConTReGenTreesConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Each question's tree (one row per node): sub-questions planned from the passages, kept or
    pruned by the two-step verification (with the verdicts and reasons), the rewritten search
    queries and the passages each retrieved, with their scores and relevance verdicts."""
    config.settings()  # an invalid config fails before any collection is built
    return materialize_each(
        context, storage, lambda collection: _trees(context, config, storage, llm, embedder, collection)
    )


def _trees(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    trees, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    writer = client.writer_label(contregen.tasks.CONTREGEN_PLAN)
    warehouse.replace_partition(collection, {"contregen_trees": records.tree_rows(collection, trees, writer)})
    nodes = [node for tree in trees for node in tree.nodes.values()]
    counts = {
        status: sum(node.status == status for node in nodes)
        for status in (ROOT, KEPT, PRUNED_NOT_NEEDED, PRUNED_NO_PASSAGE, contregen.schemas.FAILED)
    }
    example = max(trees, key=lambda tree: len(tree.nodes))
    per_question = [_tree_row(tree) for tree in trees]
    failed = [n for n in nodes if n.error]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(nodes),
            "questions": len(trees),
            "nodes": dg.MetadataValue.json(counts),
            "pruned_sub_questions": counts[PRUNED_NOT_NEEDED] + counts[PRUNED_NO_PASSAGE],
            "mean_calls_per_question": round(sum(t.usage.calls for t in trees) / len(trees), 2),
            "mean_tokens_per_question": round(
                sum(t.usage.input_tokens + t.usage.output_tokens for t in trees) / len(trees), 1
            ),
            "per_question": dg.MetadataValue.md(markdown_table(per_question, list(per_question[0]))),
            "example_tree": dg.MetadataValue.md(
                f"**{example.question.question}**\n\n{report.tree_mermaid(example)}"
            ),
            "node_failures": dg.MetadataValue.md(
                markdown_table(
                    [{"node": f"{n.question_id[:10]}/{n.node_id}", "error": n.error} for n in failed[:20]],
                    ["node", "error"],
                    empty="None.",
                )
            ),
            "writer": writer,
            **llm_metadata(client),
        }
    )


def _tree_row(tree) -> dict:
    """One tree's size, pruning, passages and cost."""
    return {
        "question": tree.question.question,
        "nodes": len(tree.nodes),
        "kept": len(tree.kept_nodes()) - 1,
        "pruned": sum(not n.kept for n in tree.nodes.values()),
        "passages": len(tree.retrieved()),
        "calls": tree.usage.calls,
        "input_tokens": tree.usage.input_tokens,
        "output_tokens": tree.usage.output_tokens,
    }


# -- answers --------------------------------------------------------------------------------------


class ConTReGenAnswersConfig(ConTReGenRetrievalConfig):
    """§2.2: synthesis at temperature 0.3, a ~300-word root answer, prompts cut to
    ``context_tokens``; the baselines RetGen, budget-matched RetGen and IterRetGen (5 iterations)."""

    TASKS = WRITE_TASKS

    baselines: bool = Field(default=True, description="Also answer with the three baselines.")
    iterations: int = Field(default=contregen.schemas.ITERATIONS, ge=1, description="IterRetGen's rounds.")
    answer_words: int = Field(
        default=contregen.schemas.ANSWER_WORDS, ge=50, description="The answer's length."
    )
    context_tokens: int = Field(
        default=contregen.schemas.CONTEXT_TOKENS,
        description="Each synthesis prompt's budget for passages and summaries, in tokens.",
    )

    def settings(self) -> contregen.ConTReGenSettings:
        return config_settings(self, contregen.ConTReGenSettings, "contregen_answers")

    def stage(self, scope: CollectionScope) -> stages.Written:
        return stages.answers(scope, self.settings(), self.baselines)


@dg.asset(
    kinds={"duckdb"},
    deps=[contregen_trees],
    code_version="1",
    **pooled(LLM_POOL),
    check_specs=[
        dg.AssetCheckSpec(
            "answers_cite_retrieved_passages",
            asset="contregen_answers",
            description="Every citation of every answer is a passage its writer was given; an invented alias, or a writer rejected for citing sources it was not given, fails it.",
        ),
        dg.AssetCheckSpec(
            "answers_not_truncated",
            asset="contregen_answers",
            description="No answer was cut off at max_tokens (after one retry with twice the room).",
        ),
    ],
    **CONTREGEN_GROUP,
)
def contregen_answers(
    context: dg.AssetExecutionContext,
    config: ConTReGenAnswersConfig,
    storage: StorageResource,
    llm: LLMResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Each tree synthesized bottom-up into a cited long-form answer (citations rendered as title
    and pages), and the baselines' answers to the same questions, with the passages each method
    retrieved and its model calls and tokens."""
    config.settings()  # an invalid config fails before any collection is built
    return materialize_each(
        context, storage, lambda collection: _answers(context, config, storage, llm, embedder, collection)
    )


def _answers(context, config, storage, llm, embedder, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, embedder)
    written_answers, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    trees, sources, answers = written_answers.trees, written_answers.sources, written_answers.answers
    writer = client.writer_label(contregen.tasks.CONTREGEN_ANSWER)
    warehouse.replace_partition(
        collection,
        {
            "contregen_answers": pa.Table.from_pylist(
                records.answer_rows(collection, answers, sources, writer)
            ),
            "contregen_node_summaries": pa.Table.from_pylist(records.node_summary_rows(collection, trees)),
        },
    )
    written = [a for a in answers if a.text]
    if not written:
        raise nothing_to_do(
            collection, f"no answer was written: {answers[0].error if answers else 'no trees'}"
        )
    statuses = {
        method: {
            s: sum(a.method == method and a.status == s for a in answers) for s in {a.status for a in answers}
        }
        for method in dict.fromkeys(a.method for a in answers)
    }
    example = next((a for a in written if a.method == contregen.CONTREGEN), written[0])
    questions = {tree.question.question_id: tree.question.question for tree in trees}
    failures = [
        {"method": a.method, "question": questions[a.question_id], "error": a.error}
        for a in answers
        if a.error
    ]
    return CollectionReport(
        metadata={
            "dagster/row_count": len(written),
            "answers": dg.MetadataValue.json(statuses),
            "example": dg.MetadataValue.md(
                f"**{questions[example.question_id]}** ({example.method})\n\n"
                + render_citations(example.text, sources)
            ),
            "failures": dg.MetadataValue.md(
                markdown_table(failures, ["method", "question", "error"], empty="None.")
            ),
            "writer": writer,
            **llm_metadata(client),
        },
        checks=[
            _cite_retrieved_passages(answers, len(written)),
            _not_truncated(answers),
        ],
    )


def _cite_retrieved_passages(answers, written: int) -> dg.AssetCheckResult:
    problems = [
        f"{a.method} answer to {a.question_id[:10]} {problem}"
        for a in answers
        for problem in citation_problems(a.text, a.used, a.error)
    ]
    return dg.AssetCheckResult(
        check_name="answers_cite_retrieved_passages",
        passed=not problems,
        metadata={"answers_checked": written, "problems": "; ".join(problems[:10]) or "none"},
    )


def _not_truncated(answers) -> dg.AssetCheckResult:
    truncated = [a for a in answers if a.status == contregen.schemas.TRUNCATED]
    return dg.AssetCheckResult(
        check_name="answers_not_truncated",
        passed=not truncated,
        metadata={"truncated": "; ".join(f"{a.method}: {a.question_id[:10]}" for a in truncated) or "none"},
    )


# -- scores and report ----------------------------------------------------------------------------


class ConTReGenScoresConfig(JudgeCallConfig):
    """The judge may be another model than the generator's."""

    TASKS = JUDGE_TASKS

    def stage(self, scope: CollectionScope) -> stages.Scored:
        return stages.score(scope)


@dg.asset(
    kinds={"duckdb"},
    deps=[contregen_answers, generated_answers, theme_graph],
    code_version="1",
    **pooled(LLM_POOL),
    **CONTREGEN_GROUP,
)
def contregen_scores(
    context: dg.AssetExecutionContext,
    config: ConTReGenScoresConfig,
    storage: StorageResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    """Retrieval recall of each question's gold documents (its combination) for ConTReGen (the
    whole tree) and the baselines, with chance; facet coverage of the gold papers' themes; the
    judge's coverage and relevance; for reference questions ROUGE-L and NLI entailment and
    contradiction against the paragraph; model calls, tokens and seconds per question. Table,
    chart and data/reports/<collection>/contregen_report.md."""
    return materialize_each(
        context, storage, lambda collection: _scores(context, config, storage, llm, collection)
    )


def _scores(context, config, storage, llm, collection) -> CollectionReport:
    scope = collection_scope(context, storage, llm, config, collection, model_choice=config.judge_choice())
    result, client, warehouse = run_stage(config, scope), scope.client, scope.warehouse
    trees, answers, sources, scored = result.trees, result.answers, result.sources, result.scored
    questions = [tree.question for tree in trees]
    collection_size = paper_count(warehouse, collection)
    judge = client.writer_label(contregen.tasks.CONTREGEN_JUDGE_ANSWER)
    warehouse.replace_partition(
        collection, {"contregen_scores": pa.Table.from_pylist(records.score_rows(collection, scored, judge))}
    )
    rows = scores.method_table(scored, questions, collection_size)
    chart = report.render_chart(rows)
    answer_writers = writers(storage, "contregen_answers", collection)
    offline_judge = played_offline(judge)
    notes = _score_notes(storage, collection, judge, answer_writers, collection_size)
    example = max(trees, key=lambda tree: len(tree.nodes))
    examples = _examples(example, answers, sources)
    written = write_report(
        storage,
        collection,
        "contregen_report.md",
        report.render_report(collection, rows, example, examples, notes),
        report.CHART_FILE,
        chart,
        "recall per method",
        Headline(
            tables=(headline_table("Retrieval and answers", rows, report.headline_columns(offline_judge)),),
            notes=tuple(notes),
            writer=answer_writers,
            judge=judge,
        ),
    )
    return CollectionReport(
        metadata={
            "dagster/row_count": len(scored),
            "scores": dg.MetadataValue.md(markdown_table(rows, report.TABLE_COLUMNS)),
            "judge": judge,
            **written,
            **llm_metadata(client),
        }
    )


def _score_notes(storage, collection, judge: str, answer_writers: str, collection_size: int) -> list[str]:
    roles = {
        "planner": writers(storage, "contregen_trees", collection),
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


def _examples(tree, answers, sources) -> list[dict]:
    """Every method's answer to ``tree``'s question, its citations rendered."""
    by_method = {a.method: a for a in answers if a.question_id == tree.question.question_id and a.text}
    return [
        {"method": method, "text": render_citations(by_method[method].text, sources)}
        for method in contregen.METHODS
        if method in by_method
    ]
