"""Insight generation: the offline implementations, the prompts and the grounding check."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest

from insight_assets.core.keyphrases import rake_keyphrases
from insight_assets.core.llm import InvalidOutputError, LLMClient, LLMSettings, TaskInputError
from insight_assets.core.methods.insightgen import (
    DIRECT_INSIGHTS,
    GENERATE_INSIGHTS,
    INFER_INTENT,
    INSIGHT_TYPES,
    ContextPassage,
    InsightSet,
    UserIntent,
    check_insights,
    generate_insights,
    uses_chain_of_thought,
)
from insight_assets_tests.fake_model_server import Reply

QUESTION = "How does quantization trade accuracy for inference speed in large language models?"
ANSWER = (
    "Quantization stores weights in fewer bits, which reduces memory traffic and speeds up inference. "
    "Eight-bit weights usually keep accuracy close to the full-precision model. "
    "Post-training quantization needs no retraining."
)
PASSAGES = [
    ContextPassage(
        "c1",
        "Quantization stores weights in fewer bits, which reduces memory traffic and speeds up inference. "
        "However, four-bit quantization degrades accuracy on reasoning benchmarks by up to 6%. "
        "Outlier features in activations make uniform quantization fail for models above 6.7B parameters.",
    ),
    ContextPassage(
        "c2",
        "Mixed-precision decomposition keeps outlier dimensions in 16-bit at the expense of extra kernel "
        "complexity. This trade-off between speed and accuracy depends on the hardware's support for "
        "integer matrix multiplication.",
    ),
    ContextPassage(
        "c3",
        "Quantized models are deployed in production on mobile phones, where memory is the main "
        "constraint. Quantization-aware training could recover accuracy by simulating low-precision "
        "arithmetic during fine-tuning.",
    ),
    ContextPassage(
        "c4",
        "Knowledge distillation is an alternative to quantization: a small student model learns from a "
        "large teacher instead of compressing the teacher's weights. Eight-bit weights usually keep "
        "accuracy close to the full-precision model.",
    ),
    # Very relevant to the question, but mostly a restatement of the answer's first sentence.
    ContextPassage(
        "c5",
        "Storing the weights of large language models in fewer bits reduces memory traffic, so "
        "quantization speeds up inference in large language models. The survey covers forty papers "
        "published between 2020 and 2024.",
    ),
]
CHUNK_IDS = {passage.chunk_id for passage in PASSAGES}


def offline_client() -> LLMClient:
    return LLMClient(LLMSettings())


def normalised(text: str) -> str:
    return " ".join(text.split()).lower()


def insight_json(*, chunk_ids: list[str], type_: str = "potential issue or objection") -> dict:
    return {
        "type": type_,
        "hook": "Four bits cost accuracy",
        "body": "Four-bit quantization loses up to 6% on reasoning benchmarks.",
        "realization": "Speed gains below eight bits are not free.",
        "justification": "The answer implies quantization is nearly lossless.",
        "chunk_ids": chunk_ids,
        "relevance": 5,
        "novelty": 4,
        "usefulness": 4,
        "intent_alignment": 5,
    }


INTENT_JSON = {"intent": "Decide how far to quantize", "persona": "ML engineer", "goals": ["accuracy loss"]}


@pytest.mark.parametrize("chain_of_thought", [True, False])
@pytest.mark.parametrize("max_insights", [2, 5])
def test_offline_insights_are_grounded_bounded_new_and_deterministic(chain_of_thought, max_insights):
    client = offline_client()

    first = generate_insights(
        client,
        question=QUESTION,
        answer=ANSWER,
        passages=PASSAGES,
        chain_of_thought=chain_of_thought,
        max_insights=max_insights,
    )
    second = generate_insights(
        client,
        question=QUESTION,
        answer=ANSWER,
        passages=PASSAGES,
        chain_of_thought=chain_of_thought,
        max_insights=max_insights,
    )

    assert first == second
    intent, insights = first
    assert (intent is not None) == chain_of_thought
    assert 1 <= len(insights.insights) <= max_insights
    sources = {passage.chunk_id: normalised(passage.text) for passage in PASSAGES}
    for insight in insights.insights:
        assert insight.type in INSIGHT_TYPES
        [chunk_id] = insight.chunk_ids
        assert chunk_id in CHUNK_IDS
        assert normalised(insight.body) in sources[chunk_id]  # extracted verbatim from its passage
        assert normalised(insight.body) not in normalised(ANSWER)
        assert f"[{chunk_id}]" in insight.justification
        assert all(0 <= score <= 5 for score in (insight.relevance, insight.novelty, insight.usefulness))
    # One insight per passage before a second from any: five passages are enough here.
    chunk_ids = [insight.chunk_ids[0] for insight in insights.insights]
    assert len(set(chunk_ids)) == len(chunk_ids)


def test_offline_direct_and_chain_of_thought_choose_differently():
    client = offline_client()
    common = {"question": QUESTION, "answer": ANSWER, "passages": PASSAGES, "max_insights": 3}

    _, direct = generate_insights(client, chain_of_thought=False, **common)
    intent, cot = generate_insights(client, chain_of_thought=True, **common)

    direct_bodies = [insight.body for insight in direct.insights]
    cot_bodies = [insight.body for insight in cot.insights]
    assert direct_bodies != cot_bodies
    # Direct ranks by relevance alone and takes the restatement of the answer; the chain of
    # thought weighs novelty against the answer and leaves it out.
    assert direct.insights[0].chunk_ids == ["c5"] and direct.insights[0].novelty <= 2
    assert "c5" not in {insight.chunk_ids[0] for insight in cot.insights}
    assert min(insight.novelty for insight in cot.insights) >= 4
    assert "intent" in cot.insights[0].justification or "goals" in cot.insights[0].justification
    assert intent is not None and intent.persona == "practitioner weighing trade-offs"


def test_offline_types_follow_cue_words():
    _, insights = generate_insights(
        offline_client(), question=QUESTION, answer=ANSWER, passages=PASSAGES, chain_of_thought=True
    )

    types = {insight.body.split()[0]: insight.type for insight in insights.insights}
    assert types["However,"] == "potential issue or objection"
    assert types["This"] == "tradeoff"
    assert types["Knowledge"] == "alternate framing"


@pytest.mark.parametrize(
    ("question", "persona"),
    [
        ("How do sparse attention and linear attention compare on long documents?", "researcher comparing"),
        ("What trade-offs arise when pruning attention heads?", "weighing trade-offs"),
        ("What would happen if retrieval augmented every layer?", "exploring implications"),
        ("Why do recurrent networks forget distant tokens?", "seeking an explanation"),
        ("How does speculative decoding verify draft tokens?", "how things work"),
        ("Which datasets cover legal reasoning?", "surveying the topic"),
    ],
)
def test_offline_intent_is_keyed_on_the_questions_wording(question, persona):
    intent = offline_client().run(INFER_INTENT, question=question, answer=ANSWER)

    assert persona in intent.persona
    assert intent.goals and all(goal in question.lower() for goal in intent.goals)
    assert intent.goals[0] in intent.intent


def test_keyphrases_are_nominal_runs_and_honour_exclusions():
    sentence = "However, four-bit quantization degrades accuracy on reasoning benchmarks by up to 6%."

    assert rake_keyphrases(sentence, limit=3) == ["four-bit quantization", "reasoning benchmarks", "accuracy"]
    assert rake_keyphrases(sentence, limit=1, exclude={"four-bit", "quantization"}) == [
        "reasoning benchmarks"
    ]


def test_keyphrases_are_never_the_authors_a_sentence_cites():
    sentence = (
        "We focus on human evaluation of faithfulness, which Wang et al. (2022) define as consistency "
        "with the source (Karpinska et al., 2021; Krishna and Iyyer, 2023) [12]."
    )
    phrases = rake_keyphrases(sentence, limit=10)
    assert "faithfulness" in phrases
    assert not any(name in phrase for phrase in phrases for name in ("wang", "karpinska", "krishna", "et al"))


def test_offline_fails_clearly_without_usable_context():
    with pytest.raises(InvalidOutputError, match="adds to the answer"):
        generate_insights(
            offline_client(),
            question=QUESTION,
            answer=ANSWER,
            passages=[ContextPassage("c1", ANSWER)],
            chain_of_thought=False,
        )
    with pytest.raises(TaskInputError, match="at least one context passage"):
        generate_insights(
            offline_client(), question=QUESTION, answer=ANSWER, passages=[], chain_of_thought=True
        )
    with pytest.raises(TaskInputError, match="max_insights"):
        generate_insights(
            offline_client(),
            question=QUESTION,
            answer=ANSWER,
            passages=PASSAGES,
            chain_of_thought=False,
            max_insights=0,
        )


def test_check_rejects_unknown_chunk_ids_and_too_many_insights():
    inputs = {"passages": [{"chunk_id": "c1", "text": "x"}], "max_insights": 1}
    output = InsightSet.model_validate(
        {"insights": [insight_json(chunk_ids=["c1"]), insight_json(chunk_ids=["c1", "c9"])]}
    )

    [unknown, too_many] = check_insights(output, inputs)

    assert "'c9'" in unknown and "use only 'c1'" in unknown
    assert "at most 1" in too_many


def test_methods_map_to_their_prompting():
    assert [
        uses_chain_of_thought(m) for m in ("insightgen", "direct", "cot", "vector_topk", "vector_topk_cot")
    ] == [
        True,
        False,
        True,
        False,
        True,
    ]
    with pytest.raises(ValueError, match="unknown method"):
        uses_chain_of_thought("faiss")


def test_chain_of_thought_asks_for_intent_first_then_grounded_typed_scored_insights(server, model_client):
    server.queue(
        Reply(json.dumps(INTENT_JSON)),
        Reply(json.dumps({"insights": [insight_json(chunk_ids=["c1", "c2"])]})),
    )

    intent, insights = generate_insights(
        model_client, question=QUESTION, answer=ANSWER, passages=PASSAGES, chain_of_thought=True
    )

    assert intent == UserIntent.model_validate(INTENT_JSON)
    assert insights.insights[0].chunk_ids == ["c1", "c2"]
    first, second = server.requests
    intent_prompt, insight_prompt = first.last_user_text(), second.last_user_text()
    assert QUESTION in intent_prompt and "Eight-bit weights usually keep accuracy" in intent_prompt
    assert "persona" in intent_prompt and "[c1]" not in intent_prompt
    for expected in (QUESTION, "Post-training quantization needs no retraining.", "ML engineer",
                     "Decide how far to quantize", "accuracy loss"):  # fmt: skip
        assert expected in insight_prompt
    for passage in PASSAGES:
        assert f"[{passage.chunk_id}] {passage.text[:40]}" in insight_prompt
    for insight_type in INSIGHT_TYPES:
        assert f"- {insight_type}\n" in insight_prompt
    assert re.search(r"integer from 0 \(not at all\) to 5 \(fully\)", insight_prompt)
    for score in ("relevance", "novelty", "usefulness", "intent_alignment", "realization", "justification"):
        assert f'"{score}"' in insight_prompt
    assert "between 1 and 5 insights" in insight_prompt
    # Appendix C's generation settings.
    assert second.body["temperature"] == 0.7
    assert 4000 in (second.body.get("max_tokens"), second.body.get("max_completion_tokens"))


def test_direct_is_one_prompt_stating_the_requirements(server, model_client):
    server.queue(Reply(json.dumps({"insights": [insight_json(chunk_ids=["c4"])]})))

    intent, insights = generate_insights(
        model_client,
        question=QUESTION,
        answer=ANSWER,
        passages=PASSAGES,
        chain_of_thought=False,
        max_insights=3,
    )

    assert intent is None and insights.insights[0].chunk_ids == ["c4"]
    [request] = server.requests
    prompt = request.last_user_text()
    for requirement in (
        "Relevance:",
        "Novelty:",
        "Diversity:",
        "never repeat or paraphrase",
        "between 1 and 3",
    ):
        assert requirement in prompt
    assert all(f"- {insight_type}\n" in prompt for insight_type in INSIGHT_TYPES)
    assert all(f"[{passage.chunk_id}]" in prompt for passage in PASSAGES)


def test_an_unknown_chunk_id_gets_a_repair_call_and_the_corrected_answer_is_used(server, model_client):
    server.queue(
        Reply(json.dumps({"insights": [insight_json(chunk_ids=["c9"])]})),
        Reply(json.dumps({"insights": [insight_json(chunk_ids=["c3"])]})),
    )

    _, insights = generate_insights(
        model_client, question=QUESTION, answer=ANSWER, passages=PASSAGES, chain_of_thought=False
    )

    assert insights.insights[0].chunk_ids == ["c3"]
    assert len(server.requests) == 2
    assert "'c9'" in server.requests[1].last_user_text()


def test_task_defaults_follow_the_paper():
    for task in (INFER_INTENT, GENERATE_INSIGHTS, DIRECT_INSIGHTS):
        assert (task.temperature, task.max_tokens) == (0.7, 4000)


def _words_model(request):
    """A scripted model for the RAG baselines: each query task answers with one keyword query; the
    re-rank rates the passage holding "zeta" 5 and every other 0."""
    from insight_assets_tests.fake_model_server import Reply

    prompt = request.last_user_text()
    if "into simpler sub-queries" in prompt:
        return Reply(json.dumps({"queries": ["beta"]}))
    if "as different search queries" in prompt:
        return Reply(json.dumps({"queries": ["gamma"]}))
    if "used only as a search query (HyDE)" in prompt:
        return Reply("delta delta delta")
    if "You refine a search" in prompt:
        return Reply(json.dumps({"queries": ["epsilon"]}))
    ids = re.findall(r"^\[(P\d+)\] (.*)$", prompt, re.MULTILINE)
    return Reply(
        json.dumps({"ratings": [{"id": i, "relevance": 5 if "zeta" in text else 0} for i, text in ids]})
    )


def test_the_rag_baselines_decompose_reformulate_imagine_refine_and_rerank(tmp_path):
    """Each baseline's context comes from its own queries, at InsightGen's chunk budget."""
    from insight_assets.core.curation import QAPair
    from insight_assets.core.llm import LLMClient, LLMSettings
    from insight_assets.core.methods.insightgen import rag_baselines
    from insight_assets.core.retrieval.index import ChunkRecord
    from insight_assets_tests.fake_model_server import FakeModelServer

    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    chunks = [ChunkRecord(f"c-{w}", "d", i, f"{w} text", 2) for i, w in enumerate(words)]

    def embed(texts):
        return np.array([[float(w in t) + 0.01 for w in words] for t in texts], dtype=np.float32)

    vectors = embed([c.text for c in chunks])
    pair = QAPair("q1", "What about alpha?", "Alpha is a thing.")
    server = FakeModelServer().start()
    server.responder = _words_model
    try:
        client = LLMClient(
            LLMSettings(
                provider="openai",
                model="gpt-4o-mini",
                base_url=f"{server.url}/v1",
                api_key="k",
                max_retries=0,
            )
        )
        contexts = rag_baselines.rag_contexts(
            client, [pair], {"q1": 2}, chunks, vectors, embed, rag_baselines.RAG_METHODS
        )
    finally:
        server.stop()
    chosen = {c.method: c.chunk_ids for c in contexts}
    # decomposition ("beta") retrieved, then the refinement pass ("epsilon") joined the question's own
    assert chosen["iterative_rag"] == ("c-alpha", "c-epsilon")
    # reformulations retrieve, the model's re-rank keeps its best first
    assert len(chosen["multi_query_rag"]) == 2 and chosen["multi_query_rag"][0] == "c-zeta"
    assert len(chosen["agentic_rag"]) == 2 and chosen["agentic_rag"][0] == "c-zeta"
    asked = [r.last_user_text() for r in server.requests]
    assert any("(HyDE)" in text for text in asked) and any("You refine a search" in text for text in asked)


def test_the_citation_check_names_insights_that_cite_outside_their_methods_context(tmp_path):
    from insight_assets.core.methods.insightgen import store
    from insight_assets.core.storage.stores import Warehouse

    warehouse = Warehouse(tmp_path / "w.duckdb")
    runs = [
        {"collection": "c", "question_id": "q1", "method": "cot", "status": "ok", "chunk_ids": ["a", "b"]},
        {"collection": "c", "question_id": "q1", "method": "direct", "status": "ok", "chunk_ids": ["c"]},
    ]

    def insight(method: str, question_id: str, hook: str, chunk_ids: list[str]) -> dict:
        return {
            "collection": "c",
            "question_id": question_id,
            "method": method,
            "insight_index": len(hook),
            "hook": hook,
            "chunk_ids": chunk_ids,
        }

    insights = [
        insight("cot", "q1", "grounded", ["a", "b"]),
        insight(
            "cot", "q1", "another method's passage", ["a", "c"]
        ),  # the longer hook: shown second  # c was given to direct, not cot
        insight("direct", "q1", "no citation", []),
        insight("direct", "q2", "no run for its question", ["c"]),
    ]
    warehouse.replace_partition(
        "c", {"insight_runs": pa.Table.from_pylist(runs), "insights": pa.Table.from_pylist(insights)}
    )

    flagged = store.cited_outside_context(store.insights_with_contexts(warehouse, "c"))

    assert flagged == [
        "cot / q1: another method's passage",
        "direct / q1: no citation",
        "direct / q2: no run for its question",
    ]


def test_a_method_that_produced_nothing_for_a_question_scores_zero_there_with_the_reason():
    from insight_assets.core.curation import QAPair
    from insight_assets.core.methods.insightgen.judge import judge_questions, judged_questions
    from insight_assets.core.methods.insightgen.judge.aggregation import mean_scores

    pairs = [QAPair("q1", QUESTION, ANSWER)]
    insights = [
        ("q1", "cot", "Memory bandwidth: eight-bit weights halve the bytes moved per token."),
        ("q1", "direct", "Outliers: a few large activations dominate the quantization error."),
    ]
    runs = [("q1", "cot", None), ("q1", "direct", None), ("q1", "insightgen", "invalid output twice")]

    [question] = judged_questions(pairs, insights, runs)
    assert question.empty == (("insightgen", "invalid output twice"),)
    outcome = judge_questions(
        LLMClient(LLMSettings()),
        [question],
        judge="offline",
        seed=1,
        levels=("set", "insight"),
        repetitions=2,
    )

    zero = [row for row in outcome.rows if row.method == "insightgen"]
    assert {row.level for row in zero} == {"set", "insight"}
    assert all(row.overall == 0 and "invalid output twice" in row.rationale for row in zero)
    means = {(row["level"], row["method"]): row["overall"] for row in mean_scores(outcome.rows)}
    assert means[("set", "insightgen")] == 0 < min(means[("set", "cot")], means[("set", "direct")])
