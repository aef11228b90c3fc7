"""SciPIP's dry-run steps: summaries, retrievals, ideas (once summaries are embedded) and scores."""

from insight_assets.app.dry_run import DryRun, EstimateStep
from insight_assets.core import ingest
from insight_assets.core.citations import citation_links
from insight_assets.core.index import IndexMissing
from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip.field import research_field
from insight_assets.defs.partitions import collection_folder
from insight_assets.defs.scipip.assets import SciPIPRetrievalConfig, SciPIPSummariesConfig
from insight_assets.defs.scipip.ideas import SciPIPIdeasConfig, SciPIPScoresConfig


def _summaries(config: SciPIPSummariesConfig, run: DryRun) -> None:
    documents = ingest.load_documents(run.storage.warehouse, run.collection)
    references: dict[str, list[str]] = {}
    for citing, cited in citation_links(run.storage.warehouse, run.collection):
        references.setdefault(citing, []).append(cited)
    parts = [scipip.paper_parts(document) for document in documents]
    run.outputs["paper_summaries"] = scipip.summarize_papers(run.client, parts, references)


def _retrievals(config: SciPIPRetrievalConfig, run: DryRun) -> None:
    folder = collection_folder(run.storage.collections_root, run.collection)
    own = {p.doc_id: p.background for p in run.output("paper_summaries", [])}
    backgrounds, _ = scipip.research_backgrounds(folder, own, config.leave_one_out)
    scipip.make_queries(run.client, run.embed, backgrounds)


def _ideas(config: SciPIPIdeasConfig, run: DryRun) -> None:
    """Priced once the collection's summaries are embedded (``paper_summaries`` built)."""
    try:
        library = scipip.store.load_library(
            run.storage.warehouse, run.storage.vectors_uri, run.embedder.get_embedder(), run.collection
        )
    except IndexMissing:
        return
    folder = collection_folder(run.storage.collections_root, run.collection)
    found, _ = scipip.research_backgrounds(folder, library.backgrounds, config.leave_one_out)
    backgrounds = found[: config.max_backgrounds]
    papers = {p.doc_id: scipip.Paper(p.title, p.method) for p in run.output("paper_summaries", [])}
    queries = scipip.make_queries(run.client, run.embed, backgrounds)
    field = research_field(config.field, library.summary_vectors, run.embed)
    ideas = scipip.IdeaSettings(field.name, config.ai_scientist_ideas, config.ai_scientist_reflections)
    run.outputs["scipip_ideas"] = scipip.propose_ideas(
        run.client, library, papers, queries, config.settings(), ideas
    )


def _scores(config: SciPIPScoresConfig, run: DryRun) -> None:
    """Every judge rates the expanded and the short ideas and, unless off, judges the pairs."""
    runs = run.output("scipip_ideas", [])
    short = [idea_run.idea_set([]) for idea_run in runs]
    expanded = [idea_run.expanded_set([]) for idea_run in runs]
    for _ in config.judges or [None]:
        scipip.judge_ideas(run.client, expanded, config.seed, per_call=config.expanded_per_call)
        scipip.judge_ideas(run.client, short, config.seed)
        if config.pairwise:
            pairs = [scipip.IdeaSet(e.query_id, e.background, e.ideas) for e in expanded]
            scipip.judge_pairs(run.client, pairs)


ESTIMATE_STEPS = (
    EstimateStep("paper_summaries", SciPIPSummariesConfig, _summaries),
    EstimateStep("scipip_retrievals", SciPIPRetrievalConfig, _retrievals),
    EstimateStep("scipip_ideas", SciPIPIdeasConfig, _ideas),
    EstimateStep("scipip_scores", SciPIPScoresConfig, _scores),
)
