"""Judging runs: the requests for a question (set level, insight-level repetitions), the rows
their answers become, and a collection's questions judged at once."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .schemas import (
    DEFAULT_REPETITIONS,
    JudgeRow,
    Level,
    MethodInsights,
    SetJudgement,
    judge_panels,
)
from .tasks import JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS, check_sets, method_label, shuffled_methods

if TYPE_CHECKING:
    from ....curation import QAPair
    from ....llm import LLMClient, Task


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: the task, its inputs, and how to map its labels back to methods.

    Build them with ``set_request`` and ``single_insight_requests`` to batch calls with
    ``client.run_many(request.task, [r.inputs for r in requests])``, then turn each judgement into
    rows with ``rows_from_judgement``."""

    task: Task[SetJudgement]
    level: Level
    question_id: str
    labels: Mapping[str, str]  # label -> method
    inputs: Mapping[str, Any]
    repetition: int | None = None
    sampled: Mapping[str, int] | None = None  # method -> index of the insight shown (insight level)
    panel: str = ""


def set_request(
    *,
    question_id: str,
    question: str,
    answer: str,
    sets: Sequence[MethodInsights],
    seed: int,
    panel: str = "",
) -> JudgeRequest:
    by_method = check_sets(sets)
    order = shuffled_methods(list(by_method), question_id=question_id, seed=seed)
    labels = {method_label(position): method for position, method in enumerate(order)}
    shown = [{"label": label, "insights": list(by_method[method])} for label, method in labels.items()]
    return JudgeRequest(
        task=JUDGE_INSIGHT_SET,
        level="set",
        question_id=question_id,
        labels=labels,
        inputs={"question": question, "answer": answer, "sets": shown},
        panel=panel,
    )


def single_insight_requests(
    *,
    question_id: str,
    question: str,
    answer: str,
    sets: Sequence[MethodInsights],
    seed: int,
    repetitions: int = DEFAULT_REPETITIONS,
    panel: str = "",
) -> list[JudgeRequest]:
    """One request per repetition: the methods shuffled and one insight of each sampled, both with
    ``random.Random`` seeded by (seed, question, repetition)."""
    by_method = check_sets(sets)
    requests = []
    for repetition in range(repetitions):
        rng = random.Random(f"{seed}|{question_id}|{repetition}")
        order = sorted(by_method)
        rng.shuffle(order)
        sampled = {method: rng.randrange(len(by_method[method])) for method in sorted(by_method)}
        labels = {method_label(position): method for position, method in enumerate(order)}
        shown = [
            {"label": label, "insight": by_method[method][sampled[method]]}
            for label, method in labels.items()
        ]
        requests.append(
            JudgeRequest(
                task=JUDGE_SINGLE_INSIGHTS,
                level="insight",
                question_id=question_id,
                labels=labels,
                inputs={"question": question, "answer": answer, "insights": shown},
                repetition=repetition,
                sampled=sampled,
                panel=panel,
            )
        )
    return requests


def rows_from_judgement(request: JudgeRequest, judgement: SetJudgement, *, judge: str) -> list[JudgeRow]:
    """One row per method, in the order the methods were shown."""
    by_label = {score.label: score for score in judgement.scores}
    rows = []
    for label, method in request.labels.items():
        score = by_label[label]
        rows.append(
            JudgeRow(
                judge=judge,
                level=request.level,
                question_id=request.question_id,
                method=method,
                novelty=score.novelty,
                diversity=score.diversity if request.level == "set" else None,
                relevance=score.relevance,
                depth=score.depth,
                overall=score.overall,
                rationale=score.rationale,
                repetition=request.repetition,
                label=label,
                insight_index=None if request.sampled is None else request.sampled[method],
                panel=request.panel,
            )
        )
    return rows


def judge_sets(
    client: LLMClient,
    *,
    question_id: str,
    question: str,
    answer: str,
    sets: Sequence[MethodInsights],
    seed: int,
    judge: str,
) -> list[JudgeRow]:
    """Set-level scores, one row per method. Raises ``LLMError`` as ``client.run`` does."""
    request = set_request(question_id=question_id, question=question, answer=answer, sets=sets, seed=seed)
    return rows_from_judgement(request, client.run(request.task, **request.inputs), judge=judge)


def judge_single_insights(
    client: LLMClient,
    *,
    question_id: str,
    question: str,
    answer: str,
    sets: Sequence[MethodInsights],
    seed: int,
    repetitions: int = DEFAULT_REPETITIONS,
    judge: str,
) -> list[JudgeRow]:
    """Insight-level scores: one row per (repetition, method); ``average_repetitions`` (which
    ``mean_scores`` and ``judge_agreement`` apply) turns them into one row per method. The calls
    run one after another; raises ``LLMError`` as ``client.run`` does."""
    requests = single_insight_requests(
        question_id=question_id,
        question=question,
        answer=answer,
        sets=sets,
        seed=seed,
        repetitions=repetitions,
    )
    return [
        row
        for request in requests
        for row in rows_from_judgement(request, client.run(request.task, **request.inputs), judge=judge)
    ]


# -- a collection at once ---------------------------------------------------------------------


@dataclass(frozen=True)
class JudgedQuestion:
    """What the judges see of one question: the pair and every method's insights; ``empty``: the
    methods that ran for it and produced nothing, each with why (scored 0, not shown to a judge)."""

    question_id: str
    question: str
    answer: str
    sets: tuple[MethodInsights, ...]
    empty: tuple[tuple[str, str], ...] = ()


def judged_questions(
    pairs: Sequence[QAPair],
    insights: Iterable[tuple[str, str, str]],
    runs: Iterable[tuple[str, str, str | None]] = (),
) -> list[JudgedQuestion]:
    """What the judges read: for each pair with insights (in question-id order), the pair and each
    method's insight texts (methods in name order). ``insights`` yields (question id, method,
    text) in each method's insight order; insights of unknown questions are ignored. ``runs``
    yields (question id, method, why it has no insights, if it has none) for every method run: a
    run of a judged question without insights is in its ``empty``."""
    by_pair = {pair.question_id: pair for pair in pairs}
    by_question: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for question_id, method, text in insights:
        by_question[question_id][method].append(text)
    empty: dict[str, dict[str, str]] = defaultdict(dict)
    for question_id, method, reason in runs:
        if method not in by_question.get(question_id, {}):
            empty[question_id][method] = reason or "the method produced no insight"
    return [
        JudgedQuestion(
            question_id=question_id,
            question=by_pair[question_id].question,
            answer=by_pair[question_id].answer,
            sets=tuple(MethodInsights(method, tuple(texts)) for method, texts in sorted(methods.items())),
            empty=tuple(sorted(empty[question_id].items())),
        )
        for question_id, methods in sorted(by_question.items())
        if question_id in by_pair
    ]


def question_panels(question: JudgedQuestion) -> list[tuple[str, tuple[str, ...]]]:
    """The panels the methods that ran for ``question`` are judged in, those without insights included."""
    return judge_panels([entry.method for entry in question.sets] + [method for method, _ in question.empty])


def empty_rows(question: JudgedQuestion, *, judge: str, levels: Sequence[Level]) -> list[JudgeRow]:
    """A 0 on every criterion for each method that produced nothing for ``question``, at each level
    and in each of its panels, the reason in its rationale: a method that answers nothing must not
    rank above one that tried."""
    reasons = dict(question.empty)
    return [
        JudgeRow(
            judge=judge,
            level=level,
            question_id=question.question_id,
            method=method,
            novelty=0.0,
            diversity=0.0 if level == "set" else None,
            relevance=0.0,
            depth=0.0,
            overall=0.0,
            rationale=f"no insights, scored 0: {reasons[method]}",
            panel=panel,
        )
        for level in levels
        for panel, members in question_panels(question)
        for method in members
        if method in reasons
    ]


@dataclass(frozen=True)
class JudgeOutcome:
    rows: list[JudgeRow]
    failures: list[tuple[str, str]]  # (question_id, error), one per failed call
    budget_error: str | None = None


def judge_questions(
    client: LLMClient,
    questions: Sequence[JudgedQuestion],
    *,
    judge: str,
    seed: int,
    levels: Sequence[Level] = ("set", "insight"),
    repetitions: int = DEFAULT_REPETITIONS,
) -> JudgeOutcome:
    """Every requested level for every question, in each of its panels (``judge_panels``: the
    paper's comparisons, so that one prompt shows at most the methods the paper compared) with at
    least two methods to compare, all calls batched through ``client.run_many``; a method that
    produced nothing for a question scores 0 there (``empty_rows``). A failed call loses only its own question's rows (for
    that level and repetition); when the budget stops the batch, the rest is not run."""
    requests: list[JudgeRequest] = []
    for item in questions:
        for panel, members in question_panels(item):
            sets = [entry for entry in item.sets if entry.insights and entry.method in members]
            if len(sets) < 2:
                continue
            common = {
                "question_id": item.question_id,
                "question": item.question,
                "answer": item.answer,
                "sets": sets,
                "panel": panel,
            }
            if "set" in levels:
                requests.append(set_request(seed=seed, **common))
            if "insight" in levels:
                requests += single_insight_requests(seed=seed, repetitions=repetitions, **common)
    rows = [row for item in questions for row in empty_rows(item, judge=judge, levels=levels)]
    failures: list[tuple[str, str]] = []
    budget_error = None
    for task in (JUDGE_INSIGHT_SET, JUDGE_SINGLE_INSIGHTS):
        batch_requests = [request for request in requests if request.task is task]
        if not batch_requests or budget_error is not None:
            continue
        batch = client.run_many(task, [request.inputs for request in batch_requests])
        budget_error = batch.budget_error
        for request, result in zip(batch_requests, batch.items, strict=True):
            if result.ok:
                rows += rows_from_judgement(request, result.value, judge=judge)
            elif result.status == "failed":
                failures.append((request.question_id, result.error or "unknown error"))
    return JudgeOutcome(rows, failures, str(budget_error) if budget_error else None)
