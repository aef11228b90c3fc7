"""InsightGen's offline implementations: extractive and deterministic.

Passage sentences are compared with TF-IDF cosine (``extractive.tfidf``, over the sentences, the
answer's sentences, the question and the goals): ``q`` = similarity to the question, ``g`` =
similarity to the inferred goals, ``r`` = the highest similarity to any sentence of the answer (redundancy).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insight_assets.core.startup.lazy import lazy_regex, np

from ...extractive import terms, tfidf
from ...keyphrases import rake_keyphrases
from ...llm.errors import InvalidOutputError
from ...text import sentence_texts, split_sentences
from .schemas import Insight, InsightSet, UserIntent

# -- offline: intent -----------------------------------------------------------

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
    goals = rake_keyphrases(question, limit=_MAX_GOALS) or [" ".join(question.split()) or "the question"]
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
        lazy_regex(cues if isinstance(cues, str) else r"\b(?:" + "|".join(map(re.escape, cues)) + ")"),
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
    new_phrases = rake_keyphrases(candidate.sentence, limit=1, exclude=answer_terms)
    phrase = (new_phrases or rake_keyphrases(candidate.sentence, limit=1) or ["this passage"])[0]
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
