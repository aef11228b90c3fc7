"""The LLM judge: shuffling, anonymity, label mapping, both levels, offline metrics, agreement."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods.insightgen.judge import (
    JudgedQuestion,
    JudgeRow,
    MethodInsights,
    judge_agreement,
    judge_questions,
    judge_sets,
    judge_single_insights,
    mean_scores,
    offline_measures,
    shuffled_methods,
    single_insight_requests,
)
from insight_assets.core.methods.insightgen.judge.schemas import judge_panels
from insight_assets_tests.core.conftest import fake_openai_client
from insight_assets_tests.fake_model_server import FakeModelServer, Reply

QUESTION = "Why do recurrent networks struggle with long documents?"
ANSWER = (
    "Recurrent networks pass information one token at a time, so gradients vanish over long spans. "
    "Gated units such as the LSTM ease but do not remove the problem."
)
# The methods this file's insight sets are written for (any subset of the methods is judged alike).
METHODS = ("insightgen", "direct", "cot", "vector_topk", "vector_topk_cot")

INSIGHTS = {
    "insightgen": (
        "Attention shortcut: self-attention links any two positions in one step, so path length no longer grows.",
        "Memory cost: attention over n tokens needs quadratic memory, which caps document length.",
        "Benchmark: on a 16k-token retrieval task, state-space models kept 90% accuracy.",
    ),
    "direct": ("Vanishing gradients: recurrent networks pass information one token at a time.",),
    "cot": (
        "Chunking: splitting documents into overlapping windows trades recall for speed.",
        "Truncated backpropagation limits how far credit assignment reaches.",
    ),
    "vector_topk": ("Gates help: the LSTM eases vanishing gradients with gated units.",),
    "vector_topk_cot": ("Curriculum: training on short then long sequences stabilises recurrent models.",),
}
SETS = [MethodInsights(method, texts) for method, texts in INSIGHTS.items()]


def model_client(server: FakeModelServer) -> LLMClient:
    return fake_openai_client(server, sleep=lambda seconds: None)


def score(label: str, value: float, *, diversity: float | None = 1.0, overall: float = 0.5) -> dict:
    """A judge's score; its ``overall`` is its own (here unlike the mean of the criteria)."""
    return {
        "label": label,
        "novelty": value,
        "diversity": diversity,
        "relevance": value,
        "depth": 5.0,
        "overall": overall,
        "rationale": f"{label} is distinctive",
    }


def row(judge: str, question: str, method: str, overall: float, **changes: Any) -> JudgeRow:
    values: dict[str, Any] = {
        "judge": judge,
        "level": "set",
        "question_id": question,
        "method": method,
        "novelty": overall,
        "diversity": overall,
        "relevance": overall,
        "depth": overall,
        "overall": overall,
        "rationale": "",
    }
    values.update(changes)
    return JudgeRow(**values)


def test_shuffling_is_fixed_per_seed_and_question_and_varies_across_questions():
    first = shuffled_methods(METHODS, question_id="q1", seed=7)

    assert first == shuffled_methods(list(reversed(METHODS)), question_id="q1", seed=7)
    assert sorted(first) == sorted(METHODS)
    orders = {tuple(shuffled_methods(METHODS, question_id=f"q{n}", seed=7)) for n in range(20)}
    assert len(orders) > 5
    seeds = {tuple(shuffled_methods(METHODS, question_id="q1", seed=seed)) for seed in range(20)}
    assert len(seeds) > 5


def test_the_judge_sees_anonymous_labels_and_rows_map_back_to_methods(server):
    order = shuffled_methods(METHODS, question_id="q3", seed=11)
    labels = [f"Method {letter}" for letter in "ABCDE"]
    # Distinct scores per label, listed out of order: the mapping must go by label, not position.
    reply = {
        "scores": [score(label, float(n), overall=n / 2) for n, label in reversed(list(enumerate(labels)))]
    }
    server.queue(Reply(json.dumps(reply)))

    rows = judge_sets(
        model_client(server),
        question_id="q3",
        question=QUESTION,
        answer=ANSWER,
        sets=SETS,
        seed=11,
        judge="gpt",
    )

    prompt = server.requests[0].last_user_text()
    for method in METHODS:
        assert not re.search(rf"\b{method}\b", prompt, re.IGNORECASE)
    for position, method in enumerate(order):
        block = prompt.split(f"{labels[position]}:\n", 1)[1].split("\n\n", 1)[0]
        assert all(text in block for text in INSIGHTS[method])
    assert [r.method for r in rows] == order
    for position, method in enumerate(order):
        [found] = [r for r in rows if r.method == method]
        assert (found.label, found.novelty, found.relevance) == (labels[position], position, position)
        assert found.overall == position / 2  # the judge's own rating, not the mean of the criteria
        assert (found.judge, found.level, found.question_id, found.repetition) == ("gpt", "set", "q3", None)


def test_a_judgement_missing_a_label_gets_a_repair_call(server):
    labels = [f"Method {letter}" for letter in "ABCDE"]
    incomplete = {"scores": [score(label, 3.0) for label in labels[:4]] + [score("Method Z", 1.0)]}
    complete = {"scores": [score(label, 3.0) for label in labels]}
    server.queue(Reply(json.dumps(incomplete)), Reply(json.dumps(complete)))

    rows = judge_sets(
        model_client(server),
        question_id="q1",
        question=QUESTION,
        answer=ANSWER,
        sets=SETS,
        seed=1,
        judge="gpt",
    )

    assert len(rows) == 5 and len(server.requests) == 2
    repair = server.requests[1].last_user_text()
    assert "'Method Z'" in repair and "no score for 'Method E'" in repair


def test_insight_level_samples_one_insight_per_method_ten_times_without_diversity(server):
    for _ in range(10):
        server.queue(
            Reply(
                json.dumps(
                    {"scores": [score(f"Method {x}", 2.0, diversity=None, overall=4.0) for x in "ABCDE"]}
                )
            )
        )

    rows = judge_single_insights(
        model_client(server),
        question_id="q1",
        question=QUESTION,
        answer=ANSWER,
        sets=SETS,
        seed=3,
        judge="gpt",
    )

    assert len(server.requests) == 10
    assert Counter((r.repetition, r.method) for r in rows) == Counter(
        {(rep, method): 1 for rep in range(10) for method in METHODS}
    )
    assert all(r.diversity is None and r.level == "insight" for r in rows)
    assert all(r.overall == 4.0 for r in rows)
    for request, sent in zip(
        single_insight_requests(question_id="q1", question=QUESTION, answer=ANSWER, sets=SETS, seed=3),
        server.requests,
        strict=True,
    ):
        prompt = sent.last_user_text()
        assert "diversity" in prompt.lower() and "null" in prompt
        for method, texts in INSIGHTS.items():
            shown = [text for text in texts if text in prompt]
            assert shown == [texts[request.sampled[method]]]
    samples = [r.insight_index for r in rows if r.method == "insightgen"]
    assert len(set(samples)) > 1  # the three insightgen insights are not always the same one


def test_insight_level_sampling_is_deterministic_and_offline_runs_it():
    client = LLMClient(LLMSettings())
    common = {"question_id": "q1", "question": QUESTION, "answer": ANSWER, "sets": SETS, "seed": 5}

    first = judge_single_insights(client, judge="offline", **common)

    assert first == judge_single_insights(client, judge="offline", **common)
    assert len(first) == 10 * len(METHODS) and {r.repetition for r in first} == set(range(10))

    def draws(seed: int) -> list[tuple]:
        requests = single_insight_requests(**{**common, "seed": seed})
        return [(tuple(r.labels.items()), tuple(r.sampled.items())) for r in requests]

    assert draws(5) == draws(5) and draws(5) != draws(6)


def test_offline_set_judge_scores_every_method_within_range():
    rows = judge_sets(
        LLMClient(LLMSettings()),
        question_id="q1",
        question=QUESTION,
        answer=ANSWER,
        sets=SETS,
        seed=2,
        judge="offline",
    )

    assert sorted(r.method for r in rows) == sorted(METHODS)
    assert all(0 <= value <= 5 for r in rows for value in (r.novelty, r.diversity, r.relevance, r.depth))
    assert all("TF-IDF" in r.rationale for r in rows)
    by_method = {r.method: r for r in rows}
    # "direct" restates the answer; "insightgen" adds three distinct points.
    assert by_method["insightgen"].novelty > by_method["direct"].novelty
    assert by_method["insightgen"].overall > by_method["direct"].overall


def test_offline_metrics_penalise_repeating_the_answer_and_repeating_oneself():
    fresh = INSIGHTS["insightgen"]
    measures = offline_measures(
        QUESTION,
        ANSWER,
        {
            "fresh": fresh,
            "repeats_answer": (
                "Recurrent networks pass information one token at a time, so gradients vanish.",
                "Gated units such as the LSTM ease the problem.",
            ),
            "identical": (fresh[0], fresh[0], fresh[0]),
            "off_topic": ("Coffee harvests in Brazil depend on rainfall and altitude.",),
        },
    )

    assert measures["repeats_answer"].novelty < measures["fresh"].novelty
    assert measures["identical"].diversity < measures["fresh"].diversity
    assert measures["identical"].diversity == pytest.approx(0.0, abs=1e-6)
    assert measures["off_topic"].diversity == 0.0 and measures["off_topic"].pairwise_similarity is None
    assert measures["off_topic"].relevance < measures["fresh"].relevance
    assert measures["repeats_answer"].depth < measures["fresh"].depth


def test_sets_must_be_distinct_and_non_empty():
    client = LLMClient(LLMSettings())
    common = {"question_id": "q", "question": QUESTION, "answer": ANSWER, "seed": 0, "judge": "offline"}

    with pytest.raises(ValueError, match="only once"):
        judge_sets(client, sets=[SETS[0], SETS[0]], **common)
    with pytest.raises(ValueError, match="no insights"):
        judge_sets(client, sets=[SETS[0], MethodInsights("cot", ())], **common)


def test_mean_scores_average_repetitions_per_question_then_questions():
    rows = [
        row("gpt", "q1", "cot", 2.0),
        row("gpt", "q2", "cot", 4.0, diversity=3.0),
        row("gpt", "q1", "direct", 1.0),
        row("gpt", "q1", "cot", 1.0, level="insight", diversity=None, repetition=0),
        row("gpt", "q1", "cot", 3.0, level="insight", diversity=None, repetition=1),
        row("gpt", "q2", "cot", 5.0, level="insight", diversity=None, repetition=0),
    ]

    means = {(m["level"], m["method"]): m for m in mean_scores(rows)}

    assert means[("set", "cot")] == {
        "judge": "gpt",
        "level": "set",
        "panel": "",
        "method": "cot",
        "novelty": 3.0,
        "diversity": 2.5,
        "relevance": 3.0,
        "depth": 3.0,
        "overall": 3.0,
        "count": 2,
    }
    assert means[("set", "direct")]["overall"] == 1.0 and means[("set", "direct")]["count"] == 1
    # q1: mean of 1 and 3 is 2; q2: 5; then (2 + 5) / 2.
    insight = means[("insight", "cot")]
    assert (insight["overall"], insight["count"], insight["diversity"]) == (3.5, 2, None)


def test_agreement_of_identical_reversed_and_tied_judges():
    scores = {"q1": [1.0, 2.0, 3.0, 4.0], "q2": [4.0, 1.0, 3.0, 2.0]}
    methods = ["a", "b", "c", "d"]
    judge_a = [
        row("A", q, m, s) for q, values in scores.items() for m, s in zip(methods, values, strict=True)
    ]
    same = [row("B", r.question_id, r.method, r.overall) for r in judge_a]
    reversed_ = [row("C", r.question_id, r.method, 5.0 - r.overall) for r in judge_a]
    # q1 constant for D: no rho there; its ties disagree with A's strict order.
    tied = [row("D", "q1", m, 2.0) for m in methods] + [
        row("D", "q2", m, s) for m, s in zip(methods, scores["q2"], strict=True)
    ]

    identical = judge_agreement(judge_a + same, "A", "B")
    opposite = judge_agreement(judge_a + reversed_, "A", "C")
    partial = judge_agreement(judge_a + tied, "A", "D")

    assert (identical["pairwise_agreement"], identical["spearman_median"], identical["spearman_mean"]) == (
        1.0,
        pytest.approx(1.0),
        pytest.approx(1.0),
    )
    assert (identical["questions"], identical["pairs"], identical["top_method_agreement"]) == (2, 12, 1.0)
    assert opposite["pairwise_agreement"] == 0.0 and opposite["spearman_median"] == pytest.approx(-1.0)
    assert opposite["top_method_agreement"] == 0.0
    assert partial["pairwise_agreement"] == 0.5
    assert (partial["spearman_questions"], partial["constant_questions"]) == (1, 1)
    assert partial["top_method_agreement"] == 1.0  # D's four-way tie includes A's best
    assert judge_agreement(judge_a, "A", "nobody")["pairwise_agreement"] is None


def test_agreement_at_insight_level_averages_repetitions_first():
    rows = [
        row("A", "q1", "a", 1.0, level="insight", repetition=0),
        row("A", "q1", "a", 3.0, level="insight", repetition=1),
        row("A", "q1", "b", 1.0, level="insight", repetition=0),
        row("B", "q1", "a", 4.0, level="insight", repetition=0),
        row("B", "q1", "b", 3.0, level="insight", repetition=0),
    ]

    agreement = judge_agreement(rows, "A", "B", level="insight")

    assert (agreement["pairs"], agreement["pairwise_agreement"]) == (1, 1.0)
    assert judge_agreement(rows, "A", "B")["questions"] == 0  # no set-level rows


# Every method the project runs: §5.1's baselines with InsightGen (Table 2), RQ5's RAG pipelines (Table 4).
ALL_METHODS = (*METHODS, "iterative_rag", "multi_query_rag", "agentic_rag")


def judged(methods: tuple[str, ...], empty: tuple[tuple[str, str], ...] = ()) -> JudgedQuestion:
    sets = tuple(MethodInsights(method, (f"{method} adds a point about gradients.",)) for method in methods)
    return JudgedQuestion("q1", QUESTION, ANSWER, sets, empty)


def test_a_judge_prompt_shows_at_most_the_methods_the_paper_compared(server):
    def answer_every_label(request) -> Reply:
        labels = re.findall(r"^(Method [A-Z]):$", request.last_user_text(), re.MULTILINE)
        return Reply(json.dumps({"scores": [score(label, 3.0, overall=len(labels)) for label in labels]}))

    server.responder = answer_every_label
    outcome = judge_questions(
        model_client(server), [judged(ALL_METHODS)], judge="gpt", seed=1, levels=["set"]
    )

    shown = [re.findall(r"^Method [A-Z]:$", r.last_user_text(), re.MULTILINE) for r in server.requests]
    assert sorted(map(len, shown)) == [4, 5]
    panels = {(row.panel, row.method): row.overall for row in outcome.rows}
    assert {method for panel, method in panels if panel == "baselines"} == set(METHODS)
    assert {method for panel, method in panels if panel == "advanced_rag"} == {
        "insightgen",
        "iterative_rag",
        "multi_query_rag",
        "agentic_rag",
    }
    assert (panels["baselines", "insightgen"], panels["advanced_rag", "insightgen"]) == (5, 4)
    means = mean_scores(outcome.rows)
    assert {(m["panel"], m["method"]) for m in means} == set(panels)


def test_panels_keep_the_papers_comparisons_and_put_other_methods_beside_insightgen():
    assert judge_panels(["direct", "cot"]) == [("baselines", ("direct", "cot"))]
    assert judge_panels(["insightgen", "agentic_rag", "toy"]) == [
        ("advanced_rag", ("insightgen", "agentic_rag")),
        ("other", ("insightgen", "toy")),
    ]
    others = judge_panels([*ALL_METHODS, "a", "b", "c", "d", "e"])[2:]
    assert others == [("other", ("insightgen", "a", "b", "c", "d")), ("other-2", ("insightgen", "e"))]
    assert judge_panels(["direct"]) == []


def test_a_method_without_insights_scores_0_in_each_of_its_panels():
    question = judged(ALL_METHODS[1:], empty=(("insightgen", "the model wrote nothing"),))
    outcome = judge_questions(LLMClient(LLMSettings()), [question], judge="offline", seed=1, levels=["set"])

    zeros = [row for row in outcome.rows if row.method == "insightgen"]
    assert sorted(row.panel for row in zeros) == ["advanced_rag", "baselines"]
    assert all(row.overall == 0 and "the model wrote nothing" in row.rationale for row in zeros)
