"""InsightGen's insight generation and its baselines' prompts, as LLM tasks.

Given a question, its answer and context passages, a method writes up to five *related insights*:
short notes that add to the answer without repeating it (InsightGen §4.2). The five methods
(§5.1) differ in the context they select and in the prompting:

- ``insightgen``, ``cot`` and ``vector_topk_cot`` use the two-step chain of thought: task
  ``infer_intent`` infers the asker's intent, persona and goals from the question and answer, then
  task ``generate_insights`` writes the insights from question, answer, intent and passages, with
  the seed list of insight types and self-assessed relevance, novelty, usefulness and intent
  alignment (0-5). The prompts are identical across the three, as in the paper.
- ``direct`` and ``vector_topk`` use the single prompt ``direct_insights``, which states the
  requirements (relevance, novelty, diversity, no repetition of the answer).

The methods differ only in the passages the caller selects for them (clustered neighbourhoods,
truncated global context, top-k retrieval); this module takes whatever passages it is given.
Generation uses the paper's settings: temperature 0.7, max_tokens 4000 (Appendix C).

The offline implementations (the default provider) are extractive and deterministic. Passage
sentences are compared with TF-IDF cosine (``extractive.tfidf``, over the sentences, the answer's
sentences, the question and the goals): ``q`` = similarity to the question, ``g`` = similarity to
the inferred goals, ``r`` = the highest similarity to any sentence of the answer (redundancy).

- ``direct_insights`` ranks sentences by ``q`` alone (it has no intent), dropping only near copies
  of the answer (``r >= 0.9``);
- ``generate_insights`` ranks by ``(q + g) / 2 * (1 - r) ** 2``: relevant to the question and the
  goals, and complementary to the answer; squaring makes a very relevant sentence that largely
  restates the answer rank below a less relevant one that adds to it.

Both skip sentences contained in the answer and sentences too similar (cosine > 0.6) to one already
picked, and take one sentence per passage before taking a second from any. Each picked sentence
becomes one insight, verbatim as its ``body``; its type comes from cue words (``_TYPE_CUES``), its
hook from its keyphrases (preferring ones the answer lacks), its realization and justification are
templates naming the passage, the keyphrase and the measured similarities. Self-scores, each
``round(5 * x)`` clipped to 0..5: relevance ``x = q / 0.3`` (a cosine of 0.3 counts as fully
relevant), novelty ``x = 1 - r``, intent alignment ``x = g / 0.3`` (for ``direct_insights``, which
has no intent, the relevance score), usefulness the rounded mean of relevance and novelty.
``infer_intent`` picks a persona and intent template from the question's wording (compare, trade-off,
what if, why, how) and takes the question's keyphrases as the goals.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from pydantic import BaseModel, Field

from ..extractive import STOPWORDS, terms, tfidf
from ..llm import LLMClient, Task, register_task
from ..llm.errors import InvalidOutputError, TaskInputError
from ..text import sentence_texts, split_sentences

InsightType = Literal[
    "missing information",
    "new idea",
    "alternate framing",
    "mind map",
    "potential issue or objection",
    "interesting fact",
    "short quiz",
    "real-world application or analogy",
    "tradeoff",
]
INSIGHT_TYPES: tuple[str, ...] = get_args(InsightType)

METHODS = ("insightgen", "direct", "cot", "vector_topk", "vector_topk_cot")
CHAIN_OF_THOUGHT_METHODS = frozenset({"insightgen", "cot", "vector_topk_cot"})

DEFAULT_MAX_INSIGHTS = 5
# Appendix C: GPT-4o generated insights with temperature 0.7 and max_tokens 4000.
GENERATION_TEMPERATURE = 0.7
GENERATION_MAX_TOKENS = 4000


def uses_chain_of_thought(method: str) -> bool:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    return method in CHAIN_OF_THOUGHT_METHODS


@dataclass(frozen=True)
class ContextPassage:
    """A passage an insight may draw on, shown to the model as ``[chunk_id] text``."""

    chunk_id: str
    text: str


class UserIntent(BaseModel):
    intent: str = Field(min_length=1, description="What the asker wants to understand, decide or do.")
    persona: str = Field(min_length=1, description="Who is most likely asking, in a few words.")
    goals: list[str] = Field(min_length=1, description="Short phrases naming what would help them next.")


_SCORE = {"ge": 0, "le": 5}


class Insight(BaseModel):
    type: InsightType
    hook: str = Field(min_length=1, description="A short descriptive lead.")
    body: str = Field(min_length=1, description="The explanation, grounded in the passages.")
    realization: str = Field(min_length=1, description="The understanding the insight enables.")
    justification: str = Field(min_length=1, description="Why it is worth adding to the answer.")
    chunk_ids: list[str] = Field(min_length=1, description="Ids of the passages it draws on.")
    relevance: int = Field(**_SCORE, description="0-5: relevance to the question.")
    novelty: int = Field(**_SCORE, description="0-5: new relative to the answer.")
    usefulness: int = Field(**_SCORE, description="0-5: usefulness to the reader.")
    intent_alignment: int = Field(**_SCORE, description="0-5: fit with the asker's intent and goals.")


class InsightSet(BaseModel):
    insights: list[Insight] = Field(min_length=1)


def insight_text(insight: Insight) -> str:
    """What a judge reads of an insight: its hook and body."""
    return f"{insight.hook}: {insight.body}"


# -- inputs -----------------------------------------------------------------------------------


def passage_inputs(passages: Sequence[ContextPassage | Mapping[str, Any]]) -> list[dict[str, str]]:
    """JSON-able passages for a task's inputs; raises ``TaskInputError`` when there are none, as a
    model could then cite nothing."""
    found = [
        {"chunk_id": str(p.chunk_id), "text": p.text}
        if isinstance(p, ContextPassage)
        else {"chunk_id": str(p["chunk_id"]), "text": str(p["text"])}
        for p in passages
    ]
    if not found:
        raise TaskInputError("insight generation needs at least one context passage")
    return found


def _checked_max_insights(max_insights: int) -> int:
    if max_insights < 1:
        raise TaskInputError(f"max_insights must be at least 1, not {max_insights}")
    return max_insights


def infer_intent_inputs(question: str, answer: str) -> dict[str, Any]:
    return {"question": question, "answer": answer}


def generate_insights_inputs(
    question: str,
    answer: str,
    intent: UserIntent,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": answer,
        "intent": intent.model_dump(),
        "passages": passage_inputs(passages),
        "max_insights": _checked_max_insights(max_insights),
    }


def direct_insights_inputs(
    question: str,
    answer: str,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": answer,
        "passages": passage_inputs(passages),
        "max_insights": _checked_max_insights(max_insights),
    }


def _format_passages(passages: Sequence[Mapping[str, str]]) -> str:
    return "\n\n".join(f"[{p['chunk_id']}] {' '.join(p['text'].split())}" for p in passages)


def _format_insight_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    values = {
        "question": str(inputs["question"]),
        "answer": str(inputs["answer"]),
        "passages": _format_passages(inputs["passages"]),
        "max_insights": str(inputs["max_insights"]),
        "insight_types": "\n".join(f"  - {name}" for name in INSIGHT_TYPES),
    }
    if "intent" in inputs:
        intent = UserIntent.model_validate(inputs["intent"])
        goals = "\n".join(f"  - {goal}" for goal in intent.goals)
        values["intent"] = f"Persona: {intent.persona}\nIntent: {intent.intent}\nGoals:\n{goals}"
    return values


def check_insights(output: InsightSet, inputs: Mapping[str, Any]) -> list[str]:
    """Every cited chunk id was given, and there are no more insights than asked for."""
    problems = []
    known = {p["chunk_id"] for p in inputs["passages"]}
    unknown = sorted({cid for insight in output.insights for cid in insight.chunk_ids} - known)
    if unknown:
        problems.append(
            f"chunk_ids contains {', '.join(map(repr, unknown))}, which are not chunk ids of the "
            f"passages; use only {', '.join(map(repr, sorted(known)))}"
        )
    if len(output.insights) > inputs["max_insights"]:
        problems.append(f"there are {len(output.insights)} insights; write at most {inputs['max_insights']}")
    return problems


# -- offline: keyphrases and intent -----------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|[^\sA-Za-z]+")
_MAX_PHRASE_WORDS = 3
# Frequent verbs of research prose: without a tagger, breaking phrases at them keeps most
# phrases nominal ("four-bit quantization", not "quantization degrades accuracy").
_VERBS = frozenset((
    "achieve", "achieves", "affect", "affects", "allow", "allows", "apply", "applies", "become",
    "becomes", "cause", "causes", "compare", "compares", "degrade", "degrades", "depend", "depends",
    "fail", "fails", "give", "gives", "handle", "handles", "help", "helps", "improve", "improves",
    "keep", "keeps", "lead", "leads", "learn", "learns", "make", "makes", "need", "needs", "offer",
    "offers", "outperform", "outperforms", "perform", "performs", "provide", "provides", "recover",
    "recovers", "reduce", "reduces", "reflect", "reflects", "remain", "remains", "require",
    "requires", "show", "shows", "suggest", "suggests", "trade", "trades", "use", "used", "uses",
    "using",
))  # fmt: skip


def keyphrases(text: str, *, limit: int, exclude: Collection[str] = ()) -> list[str]:
    """Up to ``limit`` phrases of ``text``, best first, lower-cased.

    Candidates are runs of content words between stopwords, common verbs, punctuation and numbers
    (RAKE); a run longer than three words keeps its last three, where English puts the head noun.
    A phrase scores the sum of its words' degree/frequency (RAKE), so longer, repeated phrases
    win; ties go to the earlier phrase. Phrases all of whose terms (``extractive.terms``) are in
    ``exclude`` are left out.
    """
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        word = token.lower()
        if token[0].isalpha() and len(word) > 1 and word not in STOPWORDS and word not in _VERBS:
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    phrases = [tuple(run[-_MAX_PHRASE_WORDS:]) for run in runs if run]
    frequency: dict[str, int] = {}
    degree: dict[str, int] = {}
    for phrase in phrases:
        for word in phrase:
            frequency[word] = frequency.get(word, 0) + 1
            degree[word] = degree.get(word, 0) + len(phrase)
    scored: dict[tuple[str, ...], float] = {}
    for phrase in phrases:
        if phrase not in scored and not set(terms(" ".join(phrase))) <= set(exclude):
            scored[phrase] = sum(degree[word] / frequency[word] for word in phrase)
    order = sorted(scored, key=lambda phrase: -scored[phrase])  # stable: ties keep text order
    return [" ".join(phrase) for phrase in order[:limit]]


# (cue in the question, persona, intent lead); the first that matches wins.
_INTENT_TEMPLATES = (
    (r"\b(?:compar\w*|versus|vs|differ\w*|contrast\w*|better than)\b", "researcher comparing approaches",
     "Compare what the sources say about"),
    (r"\b(?:trade\w*|balanc\w*|cost|costs|at the expense)\b", "practitioner weighing trade-offs",
     "Weigh the trade-offs involved in"),
    (r"\b(?:what if|would|could|implications?|impacts?|affect\w*|future)\b", "analyst exploring implications",
     "Explore the implications of"),
    (r"\b(?:why|reasons?|causes?)\b", "student seeking an explanation", "Understand the reasons behind"),
    (r"\bhow\b", "practitioner learning how things work", "Understand the mechanisms behind"),
)  # fmt: skip
_DEFAULT_INTENT = ("reader surveying the topic", "Get an overview of")
_MAX_GOALS = 4


def infer_intent_offline(question: str, answer: str) -> UserIntent:
    """A templated persona and intent keyed on the question's wording; goals are its keyphrases."""
    goals = keyphrases(question, limit=_MAX_GOALS) or [" ".join(question.split()) or "the question"]
    lowered = question.lower()
    persona, lead = next(
        ((persona, lead) for cue, persona, lead in _INTENT_TEMPLATES if re.search(cue, lowered)),
        _DEFAULT_INTENT,
    )
    listed = goals[0] if len(goals) == 1 else f"{', '.join(goals[:-1])} and {goals[-1]}"
    return UserIntent(intent=f"{lead} {listed}", persona=persona, goals=goals)


# -- offline: insights ------------------------------------------------------------------------

# (insight type, hook lead, cues); a cue matches at the start of a word ("limitation" also
# matches "limitations"); the first type with a matching cue wins.
_TYPE_CUES = (
    ("tradeoff", "Trade-off",
     ("trade-off", "tradeoff", "at the expense of", "at the cost of", "in exchange for", "cost")),
    ("potential issue or objection", "Potential issue",
     ("however", "limitation", "fail", "drawback", "weakness", "struggle", "cannot", "risk", "degrad")),
    ("real-world application or analogy", "In practice",
     ("application", "applied to", "applied in", "used in", "deploy", "in practice", "real-world",
      "production", "analog")),
    ("alternate framing", "Another angle",
     ("alternative", "instead", "rather than", "viewed as", "perspective")),
    # A measured quantity (12.5, 87%, 1,000, 3x), not a year or a citation number.
    ("interesting fact", "A number worth knowing", r"\d+(?:\.\d+)?\s?%|\b\d+\.\d+\b|\b\d{1,3}(?:,\d{3})+\b|\b\d+(?:x|×)"),
    ("new idea", "An idea to explore", ("propos", "introduc", "novel", "future", "could", "might")),
)  # fmt: skip
_TYPE_PATTERNS = tuple(
    (
        kind,
        lead,
        re.compile(cues if isinstance(cues, str) else r"\b(?:" + "|".join(map(re.escape, cues)) + ")"),
    )
    for kind, lead, cues in _TYPE_CUES
)
_DEFAULT_TYPE = ("missing information", "Not in the answer")

_MIN_SENTENCE_WORDS = 6
_PRONOUN_OPENERS = frozenset({"it", "its", "they", "their", "he", "she"})
_NEAR_COPY = 0.9  # direct: a sentence this similar to an answer sentence repeats it
_DUPLICATE = 0.6  # two picked sentences this similar say the same thing
# A sentence and a question share few words, so their TF-IDF cosine is rarely above 0.3.
_FULLY_RELEVANT = 0.3


@dataclass(frozen=True)
class _Candidate:
    chunk_id: str
    sentence: str
    question_similarity: float
    goal_similarity: float | None
    redundancy: float


def _score05(value: float) -> int:
    return int(min(5.0, max(0.0, 5.0 * value)) + 0.5)


def _normalise(text: str) -> str:
    return " ".join(text.split()).lower()


def _candidates(
    question: str, answer: str, passages: Sequence[Mapping[str, str]], goals: Sequence[str] | None
) -> tuple[list[_Candidate], np.ndarray]:
    """Passage sentences not contained in the answer, with their similarities, and the matrix of
    their pairwise cosines."""
    answer_text = _normalise(answer)
    found = []
    for passage in passages:
        for sentence in sentence_texts(passage["text"]):
            if sentence.lower() not in answer_text:
                found.append((passage["chunk_id"], sentence))
    # Fragments (short, or cut mid-sentence: no capital at the start, a footnote's number glued to
    # its first word), and sentences whose subject is a pronoun for something said before ("It is
    # released..."), only when there is nothing else: an insight is read on its own.
    standalone = [
        item
        for item in found
        if len(item[1].split()) >= _MIN_SENTENCE_WORDS
        and item[1][:1].isupper()
        and item[1].split()[0].lower() not in _PRONOUN_OPENERS
    ]
    found = standalone or found
    answer_sentences = [answer[start:end] for start, end in split_sentences(answer)]
    queries = [question, " ".join(goals or ())]
    vectors, _ = tfidf([sentence for _, sentence in found] + answer_sentences + queries)
    sentence_vectors = vectors[: len(found)]
    answer_vectors = vectors[len(found) : len(found) + len(answer_sentences)]
    question_vector, goal_vector = vectors[-2], vectors[-1]
    redundancy = (
        (sentence_vectors @ answer_vectors.T).max(axis=1) if len(answer_sentences) else np.zeros(len(found))
    )
    candidates = [
        _Candidate(
            chunk_id=chunk_id,
            sentence=sentence,
            question_similarity=float(sentence_vectors[index] @ question_vector),
            goal_similarity=None if goals is None else float(sentence_vectors[index] @ goal_vector),
            redundancy=float(redundancy[index]),
        )
        for index, (chunk_id, sentence) in enumerate(found)
    ]
    return candidates, sentence_vectors @ sentence_vectors.T


def _pick(
    candidates: list[_Candidate], scores: list[float | None], similarity: np.ndarray, limit: int
) -> list[_Candidate]:
    """Best first (``None``: never), no near-duplicates, one per passage before a second from any."""
    order = sorted((i for i, score in enumerate(scores) if score is not None), key=lambda i: (-scores[i], i))
    chosen: list[int] = []
    for one_per_passage in (True, False):
        used = {candidates[i].chunk_id for i in chosen}
        for i in order:
            if len(chosen) == limit:
                break
            if i in chosen or (one_per_passage and candidates[i].chunk_id in used):
                continue
            if all(similarity[i, other] <= _DUPLICATE for other in chosen):
                chosen.append(i)
                used.add(candidates[i].chunk_id)
    return [candidates[i] for i in chosen]


def _direct_score(candidate: _Candidate) -> float | None:
    return candidate.question_similarity if candidate.redundancy < _NEAR_COPY else None


def _chain_of_thought_score(candidate: _Candidate) -> float:
    relevance = (candidate.question_similarity + (candidate.goal_similarity or 0.0)) / 2
    return relevance * (1 - candidate.redundancy) ** 2


def _insight(candidate: _Candidate, answer_terms: set[str]) -> Insight:
    lowered = candidate.sentence.lower()
    kind, lead = next(
        ((kind, lead) for kind, lead, cues in _TYPE_PATTERNS if cues.search(lowered)), _DEFAULT_TYPE
    )
    new_phrases = keyphrases(candidate.sentence, limit=1, exclude=answer_terms)
    phrase = (new_phrases or keyphrases(candidate.sentence, limit=1) or ["this passage"])[0]
    source = f"passage [{candidate.chunk_id}]"
    if new_phrases:
        realization = f"The answer does not mention {phrase}; {source} shows how it bears on the question."
    else:
        realization = f"{source.capitalize()} adds detail on {phrase} beyond what the answer says."
    relevance = _score05(candidate.question_similarity / _FULLY_RELEVANT)
    novelty = _score05(1 - candidate.redundancy)
    measured = (
        f"TF-IDF cosine {candidate.question_similarity:.2f} to the question"
        + (
            ""
            if candidate.goal_similarity is None
            else f", {candidate.goal_similarity:.2f} to the inferred goals"
        )
        + f", at most {candidate.redundancy:.2f} to any answer sentence"
    )
    return Insight(
        type=kind,
        hook=f"{lead}: {phrase}",
        body=candidate.sentence,
        realization=realization,
        justification=f"Sentence extracted from {source} ({measured}).",
        chunk_ids=[candidate.chunk_id],
        relevance=relevance,
        novelty=novelty,
        usefulness=int((relevance + novelty) / 2 + 0.5),
        intent_alignment=(
            relevance
            if candidate.goal_similarity is None
            else _score05(candidate.goal_similarity / _FULLY_RELEVANT)
        ),
    )


def _offline_insights(
    task: str,
    question: str,
    answer: str,
    passages: Sequence[Mapping[str, str]],
    max_insights: int,
    goals: Sequence[str] | None,
) -> InsightSet:
    candidates, similarity = _candidates(question, answer, passages, goals)
    score = _direct_score if goals is None else _chain_of_thought_score
    chosen = _pick(candidates, [score(c) for c in candidates], similarity, max_insights)
    if not chosen:
        raise InvalidOutputError(
            f"offline {task}: no sentence of the context passages adds to the answer (they are "
            "empty or already in it)",
            task=task,
            problems="no passage sentence adds to the answer",
        )
    answer_terms = set(terms(answer))
    return InsightSet(insights=[_insight(candidate, answer_terms) for candidate in chosen])


def generate_insights_offline(
    question: str,
    answer: str,
    intent: Mapping[str, Any],
    passages: Sequence[Mapping[str, str]],
    max_insights: int,
) -> InsightSet:
    goals = UserIntent.model_validate(intent).goals
    return _offline_insights("generate_insights", question, answer, passages, max_insights, goals)


def direct_insights_offline(
    question: str, answer: str, passages: Sequence[Mapping[str, str]], max_insights: int
) -> InsightSet:
    return _offline_insights("direct_insights", question, answer, passages, max_insights, None)


# -- tasks ------------------------------------------------------------------------------------

INFER_INTENT: Task[UserIntent] = register_task(
    Task(
        name="infer_intent",
        version=1,
        template="infer_intent.v1.txt",
        output_model=UserIntent,
        offline=infer_intent_offline,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=200,
        description="Chain of thought, step 1: infer the asker's intent, persona and goals.",
    )
)

GENERATE_INSIGHTS: Task[InsightSet] = register_task(
    Task(
        name="generate_insights",
        version=1,
        template="generate_insights.v1.txt",
        output_model=InsightSet,
        offline=generate_insights_offline,
        inputs=("question", "answer", "intent", "passages", "max_insights"),
        input_defaults={"max_insights": DEFAULT_MAX_INSIGHTS},
        format_inputs=_format_insight_inputs,
        check_output=check_insights,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=1500,
        description="Chain of thought, step 2: typed, grounded, self-assessed insights.",
    )
)

DIRECT_INSIGHTS: Task[InsightSet] = register_task(
    Task(
        name="direct_insights",
        version=1,
        template="direct_insights.v1.txt",
        output_model=InsightSet,
        offline=direct_insights_offline,
        inputs=("question", "answer", "passages", "max_insights"),
        input_defaults={"max_insights": DEFAULT_MAX_INSIGHTS},
        format_inputs=_format_insight_inputs,
        check_output=check_insights,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        expected_output_tokens=1500,
        description="The Direct baseline: insights from one prompt stating the requirements.",
    )
)


def generate_insights(
    client: LLMClient,
    *,
    question: str,
    answer: str,
    passages: Sequence[ContextPassage | Mapping[str, Any]],
    chain_of_thought: bool,
    max_insights: int = DEFAULT_MAX_INSIGHTS,
) -> tuple[UserIntent | None, InsightSet]:
    """The insights for one question; with ``chain_of_thought`` also the inferred intent.

    Raises ``LLMError`` as ``client.run`` does. To batch many questions, run ``INFER_INTENT`` then
    ``GENERATE_INSIGHTS`` (or ``DIRECT_INSIGHTS``) with ``client.run_many`` on inputs from
    ``infer_intent_inputs``, ``generate_insights_inputs`` and ``direct_insights_inputs``.
    """
    if not chain_of_thought:
        return None, client.run(
            DIRECT_INSIGHTS, **direct_insights_inputs(question, answer, passages, max_insights)
        )
    intent = client.run(INFER_INTENT, **infer_intent_inputs(question, answer))
    insights = client.run(
        GENERATE_INSIGHTS, **generate_insights_inputs(question, answer, intent, passages, max_insights)
    )
    return intent, insights
