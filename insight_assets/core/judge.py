"""LLM-as-judge evaluation of insights (InsightGen §5.3, Appendices C and D), and judge agreement.

Criteria, each scored 0-5: *novelty* (new information or ideas beyond the answer), *diversity*
(distinct perspectives across a set), *relevance* (connection to the question and the asker's
intent) and *depth*. Depth is what §5.3 calls depth ("substantive rather than superficial") and
Appendix C calls *meaningfulness* ("actionable or informative content"); both name it here.

Two settings, both comparative, as in the paper:

- **set level** (``judge_sets``): one call per question shows every method's whole set; all four
  criteria.
- **insight level** (``judge_single_insights``): one call per repetition shows one insight per
  method, sampled with ``random.Random`` seeded by (seed, question, repetition); no diversity; ten
  repetitions per question, averaged (``average_repetitions``).

Positional bias is controlled as in Appendix D: the methods appear in an order shuffled per
(seed, question) (per repetition at insight level) under anonymous labels ("Method A", "Method
B", ...), so the judge never sees a method's name; the rows map labels back to methods. A row's
``overall`` is the mean of the criteria judged (four at set level, three at insight level): the
paper's judge gives one score "based on" the criteria, we ask for each and average them so that
every criterion stays visible.

Judges are configured, not built in: a judge is a name (``"offline"``, ``"gemini-2.5-flash"``...)
and the ``LLMClient`` that runs the judge tasks for it, so two judges are two clients.

**The offline judge** (the default provider) is a deterministic function of the texts. Its
embedding is TF-IDF: every insight of every method, the answer's sentences and the question are
TF-IDF vectors (``extractive.tfidf``) over their shared vocabulary, so the methods of one question
are measured in one space, and similarity is cosine. For a method with insights ``i``:

- novelty = 5 * (1 - mean_i max_a cos(i, a)) over the answer's sentences ``a`` (5 when the
  answer has no text): insights that repeat the answer score low;
- relevance = 5 * min(1, mean_i cos(i, question) / 0.3), a cosine of 0.3 counting as fully
  relevant (a question and a sentence share few words);
- diversity = 5 * (1 - mean pairwise cos(i, j)) over the set's insights (0 for a single insight:
  one insight is one perspective);
- depth = 5 * mean_i (0.5 * min(1, terms_i / 15) + 0.5 * min(1, new_i / 5)), where ``terms_i`` is
  the number of distinct content words of the insight and ``new_i`` of those in neither the
  question nor the answer: substance, and substance the answer lacks.

Its rationale states the measured numbers. It is a yardstick for pipelines and tests, not a
substitute for a model's judgement of usefulness.

**Agreement** between two judges (§6, RQ6) is measured on ``overall`` per question
(``judge_agreement``): pairwise ordering agreement and per-question Spearman rho.
"""

from __future__ import annotations

import random
import statistics
import string
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field
from scipy.stats import spearmanr

from .curation import QAPair
from .extractive import terms, tfidf
from .llm import LLMClient, Task, register_task
from .text import split_sentences

CRITERIA_SET = ("novelty", "diversity", "relevance", "depth")
CRITERIA_SINGLE = ("novelty", "relevance", "depth")
DEFAULT_REPETITIONS = 10  # Appendix D: ten samples per question at insight level

Level = Literal["set", "insight"]

_FULLY_RELEVANT = 0.3
_DEPTH_TERMS = 15
_DEPTH_NEW_TERMS = 5


@dataclass(frozen=True)
class MethodInsights:
    """One method's insights for one question, as the judge reads them (hook and body)."""

    method: str
    insights: tuple[str, ...]


class MethodScore(BaseModel):
    label: str = Field(description="The label of the method, exactly as shown.")
    novelty: float = Field(ge=0, le=5)
    diversity: float | None = Field(default=None, ge=0, le=5)
    relevance: float = Field(ge=0, le=5)
    depth: float = Field(ge=0, le=5)
    rationale: str = Field(description="Relative strengths and distinguishing features, briefly.")


class SetJudgement(BaseModel):
    scores: list[MethodScore]


@dataclass(frozen=True)
class JudgeRow:
    """One judge's scores for one method on one question (and repetition, at insight level).

    ``label`` is the anonymous label the judge saw and ``insight_index`` the sampled insight (insight
    level only), for auditing position effects and samples."""

    judge: str
    level: Level
    question_id: str
    method: str
    novelty: float
    diversity: float | None
    relevance: float
    depth: float
    overall: float
    rationale: str
    repetition: int | None = None
    label: str = ""
    insight_index: int | None = None


# -- shuffling and labels ---------------------------------------------------------------------


def shuffled_methods(methods: Sequence[str], *, question_id: str, seed: int) -> list[str]:
    """``methods`` in an order fixed by (seed, question) and differing across questions; the order
    the caller lists them in does not matter."""
    order = sorted(methods)
    random.Random(f"{seed}|{question_id}").shuffle(order)
    return order


def method_label(position: int) -> str:
    if position >= len(string.ascii_uppercase):
        raise ValueError("at most 26 methods can be judged together")
    return f"Method {string.ascii_uppercase[position]}"


def _check_sets(sets: Sequence[MethodInsights]) -> dict[str, tuple[str, ...]]:
    by_method = {s.method: tuple(s.insights) for s in sets}
    if len(by_method) != len(sets):
        raise ValueError("each method may appear only once among the sets judged together")
    empty = sorted(method for method, insights in by_method.items() if not insights)
    if empty:
        raise ValueError(f"methods {', '.join(empty)} have no insights to judge; leave them out")
    return by_method


# -- tasks ------------------------------------------------------------------------------------


def _format_set_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    blocks = []
    for shown in inputs["sets"]:
        lines = "\n".join(f"  {n}. {' '.join(text.split())}" for n, text in enumerate(shown["insights"], 1))
        blocks.append(f"{shown['label']}:\n{lines}")
    return {"question": inputs["question"], "answer": inputs["answer"], "insight_sets": "\n\n".join(blocks)}


def _format_single_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    blocks = [f"{shown['label']}: {' '.join(shown['insight'].split())}" for shown in inputs["insights"]]
    return {"question": inputs["question"], "answer": inputs["answer"], "insights": "\n\n".join(blocks)}


def _label_problems(judgement: SetJudgement, shown: Sequence[str]) -> list[str]:
    given = [score.label for score in judgement.scores]
    problems = []
    unknown = sorted(set(given) - set(shown))
    missing = [label for label in shown if label not in given]
    repeated = sorted({label for label in given if given.count(label) > 1})
    if unknown:
        problems.append(f"scores name {', '.join(map(repr, unknown))}, which were not shown")
    if missing:
        problems.append(f"no score for {', '.join(map(repr, missing))}")
    if repeated:
        problems.append(f"more than one score for {', '.join(map(repr, repeated))}")
    if problems:
        problems.append(f"give exactly one score per label: {', '.join(map(repr, shown))}")
    return problems


def check_set_judgement(judgement: SetJudgement, inputs: Mapping[str, Any]) -> list[str]:
    problems = _label_problems(judgement, [shown["label"] for shown in inputs["sets"]])
    no_diversity = [score.label for score in judgement.scores if score.diversity is None]
    if no_diversity:
        problems.append(f"diversity is missing for {', '.join(map(repr, no_diversity))}")
    return problems


def check_single_judgement(judgement: SetJudgement, inputs: Mapping[str, Any]) -> list[str]:
    return _label_problems(judgement, [shown["label"] for shown in inputs["insights"]])


@dataclass(frozen=True)
class OfflineMeasures:
    """The offline judge's scores for one method, and the similarities they come from."""

    novelty: float
    diversity: float
    relevance: float
    depth: float
    answer_similarity: float  # mean over insights of the highest cosine to an answer sentence
    question_similarity: float
    pairwise_similarity: float | None  # None for a single insight
    terms: float  # mean distinct content words per insight
    new_terms: float  # mean of those in neither question nor answer

    def rationale(self, count: int) -> str:
        pairwise = "n/a" if self.pairwise_similarity is None else f"{self.pairwise_similarity:.2f}"
        return (
            f"Offline TF-IDF measures over {count} insight(s): mean highest cosine to an answer "
            f"sentence {self.answer_similarity:.2f}, mean cosine to the question "
            f"{self.question_similarity:.2f}, mean pairwise cosine {pairwise}, {self.terms:.1f} "
            f"content words per insight, {self.new_terms:.1f} of them in neither question nor answer."
        )


def offline_measures(
    question: str, answer: str, sets: Mapping[str, Sequence[str]]
) -> dict[str, OfflineMeasures]:
    """The offline judge's measures (module docstring) for each key of ``sets``."""
    answer_sentences = [answer[start:end] for start, end in split_sentences(answer)]
    texts = [text for insights in sets.values() for text in insights]
    vectors, _ = tfidf(texts + answer_sentences + [question])
    insight_vectors = vectors[: len(texts)]
    answer_vectors = vectors[len(texts) : len(texts) + len(answer_sentences)]
    question_vector = vectors[-1]
    known = set(terms(question)) | set(terms(answer))
    measures, start = {}, 0
    for key, insights in sets.items():
        own = insight_vectors[start : start + len(insights)]
        start += len(insights)
        to_answer = float((own @ answer_vectors.T).max(axis=1).mean()) if answer_sentences else 0.0
        to_question = float((own @ question_vector).mean())
        pairwise = None
        if len(insights) > 1:
            similarity = own @ own.T
            pairwise = float(similarity[np.triu_indices(len(insights), k=1)].mean())
        term_sets = [set(terms(text)) for text in insights]
        term_counts = [len(found) for found in term_sets]
        new_counts = [len(found - known) for found in term_sets]
        depth = statistics.fmean(
            0.5 * min(1.0, count / _DEPTH_TERMS) + 0.5 * min(1.0, new / _DEPTH_NEW_TERMS)
            for count, new in zip(term_counts, new_counts, strict=True)
        )
        measures[key] = OfflineMeasures(
            novelty=_clip05(5 * (1 - to_answer)),
            diversity=0.0 if pairwise is None else _clip05(5 * (1 - pairwise)),
            relevance=_clip05(5 * min(1.0, to_question / _FULLY_RELEVANT)),
            depth=_clip05(5 * depth),
            answer_similarity=to_answer,
            question_similarity=to_question,
            pairwise_similarity=pairwise,
            terms=statistics.fmean(term_counts),
            new_terms=statistics.fmean(new_counts),
        )
    return measures


def _clip05(value: float) -> float:
    return round(min(5.0, max(0.0, value)), 3)


def judge_sets_offline(question: str, answer: str, sets: Sequence[Mapping[str, Any]]) -> SetJudgement:
    measures = offline_measures(question, answer, {shown["label"]: shown["insights"] for shown in sets})
    return SetJudgement(
        scores=[
            MethodScore(
                label=shown["label"],
                rationale=measures[shown["label"]].rationale(len(shown["insights"])),
                **{name: getattr(measures[shown["label"]], name) for name in CRITERIA_SET},
            )
            for shown in sets
        ]
    )


def judge_single_offline(question: str, answer: str, insights: Sequence[Mapping[str, Any]]) -> SetJudgement:
    measures = offline_measures(question, answer, {shown["label"]: [shown["insight"]] for shown in insights})
    return SetJudgement(
        scores=[
            MethodScore(
                label=shown["label"],
                rationale=measures[shown["label"]].rationale(1),
                **{name: getattr(measures[shown["label"]], name) for name in CRITERIA_SINGLE},
            )
            for shown in insights
        ]
    )


JUDGE_INSIGHT_SET: Task[SetJudgement] = register_task(
    Task(
        name="judge_insight_set",
        version=1,
        template="judge_insight_set.v1.txt",
        output_model=SetJudgement,
        offline=judge_sets_offline,
        inputs=("question", "answer", "sets"),
        format_inputs=_format_set_inputs,
        check_output=check_set_judgement,
        max_tokens=2000,
        expected_output_tokens=600,
        description="Set-level judge: score each anonymised method's whole insight set.",
    )
)

JUDGE_SINGLE_INSIGHTS: Task[SetJudgement] = register_task(
    Task(
        name="judge_single_insights",
        version=1,
        template="judge_single_insights.v1.txt",
        output_model=SetJudgement,
        offline=judge_single_offline,
        inputs=("question", "answer", "insights"),
        format_inputs=_format_single_inputs,
        check_output=check_single_judgement,
        max_tokens=2000,
        expected_output_tokens=500,
        description="Insight-level judge: score one sampled insight per anonymised method.",
    )
)


# -- requests and rows ------------------------------------------------------------------------


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


def set_request(
    *, question_id: str, question: str, answer: str, sets: Sequence[MethodInsights], seed: int
) -> JudgeRequest:
    by_method = _check_sets(sets)
    order = shuffled_methods(list(by_method), question_id=question_id, seed=seed)
    labels = {method_label(position): method for position, method in enumerate(order)}
    shown = [{"label": label, "insights": list(by_method[method])} for label, method in labels.items()]
    return JudgeRequest(
        task=JUDGE_INSIGHT_SET,
        level="set",
        question_id=question_id,
        labels=labels,
        inputs={"question": question, "answer": answer, "sets": shown},
    )


def single_insight_requests(
    *,
    question_id: str,
    question: str,
    answer: str,
    sets: Sequence[MethodInsights],
    seed: int,
    repetitions: int = DEFAULT_REPETITIONS,
) -> list[JudgeRequest]:
    """One request per repetition: the methods shuffled and one insight of each sampled, both with
    ``random.Random`` seeded by (seed, question, repetition)."""
    by_method = _check_sets(sets)
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
            )
        )
    return requests


def rows_from_judgement(request: JudgeRequest, judgement: SetJudgement, *, judge: str) -> list[JudgeRow]:
    """One row per method, in the order the methods were shown."""
    by_label = {score.label: score for score in judgement.scores}
    criteria = CRITERIA_SET if request.level == "set" else CRITERIA_SINGLE
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
                overall=statistics.fmean(getattr(score, name) for name in criteria),
                rationale=score.rationale,
                repetition=request.repetition,
                label=label,
                insight_index=None if request.sampled is None else request.sampled[method],
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


# -- aggregation and agreement ----------------------------------------------------------------


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.fmean(present) if present else None


def average_repetitions(rows: Sequence[JudgeRow]) -> list[JudgeRow]:
    """Rows without a repetition, unchanged, then one row per (judge, level, question, method) of
    the rows with one, holding the mean of each criterion (groups in order of first appearance)."""
    groups: dict[tuple[str, str, str, str], list[JudgeRow]] = defaultdict(list)
    for row in rows:
        if row.repetition is not None:
            groups[(row.judge, row.level, row.question_id, row.method)].append(row)
    return [row for row in rows if row.repetition is None] + [_averaged(group) for group in groups.values()]


def _averaged(group: list[JudgeRow]) -> JudgeRow:
    first = group[0]
    return JudgeRow(
        judge=first.judge,
        level=first.level,
        question_id=first.question_id,
        method=first.method,
        novelty=statistics.fmean(row.novelty for row in group),
        diversity=_mean_or_none([row.diversity for row in group]),
        relevance=statistics.fmean(row.relevance for row in group),
        depth=statistics.fmean(row.depth for row in group),
        overall=statistics.fmean(row.overall for row in group),
        rationale=f"mean of {len(group)} repetitions",
    )


def mean_scores(rows: Sequence[JudgeRow]) -> list[dict[str, Any]]:
    """Per (judge, level, method): the mean of each criterion and of ``overall`` over questions,
    and ``count``, the number of questions. Repetitions are averaged per question first, so every
    question weighs the same. ``diversity`` is ``None`` where no row has it."""
    groups: dict[tuple[str, str, str], list[JudgeRow]] = defaultdict(list)
    for row in average_repetitions(rows):
        groups[(row.judge, row.level, row.method)].append(row)
    return [
        {
            "judge": judge,
            "level": level,
            "method": method,
            "novelty": statistics.fmean(row.novelty for row in group),
            "diversity": _mean_or_none([row.diversity for row in group]),
            "relevance": statistics.fmean(row.relevance for row in group),
            "depth": statistics.fmean(row.depth for row in group),
            "overall": statistics.fmean(row.overall for row in group),
            "count": len(group),
        }
        for (judge, level, method), group in sorted(groups.items())
    ]


def _overall_by_question(rows: Sequence[JudgeRow], judge: str, level: str) -> dict[str, dict[str, float]]:
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for row in average_repetitions([row for row in rows if row.judge == judge and row.level == level]):
        scores[row.question_id][row.method] = row.overall
    return scores


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def judge_agreement(
    rows: Sequence[JudgeRow], judge_a: str, judge_b: str, level: str = "set"
) -> dict[str, Any]:
    """How far two judges agree on the ranking of methods, per question, on ``overall``.

    Only questions both judges scored are compared, on the methods both scored (at least two).

    - ``pairwise_agreement``: over all method pairs of all questions, the fraction that both judges
      order the same way. A tie counts as an order of its own: a pair agrees when both judges
      tie it or both prefer the same method; one judge's tie against the other's preference
      disagrees.
    - ``top_method_agreement``: the fraction of questions where the judges' best methods overlap
      (with ties, any shared best method counts).
    - ``spearman_median`` / ``spearman_mean``: Spearman's rho (``scipy.stats.spearmanr``, ties
      ranked by their average) per question. Rho is undefined when a judge gave every method the
      same score; those questions are counted in ``constant_questions`` and left out of rho.

    Statistics are ``None`` when nothing could be compared.
    """
    scores_a = _overall_by_question(rows, judge_a, level)
    scores_b = _overall_by_question(rows, judge_b, level)
    agreeing_pairs = pairs = questions = top_agreements = constant = 0
    rhos: list[float] = []
    for question_id in sorted(set(scores_a) & set(scores_b)):
        methods = sorted(set(scores_a[question_id]) & set(scores_b[question_id]))
        if len(methods) < 2:
            continue
        a = [scores_a[question_id][method] for method in methods]
        b = [scores_b[question_id][method] for method in methods]
        questions += 1
        for i, j in combinations(range(len(methods)), 2):
            pairs += 1
            agreeing_pairs += _sign(a[i] - a[j]) == _sign(b[i] - b[j])
        best_a = {method for method, score in zip(methods, a, strict=True) if score == max(a)}
        best_b = {method for method, score in zip(methods, b, strict=True) if score == max(b)}
        top_agreements += bool(best_a & best_b)
        if len(set(a)) == 1 or len(set(b)) == 1:
            constant += 1
        else:
            rhos.append(float(spearmanr(a, b).statistic))
    return {
        "judge_a": judge_a,
        "judge_b": judge_b,
        "level": level,
        "questions": questions,
        "pairs": pairs,
        "pairwise_agreement": agreeing_pairs / pairs if pairs else None,
        "top_method_agreement": top_agreements / questions if questions else None,
        "spearman_median": statistics.median(rhos) if rhos else None,
        "spearman_mean": statistics.fmean(rhos) if rhos else None,
        "spearman_questions": len(rhos),
        "constant_questions": constant,
    }


# -- a collection at once ---------------------------------------------------------------------


@dataclass(frozen=True)
class JudgedQuestion:
    """What the judges see of one question: the pair and every method's insights."""

    question_id: str
    question: str
    answer: str
    sets: tuple[MethodInsights, ...]


def judged_questions(
    pairs: Sequence[QAPair], insights: Iterable[tuple[str, str, str]]
) -> list[JudgedQuestion]:
    """What the judges read: for each pair with insights (in question-id order), the pair and each
    method's insight texts (methods in name order). ``insights`` yields (question id, method,
    text) in each method's insight order; insights of unknown questions are ignored."""
    by_pair = {pair.question_id: pair for pair in pairs}
    by_question: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for question_id, method, text in insights:
        by_question[question_id][method].append(text)
    return [
        JudgedQuestion(
            question_id=question_id,
            question=by_pair[question_id].question,
            answer=by_pair[question_id].answer,
            sets=tuple(MethodInsights(method, tuple(texts)) for method, texts in sorted(methods.items())),
        )
        for question_id, methods in sorted(by_question.items())
        if question_id in by_pair
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
    """Every requested level for every question with at least two methods to compare, all calls
    batched through ``client.run_many``. A failed call loses only its own question's rows (for
    that level and repetition); when the budget stops the batch, the rest is not run."""
    requests: list[JudgeRequest] = []
    for item in questions:
        sets = [entry for entry in item.sets if entry.insights]
        if len(sets) < 2:
            continue
        common = {
            "question_id": item.question_id,
            "question": item.question,
            "answer": item.answer,
            "sets": sets,
        }
        if "set" in levels:
            requests.append(set_request(seed=seed, **common))
        if "insight" in levels:
            requests += single_insight_requests(seed=seed, repetitions=repetitions, **common)
    rows: list[JudgeRow] = []
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
