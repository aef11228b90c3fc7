"""Answer generation and de-duplication (SCOpE-QA, §3 and Appendix A step 4, Appendix C).

Task ``answer_question`` (temperature 0.7, as in Appendix C; max_tokens 1500, which the paper does
not give) answers from the compressed papers of the question's combination only: directly and
comprehensively, synthesizing across papers, addressing every aspect, citing evidence by exact
title, adding nothing from outside. Its check rejects (and so sends back for one repair) a cited
title that is not exactly one of the given titles, and a cited title the answer text does not
mention. An answer may cite nothing: the papers may not bear on a user's question, and the prompt
asks the model to say so. ``cited_document_ids`` are the ids of the cited titles.

User questions (``source == "user"``) with an answer are not sent to the model; their answer is
the user's (``answer_source == "user"``) and they cite the documents the user named, if any. User
questions without documents are answered from the ``max_documents_for_user_questions`` compressed
documents most similar to the question (cosine of ``embed`` vectors).

Redundant answers are removed as in the paper: greedily, in question order, an answer whose cosine
to an answer already kept is 0.9 or more is marked "duplicate". User questions are exempt: they
are kept first, whatever their position, and generated answers are compared with them too.

Offline, the answer is extractive: the compressed papers' statements most relevant to the
question, each followed by the title of its paper in square brackets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from insight_assets.core.runtime.stage_settings import StageSettings
from insight_assets.core.startup.lazy import LazyModel, np

from ..extractive import rank_sentences
from ..llm.tasks import Task, narrowed, register_task
from ..text import split_sentences
from .question_tasks import format_papers, names_paper, papers_of
from .records import USER, CompressedDocument, Embed, ItemFailure, QAPair, Question, rendered_statements
from .similarity import embed_unit, greedy_duplicates

if TYPE_CHECKING:
    from ..llm.client import LLMClient

KEPT, DUPLICATE, FAILED, SKIPPED = "kept", "duplicate", "failed", "skipped"

_OFFLINE_SENTENCES = 5
NO_STATEMENTS_ANSWER = "The papers contain no statements to answer from."


class AnswersSettings(StageSettings):
    """InsightGen §3 / Appendix C: an answer per question from its documents' digests."""

    duplicate_threshold: float = Field(
        default=0.9, description="§3: an answer this similar (cosine) to a kept answer is removed."
    )
    max_documents_for_user_questions: int = Field(
        default=5, ge=1, description="Most similar documents given to a user question that names none."
    )
    temperature: float | None = Field(default=0.7, description="Appendix C: temperature 0.7.")


@dataclass(frozen=True)
class Answer:
    """The answer to one question. ``status``: "kept"; "duplicate" (of ``duplicate_of``, a
    question id); "failed" (``error`` says why); "skipped" (not run: the budget ran out).
    ``answer_source`` is who wrote it: "offline (extractive)", "<provider>/<model>", or "user"."""

    question_id: str
    question: str
    answer: str
    document_ids: tuple[str, ...]
    cited_document_ids: tuple[str, ...]
    source: str
    answer_source: str
    status: str
    duplicate_of: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class AnswerOutcome:
    """``answers``: one per question, in question order; ``failures``: the failed ones."""

    answers: list[Answer]
    failures: list[ItemFailure]
    budget_error: str | None


def citations_valid(answer: Answer) -> bool:
    """Whether the answer cites only documents it was given and, unless the user wrote it, at least
    one (the task checks the first as the model answers; an answer may still cite nothing)."""
    cited = set(answer.cited_document_ids)
    return cited <= set(answer.document_ids) and (bool(cited) or answer.answer_source == "user")


# -- the task -----------------------------------------------------------------------------------


class GroundedAnswer(LazyModel):
    answer: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] = Field(
        description="The answer, from the papers only, citing papers by exact title."
    )
    cited_titles: list[str] = Field(description="The exact titles of the papers the answer cites.")


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_answer(output: GroundedAnswer, inputs: Mapping[str, Any]) -> list[str]:
    titles = [paper.title for paper in papers_of(inputs["papers"])]
    allowed = "; ".join(f'"{title}"' for title in titles)
    problems = []
    unknown = [title for title in output.cited_titles if title not in titles]
    if unknown:
        listed = "; ".join(f'"{title}"' for title in unknown)
        problems.append(
            f"cited_titles contains {listed}, not the exact title of a given paper; cite only these "
            f"titles, character for character: {allowed}"
        )
    answer = _folded(output.answer)
    unmentioned = [t for t in output.cited_titles if t in titles and _folded(t) not in answer]
    if unmentioned:
        listed = "; ".join(f'"{title}"' for title in unmentioned)
        problems.append(
            f"the answer text never mentions {listed}; cite each title of cited_titles in the "
            "answer, in double quotes, where its evidence is used"
        )
    return problems


def answer_offline(question: str, papers: Sequence[Any]) -> GroundedAnswer:
    """The statements most relevant to the question, each followed by ``[its paper's title]``; of
    the papers the question names (by a form of their title in quotes) where it names any."""
    docs = papers_of(papers)
    named = [paper for paper in docs if names_paper(question, paper.title)]
    found: list[tuple[str, str]] = []  # (title, statement)
    for paper in named or docs:
        statements = rendered_statements(paper.text) or [
            paper.text[start:end] for start, end in split_sentences(paper.text)
        ]
        found.extend((paper.title, " ".join(statement.split())) for statement in statements)
    if not found:
        return GroundedAnswer(answer=NO_STATEMENTS_ANSWER, cited_titles=[])
    ranked = rank_sentences([statement for _, statement in found], question, limit=len(found))
    if named:  # each named paper's most relevant statement first, so that the answer draws on every one
        firsts = set({found[index][0]: index for index in reversed(ranked)}.values())
        ranked = sorted(ranked, key=lambda index: index not in firsts)
    chosen = ranked[:_OFFLINE_SENTENCES]
    cited: list[str] = []
    for index in chosen:
        if found[index][0] not in cited:
            cited.append(found[index][0])
    text = " ".join(f"{found[index][1]} [{found[index][0]}]" for index in chosen)
    return GroundedAnswer(answer=text, cited_titles=cited)


def _format_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    papers = papers_of(inputs["papers"])
    return {
        "question": " ".join(str(inputs["question"]).split()),
        "papers": format_papers(papers),
        "titles": "\n".join(f"- {paper.title}" for paper in papers),
    }


def _answer_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Only the given papers' titles may be cited, each once."""
    titles = [paper.title for paper in papers_of(inputs["papers"])]
    return narrowed(
        GroundedAnswer.model_json_schema(), cited_titles={"items": {"enum": titles}, "maxItems": len(titles)}
    )


ANSWER_QUESTION: Task[GroundedAnswer] = register_task(
    Task(
        name="answer_question",
        version=1,
        template="answer_question.v1.txt",
        output_model=GroundedAnswer,
        offline=answer_offline,
        inputs=("question", "papers"),
        trim_input="papers",
        format_inputs=_format_inputs,
        check_output=check_answer,
        decoding_schema=_answer_schema,
        temperature=0.7,  # SCOpE-QA, Appendix C
        max_tokens=1500,
        expected_output_tokens=500,
        description="Answer an open-ended question from compressed papers, citing exact titles.",
    )
)


# -- the stage ----------------------------------------------------------------------------------


def answer_source_label(client: LLMClient) -> str:
    """Who writes the answers of this client: "offline (extractive)" or "<provider>/<model>"."""
    return client.writer_label(ANSWER_QUESTION)


def _closest_documents(
    questions: Sequence[str], compressed: Sequence[CompressedDocument], limit: int, embed: Embed
) -> list[tuple[str, ...]]:
    """For each question, the ids of the ``limit`` compressed documents most similar to it, in
    collection order."""
    if not questions or not compressed:
        return [() for _ in questions]
    documents = embed_unit(embed, [doc.text for doc in compressed])
    similarity = embed_unit(embed, list(questions)) @ documents.T
    picked = []
    for row in similarity:
        best = np.lexsort((np.arange(len(row)), -row))[:limit]  # ties: the earlier document
        picked.append(tuple(compressed[index].document_id for index in sorted(best)))
    return picked


def _documents_to_answer_from(
    questions: Sequence[Question],
    compressed: Sequence[CompressedDocument],
    settings: AnswersSettings,
    embed: Embed,
) -> list[tuple[str, ...]]:
    """Per question, the compressed documents its answer is written from: those of its own that
    were compressed, or for a question without documents the closest ones."""
    known = {doc.document_id for doc in compressed}
    unplaced = [i for i, q in enumerate(questions) if q.user_answer is None and not q.document_ids]
    closest = _closest_documents(
        [questions[i].question for i in unplaced],
        compressed,
        settings.max_documents_for_user_questions,
        embed,
    )
    placed = dict(zip(unplaced, closest))
    return [placed.get(i, tuple(d for d in q.document_ids if d in known)) for i, q in enumerate(questions)]


def generate_answers(
    client: LLMClient,
    questions: Sequence[Question],
    compressed: Sequence[CompressedDocument],
    settings: AnswersSettings,
    embed: Embed,
) -> AnswerOutcome:
    by_id = {doc.document_id: doc for doc in compressed}
    label = answer_source_label(client)
    # Every question starts as failed for want of documents; the steps below overwrite that.
    answers = [
        Answer(
            question_id=q.question_id,
            question=q.question,
            answer="",
            document_ids=(),
            cited_document_ids=(),
            source=q.source,
            answer_source=label,
            status=FAILED,
            error="no compressed document to answer from",
        )
        for q in questions
    ]
    to_run: list[tuple[int, tuple[str, ...]]] = []
    for index, (question, document_ids) in enumerate(
        zip(questions, _documents_to_answer_from(questions, compressed, settings, embed))
    ):
        if question.user_answer is not None:
            answers[index] = dataclasses.replace(
                answers[index],
                answer=question.user_answer,
                document_ids=question.document_ids,
                cited_document_ids=question.document_ids,
                answer_source=USER,
                status=KEPT,
                error=None,
            )
        elif document_ids:
            to_run.append((index, document_ids))

    batch = client.run_many(
        ANSWER_QUESTION,
        [
            {
                "question": questions[index].question,
                "papers": [{"title": by_id[i].title, "text": by_id[i].text} for i in document_ids],
            }
            for index, document_ids in to_run
        ],
    )
    guessed = {index for (index, _), item in zip(to_run, batch.items) if item.guessed}
    for (index, document_ids), item in zip(to_run, batch.items):
        if item.value is None:
            status = FAILED if item.status == "failed" else SKIPPED
            answers[index] = dataclasses.replace(
                answers[index], document_ids=document_ids, status=status, error=item.error
            )
            continue
        answers[index] = dataclasses.replace(
            answers[index],
            answer=item.value.answer,
            document_ids=document_ids,
            cited_document_ids=tuple(i for i in document_ids if by_id[i].title in item.value.cited_titles),
            status=KEPT,
            error=None,
        )

    _mark_duplicates(answers, settings.duplicate_threshold, embed, guessed)
    return AnswerOutcome(
        answers=answers,
        failures=[ItemFailure(a.question_id, a.error or "") for a in answers if a.status == FAILED],
        budget_error=str(batch.budget_error) if batch.budget_error else None,
    )


def _mark_duplicates(answers: list[Answer], threshold: float, embed: Embed, guessed: set[int]) -> None:
    """Mark, in place, the generated answers too similar to one kept before them (users' first).
    ``guessed``: the answers a dry run's offline stand-in wrote, which are not judged (the plan
    assumes the model's answers to distinct questions are distinct)."""
    kept = [i for i, answer in enumerate(answers) if answer.status == KEPT and i not in guessed]
    vectors = embed_unit(embed, [answers[i].answer for i in kept])
    exempt = [answers[i].source == USER for i in kept]
    for position, duplicate_of in enumerate(greedy_duplicates(vectors, threshold, exempt)):
        if duplicate_of is not None:
            answers[kept[position]] = dataclasses.replace(
                answers[kept[position]],
                status=DUPLICATE,
                duplicate_of=answers[kept[duplicate_of]].question_id,
            )


def kept_pairs(answers: Sequence[Answer]) -> list[QAPair]:
    """The question-answer pairs the curation keeps, in order: what the methods are asked."""
    return [QAPair(a.question_id, a.question, a.answer) for a in answers if a.status == KEPT]


def reference_answers(answers: Sequence[Answer]) -> dict[str, str]:
    """Each question's answer, kept or set aside as a near-duplicate of a kept one: a reference
    that ConTReGen's answers are scored against."""
    return {a.question_id: a.answer for a in answers if a.status in (KEPT, DUPLICATE) and a.answer}
