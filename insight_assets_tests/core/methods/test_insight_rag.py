"""Insight-RAG: triple normalisation, the benchmark's rules, the identifier (the paper's own
examples, and a reply that is never valid JSON), the metrics, and a buried fact that Insight-RAG
finds with a small context while RAG at k = 1 misses it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from insight_assets.core.embedding.models import HashingEmbedder
from insight_assets.core.embedding.vectorize import vectorize_chunks
from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import insight_rag
from insight_assets.core.methods.insight_rag import offline, retriever, scores
from insight_assets.core.methods.insight_rag.benchmark import build_questions, matching_pairs
from insight_assets.core.methods.insight_rag.schemas import BURIED, FAILED, MATCHING, MULTI, NO_INSIGHT, OK
from insight_assets.core.methods.insight_rag.triples import (
    Triple,
    extract,
    from_extracted,
    normalise_phrase,
    normalise_relation,
)
from insight_assets.core.retrieval import Retriever
from insight_assets.core.retrieval.citing import load_sources
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets_tests.conftest import DEMO_COLLECTION, REPO_ROOT
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import Reply

# -- triples ---------------------------------------------------------------------------------------


def test_the_offline_triples_of_the_demo_are_the_same_in_any_process():
    """Two fresh processes with different hash seeds, each reading the demo's chunks with eight
    concurrent calls, store the same rows (TextBlob's lazy lexicon, filled while another thread
    was already tagging, once made two processes read different triples)."""
    command = [sys.executable, "-m", "insight_assets_tests.core.methods.triples_worker", str(DEMO_COLLECTION)]
    workers = [
        subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "2")
    ]
    outputs = []
    for worker in workers:
        stdout, stderr = worker.communicate(timeout=300)
        assert worker.returncode == 0, stderr[-3000:]
        outputs.append(stdout)
    rows = json.loads(outputs[0])
    assert len(rows) > 500 and len({row["doc_id"] for row in rows}) == len(
        list(DEMO_COLLECTION.glob("*.pdf"))
    )
    assert outputs[0] == outputs[1]


def test_relations_are_lemmatised_without_auxiliaries_and_phrases_normalised():
    assert normalise_relation(["was", "trained", "on"]) == "train on"
    assert normalise_relation(["is", "trained", "on"]) == "train on"
    assert normalise_relation(["trains", "on"]) == "train on"
    assert normalise_relation(["does", "not", "use"]) == "not use"
    assert normalise_relation(["is"]) == "be"
    assert normalise_phrase("  The   Siamese\nNetworks, ") == "siamese networks"


def test_triples_are_deduplicated_per_paper_and_a_repeated_sentence_counts_once():
    sentence = "The Zorblax encoder uses quartz lattices."
    found = extract(
        [
            ("d1", "c1", sentence),
            ("d1", "c2", sentence),  # the same sentence in the overlap of the next chunk
            ("d1", "c3", "Recently the zorblax   encoder used quartz lattices."),
            ("d2", "c4", sentence),
        ]
    )
    zorblax = [t for t in found.triples if t.subject == "zorblax encoder"]
    assert {(t.doc_id, t.relation, t.object, t.mentions) for t in zorblax} == {
        ("d1", "use", "quartz lattices", 2),
        ("d2", "use", "quartz lattices", 1),
    }
    assert next(t for t in zorblax if t.doc_id == "d1").chunk_id == "c1"


def test_a_models_triples_are_normalised_and_wordless_relations_or_pronoun_subjects_left_out():
    from insight_assets.core.methods.insight_rag.schemas import ExtractedTriple

    sentences = ["The Zorblax encoder was trained on quartz lattices.", "We set d = 300 (see Eq. 2)."]
    replied = [
        ExtractedTriple(
            subject="The Zorblax  encoder", relation="was trained on", object="quartz lattices", sentence=1
        ),
        ExtractedTriple(subject="d", relation="=", object="300", sentence=2),
        ExtractedTriple(subject="d", relation="not", object="300", sentence=2),
        ExtractedTriple(subject="we", relation="set", object="d", sentence=2),
    ]
    (found,) = from_extracted("d1", "c1", sentences, replied)
    assert (found.subject, found.relation, found.relation_text, found.object) == (
        "zorblax encoder",
        "train on",
        "was trained on",
        "quartz lattices",
    )
    assert found.sentence == sentences[0] and found.chunk_id == "c1"


# -- the benchmark ---------------------------------------------------------------------------------


def _triple(doc: str, subject: str, relation: str, obj: str) -> Triple:
    return Triple(subject, relation, obj, relation + "s", doc, f"{doc}-c", f"{subject} {relation}s {obj}.")


BODIES = {
    "d1": "Intro. The zorblax encoder uses quartz lattices. The flumox parser needs amber tables. Flumox parser again.",
    "d2": "The glimmer tagger reads slate tokens. Method. The common model handles data.",
    "d3": "The glimmer tagger reads copper tokens. The common model handles data. Results.",
    "d4": "The vexel ranker sorts pine lists and the vexel ranker sorts oak lists. The common model.",
}
TRIPLES = [
    _triple("d1", "zorblax encoder", "use", "quartz lattices"),  # buried
    _triple("d1", "flumox parser", "need", "amber tables"),  # subject twice in d1
    _triple("d2", "glimmer tagger", "read", "slate tokens"),  # multi (d2, d3)
    _triple("d3", "glimmer tagger", "read", "copper tokens"),
    _triple("d4", "vexel ranker", "sort", "pine lists"),  # two objects, one paper
    _triple("d4", "vexel ranker", "sort", "oak lists"),
    _triple("d2", "common model", "handle", "data"),  # vague subject
]


def test_the_benchmark_rules_split_buried_and_multi_document_questions_with_reasons():
    built = build_questions(TRIPLES, BODIES, max_buried=10, max_multi=10, seed=1, vague_share=0.75)
    by_kind = {item.kind: item for item in built.items}
    assert sorted(by_kind) == [BURIED, MULTI] and len(built.items) == 2
    assert by_kind[BURIED].gold_answers == ("quartz lattices",) and by_kind[BURIED].gold_doc_ids == ("d1",)
    assert by_kind[MULTI].gold_answers == ("copper tokens", "slate tokens")
    assert by_kind[MULTI].gold_doc_ids == ("d2", "d3")
    fates = {t.subject + "/" + t.object: built.fates[t.triple_id] for t in TRIPLES}
    assert fates["flumox parser/amber tables"] == (
        "dropped",
        None,
        "subject appears more than once in its paper: 2 times",
    )
    assert fates["vexel ranker/pine lists"][2].startswith("several objects from one paper")
    assert fates["common model/data"][2].startswith("vague subject")
    assert fates["zorblax encoder/quartz lattices"][0] == BURIED
    for item in built.items:
        question = offline.template_question(item.subject, item.relation_text, item.kind == MULTI)
        assert question.endswith("?") and not any(g in question for g in item.gold_answers)


def test_matching_pairs_are_balanced_and_negatives_have_no_link_either_way():
    docs = [f"p{n}" for n in range(6)]
    links = [("p0", "p1"), ("p2", "p1"), ("p3", "p4")]
    pairs = matching_pairs(docs, links, max_pairs=100, seed=3)
    positives = [p for p in pairs if p.gold_answers == ("Yes",)]
    negatives = [p for p in pairs if p.gold_answers == ("No",)]
    assert len(positives) == len(negatives) == 3
    linked = {frozenset(link) for link in links}
    assert {frozenset((p.paper_a, p.paper_b)) for p in positives} == linked
    assert not {frozenset((p.paper_a, p.paper_b)) for p in negatives} & linked
    assert pairs == matching_pairs(docs, links, max_pairs=100, seed=3)


def test_a_paper_added_displaces_only_its_share_of_the_matching_sample():
    docs = [f"p{n:02d}" for n in range(20)]
    links = [(f"p{n:02d}", f"p{(n * 7 + 3) % 20:02d}") for n in range(20)]
    before = matching_pairs(docs, links, max_pairs=20, seed=3)
    grown = [*links, ("p20", "p04"), ("p20", "p11")]

    after = matching_pairs([*docs, "p20"], grown, max_pairs=20, seed=3)

    assert len(after) == len(before) == 20
    new = [item for item in after if item not in before]
    # A shuffled sample of the grown pool kept about as many as chance (about half); the ranked one
    # keeps every pair that the new paper's own pairs do not displace.
    assert all("p20" in item.gold_doc_ids for item in new)
    assert len(new) <= 4


# -- the identifier --------------------------------------------------------------------------------

APPENDIX_A1 = [
    ("Where was Person X born in?", "Person X was born in", False),
    ("What does pizza contain?", "Pizza contains", False),
    ("What are the Cities in California?", "The cities in California are", True),
]


@pytest.mark.parametrize(("question", "fragment", "multi"), APPENDIX_A1)
def test_the_offline_identifier_answers_the_papers_own_examples(question, fragment, multi):
    found = offline.identify(question)
    assert (found.insight.lower(), found.multi_answer) == (fragment.lower(), multi)


def test_offline_completions_continue_the_fragment_from_a_sentence_or_a_listed_fact():
    sentence = "Given the difficulty, many existing systems employ a large amount of feature engineering."
    completed = offline.completion("Many existing systems employ", sentence)
    assert completed == "Many existing systems employ large amount of feature engineering."
    assert offline.read("Many existing systems employ", [completed]) == [
        ("large amount of feature engineering", 0)
    ]
    assert offline.completion("The glimmer tagger reads", sentence) == sentence  # nothing continues it

    facts = [
        "glimmer tagger | reads | slate tokens (\u201cThe glimmer tagger reads slate tokens.\u201d)",
        "zorblax encoder | uses | quartz lattices (\u201cThe Zorblax encoder uses quartz lattices.\u201d)",
    ]
    assert offline.complete_offline("The zorblax encoder uses", False, facts).text == "quartz lattices"
    assert offline.complete_offline("The flumox parser needs", False, facts).text == offline.ABSTAIN


def _items(*questions: str) -> list[insight_rag.BenchmarkItem]:
    return [
        insight_rag.BenchmarkItem(item_id=f"q{n}", kind=BURIED, question=q) for n, q in enumerate(questions)
    ]


def test_the_identifier_reads_the_public_codes_format_from_a_model(server):
    server.script.extend(
        [
            Reply('[{"Insight": "Person X was born in", "Multi-answer": false}]'),
            Reply('```json\n[{"insight": "The cities in California are", "multi_answer": true}]\n```'),
            Reply("[{}]"),
        ]
    )
    client = fake_openai_client(server, settings={"max_concurrency": 1})
    setup = insight_rag.Setup(chunks=None, insights=None, sources={}, modes=(), rag_ks=())
    found = insight_rag.identify(
        client, _items("Where was Person X born in?", "What are the cities?", "Hm."), setup
    )
    assert [(i.status, [(x.insight, x.multi_answer) for x in i.insights]) for i in found] == [
        (OK, [("Person X was born in", False)]),
        (OK, [("The cities in California are", True)]),
        (NO_INSIGHT, []),
    ]


def test_invalid_json_twice_is_a_failed_row_never_zero_insights(server):
    server.default = Reply("Person X was born in, multi answer: false")
    client = fake_openai_client(server)
    setup = insight_rag.Setup(chunks=None, insights=None, sources={}, modes=(), rag_ks=())
    (found,) = insight_rag.identify(client, _items("Where was Person X born in?"), setup)
    assert found.status == FAILED and not found.insights
    assert "JSON" in found.error
    assert len(server.requests) == 2  # the call and one repair


# -- metrics ---------------------------------------------------------------------------------------


def test_exact_match_f1_hits_and_mrr_on_known_strings():
    assert scores.exact_match("It uses the Siamese networks [S1].", "siamese networks") == 1.0
    assert scores.exact_match("siamese network", "siamese networks") == 0.0
    assert scores.averaged(scores.exact_match, "slate tokens; oak", ["slate tokens", "copper tokens"]) == 0.5
    assert scores.token_f1("the quartz lattices of ice", "quartz lattices") == pytest.approx(
        2 * 0.5 * 1 / 1.5
    )
    assert scores.token_f1("nothing", "quartz") == 0.0
    ranked = ["d3", "d1", "d3", "d2"]
    assert scores.hits_at(ranked, "d2", 3) == 0.0 and scores.hits_at(ranked, "d2", 4) == 1.0
    assert scores.reciprocal_rank(ranked, "d1") == 0.5 and scores.reciprocal_rank(ranked, "d9") == 0.0
    assert scores.retrieval_scores(ranked, ["d1", "d2"]) == (1.0, pytest.approx((0.5 + 0.25) / 2))


def scored_row(
    item_id: str, kind: str, method: str, right: bool, status: str = OK, hits: float | None = None
):
    return {
        "item_id": item_id,
        "kind": kind,
        "method": method,
        "status": status,
        "exact_match": float(right),
        "f1": None if kind == MATCHING else float(right),
        "context_tokens": 10,
        "doc_hits50": hits,
        "doc_mrr": hits,
        "unit_hits50": hits,
        "unit_mrr": hits,
    }


def test_matching_f1_is_the_f1_of_yes_over_the_set_not_the_accuracy_again():
    gold = {"p1": "Yes", "p2": "Yes", "n1": "No", "n2": "No"}
    always_yes = [scored_row(item, MATCHING, "rag@1", right=label == "Yes") for item, label in gold.items()]
    always_no = [scored_row(item, MATCHING, "rag@3", right=label == "No") for item, label in gold.items()]
    failed = [scored_row(item, MATCHING, "vanilla", right=False, status=FAILED) for item in gold]

    table = scores.method_table(always_yes + always_no + failed, {}, gold)

    f1 = {row["method"]: (row["exact_match"], row["f1"]) for row in table}
    assert f1["rag@1"] == (0.5, pytest.approx(0.667))  # every pair said to cite: precision 0.5, recall 1
    assert f1["rag@3"] == (0.5, 0.0)  # never "Yes": no pair that cites is found
    # A method that failed every item has no score: not the 0.0 of answers it never gave.
    assert f1["vanilla"] == (None, None)
    (vanilla,) = [row for row in table if row["method"] == "vanilla"]
    assert vanilla["failed"] == 4 and vanilla["context_tokens"] is None


def test_a_method_that_failed_some_items_is_scored_on_all_of_them():
    gold = {"p1": "Yes", "n1": "No"}
    rows = [
        scored_row("p1", MATCHING, "rag@1", right=True),
        scored_row("n1", MATCHING, "rag@1", right=False, status=FAILED),
    ]
    (row,) = scores.method_table(rows, {}, gold)
    assert row["failed"] == 1 and row["exact_match"] == 0.5  # a failed answer is a wrong one


def test_circular_modes_are_said_per_row_and_hits_at_50_by_construction_once_for_the_table():
    rows = [
        scored_row("b1", BURIED, insight_rag.schemas.insight_method(mode), right=True, hits=1.0)
        for mode in ("index", "llm", "sentences")
    ]
    table = scores.method_table(rows, {}, {})
    caveats = {row["method"]: row["caveat"] or "" for row in table}

    assert "circular" in caveats["insight-rag:index"] and "circular" in caveats["insight-rag:llm"]
    assert caveats["insight-rag:sentences"] == ""
    assert not any("by construction" in caveat for caveat in caveats.values())
    (said_once,) = scores.table_caveats(table, papers=20)
    assert "1 by construction here: 20 papers" in said_once
    assert scores.table_caveats(table, papers=80) == []


# -- a buried fact ---------------------------------------------------------------------------------

COLLECTION = "buried"
# The fact sits mid-document in a chunk about something else; the question asks it in other words
# ("use" for "employs") while a distractor chunk repeats the question's words.
CHUNKS = {
    "d1": [
        "The Zorblax protocol was designed in 2019 for sensor networks in remote valleys.",
        (
            "Calibration of the antennas took three weeks. The Zorblax protocol employs quartz lattices. "
            "Field teams recorded humidity, wind speed and battery levels every hour during the winter."
        ),
        "Battery levels fell faster in cold weather, which shortened each deployment.",
    ],
    "d2": [
        (
            "What the Zorblax protocol uses and what Zorblax users use it for is asked often: Zorblax, "
            "Zorblax protocol, use, uses, used."
        ),
        "Sourdough bread rises slowly because wild yeast ferments the flour.",
    ],
}


def _collection(root) -> tuple[insight_rag.Setup, Warehouse]:
    warehouse, vectors = Warehouse(root / "warehouse.duckdb"), VectorStore(str(root / "lancedb"))
    rows = [
        {
            "collection": COLLECTION, "profile": "passage", "chunk_id": hashlib.md5(f"{d}{n}".encode()).hexdigest(),
            "doc_id": d, "chunk_index": n, "text": text, "char_start": 0, "char_end": len(text),
            "page_start": n + 1, "page_end": n + 1, "token_count": len(text.split()),
            "text_sha": hashlib.sha256(text.encode()).hexdigest(),
        }
        for d, texts in CHUNKS.items()
        for n, text in enumerate(texts)
    ]  # fmt: skip
    embedder = HashingEmbedder()
    sentences = [
        insight_rag.Sentence(hashlib.md5(s.encode()).hexdigest(), row["doc_id"], row["chunk_id"], s)
        for row in rows
        for s in __import__("insight_assets.core.text", fromlist=["sentence_texts"]).sentence_texts(
            row["text"]
        )
    ]
    triples = extract((s.doc_id, s.chunk_id, s.text) for s in sentences).triples
    warehouse.replace_partition(
        COLLECTION,
        {
            "parsed_documents": pa.Table.from_pylist(
                [
                    {"collection": COLLECTION, "doc_id": d, "file": f"{d}.pdf", "title": f"Paper {d}"}
                    for d in CHUNKS
                ]
            ),
            "chunks": pa.Table.from_pylist(rows),
            **insight_rag.store.triple_tables(COLLECTION, triples, sentences, insight_rag.EXTRACTOR),
        },
    )
    vectors.replace(COLLECTION, vectorize_chunks(COLLECTION, rows, embedder, None).table)
    vectors.build_text_index(COLLECTION)
    units = VectorStore(str(root / "lancedb"), kind="insight_rag_index")
    texts = retriever.embedding_texts(triples, sentences)
    units.replace(
        COLLECTION,
        retriever.index_table(
            COLLECTION, embedder.variant, triples, sentences, normalize_rows(embedder.embed(texts))
        ),
    )
    units.build_text_index(COLLECTION)
    opened = {
        p: retriever.open_units(warehouse, units, COLLECTION, embedder, p) for p in retriever.UNIT_PROFILES
    }
    chunk_of = {t.triple_id: t.chunk_id for t in triples} | {s.sentence_id: s.chunk_id for s in sentences}
    setup = insight_rag.Setup(
        chunks=Retriever.open(warehouse, vectors, COLLECTION, embedder, "passage"),
        insights=insight_rag.InsightRetriever(
            opened["triples"], opened["sentences"], chunk_of, {t.triple_id: t for t in triples}
        ),
        sources=load_sources(warehouse, COLLECTION, "passage"),
        modes=("index", "sentences"),
        rag_ks=(1, 3),
    )
    return setup, warehouse


def test_a_buried_fact_is_found_by_insight_rag_with_less_context_while_rag_at_1_misses_it(tmp_path):
    setup, _ = _collection(tmp_path)
    client = LLMClient(LLMSettings())
    item = insight_rag.BenchmarkItem(
        item_id="q",
        kind=BURIED,
        question="What does the Zorblax protocol use?",
        gold_answers=("quartz lattices",),
    )
    identified = insight_rag.identify(client, [item], setup)
    assert identified[0].insights[0].insight.lower() == "the zorblax protocol uses"
    answers = {a.method: a for a in insight_rag.answer(client, [item], identified, setup)}
    em = {m: scores.exact_match(a.answer, "quartz lattices") for m, a in answers.items()}
    assert em["rag@1"] == 0.0 and em["insight-rag:index"] == 1.0
    assert answers["insight-rag:index"].context_tokens < answers["rag@1"].context_tokens
    assert answers["insight-rag:index"].cited_chunk_ids == (hashlib.md5(b"d11").hexdigest(),)
    assert em["vanilla"] == 0.0
