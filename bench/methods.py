"""methods: every method of the three papers' comparisons side by side with the bundled local model.

XSum's Table 1 (XSum, SurveySum's Pipeline 1 and 2, and our plain-RAG and abstracts-only
baselines), ConTReGen's Tables 2, 5, 8 and 9 (ConTReGen, RetGen, budget-matched RetGen,
IterRetGen, Self-Ask, SearChain, DSP and the two ablations) and InsightGen's RQ5 (InsightGen, its
§5.1 baselines and the three advanced RAG pipelines), each with the paper's headline metric and
its cost, on the demo collection with ``provider: local`` (SmolLM2-135M through llama.cpp), every
baseline on; the question-answer pairs the methods start from are curated offline first (a 135M
model's answers rarely pass curation's checks). Every task's answer lengths and question counts are the end-to-end test's
the ``smoke`` bundle with ``every_baseline`` over it (``--quick``: two of the demo's papers; otherwise all six), so the run takes
minutes, not hours. The same model writes and judges: every score is self-judged, and a 135M model
judges poorly; what the table shows is that every contender runs through a real model, and what
each costs. Needs no corpus.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import dagster as dg

from bench.common import REPO_ROOT, print_table, summary, timed
from bench.pipeline import QUIET, link_collection, temp_storage
from insight_assets.defs.catalog import ALL_ASSETS
from insight_assets.defs.resources import EmbedderResource, LLMResource
from insight_assets.defs.runs import SMOKE_CONTEXT_TOKENS, materialize_collection
from insight_assets.defs.stage_assets import load_bundle

DEMO = REPO_ROOT / "data" / "collections" / "scholarly-docs"
QUICK_PAPERS = ["N18-3011_literature-graph-semantic-scholar.pdf", "2020.acl-main.207_specter.pdf"]
COLLECTION = "demo"
REPORTS = ("xsum_scores", "contregen_scores", "method_report")
CURATION = ("generated_answers", "theme_graph", "citations")
INSIGHTGEN_COLUMNS = [
    "method",
    "written",
    "overall_set",
    "overall_insight",
    "context_tokens",
    "retrieval_calls",
    "retrieval_seconds",
]
# The smoke settings, with every baseline on (ConTReGen's smoke run leaves them out).
SETTINGS = load_bundle("smoke", "every_baseline")


def run(corpus: Path, quick: bool) -> dict:
    papers = [DEMO / name for name in QUICK_PAPERS] if quick else sorted(DEMO.glob("*.pdf"))
    with tempfile.TemporaryDirectory(prefix="bench-methods-") as tmp, dg.instance_for_test() as instance:
        storage = temp_storage(Path(tmp))
        link_collection(storage, COLLECTION, papers)
        llm = LLMResource(
            provider="local", context_tokens=SMOKE_CONTEXT_TOKENS, data_dir=str(Path(tmp) / "data")
        )
        # The question-answer pairs every method starts from are curated offline: a 135M model's
        # answers rarely pass curation's checks, and with no pair InsightGen has nothing to do.
        curated = _upstream_of(CURATION)
        rest = [a for a in _upstream_of(REPORTS) if a not in curated]
        seconds = 0.0
        for provider, assets in (("offline", curated), ("local", rest)):
            used = {key.to_user_string() for asset in assets for key in asset.keys}
            config = {**QUIET, "ops": {k: {"config": v} for k, v in SETTINGS.items() if k in used}}
            print(f"{provider}: {len(assets)} assets on {len(papers)} papers ...", flush=True)
            spent, result = timed(
                lambda assets=assets, config=config, provider=provider: materialize_collection(
                    instance, storage, EmbedderResource(), COLLECTION,
                    llm=llm if provider == "local" else LLMResource(data_dir=str(Path(tmp) / "offline")),
                    assets=assets, run_config=config, raise_on_error=False,
                )
            )  # fmt: skip
            seconds += spent
            if not result.success:
                print(f"  not every {provider} asset built: see the run's log")
        tables = {
            "xsum": _xsum(storage),
            "contregen": _contregen(storage),
            "insightgen": _insightgen(storage),
        }
    print_table(
        tables["xsum"],
        [
            "method",
            "targets",
            "written",
            "rougeL",
            "geval",
            "checkeval",
            "calls",
            "input_tokens",
            "output_tokens",
            "seconds",
        ],
        title="XSum (Table 1): against the papers' abstracts; cost per target of the summary step",
    )
    print_table(
        tables["contregen"],
        [
            "method",
            "recall",
            "facet_coverage",
            "coverage",
            "calls",
            "input_tokens",
            "output_tokens",
            "seconds",
        ],
        title="ConTReGen (Tables 2, 5, 8, 9): gold-document recall, judge coverage; cost per question",
    )
    print_table(
        tables["insightgen"],
        INSIGHTGEN_COLUMNS,
        title="InsightGen (RQ5): the judge's overall score (1-5); cost per question",
    )
    return {
        **tables,
        "papers": len(papers),
        "summary": summary(
            f"{len(papers)} papers, local model, {seconds / 60:.1f} min", None, "reported, no target"
        ),
    }


def _upstream_of(names: tuple[str, ...]) -> list:
    from insight_assets.definitions import defs

    keys = dg.AssetSelection.assets(*names).upstream().resolve(defs.resolve_asset_graph())
    return [asset for asset in ALL_ASSETS if set(asset.keys) & keys]


def _xsum(storage) -> list[dict]:
    """Every method, scored or not (a method whose every summary failed has no scores)."""
    return storage.warehouse.rows(
        """WITH scored AS (
               SELECT method, round(avg(rougeL), 3) AS rougeL, round(avg(geval_coverage), 2) AS geval,
                      round(avg(checkeval), 3) AS checkeval
               FROM xsum_scores WHERE collection = ? GROUP BY method)
           SELECT c.method, count(*) AS targets, count(c.summary) AS written, any_value(s.rougeL) AS rougeL,
                  any_value(s.geval) AS geval, any_value(s.checkeval) AS checkeval,
                  any_value(c.calls) AS calls, any_value(c.input_tokens) AS input_tokens,
                  any_value(c.output_tokens) AS output_tokens, any_value(c.seconds) AS seconds
           FROM xsum_summaries c LEFT JOIN scored s USING (method)
           WHERE c.collection = ? GROUP BY c.method ORDER BY c.method""",
        [COLLECTION, COLLECTION],
    )


def _contregen(storage) -> list[dict]:
    return storage.warehouse.rows(
        """SELECT method, round(avg(recall), 3) AS recall, round(avg(facet_coverage), 3) AS facet_coverage,
                  round(avg(coverage), 2) AS coverage, round(avg(calls), 1) AS calls,
                  round(avg(input_tokens)) AS input_tokens, round(avg(output_tokens)) AS output_tokens,
                  round(avg(seconds), 1) AS seconds
           FROM contregen_scores WHERE collection = ? GROUP BY method ORDER BY method""",
        [COLLECTION],
    )


def _insightgen(storage) -> list[dict]:
    """The judge's overall score per method at set level and at insight level (a level the judge
    could not score leaves its column empty), and the cost per question."""
    return storage.warehouse.rows(
        """WITH scores AS (
               SELECT method,
                      round(avg(overall) FILTER (WHERE level = 'set'), 2) AS overall_set,
                      round(avg(overall) FILTER (WHERE level = 'insight'), 2) AS overall_insight
               FROM judge_scores WHERE collection = ? GROUP BY method),
           costs AS (
               SELECT method, count(*) FILTER (WHERE status = 'ok') AS written,
                      round(avg(context_tokens)) AS context_tokens,
                      round(avg(retrieval_calls), 1) AS retrieval_calls,
                      round(avg(retrieval_seconds), 1) AS retrieval_seconds
               FROM insight_runs WHERE collection = ? GROUP BY method)
           SELECT * FROM costs LEFT JOIN scores USING (method) ORDER BY method""",
        [COLLECTION, COLLECTION],
    )
