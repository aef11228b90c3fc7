"""XSum's tasks without a model: extractive, deterministic, and labelled as such.

- questions: templates around the abstract's key phrases ("What does '<title>' report about
  <phrase>?"), never a model's phrasing;
- answers: the passages' sentences that share the most words with the question, cited; an
  abstention when no sentence holds at least ``ABSTAIN_BELOW`` of the question's content words;
- editor and topic summary: the answers' (or passages') most central sentences, each with its
  citations, in order — a digest, not a rewrite;
- G-Eval coverage and CheckEval: lexical stand-ins (the share of the reference's content words the
  summary holds; checklist items are the reference's key sentences, answered "yes" when the summary
  holds half of an item's content words). They measure word overlap, not meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...extractive import rank_sentences, terms, whole_sentences
from ...keyphrases import rake_keyphrases
from ...retrieval.citing import cited_sentences
from ...text import sentence_texts
from .schemas import (
    Checklist,
    ChecklistAnswers,
    CoverageRating,
    PaperQuestions,
    ScoreProbabilities,
    WrittenText,
    XSumAnswer,
)

# The share of a question's content words the best passage sentence must hold, or the offline
# answer abstains. A quarter: a sentence naming one of a four-word question's topics is enough.
ABSTAIN_BELOW = 0.25
ANSWER_SENTENCES = 3
EDITOR_SENTENCES = 16
# A checklist item counts as covered when the summary holds this share of its content words.
CHECK_COVERED = 0.5
CHECKLIST_ITEMS = 8

_TEMPLATES = (
    "What is {phrase} in '{title}', and why does it matter?",
    "How does '{title}' approach or use {phrase}?",
    "What results or findings does '{title}' report about {phrase}?",
)
_GENERIC = (
    "What problem does '{title}' address?",
    "What method does '{title}' propose?",
    "How is the approach of '{title}' evaluated?",
    "What are the main findings of '{title}'?",
    "What limitations or open questions does '{title}' leave?",
)


def _short(title: str, words: int = 8) -> str:
    parts = title.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def questions_offline(title: str, abstract: str, k: int) -> PaperQuestions:
    """Template questions about the abstract's key phrases, then generic ones to make up ``k``."""
    short = _short(title or "the paper")
    phrases = rake_keyphrases(abstract, limit=k)
    questions = [
        _TEMPLATES[position % len(_TEMPLATES)].format(phrase=phrase, title=short)
        for position, phrase in enumerate(phrases)
    ]
    for template in _GENERIC:
        if len(questions) >= k:
            break
        questions.append(template.format(title=short))
    return PaperQuestions(questions=questions[:k])


def _content(text: str) -> set[str]:
    return set(terms(text))


def answer_offline(question: str, passages: Sequence[Mapping[str, str]]) -> XSumAnswer:
    """The passages' sentences richest in the question's words, with their passage ids; an
    abstention when none holds ``ABSTAIN_BELOW`` of them."""
    wanted = _content(question)
    found = whole_sentences(passages)
    if not wanted or not found:
        return XSumAnswer(abstain=True)
    overlap = [len(wanted & _content(sentence)) / len(wanted) for _, sentence in found]
    if max(overlap) < ABSTAIN_BELOW:
        return XSumAnswer(abstain=True)
    candidates = [index for index, share in enumerate(overlap) if share >= ABSTAIN_BELOW]
    chosen = rank_sentences([found[i][1] for i in candidates], question, limit=ANSWER_SENTENCES)
    picked = sorted(candidates[i] for i in chosen)
    return XSumAnswer(abstain=False, answer=" ".join(f"{found[i][1]} [{found[i][0]}]" for i in picked))


def editor_offline(
    topic: str, questions_and_answers: Sequence[Mapping[str, str]], sources: Any
) -> WrittenText:
    """The answers' most central sentences on the topic (two per answer, between 4 and
    ``EDITOR_SENTENCES``), each with its citations, in the answers' order."""
    pairs = cited_sentences([qa["answer"] for qa in questions_and_answers])
    if not pairs:
        return WrittenText(text="The answers hold no cited statement to summarize.")
    limit = max(4, min(EDITOR_SENTENCES, 2 * len(questions_and_answers)))
    chosen = sorted(rank_sentences([sentence for sentence, _ in pairs], topic, limit=limit))
    return WrittenText(text=" ".join(f"{pairs[i][0]} {pairs[i][1]}" for i in chosen))


def topic_summary_offline(topic: str, passages: Sequence[Mapping[str, str]]) -> WrittenText:
    """The passages' most central sentences on the topic (eight at most), each cited."""
    found = whole_sentences(passages)
    if not found:
        return WrittenText(text="The passages hold no text to summarize.")
    chosen = sorted(rank_sentences([sentence for _, sentence in found], topic, limit=8))
    return WrittenText(text=" ".join(f"{found[i][1]} [{found[i][0]}]" for i in chosen))


def content_recall(reference: str, summary: str) -> float:
    """The share of the reference's distinct content words that the summary holds."""
    wanted = _content(reference)
    return len(wanted & _content(summary)) / len(wanted) if wanted else 0.0


def coverage_offline(reference: str, summary: str) -> CoverageRating:
    share = content_recall(reference, summary)
    return CoverageRating(
        reasoning=f"offline lexical stand-in: the summary holds {share:.0%} of the reference's content words",
        score=round(1 + 4 * share, 2),
    )


def checklist_offline(reference: str, max_questions: int) -> Checklist:
    sentences = [s for s in sentence_texts(reference) if len(_content(s)) >= 3]
    if not sentences:
        return Checklist(questions=[f"Does the summary convey: {reference.strip()[:200]}?"])
    chosen = sorted(rank_sentences(sentences, limit=min(max_questions, CHECKLIST_ITEMS)))
    return Checklist(questions=[f"Does the summary convey that {sentences[i].rstrip('.')}?" for i in chosen])


def checklist_answers_offline(summary: str, questions: Sequence[str]) -> ChecklistAnswers:
    held = _content(summary)
    answers = []
    for question in questions:
        wanted = _content(question.removeprefix("Does the summary convey that"))
        covered = bool(wanted) and len(wanted & held) / len(wanted) >= CHECK_COVERED
        answers.append("yes" if covered else "no")
    return ChecklistAnswers(answers=answers)


def coverage_probabilities_offline(reference: str, summary: str) -> ScoreProbabilities:
    """Not run (offline gives no token probabilities; G-Eval reads ``coverage_offline``'s score):
    the lexical score's rounding as certain."""
    score = round(coverage_offline(reference, summary).score)
    return ScoreProbabilities(probabilities={str(n): float(n == score) for n in range(1, 6)})


# Two checklist questions whose content words overlap this much (Jaccard) ask about the same point.
SAME_POINT = 0.6


def refine_checklist_offline(reference: str, questions: Sequence[str], max_questions: int) -> Checklist:
    """The draft without near-repeats (content-word Jaccard >= ``SAME_POINT`` with an earlier
    question), cut to ``max_questions``: merging is all a lexical stand-in can do."""
    kept: list[str] = []
    seen: list[set[str]] = []
    for question in questions:
        words = _content(question)
        if any(words and len(words & other) / len(words | other) >= SAME_POINT for other in seen):
            continue
        kept.append(question)
        seen.append(words)
    return Checklist(questions=kept[:max_questions] or list(questions[:1]))
