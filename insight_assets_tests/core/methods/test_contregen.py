"""ConTReGen's tree on a synthetic collection, with a scripted model behind the fake OpenAI server:
the depth limit, both prunings, the bottom-up order, citations surviving to the root, a node's
failure, and a two-hop corpus where the tree reaches what one retrieval cannot."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

import pyarrow as pa
import pytest

from insight_assets.core.embedding.models import HashingEmbedder
from insight_assets.core.embedding.vectorize import vectorize_chunks
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods import contregen
from insight_assets.core.methods.contregen import offline, records, scores
from insight_assets.core.methods.contregen.schemas import (
    DEPTH_LIMIT,
    FAILED,
    PRUNED_NO_PASSAGE,
    PRUNED_NOT_NEEDED,
    TreeQuestion,
)
from insight_assets.core.retrieval import Retriever
from insight_assets.core.retrieval.citing import cited_chunks
from insight_assets.core.storage.stores import VectorStore, Warehouse
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import Failure, Received, Reply

COLLECTION = "two-hop"
QUERY = "How do glaciers shape alpine valleys?"
# Facet A answers the query in its words and names facet B; facet B shares no word with the query,
# so only a sub-question about moraines reaches it. The rest are distractors.
DOCUMENTS = {
    "a1": ["Glaciers shape alpine valleys into broad troughs as the moving ice erodes the valley floor."],
    "a2": ["Alpine valleys shaped by glaciers keep moraine ridges where the ice margin stood."],
    "b1": ["Moraine ridges hold unsorted till: boulders, gravel and clay dumped at a melting ice front."],
    "b2": ["A terminal moraine marks the farthest advance; its till is unsorted debris."],
    "x1": ["Sourdough bread rises slowly because wild yeast ferments the flour."],
    "x2": ["Dogs need daily walks and regular exercise to stay healthy."],
    "x3": ["Redshift measurements reveal how fast a distant galaxy recedes."],
    "x4": ["Dropout randomly disables units during training to prevent overfitting."],
}
GOLD = ("a1", "a2", "b1", "b2")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Retriever, dict]:
    root = tmp_path_factory.mktemp("contregen")
    warehouse, vectors = Warehouse(root / "warehouse.duckdb"), VectorStore(str(root / "lancedb"))
    rows = []
    for doc_id, texts in DOCUMENTS.items():
        for index, text in enumerate(texts):
            rows.append(
                {
                    "collection": COLLECTION, "profile": "passage", "chunk_id": hashlib.md5(f"{doc_id}{index}".encode()).hexdigest(),
                    "doc_id": doc_id, "chunk_index": index, "text": text, "char_start": 0, "char_end": len(text),
                    "page_start": index + 1, "page_end": index + 1, "token_count": len(text.split()),
                    "text_sha": hashlib.sha256(text.encode()).hexdigest(),
                }
            )  # fmt: skip
    documents = [
        {"collection": COLLECTION, "doc_id": d, "file": f"{d}.pdf", "title": f"Paper {d}"} for d in DOCUMENTS
    ]
    warehouse.replace_partition(
        COLLECTION,
        {"parsed_documents": pa.Table.from_pylist(documents), "chunks": pa.Table.from_pylist(rows)},
    )
    embedder = HashingEmbedder()
    vectors.replace(COLLECTION, vectorize_chunks(COLLECTION, rows, embedder, None).table)
    vectors.build_text_index(COLLECTION)
    retriever = Retriever.open(warehouse, vectors, COLLECTION, embedder, "passage")
    return retriever, {row["chunk_id"]: row["doc_id"] for row in rows}


class ScriptedModel:
    """Answers each ConTReGen prompt in its format. ``plan`` maps (question, passage texts) to
    sub-questions; ``needed`` (of a sub-question) and ``relevant`` (of a sub-question's passage)
    decide the verdicts; a prompt holding ``fail_on`` gets a server error."""

    def __init__(
        self,
        plan: Callable[[str, list[str]], list[str]],
        needed: Callable[[str], bool] = lambda q: True,
        relevant: Callable[[str, str], bool] = lambda question, text: True,
        fail_on: str | None = None,
    ):
        self.plan, self.needed, self.relevant, self.fail_on = plan, needed, relevant, fail_on
        self.written: list[str] = []  # the questions synthesized, in order

    def __call__(self, request: Received) -> Reply | Failure:
        prompt = request.last_user_text()
        if self.fail_on and self.fail_on in prompt:
            return Failure(500, "scripted server error")
        passages = re.findall(r"^\[(S\d+)\] \(.*?\) (.*)$", prompt, re.MULTILINE)
        if "You plan the search" in prompt:
            question = re.search(r"The question to plan for now: (.*)", prompt).group(1)
            subs = self.plan(question, [text for _, text in passages])
            return Reply(json.dumps({"further_plan_needed": bool(subs), "sub_questions": subs}))
        if "You check a search plan" in prompt:
            subs = re.findall(r"^(\d+)\. (.*)$", prompt, re.MULTILINE)
            verdicts = [
                {"index": int(n), "needed": self.needed(q), "reason": "scripted", "search_query": q}
                for n, q in subs
            ]
            return Reply(json.dumps({"verdicts": verdicts}))
        if "You judge retrieved passages" in prompt:
            question = re.search(r"The sub-question that retrieved these passages: (.*)", prompt).group(1)
            verdicts = [
                {"id": a, "relevant": self.relevant(question, text), "reason": "scripted"}
                for a, text in passages
            ]
            return Reply(json.dumps({"verdicts": verdicts}))
        sources = re.findall(r"^\[(S\d+)\] [^(]", prompt, re.MULTILINE)
        cites = "".join(f" [{alias}]" for alias, _ in passages) + "".join(f" [{a}]" for a in sources)
        if "You summarize what a collection" in prompt:
            question = re.search(r"The facet \(a sub-question of it\): (.*)", prompt).group(1)
            self.written.append(question)
            return Reply(f"On {question}:{cites}.")
        if "comprehensive long-form answer" in prompt:
            self.written.append(re.search(r"Question: (.*)", prompt).group(1))
            return Reply(f"The answer.{cites}")
        return Reply("unexpected prompt")


def _client(server, model: ScriptedModel) -> LLMClient:
    server.responder = model
    return fake_openai_client(server)


def _moraine_plan(question: str, passages: list[str]) -> list[str]:
    """Context-driven: a sub-question about moraines once a passage names them, and a second,
    off-topic one; none below the first level."""
    if question != QUERY:
        return ["What lies under the moraine?"] if "moraine" in question else []
    if any("moraine" in text for text in passages):
        return ["What is moraine till?", "Which bread rises slowly?"]
    return []


def test_the_tree_reaches_a_facet_the_question_shares_no_word_with(server, corpus):
    retriever, chunk_docs = corpus
    model = ScriptedModel(_moraine_plan, relevant=lambda question, text: "bread" not in question)
    client = _client(server, model)
    settings = contregen.TreesSettings(top_k=2, max_depth=1)
    question = TreeQuestion("q1", QUERY, GOLD)

    (tree,), sources = contregen.grow_trees(client, retriever, [question], settings)
    answers = {
        a.method: a
        for a in contregen.write_answers(
            client, retriever, [tree], sources, settings, contregen.AnswersSettings()
        )
    }

    root_docs = {chunk_docs[p.chunk_id] for p in tree.root.passages}
    assert root_docs == {"a1", "a2"}  # the question alone reaches facet A only
    moraine, bread = tree.nodes["0.1"], tree.nodes["0.2"]
    assert {p.doc_id for p in moraine.relevant_passages} == {"b1", "b2"}
    assert bread.status == PRUNED_NO_PASSAGE and "none of its 2 passages" in bread.reason
    assert moraine.expansion == DEPTH_LIMIT
    recall = {m: scores.recall(a.retrieved, chunk_docs, GOLD) for m, a in answers.items()}
    used = {m: scores.recall(a.used, chunk_docs, GOLD) for m, a in answers.items()}
    assert recall[contregen.CONTREGEN] == used[contregen.CONTREGEN] == 1.0
    assert recall[contregen.RETGEN] == 0.5
    # The tree's answer cites the moraine passages that only its sub-question found.
    cited_docs = {chunk_docs[c] for c in answers[contregen.CONTREGEN].cited}
    assert {"b1", "b2"} <= cited_docs
    assert answers[contregen.CONTREGEN].calls == 1 + 1 + 2 + 1 + 1  # plan, verify, 2 judges, leaf, root


def test_depth_limit_not_needed_pruning_and_bottom_up_order(server, corpus):
    retriever, _ = corpus

    def plan(question: str, passages: list[str]) -> list[str]:
        return [f"{question} / deeper", f"{question} / skip"]

    model = ScriptedModel(plan, needed=lambda q: not q.endswith("skip"))
    client = _client(server, model)
    settings = contregen.TreesSettings(top_k=2, max_depth=2)

    (tree,), sources = contregen.grow_trees(client, retriever, [TreeQuestion("q1", QUERY)], settings)
    contregen.write_answers(
        client, retriever, [tree], sources, settings, contregen.AnswersSettings(baselines=False)
    )

    assert max(node.depth for node in tree.nodes.values()) == 2
    skipped = [n for n in tree.nodes.values() if n.question.endswith("skip")]
    assert len(skipped) == 2 and all(n.status == PRUNED_NOT_NEEDED and not n.passages for n in skipped)
    leaf = tree.nodes["0.1.1"]
    assert leaf.expansion == DEPTH_LIMIT and not leaf.children
    # children are written before their parents: the leaf, then its parent, then the root
    assert model.written == [leaf.question, tree.nodes["0.1"].question, QUERY]
    # a leaf's citation survives its parent's merge into the root's answer
    leaf_chunks = set(cited_chunks(leaf.summary))
    assert leaf_chunks and leaf_chunks <= set(cited_chunks(tree.root.summary))


def test_a_failed_node_is_recorded_and_the_question_still_gets_an_answer(server, corpus):
    retriever, _ = corpus
    model = ScriptedModel(
        lambda q, p: ["What is moraine till?", "Which bread rises slowly?"] if q == QUERY else [],
        fail_on="The sub-question that retrieved these passages: Which bread",
    )
    client = _client(server, model)
    settings = contregen.TreesSettings(top_k=2, max_depth=1)

    (tree,), sources = contregen.grow_trees(client, retriever, [TreeQuestion("q1", QUERY)], settings)
    (answer,) = contregen.write_answers(
        client, retriever, [tree], sources, settings, contregen.AnswersSettings(baselines=False)
    )

    failed = tree.nodes["0.2"]
    assert failed.status == FAILED and "500" in (failed.error or "")
    assert tree.nodes["0.1"].kept and answer.status == "written" and answer.cited


def test_trees_survive_their_rows(server, corpus):
    retriever, _ = corpus
    client = _client(server, ScriptedModel(_moraine_plan))
    settings = contregen.TreesSettings(top_k=2, max_depth=2)
    trees, _ = contregen.grow_trees(client, retriever, [TreeQuestion("q1", QUERY, GOLD)], settings)

    table = records.tree_rows(COLLECTION, trees, "scripted")
    (back,) = records.trees_from_rows(table.to_pylist())

    assert back.question == trees[0].question and back.usage == trees[0].usage
    assert {k: (n.status, n.children, n.passages) for k, n in back.nodes.items()} == {
        k: (n.status, n.children, n.passages) for k, n in trees[0].nodes.items()
    }


def test_offline_tree_plans_from_passages_and_verifies_by_similarity(corpus):
    retriever, _ = corpus
    client = LLMClient(LLMSettings())
    settings = contregen.TreesSettings(top_k=2, max_depth=1, relevance_ratio=0.0)

    (tree,), sources = contregen.grow_trees(client, retriever, [TreeQuestion("q1", QUERY, GOLD)], settings)
    (answer,) = contregen.write_answers(
        client, retriever, [tree], sources, settings, contregen.AnswersSettings(baselines=False)
    )

    children = [tree.nodes[c] for c in tree.root.children]
    assert any("moraine" in child.question for child in children)  # a facet of the root's passages
    assert all(child.reason.startswith("offline:") for child in children)
    assert answer.status == "written" and set(answer.cited) <= set(answer.used)


def test_offline_verdicts_follow_the_thresholds():
    verdicts = offline.verify_sub_questions_offline(
        "q",
        "q",
        [
            {"index": 1, "text": "What about moraine till?", "similarity": 0.5, "repeat": 0.2},
            {"index": 2, "text": "far", "similarity": 0.1, "repeat": 0.2},
            {"index": 3, "text": "again", "similarity": 0.9, "repeat": 0.95},
        ],
        need_similarity=0.3,
        repeat_similarity=0.9,
    ).verdicts
    assert [v.needed for v in verdicts] == [True, False, False]
    assert verdicts[0].search_query == "moraine till" and "repeats" in verdicts[2].reason
    judged = offline.judge_passages_offline(
        "q", "s", [{"id": "S1", "similarity": 0.4}, {"id": "S2", "similarity": 0.1}], floor=0.3
    ).verdicts
    assert [v.relevant for v in judged] == [True, False]


def test_recall_and_chance():
    docs = {"c1": "a", "c2": "b", "c3": "z"}
    assert scores.recall(["c1", "c3"], docs, ["a", "b"]) == 0.5
    assert scores.recall(["c1"], docs, []) is None
    questions = [TreeQuestion("q", "?", ("a", "b"))]
    scored = [scores.ScoredAnswer("q", contregen.RETGEN, 2, 0.5, 0.5, 1, 5, 3.0, 4.0, 1, 10, 5)]
    rows = {r["method"]: r for r in scores.method_table(scored, questions, collection_size=8)}
    assert rows["chance"]["recall"] == 0.25 and rows[contregen.RETGEN]["recall"] == 0.5


def test_settings_are_validated():
    with pytest.raises(ValueError, match="retrieval_mode"):
        contregen.TreesSettings(retrieval_mode="fuzzy")
    with pytest.raises(ValueError, match="context_tokens"):
        contregen.AnswersSettings(context_tokens=100)


def test_the_generation_metrics_against_a_reference_paragraph():
    from insight_assets.core.citations.paragraphs import ReferenceParagraph
    from insight_assets.core.methods.contregen import references

    paragraph = ReferenceParagraph("p", "A paper", "related work", "2 Related Work", "Text [3].", ("a", "b"))
    (question,) = references.reference_questions([paragraph, paragraph], limit=1)
    assert question.question == "Related work of 'A paper'" and question.gold == ("a", "b")
    assert question.source == "reference" and question.question_id.startswith("ref-")
    # citation markers of both kinds are not content
    assert (
        references.rouge_l(
            "Skip-thought vectors encode sentences (Kiros et al., 2015).",
            f"Skip-thought vectors encode sentences [{'a' * 16}].",
        )
        == 1.0
    )
    assert references.answer_sentences(f"Vectors encode whole sentences [{'a' * 16}]. Yes.") == [
        "Vectors encode whole sentences."
    ]
    assert references.nli_shares(["entailment", "neutral", "contradiction", "entailment"]) == (0.5, 0.25)
    themes = {"c1": 1, "c2": 2, "c3": 3}
    papers = {"a": {1, 2}, "b": {2, 4}}
    assert references.facet_coverage(["a", "b"], ["c1", "c2", "c9"], themes, papers) == round(2 / 3, 4)
    assert references.facet_coverage([], ["c1"], themes, papers) is None
    assert references.facet_coverage(["z"], ["c1"], themes, papers) is None


def test_the_offline_nli_stand_in_sees_entailment_by_words_and_never_a_contradiction():
    from insight_assets.core.methods.contregen.offline import nli_offline

    verdicts = nli_offline(
        "Skip-thought vectors encode whole sentences with an encoder-decoder model.",
        [
            "Skip-thought vectors encode sentences.",
            "Bananas are yellow fruit.",
            "Skip-thought vectors do not encode sentences.",
        ],
    ).verdicts
    assert verdicts[:2] == ["entailment", "neutral"] and "contradiction" not in verdicts
