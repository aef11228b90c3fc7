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
from insight_assets.core.methods.scipip.keywords import KeywordSpace, filter_values, normal_keywords
from insight_assets.core.methods.scipip.schemas import (
    COCITE,
    DIRECT,
    IDEA_METHODS,
    KEYWORD,
    KEYWORD_ONLY,
    OFFLINE_TEMPLATE,
    SEMANTIC,
    SKC_FILTERED,
    VARIANTS,
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
    found = scipip.retrieve(library, QUERY, ["quartz lattice encoders"], scipip.SciPIPSettings(n_cocite=0))
    assert found.semantic == ["near1", "near2", "near3", "near4", "near5"]
    assert "far_keyword" not in found.semantic and found.routes["far_keyword"] == [KEYWORD]
    assert found.routes["near1"] == [SEMANTIC, KEYWORD]  # its own keywords were searched too
    assert "far_other" not in found.routes
    assert found.keyword_hits.index("far_keyword") < len(found.keyword_hits)


def test_a_keyword_in_a_papers_background_text_finds_it_as_eq_4_says():
    rows = {**ROWS, "far_other": (_unit(0, 0, 0, 1), ("protein folding",), "Uses quartz lattice encoders.")}
    found = scipip.retrieve(
        _library(rows), QUERY, ["quartz lattice encoders"], scipip.SciPIPSettings(n_cocite=0)
    )
    assert KEYWORD in found.routes["far_other"]


def test_brainstorm_keywords_join_the_retrieval_keywords():
    library = _library(ROWS)
    without = scipip.retrieve(library, QUERY, [], scipip.SciPIPSettings(n_cocite=0))
    merged = scipip.retrieve(
        library, QUERY, [], scipip.SciPIPSettings(n_cocite=0), extra_keywords=["Protein  Folding"]
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
    found = scipip.retrieve(_library(rows, citations), QUERY, [], scipip.SciPIPSettings(top_k=1))
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
    settings = scipip.SciPIPSettings(top_k=5, n_cocite=0, n_papers=4)
    found = scipip.retrieve(library, QUERY, [], settings)
    assert ["near1", "near2"] in found.clusters
    assert found.selected == ["near1", "near3", "near4", "near5"]  # near2 waits for the second round
    assert scipip.round_robin([["a", "b"], ["c"], ["d", "e"]], 5) == ["a", "c", "d", "b", "e"]

    plain = scipip.retrieve(
        library, QUERY, [], scipip.SciPIPSettings(top_k=5, n_cocite=0, n_papers=4, tau=1.0)
    )
    assert plain.selected == plain.found[:4]  # tau = 1: nothing merges, the filter is plain top-n


def test_a_shared_keyword_is_found_despite_case_plural_and_hyphen():
    rows = {
        **ROWS,
        "far_keyword": (_unit(0, 0, 1, 0), ("Word-Embeddings", "crystal growth"), "Crystals grow."),
    }
    found = scipip.retrieve(_library(rows), QUERY, ["word embedding"], scipip.SciPIPSettings(n_cocite=0))
    assert KEYWORD in found.routes["far_keyword"] and "word embedding" in found.keywords
    assert normal_keywords(["Graph Neural-Networks", "graph neural network", "  "]) == [
        "graph neural network"
    ]
    # The same normal form in a background's text matches too (Eq. 4), plural or not.
    rows["far_other"] = (_unit(0, 0, 0, 1), ("protein folding",), "We train word-embeddings on proteins.")
    found = scipip.retrieve(_library(rows), QUERY, ["Word Embeddings"], scipip.SciPIPSettings(n_cocite=0))
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
    with_p = scipip.retrieve(library, near_a, [], scipip.SciPIPSettings(top_k=1, n_papers=2))
    assert with_p.found == ["A", "B"]  # B is co-cited with A by P's own reference list
    query = scipip.Query("q", "", QUERY, (), held_out="P")
    settings = scipip.SciPIPSettings(top_k=1, n_papers=2)
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
