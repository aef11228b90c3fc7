"""SciPIP: each SKC route on a synthetic library, the co-citation pick, the clustering filter, the
brainstorm keywords' merge, the keyword filter, leave-one-out without leaks, the loaders of the
public background files, and the offline summary tasks' shapes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import scipip
from insight_assets.core.methods.scipip import offline
from insight_assets.core.methods.scipip.calibration import separating_threshold
from insight_assets.core.methods.scipip.field import research_field
from insight_assets.core.methods.scipip.judging import JudgedIdea
from insight_assets.core.methods.scipip.keywords import KeywordSpace, filter_values, normal_keywords
from insight_assets.core.methods.scipip.pairwise import outcome
from insight_assets.core.methods.scipip.schemas import (
    AI_SCIENTIST,
    COCITE,
    DIRECT,
    IDEA_METHODS,
    KEYWORD,
    KEYWORD_ONLY,
    OFFLINE_TEMPLATE,
    SEMANTIC,
    SKC_FILTERED,
    VARIANTS,
    Idea,
)
from insight_assets_tests.conftest import corpus_root
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import Reply


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def _library(rows: dict[str, tuple[np.ndarray, tuple[str, ...], str]], citations=(), summaries=None):
    """rows: doc -> (background vector, keywords, background text)."""
    docs = tuple(rows)
    backgrounds = np.stack([rows[d][0] for d in docs])
    summary = np.stack([summaries[d] for d in docs]) if summaries else backgrounds
    return scipip.Library(
        doc_ids=docs,
        backgrounds={d: rows[d][2] for d in docs},
        background_vectors=backgrounds,
        summary_vectors=summary,
        graph=scipip.KeywordGraph.build({d: rows[d][1] for d in docs}),
        citations=tuple(citations),
    )


QUERY = _unit(1, 0, 0, 0)
# Five papers near the query, one far from it that shares its rare keyword, one far and unrelated.
ROWS = {
    "near1": (_unit(1, 0.1, 0, 0), ("graph neural networks", "node classification"), "Nodes are classified."),
    "near2": (_unit(1, 0.2, 0, 0), ("graph neural networks", "message passing"), "Messages pass."),
    "near3": (_unit(1, 0.3, 0, 0), ("node classification", "label propagation"), "Labels propagate."),
    "near4": (_unit(1, 0.4, 0, 0), ("message passing", "graph pooling"), "Graphs pool."),
    "near5": (_unit(1, 0.5, 0, 0), ("graph pooling", "node classification"), "More pooling."),
    "far_keyword": (
        _unit(0, 0, 1, 0),
        ("quartz lattice encoders", "crystal growth"),
        "Quartz lattices grow.",
    ),
    "far_other": (_unit(0, 0, 0, 1), ("protein folding", "crystal growth"), "Proteins fold."),
}


def test_the_keyword_route_finds_a_paper_the_semantic_top_k_misses():
    library = _library(ROWS)
    found = scipip.retrieve(library, QUERY, ["quartz lattice encoders"], scipip.RetrievalSettings(n_cocite=0))
    assert found.semantic == ["near1", "near2", "near3", "near4", "near5"]
    assert "far_keyword" not in found.semantic and found.routes["far_keyword"] == [KEYWORD]
    assert found.routes["near1"] == [SEMANTIC, KEYWORD]  # its own keywords were searched too
    assert "far_other" not in found.routes
    assert found.keyword_hits.index("far_keyword") < len(found.keyword_hits)


def test_a_keyword_in_a_papers_background_text_finds_it_as_eq_4_says():
    rows = {**ROWS, "far_other": (_unit(0, 0, 0, 1), ("protein folding",), "Uses quartz lattice encoders.")}
    found = scipip.retrieve(
        _library(rows), QUERY, ["quartz lattice encoders"], scipip.RetrievalSettings(n_cocite=0)
    )
    assert KEYWORD in found.routes["far_other"]


def test_brainstorm_keywords_join_the_retrieval_keywords():
    library = _library(ROWS)
    without = scipip.retrieve(library, QUERY, [], scipip.RetrievalSettings(n_cocite=0))
    merged = scipip.retrieve(
        library, QUERY, [], scipip.RetrievalSettings(n_cocite=0), extra_keywords=["Protein  Folding"]
    )
    assert "far_other" not in without.routes
    assert merged.routes["far_other"] == [KEYWORD] and "protein folding" in merged.keywords


def test_co_citation_adds_the_paper_most_often_cited_with_a_retrieved_one():
    # C and D both cite A and B; E cites A and F once. Retrieving A adds B (co-cited twice), not F.
    rows = {
        "A": (_unit(1, 0, 0, 0), ("topic a",), ""),
        "B": (_unit(0, 1, 0, 0), ("topic b",), ""),
        "C": (_unit(0, 0, 1, 0), ("topic c",), ""),
        "D": (_unit(0, 0, 0, 1), ("topic d",), ""),
        "E": (_unit(0, 0, 1, 1), ("topic e",), ""),
        "F": (_unit(0, 1, 1, 0), ("topic f",), ""),
    }
    citations = [("C", "A"), ("C", "B"), ("D", "A"), ("D", "B"), ("E", "A"), ("E", "F")]
    found = scipip.retrieve(_library(rows, citations), QUERY, [], scipip.RetrievalSettings(top_k=1))
    assert found.found == ["A", "B"] and found.routes["B"] == [COCITE]


def test_the_filter_collapses_near_duplicates_and_picks_round_robin():
    summaries = {
        "near1": _unit(1, 0, 0, 0),
        "near2": _unit(1, 0.05, 0, 0),  # a near-duplicate of near1's idea
        "near3": _unit(0, 1, 0, 0),
        "near4": _unit(0, 0, 1, 0),
        "near5": _unit(0, 0, 0, 1),
        "far_keyword": _unit(0, 1, 1, 0),
        "far_other": _unit(0, 1, 0, 1),
    }
    library = _library(ROWS, summaries=summaries)
    settings = scipip.RetrievalSettings(top_k=5, n_cocite=0, n_papers=4)
    found = scipip.retrieve(library, QUERY, [], settings)
    assert ["near1", "near2"] in found.clusters
    assert found.selected == ["near1", "near3", "near4", "near5"]  # near2 waits for the second round
    assert scipip.round_robin([["a", "b"], ["c"], ["d", "e"]], 5) == ["a", "c", "d", "b", "e"]

    plain = scipip.retrieve(
        library, QUERY, [], scipip.RetrievalSettings(top_k=5, n_cocite=0, n_papers=4, tau=1.0)
    )
    assert plain.selected == plain.found[:4]  # tau = 1: nothing merges, the filter is plain top-n


def test_a_shared_keyword_is_found_despite_case_plural_and_hyphen():
    rows = {
        **ROWS,
        "far_keyword": (_unit(0, 0, 1, 0), ("Word-Embeddings", "crystal growth"), "Crystals grow."),
    }
    found = scipip.retrieve(_library(rows), QUERY, ["word embedding"], scipip.RetrievalSettings(n_cocite=0))
    assert KEYWORD in found.routes["far_keyword"] and "word embedding" in found.keywords
    assert normal_keywords(["Graph Neural-Networks", "graph neural network", "  "]) == [
        "graph neural network"
    ]
    # The same normal form in a background's text matches too (Eq. 4), plural or not.
    rows["far_other"] = (_unit(0, 0, 0, 1), ("protein folding",), "We train word-embeddings on proteins.")
    found = scipip.retrieve(_library(rows), QUERY, ["Word Embeddings"], scipip.RetrievalSettings(n_cocite=0))
    assert KEYWORD in found.routes["far_other"]


def test_keywords_match_by_embedding_within_the_threshold():
    vectors = {"word embedding": (1.0, 0.0), "word vector": (0.9, 0.44), "crystal growth": (0.0, 1.0)}
    space = KeywordSpace(lambda texts: np.array([vectors[t] for t in texts]), threshold=0.85)
    graph = scipip.KeywordGraph.build({"a": ["word vectors"], "b": ["crystal growth"]}, space)
    assert graph.held_by(["word embedding"]) == {"word embedding": {"a": pytest.approx(0.898, abs=1e-3)}}
    strict = scipip.KeywordGraph.build({"a": ["word vectors"]}, KeywordSpace(space.embed, threshold=0.95))
    assert strict.held_by(["word embedding"]) == {"word embedding": {}}


def test_the_keyword_filter_values_come_from_the_collection():
    sparse = filter_values({f"p{n}": [f"own {n}", f"other {n}"] for n in range(10)})
    assert (sparse.min_papers, sparse.keep) == (1, 2) and "0% of 20 keywords" in sparse.reason
    shared = filter_values({"p1": ["a b", "c d", "e f"], "p2": ["a b", "g h", "i j"], "p3": ["k l"]})
    assert (shared.min_papers, shared.keep) == (2, 3)


def test_a_threshold_separates_same_from_different_pairs():
    found = separating_threshold(same=[0.9, 0.8, 0.85], different=[0.5, 0.6, 0.82])
    assert found.threshold == pytest.approx(0.7) and found.accuracy == pytest.approx(5 / 6)
    assert separating_threshold(same=[0.9], different=[0.1]).threshold == pytest.approx(0.5)


def test_the_keyword_filter_needs_shared_papers_and_keeps_the_rarest():
    graph = scipip.KeywordGraph.build(
        {
            "p1": ["seed", "common", "rare a"],
            "p2": ["seed", "common", "rare a"],
            "p3": ["seed", "common", "once"],
            "p4": ["common", "x"],
            "p5": ["common", "y"],
        }
    )
    assert graph.expand(["Seed"], min_papers=2, keep=10) == ["rare a", "common"]  # "once": one paper
    assert graph.expand(["seed"], min_papers=2, keep=1) == ["rare a"]  # the rarer of the two
    assert graph.co_occurrences()[("common", "seed")] == 3


def test_leave_one_out_removes_the_held_out_papers_citations():
    # P alone cites A and B: with P held out, nothing links A and B any more.
    rows = {
        "P": (_unit(1, 0, 0, 0), ("topic p",), ""),
        "A": (_unit(1, 0.1, 0, 0), ("topic a",), ""),
        "B": (_unit(0, 0, 0, 1), ("topic b",), ""),
        "C": (_unit(0, 1, 0, 0), ("topic c",), ""),
    }
    library = _library(rows, citations=[("P", "A"), ("P", "B")])
    near_a = _unit(1, 0.1, 0, 0)
    with_p = scipip.retrieve(library, near_a, [], scipip.RetrievalSettings(top_k=1, n_papers=2))
    assert with_p.found == ["A", "B"]  # B is co-cited with A by P's own reference list
    query = scipip.Query("q", "", QUERY, (), held_out="P")
    settings = scipip.RetrievalSettings(top_k=1, n_papers=2)
    rows_out = scipip.leave_one_out(library, [query], {"P": ["A", "B"]}, settings, k=2)
    by_variant = {row.variant: row for row in rows_out}
    assert set(by_variant) == set(VARIANTS)
    assert by_variant[SKC_FILTERED].ranked == ("A",) and by_variant[SKC_FILTERED].recall_at(2) == 0.5
    assert all("P" not in row.ranked for row in rows_out)
    assert by_variant[KEYWORD_ONLY].ranked == ()  # no entities, nothing to match
    table = {row["variant"]: row for row in scipip.recall_table(rows_out, ks=(1, 2))}
    assert table[SKC_FILTERED] == {"variant": SKC_FILTERED, "recall@1": 0.5, "recall@2": 0.5}
    assert table["chance (any order)"] == {
        "variant": "chance (any order)",
        "recall@1": 0.333,
        "recall@2": 0.667,
    }


def test_background_files_as_a_json_array_or_json_lines_with_their_problems_reported(tmp_path):
    array = tmp_path / "array.json"
    array.write_text(json.dumps([{"background": "1. Need A."}, {"background": "  "}, {"entities": ["x y"]}]))
    found, problems = scipip.read_backgrounds(array)
    assert [b.background for b in found] == ["1. Need A."]
    assert [p.line for p in problems] == [2, 3] and "empty" in problems[0].message

    lines = tmp_path / "backgrounds.jsonl"
    rows = [
        {"background": "Need B.", "entities": None},
        {"background": "Need C.", "entities_bg": ["graph pooling", "node labels"]},
        {"background": "Need B."},
    ]
    lines.write_text("\n".join(json.dumps(r) for r in rows) + "\n\nnot json\n")
    found, problems = scipip.read_backgrounds(lines)
    assert [(b.background, b.entities) for b in found] == [
        ("Need B.", None),
        ("Need C.", ("graph pooling", "node labels")),
    ]
    messages = {p.line: p.message for p in problems}
    assert "null" in messages[1] and "duplicate of line 1" in messages[3] and "invalid JSON" in messages[5]


def test_the_public_background_files_load(tmp_path):
    folder = corpus_root().parent / "datasets" / "scipip"
    if not folder.exists():
        pytest.skip(f"{folder} is absent: the shared SciPIP datasets are not on this machine")
    array, _ = scipip.read_backgrounds(folder / "test_background.json")
    assert array and all(b.background and b.entities is None for b in array)
    lines, problems = scipip.read_backgrounds(folder / "test_acl_2024.json")
    assert len(lines) > 1000 and sum(b.entities is not None for b in lines) > 1000
    assert any("null" in p.message for p in problems) and any("empty" in p.message for p in problems)


def test_offline_summaries_keep_the_papers_shapes():
    abstract = (
        "Training graph neural networks on large graphs remains expensive. However, existing samplers "
        "lose accuracy. We propose layer-wise importance sampling for graph convolution. Our method "
        "matches full-batch accuracy at a tenth of the cost."
    )
    digest = offline.digest_offline("Fast Graph Sampling", abstract, "")
    assert digest.summary.startswith("The problem of ") and digest.summary.endswith("Fast Graph Sampling.")
    assert len(digest.motivations) == 2 and all(
        "expensive" in m or "However" in m for m in digest.motivations
    )
    assert digest.details and all(d not in digest.motivations for d in digest.details)
    entities = offline.entities_offline(abstract).entities
    assert 0 < len(entities) <= 5 and all(2 <= len(e.split()) <= 5 for e in entities)


# -- idea generation and the judge -------------------------------------------------------------------


PAPERS = {
    "near1": scipip.Paper(
        "Graph Sampling", "Nodes are sampled by importance to cut the cost of graph training."
    ),
    "near2": scipip.Paper("Message Passing Nets", "Messages pass along edges; node classification improves."),
    "near3": scipip.Paper("Label Propagation", "Labels propagate over graph edges for node classification."),
    "near4": scipip.Paper("Graph Pooling", "Graphs pool nodes into clusters."),
    "near5": scipip.Paper("More Pooling", "Pooling nodes of graphs hierarchically."),
    "far_keyword": scipip.Paper("Quartz Lattices", "Quartz lattice encoders grow crystals."),
    "far_other": scipip.Paper("Protein Folding", "Proteins fold."),
}
BACKGROUND = (
    "1. The need to cut the cost of node classification training on large graphs. "
    "2. The challenge of keeping graph accuracy when nodes are sampled."
)


def test_both_paths_integrate_and_expand_offline_and_every_idea_says_it_is_a_template():
    query = scipip.Query("q", BACKGROUND, QUERY, ("node classification", "graph training cost"))
    (run,) = scipip.propose_ideas(LLMClient(LLMSettings()), _library(ROWS), PAPERS, [query])
    assert not run.errors
    assert run.brainstorm and run.direct and run.retrieval_ideas
    for method in IDEA_METHODS:
        assert all(i.idea.startswith(OFFLINE_TEMPLATE) for i in run.ideas(method))
    assert set(normal_keywords(run.brainstorm_keywords)) <= set(run.retrieval.keywords)  # merged
    titles = {PAPERS[doc].title for doc in run.retrieval.selected}
    assert all(set(i.inspired_by) <= titles and i.inspired_by for i in run.retrieval_ideas)
    assert {i["doc_id"] for i in run.inspirations} <= set(run.retrieval.selected)
    assert 0 < len(run.integrated) <= 6 and len(run.expanded) == len(run.integrated)
    assert all(idea in run.brainstorm + run.retrieval_ideas for idea in run.integrated)  # unmodified


def test_a_held_out_papers_background_never_retrieves_that_paper():
    query = scipip.Query("q", BACKGROUND, ROWS["near1"][0], ("node classification",), held_out="near1")
    (run,) = scipip.propose_ideas(LLMClient(LLMSettings()), _library(ROWS), PAPERS, [query])
    assert "near1" not in run.retrieval.found and run.retrieval.found


def test_the_judge_sees_ideas_anonymised_and_shuffled_and_ratings_go_back_to_their_methods(server):
    query = scipip.Query("q", BACKGROUND, QUERY, ("node classification",))
    (run,) = scipip.propose_ideas(LLMClient(LLMSettings()), _library(ROWS), PAPERS, [query])

    def rate(request):
        numbers = [int(n) for n in re.findall(r"^Idea (\d+): ", request.last_user_text(), re.MULTILINE)]
        ratings = [
            {
                "idea": n,
                "novelty": n % 6,
                "clarity": 4,
                "feasibility": 3,
                "relevance": 5,
                "helpful": n % 2 == 0,
            }
            for n in numbers
        ]
        return Reply(json.dumps({"ratings": ratings}))

    server.responder = rate
    judged = scipip.judge_ideas(fake_openai_client(server), [run.idea_set([])], seed=7)
    prompt = server.requests[0].last_user_text()
    assert not any(method in prompt for method in IDEA_METHODS)
    total = sum(len(run.ideas(m)) for m in IDEA_METHODS)
    assert sorted(j.shown_as for j in judged) == list(range(1, total + 1))
    assert all(j.novelty == j.shown_as % 6 and j.helpful == (j.shown_as % 2 == 0) for j in judged)
    order = [(j.method, j.position) for j in sorted(judged, key=lambda j: j.shown_as)]
    assert order != sorted(order)  # shuffled, not grouped by method
    again = scipip.judge_ideas(fake_openai_client(server), [run.idea_set([])], seed=7)
    assert [(j.method, j.position, j.shown_as) for j in again] == [
        (j.method, j.position, j.shown_as) for j in judged
    ]
    shares = {row["method"]: row for row in scipip.good_shares(judged)}
    assert (
        shares[DIRECT]["relevance"] == 1.0
        and shares[DIRECT]["clarity"] == 1.0
        and shares[DIRECT]["feasibility"] == 0.0
    )


def _pair_judge(prefer: str):
    """A judge that prefers the idea whose text contains ``prefer`` on every criterion, and calls
    a tie when neither or both do."""

    def reply(request) -> Reply:
        prompt = request.last_user_text()
        a = prompt.split("## Idea A", 1)[1].split("## Idea B", 1)[0]
        b = prompt.split("## Idea B", 1)[1]
        verdict = (
            "A" if prefer in a and prefer not in b else "B" if prefer in b and prefer not in a else "tie"
        )
        return Reply(
            json.dumps(
                {c: verdict for c in ("novelty", "clarity", "feasibility", "relevance", "helpfulness")}
            )
        )

    return reply


def test_pairwise_judging_asks_both_orders_and_counts_only_what_they_agree_on(server):
    ideas = {
        "scipip": [Idea(title="Strong", idea="strong idea"), Idea(title="Plain", idea="plain idea")],
        "direct": [Idea(title="Weak", idea="weak idea"), Idea(title="Plain too", idea="plain idea")],
    }
    server.responder = _pair_judge("strong")
    judged = scipip.judge_pairs(fake_openai_client(server), [scipip.IdeaSet("q", "Background.", ideas)], "j")
    shown = [r.last_user_text() for r in server.requests]
    assert len(shown) == 4  # two pairs, each in both orders
    orders = sorted(p.index("Strong") < p.index("Weak") for p in shown if "Strong" in p)
    assert orders == [False, True]  # shown once first, once second
    outcomes = {(j.position, j.criterion): (j.scipip_first, j.scipip_second, j.outcome) for j in judged}
    assert outcomes[(0, "novelty")] == ("A", "B", "win")  # preferred in both orders
    assert outcomes[(1, "helpfulness")] == ("tie", "tie", "tie")  # neither better
    rates = {(r["baseline"], r["criterion"]): r for r in scipip.win_rates(judged)}
    assert rates[("direct", "clarity")] == {
        "judge": "j",
        "baseline": "direct",
        "criterion": "clarity",
        "pairs": 2,
        "scipip_wins": 0.5,
        "ties": 0.5,
        "baseline_wins": 0.0,
    }


def test_a_judge_that_always_prefers_the_first_idea_scores_ties_not_wins():
    assert outcome("A", "A") == "tie" and outcome("B", "B") == "tie"  # position bias either way
    assert (outcome("A", "B"), outcome("B", "A")) == ("win", "loss")
    assert (outcome("A", "tie"), outcome("tie", "A")) == ("win", "loss")


def test_several_judges_agreement_is_kendalls_tau_on_the_ideas_both_rated():
    def rated(judge: str, novelty: list[int]) -> list:
        return [
            JudgedIdea(
                "q",
                "scipip",
                n,
                n,
                f"t{n}",
                novelty=v,
                clarity=3,
                feasibility=v,
                relevance=v,
                helpful=True,
                judge=judge,
            )
            for n, v in enumerate(novelty)
        ]

    same = scipip.judge_agreement(rated("a", [1, 2, 3, 4]) + rated("b", [2, 3, 4, 5]))
    assert same == [
        {
            "judge_a": "a",
            "judge_b": "b",
            "ideas": 4,
            "novelty": 1.0,
            "clarity": None,
            "feasibility": 1.0,
            "relevance": 1.0,
        }
    ]
    reverse = scipip.judge_agreement(rated("a", [1, 2, 3, 4]) + rated("b", [4, 3, 2, 1])[:3])
    assert reverse[0]["ideas"] == 3 and reverse[0]["novelty"] == -1.0
    assert scipip.judge_agreement(rated("a", [1, 2])) == []  # one judge: nothing to compare


def test_the_field_is_the_configured_one_or_the_nearest_to_the_collection():
    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if "patients" in t else [0.0, 1.0] for t in texts])

    assert (
        research_field("  marine biology ", np.ones((2, 2)), embed).describe()
        == "marine biology (configured)"
    )
    found = research_field(None, np.array([[1.0, 0.1], [0.9, 0.0]]), embed)
    assert (found.name, found.source) == ("medicine and health", "inferred")
    assert research_field(None, np.zeros((0, 2)), None).name == "artificial intelligence"


def test_the_ai_scientist_baseline_reflects_checks_novelty_and_keeps_the_novel_ideas():
    query = scipip.Query("q", BACKGROUND, QUERY, ("node classification", "graph training cost"))
    settings = scipip.IdeasSettings(ai_scientist_ideas=3, ai_scientist_reflections=2)
    (run,) = scipip.propose_ideas(
        LLMClient(LLMSettings()), _library(ROWS), PAPERS, [query], ideas=settings, field_name="graph learning"
    )
    assert len(run.scientist) == 3 and len({r.idea.title for r in run.scientist}) == 3  # each new
    assert all(r.rounds == 1 and "offline TF-IDF" in r.reason for r in run.scientist)  # done at round 1
    assert run.ideas(AI_SCIENTIST) == [r.as_idea() for r in run.scientist if r.novel]
    assert set(run.expanded) == set(IDEA_METHODS) - ({AI_SCIENTIST} if not run.ideas(AI_SCIENTIST) else set())
