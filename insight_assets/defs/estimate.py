"""A dry run of a collection's model calls: tokens and cost, per task, before spending anything.

The chain runs through an estimate-only client (see ``LLMClient``): each step prices the prompts
the configured provider would read (prompts already in the cache are free) and goes on with the
offline answers, so the later steps are priced on inputs of a realistic size. No provider is
called and no key is needed. From the UI: the job ``estimate_llm_cost`` (pick a collection); from
a shell: ``insight-assets estimate --collection NAME``.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from insight_assets.core import curation, ingest
from insight_assets.core.citations import citation_links
from insight_assets.core.clustering import theme_labels
from insight_assets.core.curation import QAPair
from insight_assets.core.index import IndexMissing
from insight_assets.core.judge import judge_questions, judged_questions
from insight_assets.core.llm import DryRunEstimate, LLMClient, ResponseCache
from insight_assets.core.methods import contregen, insight_rag, insightgen, scipip, xsum
from insight_assets.core.methods.contregen import scores as contregen_scores
from insight_assets.core.methods.insight_rag.collection import phrase_questions, read_triples
from insight_assets.core.methods.xsum import load as xsum_load
from insight_assets.core.methods.xsum import scores as xsum_scores
from insight_assets.core.retrieval import Retriever
from insight_assets.core.retrieval.citing import load_sources
from insight_assets.core.retrieval.rerank import LateInteraction
from insight_assets.defs import insight_rag as insight_rag_assets
from insight_assets.defs.contregen import AnswersConfig, ScoresConfig, TreesConfig
from insight_assets.defs.curation import AnswerConfig, CompressionConfig, QuestionConfig
from insight_assets.defs.evaluation import JudgeConfig
from insight_assets.defs.insights import InsightsConfig
from insight_assets.defs.metadata import markdown_table
from insight_assets.defs.model_calls import ModelCallConfig
from insight_assets.defs.partitions import collection_folder, collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.scipip import (
    IdeasConfig,
    RetrievalConfig,
    SummariesConfig,
    load_library,
)
from insight_assets.defs.scipip import ScoresConfig as SciPIPScoresConfig
from insight_assets.defs.xsum import (
    XSumAnswersConfig,
    XSumQuestionsConfig,
    XSumScoresConfig,
    XSumSummariesConfig,
)

ESTIMATE_COLUMNS = [
    "task",
    "provider",
    "model",
    "items",
    "cached_items",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "max_cost_usd",
]
# Shown when the model runs here (provider local): the expected wall time, in seconds.
TIME_COLUMN = "expected_s"


def estimate_columns(estimates: Sequence[DryRunEstimate]) -> list[str]:
    """The table's columns: the expected time too when some estimate has one."""
    timed = any(estimate.expected_seconds is not None for estimate in estimates)
    return ESTIMATE_COLUMNS + ([TIME_COLUMN] if timed else [])


@dataclass
class DryRun:
    """What the steps of a dry run share: the estimate-only client, the collection, and what the
    earlier steps produced (offline answers, of a realistic size)."""

    client: LLMClient
    storage: StorageResource
    embedder: EmbedderResource
    collection: str
    compressed: list[curation.CompressedDocument] = field(default_factory=list)
    questions: list[curation.Question] = field(default_factory=list)
    pairs: list[QAPair] = field(default_factory=list)
    insights: insightgen.InsightGenResult | None = None
    retriever: Retriever | None = None
    trees: list[contregen.Tree] = field(default_factory=list)
    sources: dict = field(default_factory=dict)
    answers: list[contregen.Answer] = field(default_factory=list)
    triples: list[insight_rag.Triple] = field(default_factory=list)
    benchmark: list[insight_rag.BenchmarkItem] = field(default_factory=list)
    xsum_questions: list[xsum.XSumQuestion] = field(default_factory=list)
    xsum_retriever: Retriever | None = None
    xsum_targets: list[xsum.SummaryTarget] = field(default_factory=list)
    xsum_answers: list[xsum.XSumAnswerRecord] = field(default_factory=list)
    xsum_summaries: list[xsum.SummaryRecord] = field(default_factory=list)
    scipip_papers: list[scipip.PaperSummary] = field(default_factory=list)
    scipip_runs: list[scipip.IdeaRun] = field(default_factory=list)

    @property
    def embed(self):
        return self.embedder.get_embedder().embed

    def open_retriever(self, profile: str) -> Retriever | None:
        """The collection's ``profile`` retriever; ``None`` before its chunks have vectors."""
        try:
            return Retriever.open(
                self.storage.warehouse,
                self.storage.vectors,
                self.collection,
                self.embedder.get_embedder(),
                profile,
            )
        except IndexMissing:
            return None


@dataclass(frozen=True)
class EstimateStep:
    """One model-calling asset in a dry run: its config class (defaults and task overrides) and
    what it does, on the dry run's state. A new method joins the estimate by adding a step."""

    config: type[ModelCallConfig]
    run: Callable[[Any, DryRun], None]


def _compress(config: CompressionConfig, run: DryRun) -> None:
    papers = curation.papers_to_compress(ingest.load_documents(run.storage.warehouse, run.collection))
    run.compressed = curation.compress_documents(run.client, papers, config.settings()).compressed


def _ask(config: QuestionConfig, run: DryRun) -> None:
    user = curation.load_user_questions(
        collection_folder(run.storage.collections_root, run.collection) / curation.USER_QUESTIONS_FILE,
        known_document_ids={document.document_id for document in run.compressed},
    )
    generated = curation.generate_questions(run.client, run.compressed, config.settings(), run.embed)
    run.questions = curation.merge_user_questions(user.questions, generated.questions)


def _answer(config: AnswerConfig, run: DryRun) -> None:
    answered = curation.generate_answers(
        run.client, run.questions, run.compressed, config.settings(), run.embed
    )
    run.pairs = [QAPair(a.question_id, a.question, a.answer) for a in answered.answers if a.status == "kept"]


def _find_insights(config: InsightsConfig, run: DryRun) -> None:
    """Priced once the collection has a theme graph (it needs no model, but does need a build)."""
    variant = run.embedder.get_embedder().variant
    try:
        index, cluster_index = insightgen.load_insightgen_index(
            run.storage.warehouse, run.storage.vectors, run.collection, variant
        )
    except IndexMissing:
        return
    run.insights = insightgen.run_insightgen(
        run.client, run.pairs, index, cluster_index, run.embed, config.settings()
    )


def _judge(config: JudgeConfig, run: DryRun) -> None:
    if run.insights is None:
        return
    insights = (
        (found.question_id, found.method, insightgen.insight_text(insight))
        for found in run.insights.outcome.runs
        for insight in found.insights
    )
    judge_questions(
        run.client,
        judged_questions(run.pairs, insights),
        judge="estimate",
        seed=config.seed,
        levels=config.levels,
        repetitions=config.repetitions,
    )


def _contregen_trees(config: TreesConfig, run: DryRun) -> None:
    """Priced once the collection has chunk vectors (like `insights`)."""
    run.retriever = run.open_retriever(contregen.PROFILE)
    if run.retriever is None:
        return
    asked = [
        contregen.TreeQuestion(q.question_id, q.question, q.document_ids, q.source)
        for q in run.questions
        if config.questions == "all" or q.source == config.questions
    ][: config.max_questions]
    themes = theme_labels(run.storage.warehouse, run.collection)
    run.trees, run.sources = contregen.grow_trees(run.client, run.retriever, asked, config.settings(), themes)


def _contregen_answers(config: AnswersConfig, run: DryRun) -> None:
    if run.retriever is not None and run.trees:
        run.answers = contregen.write_answers(
            run.client, run.retriever, run.trees, run.sources, config.settings(), config.baselines
        )


def _contregen_scores(config: ScoresConfig, run: DryRun) -> None:
    references = {pair.question_id: pair.answer for pair in run.pairs}
    questions = [tree.question for tree in run.trees]
    contregen_scores.score_answers(run.client, questions, run.answers, {}, references)


def _xsum_questions(config: XSumQuestionsConfig, run: DryRun) -> None:
    papers = xsum_load.load_papers(run.storage.warehouse, run.collection, config.abstract_fallback_tokens)
    asked = [paper for paper in papers if paper.abstract]
    run.xsum_questions = xsum.generate_questions(run.client, asked, config.questions_per_paper).questions


def _xsum_answers(config: XSumAnswersConfig, run: DryRun) -> None:
    """Priced once the collection has ``xsum`` chunk vectors (its targets come from the build)."""
    run.xsum_retriever = run.open_retriever(xsum.PROFILE)
    if run.xsum_retriever is None:
        return
    run.xsum_targets, _ = xsum_load.build_targets(
        run.storage.warehouse,
        run.collection,
        collection_folder(run.storage.collections_root, run.collection),
        run.xsum_retriever.documents,
        max_papers=config.max_target_papers,
        min_cited=config.min_cited_for_evaluation,
    )
    run.xsum_answers = xsum.answer_target_questions(
        run.client,
        run.xsum_retriever,
        run.xsum_targets,
        run.xsum_questions,
        config.settings(),
        LateInteraction(),
    )


def _xsum_summaries(config: XSumSummariesConfig, run: DryRun) -> None:
    if run.xsum_retriever is None or not run.xsum_targets:
        return
    warehouse, targets = run.storage.warehouse, run.xsum_targets
    sources = load_sources(warehouse, run.collection, xsum.PROFILE)
    asked = {q.question_id: q.question for q in run.xsum_questions}
    records = xsum.write_summaries(run.client, targets, run.xsum_answers, asked, sources)
    if config.baselines:
        papers = {paper.doc_id: paper for paper in xsum_load.load_papers(warehouse, run.collection)}
        records += xsum.plain_rag_summaries(
            run.client, run.xsum_retriever, targets, config.plain_rag_k, sources
        )
        records += xsum.abstracts_summaries(
            run.client, targets, papers, xsum_load.first_chunks(sources), sources
        )
    run.xsum_summaries = [record for record in records if record.text]


def _xsum_scores(config: XSumScoresConfig, run: DryRun) -> None:
    if not run.xsum_summaries:
        return
    warehouse = run.storage.warehouse
    sources = load_sources(warehouse, run.collection, xsum.PROFILE)
    abstracts = {p.doc_id: p.abstract for p in xsum_load.load_papers(warehouse, run.collection)}
    chunk_docs = {chunk_id: source.doc_id for chunk_id, source in sources.items()}
    xsum_scores.score_summaries(
        run.client, run.xsum_targets, run.xsum_summaries, chunk_docs, run.embed, abstracts
    )


def _insight_rag_triples(config: insight_rag_assets.TriplesConfig, run: DryRun) -> None:
    chunks = insight_rag_assets.triple_chunks(run.storage.warehouse, run.collection)
    run.triples = read_triples(run.client, chunks).triples


def _insight_rag_benchmark(config: insight_rag_assets.BenchmarkConfig, run: DryRun) -> None:
    if run.triples:
        benchmark = insight_rag_assets.unphrased_benchmark(
            run.storage.warehouse, run.collection, run.triples, config.settings()
        )
        run.benchmark = phrase_questions(run.client, benchmark, run.triples)


def _insight_rag_answers(config: insight_rag_assets.AnswersConfig, run: DryRun) -> None:
    """Priced once the collection's triples are indexed (``knowledge_triples`` built); the dry
    run's own triples have no vectors to search."""
    items = config.selected(run.benchmark)
    if not items:
        return
    try:
        setup = insight_rag_assets.open_setup(run.storage, run.embedder, run.collection, config.settings())
    except dg.Failure:
        return
    identified = insight_rag.identify(run.client, items, setup)
    insight_rag.answer(run.client, items, identified, setup)


def _scipip_summaries(config: SummariesConfig, run: DryRun) -> None:
    documents = ingest.load_documents(run.storage.warehouse, run.collection)
    references: dict[str, list[str]] = {}
    for citing, cited in citation_links(run.storage.warehouse, run.collection):
        references.setdefault(citing, []).append(cited)
    parts = [scipip.paper_parts(document) for document in documents]
    run.scipip_papers = scipip.summarize_papers(run.client, parts, references)


def _scipip_retrievals(config: RetrievalConfig, run: DryRun) -> None:
    folder = collection_folder(run.storage.collections_root, run.collection)
    own = {p.doc_id: p.background for p in run.scipip_papers}
    backgrounds, _ = scipip.research_backgrounds(folder, own, config.leave_one_out)
    scipip.make_queries(run.client, run.embed, backgrounds)


def _scipip_ideas(config: IdeasConfig, run: DryRun) -> None:
    """Priced once the collection's summaries are embedded (``paper_summaries`` built)."""
    try:
        library = load_library(run.storage, run.embedder, run.collection)
    except dg.Failure:
        return
    folder = collection_folder(run.storage.collections_root, run.collection)
    found, _ = scipip.research_backgrounds(folder, library.backgrounds, config.leave_one_out)
    backgrounds = found[: config.max_backgrounds]
    papers = {p.doc_id: scipip.Paper(p.title, p.method) for p in run.scipip_papers}
    queries = scipip.make_queries(run.client, run.embed, backgrounds)
    run.scipip_runs = scipip.propose_ideas(run.client, library, papers, queries, config.settings())


def _scipip_scores(config: SciPIPScoresConfig, run: DryRun) -> None:
    scipip.judge_ideas(run.client, [r.idea_set([]) for r in run.scipip_runs], config.seed)


# The model-calling assets in build order, each priced on the offline answers of those before it.
ESTIMATE_STEPS = (
    EstimateStep(CompressionConfig, _compress),
    EstimateStep(QuestionConfig, _ask),
    EstimateStep(AnswerConfig, _answer),
    EstimateStep(InsightsConfig, _find_insights),
    EstimateStep(JudgeConfig, _judge),
    EstimateStep(TreesConfig, _contregen_trees),
    EstimateStep(AnswersConfig, _contregen_answers),
    EstimateStep(ScoresConfig, _contregen_scores),
    EstimateStep(XSumQuestionsConfig, _xsum_questions),
    EstimateStep(XSumAnswersConfig, _xsum_answers),
    EstimateStep(XSumSummariesConfig, _xsum_summaries),
    EstimateStep(XSumScoresConfig, _xsum_scores),
    EstimateStep(insight_rag_assets.TriplesConfig, _insight_rag_triples),
    EstimateStep(insight_rag_assets.BenchmarkConfig, _insight_rag_benchmark),
    EstimateStep(insight_rag_assets.AnswersConfig, _insight_rag_answers),
    EstimateStep(SummariesConfig, _scipip_summaries),
    EstimateStep(RetrievalConfig, _scipip_retrievals),
    EstimateStep(IdeasConfig, _scipip_ideas),
    EstimateStep(SciPIPScoresConfig, _scipip_scores),
)


def estimate_collection(
    storage: StorageResource, llm: LLMResource, embedder: EmbedderResource, collection: str
) -> list[DryRunEstimate]:
    """What building ``collection``'s model-calling assets would cost with their default config
    (one judge, the configured model).

    Needs the collection's parsed documents in the warehouse; `insights`, `judge_scores` and
    ConTReGen's and XSum's answers and later steps are priced too once the collection has chunk
    vectors and a theme graph,
    Insight-RAG's triples and benchmark once it has chunks, its answers once its triples are indexed.
    """
    configs = [step.config() for step in ESTIMATE_STEPS]
    overrides = {name: params for config in configs for name, params in config.task_overrides().items()}
    client = LLMClient(
        llm.settings(overrides),
        cache=ResponseCache.in_data_dir(Path(llm.data_dir)) if llm.use_cache else None,
        estimate_only=True,
    )
    run = DryRun(client, storage, embedder, collection)
    for step, config in zip(ESTIMATE_STEPS, configs, strict=True):
        step.run(config, run)
    return client.estimates()


def estimate_rows(estimates: Sequence[DryRunEstimate]) -> list[dict[str, Any]]:
    """One row per task plus a total, costs as strings ("n/a" where the model has no price)."""
    rows: list[dict[str, Any]] = []
    for estimate in estimates:
        rows.append(
            {
                "task": estimate.task,
                "provider": estimate.provider,
                "model": estimate.model,
                "items": estimate.items,
                "cached_items": estimate.cached_items,
                "input_tokens": estimate.input_tokens,
                "output_tokens": estimate.output_tokens,
                "cost_usd": _usd(estimate.cost_usd),
                "max_cost_usd": _usd(estimate.max_cost_usd),
                TIME_COLUMN: _seconds(estimate.expected_seconds),
            }
        )
    priced = all(estimate.cost_usd is not None for estimate in estimates)
    rows.append(
        {
            "task": "total",
            "items": sum(estimate.items for estimate in estimates),
            "cached_items": sum(estimate.cached_items for estimate in estimates),
            "input_tokens": sum(estimate.input_tokens for estimate in estimates),
            "output_tokens": sum(estimate.output_tokens for estimate in estimates),
            "cost_usd": _usd(sum(e.cost_usd or 0.0 for e in estimates)) if priced else "n/a",
            "max_cost_usd": _usd(sum(e.max_cost_usd or 0.0 for e in estimates)) if priced else "n/a",
            TIME_COLUMN: _seconds(total_seconds(estimates)),
        }
    )
    return rows


def total_seconds(estimates: Sequence[DryRunEstimate]) -> float | None:
    """The expected wall time of all the calls (``None`` unless every estimate has one)."""
    times = [estimate.expected_seconds for estimate in estimates]
    return sum(times) if times and None not in times else None


def _usd(amount: float | None) -> str:
    return "n/a" if amount is None else f"{amount:.4f}"


def _seconds(amount: float | None) -> str:
    return "n/a" if amount is None else f"{amount:.0f}"


@dg.op(out=dg.Out(dg.Nothing))
def estimate_model_calls(
    context: dg.OpExecutionContext, storage: StorageResource, llm: LLMResource, embedder: EmbedderResource
) -> dg.Output:
    """Price the collection's model calls with the configured `llm` resource; call nothing."""
    estimates = estimate_collection(storage, llm, embedder, context.partition_key)
    rows = estimate_rows(estimates)
    total = rows[-1]
    context.log.info(
        f"{context.partition_key}: {total['items']} model calls, {total['input_tokens']} input and about "
        f"{total['output_tokens']} output tokens, estimated cost {total['cost_usd']} USD"
    )
    notes = sorted({estimate.note for estimate in estimates if estimate.note})
    return dg.Output(
        None,
        metadata={
            "estimate": dg.MetadataValue.md(markdown_table(rows, estimate_columns(estimates))),
            "calls": total["items"],
            "input_tokens": total["input_tokens"],
            "output_tokens": total["output_tokens"],
            "cost_usd": total["cost_usd"],
            "expected_s": total[TIME_COLUMN],
            "notes": "; ".join(notes) or "none",
        },
    )


@dg.job(
    partitions_def=collection_partitions,
    description="Dry run: tokens and cost of a collection's model calls.",
)
def estimate_llm_cost() -> None:
    estimate_model_calls()
