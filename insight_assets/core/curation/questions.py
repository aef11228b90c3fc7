"""Question generation over combinations of compressed papers (SCOpE-QA, §3 and Appendix A/C).

1. Sample ``num_combinations`` seeded combinations of papers (``combinations.py``).
2. Per combination, task ``generate_questions`` (temperature 0.7, max_tokens 2000, as in
   Appendix C) asks for ``candidates_per_combination`` open-ended, conceptual questions of
   ``min_words``–``max_words`` words that span the papers; extra ones are ignored.
3. A deterministic filter drops candidates that do not end with "?", are too short or too long,
   or repeat an earlier candidate of the same combination.
4. Per combination, task ``refine_questions`` selects up to ``quota`` = ceil(target_count /
   num_combinations) survivors (4 by default) and may rewrite them for clarity. The paper only says
   the candidates were "filtered and refined" by a model; the quota that spreads the target
   evenly over the combinations is this implementation's choice.
5. Near-duplicates are removed across all selected questions in combination order (then the
   refiner's order): a question whose cosine (with the caller's ``embed``) to a kept one is at
   least ``duplicate_threshold`` is dropped. The paper dedupes answers at 0.9, not questions; doing
   it here too is this implementation's choice.
6. The effective target is min(target_count, quota × combinations): a small collection, with few
   possible combinations, yields fewer questions. When more survive, each combination's
   lower-ranked picks go first (round robin), so coverage stays balanced.

Calls run concurrently (``LLMClient.run_many``). A combination whose call fails is an
``ItemFailure`` and the others go on. When the budget runs out no further call is made: the
outcome has ``budget_error`` set and holds the questions of the combinations refined before.
Every candidate is reported with the reason it was kept or dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .combinations import Combination, QuestionsSettings, questions_per_combination, sample_combinations
from .question_tasks import GENERATE_QUESTIONS, REFINE_QUESTIONS, RefinedQuestion
from .records import GENERATED, CompressedDocument, Embed, ItemFailure, Question, question_id, word_count
from .similarity import embed_unit, greedy_duplicates

if TYPE_CHECKING:
    from ..llm.client import LLMClient


@dataclass(frozen=True)
class CandidateQuestion:
    """A generated candidate and what became of it. ``reason`` is one of "kept", "not a
    question", "too short", "too long", "repeated candidate", "not selected", "refinement failed",
    "not refined (budget reached)", "near-duplicate of <question_id>", "over target".
    ``refined_question`` is the refiner's version of a selected candidate, ``question_id`` the id
    it was given."""

    combination_index: int
    candidate_index: int
    question: str
    word_count: int
    kept: bool
    reason: str
    refined_question: str | None = None
    question_id: str | None = None


@dataclass(frozen=True)
class QuestionOutcome:
    combinations: list[Combination]
    candidates: list[CandidateQuestion]
    questions: list[Question]
    failures: list[ItemFailure]
    budget_error: str | None
    target: int


@dataclass
class _Draft:
    """A candidate on its way through the stages; ``reason`` stays ``None`` while it survives.
    ``selected`` is the question it became when the refiner picked it (``rank``: its place in
    the refiner's list). ``guessed``: a dry run's offline stand-in wrote it (``ItemResult.guessed``)."""

    combination: Combination
    candidate_index: int
    question: str
    reason: str | None = None
    selected: Question | None = None
    rank: int = 0
    guessed: bool = False


def paper_inputs(documents: Sequence[CompressedDocument]) -> list[dict[str, Any]]:
    return [{"title": doc.title, "text": doc.text, "main_topics": list(doc.main_topics)} for doc in documents]


def _screen(
    combination: Combination, questions: Sequence[str], settings: QuestionsSettings, guessed: bool
) -> list[_Draft]:
    drafts: list[_Draft] = []
    seen: set[str] = set()
    for index, raw in enumerate(questions[: settings.candidates_per_combination]):
        text = " ".join(raw.split())
        draft = _Draft(combination, index, text, guessed=guessed)
        words = word_count(text)
        if not text.endswith("?"):
            draft.reason = "not a question"
        elif words < settings.min_words:
            draft.reason = "too short"
        elif words > settings.max_words:
            draft.reason = "too long"
        elif text.lower() in seen:
            draft.reason = "repeated candidate"
        seen.add(text.lower())
        drafts.append(draft)
    return drafts


def _select(
    combination: Combination, survivors: list[_Draft], picks: Sequence[RefinedQuestion], guessed: bool
) -> None:
    chosen = {pick.number - 1: (rank, " ".join(pick.question.split())) for rank, pick in enumerate(picks)}
    for number, draft in enumerate(survivors):
        if number not in chosen:
            draft.reason = "not selected"
            continue
        draft.rank, text = chosen[number]
        draft.guessed = draft.guessed or guessed
        draft.selected = Question(
            question_id=question_id(text, combination.document_ids),
            question=text,
            document_ids=combination.document_ids,
            combination_index=combination.index,
            source=GENERATED,
        )


def _dedupe_and_trim(
    drafts: list[_Draft], settings: QuestionsSettings, embed: Embed, target: int
) -> list[Question]:
    selected = [(d, d.selected) for d in drafts if d.reason is None and d.selected is not None]
    selected.sort(key=lambda pair: (pair[0].combination.index, pair[0].rank))
    # A dry run's guessed texts are not the model's: whether the model's would be near-duplicates is
    # unknown, so the plan assumes the model asked for distinct questions gives distinct ones.
    judged = [pair for pair in selected if not pair[0].guessed]
    vectors = embed_unit(embed, [question.question for _, question in judged])
    for (draft, _), duplicate_of in zip(judged, greedy_duplicates(vectors, settings.duplicate_threshold)):
        if duplicate_of is not None:
            draft.reason = f"near-duplicate of {judged[duplicate_of][1].question_id}"
    survivors = [pair for pair in selected if pair[0].reason is None]
    # Over the target, every combination's lowest-ranked picks go first.
    for draft, _ in sorted(survivors, key=lambda pair: (pair[0].rank, pair[0].combination.index))[target:]:
        draft.reason = "over target"
    return [question for draft, question in survivors if draft.reason is None]


def generate_questions(
    client: LLMClient,
    compressed: Sequence[CompressedDocument],
    settings: QuestionsSettings,
    embed: Embed,
    previous: Sequence[Sequence[str]] = (),
) -> QuestionOutcome:
    """Questions over combinations of ``compressed``; ``previous``: the combinations of the
    collection's last build, kept where their papers still are (``sample_combinations``)."""
    # Sampled from the papers in id order, as the warehouse gives them back: the same papers make the
    # same combinations whether they come from the warehouse or straight from compression (a dry run).
    by_id = {doc.document_id: doc for doc in sorted(compressed, key=lambda doc: doc.document_id)}
    sampled = sample_combinations(list(by_id), settings, previous)
    combinations = [Combination(index, ids) for index, ids in enumerate(sampled)]
    quota = questions_per_combination(settings)
    target = min(settings.target_count, quota * len(combinations))
    failures: list[ItemFailure] = []

    def papers(combination: Combination) -> list[dict[str, Any]]:
        return paper_inputs([by_id[i] for i in combination.document_ids])

    limits = {"min_words": settings.min_words, "max_words": settings.max_words}
    generation = client.run_many(
        GENERATE_QUESTIONS,
        [{"papers": papers(c), "count": settings.candidates_per_combination, **limits} for c in combinations],
    )
    drafts: list[_Draft] = []
    for combination, item in zip(combinations, generation.items):
        if item.value is not None:
            drafts.extend(_screen(combination, item.value.questions, settings, item.guessed))
        elif item.status == "failed":
            failures.append(
                ItemFailure(f"combination {combination.index}", f"generate_questions: {item.error}")
            )
    if generation.budget_error is not None:
        for draft in drafts:
            draft.reason = draft.reason or "not refined (budget reached)"
        return _outcome(combinations, drafts, [], failures, str(generation.budget_error), target)

    to_refine = [
        (combination, [d for d in drafts if d.combination is combination and d.reason is None])
        for combination in combinations
    ]
    to_refine = [(combination, survivors) for combination, survivors in to_refine if survivors]
    refinement = client.run_many(
        REFINE_QUESTIONS,
        [
            {"papers": papers(c), "candidates": [d.question for d in survivors], "quota": quota, **limits}
            for c, survivors in to_refine
        ],
    )
    for (combination, survivors), item in zip(to_refine, refinement.items):
        if item.value is not None:
            _select(combination, survivors, item.value.selected, item.guessed)
            continue
        for draft in survivors:
            draft.reason = "refinement failed" if item.status == "failed" else "not refined (budget reached)"
        if item.status == "failed":
            failures.append(
                ItemFailure(f"combination {combination.index}", f"refine_questions: {item.error}")
            )

    questions = _dedupe_and_trim(drafts, settings, embed, target)
    budget_error = str(refinement.budget_error) if refinement.budget_error else None
    return _outcome(combinations, drafts, questions, failures, budget_error, target)


def _outcome(
    combinations: list[Combination],
    drafts: list[_Draft],
    questions: list[Question],
    failures: list[ItemFailure],
    budget_error: str | None,
    target: int,
) -> QuestionOutcome:
    candidates = [
        CandidateQuestion(
            combination_index=d.combination.index,
            candidate_index=d.candidate_index,
            question=d.question,
            word_count=word_count(d.question),
            kept=d.reason is None,
            reason=d.reason or "kept",
            refined_question=d.selected.question if d.selected else None,
            question_id=d.selected.question_id if d.selected else None,
        )
        for d in drafts
    ]
    return QuestionOutcome(combinations, candidates, questions, failures, budget_error, target)
