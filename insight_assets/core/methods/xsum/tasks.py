"""XSum's tasks, their inputs and grounding checks.

Generation uses the paper's settings, temperature 0.3 and top-p 0.95 (§4.3), and so do the judges
(the paper's evaluator ran with the same). Passages and sources are shown under short aliases
(``S1``...), which the steps map back to chunk ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...llm import Task, exactly, narrowed, register_task
from ...llm.grammars import cited_prose, cited_text_pattern
from ...retrieval.citing import cited_aliases, format_passages, unknown_citations
from ...text import count_tokens
from . import offline
from .schemas import (
    TEMPERATURE,
    TOP_P,
    Checklist,
    ChecklistAnswers,
    CoverageRating,
    PaperQuestions,
    ScoreProbabilities,
    WrittenText,
    XSumAnswer,
)

CHECKLIST_MAX_QUESTIONS = 10
# A summary's max_tokens: the input's size (a merge is no longer than what it merges), within bounds.
MIN_SUMMARY_TOKENS = 1024
MAX_SUMMARY_TOKENS = 16000


# -- questions (§3.2) -------------------------------------------------------------------------


def _check_questions(output: PaperQuestions, inputs: Mapping[str, Any]) -> list[str]:
    empty = [q for q in output.questions if not q.strip()]
    problems = ["a question is empty"] if empty else []
    if len(output.questions) != inputs["k"]:
        problems.append(f"there are {len(output.questions)} questions; write exactly {inputs['k']}")
    return problems


XSUM_QUESTIONS: Task[PaperQuestions] = register_task(
    Task(
        name="xsum_questions",
        version=1,
        template="xsum_questions.v1.txt",
        output_model=PaperQuestions,
        offline=offline.questions_offline,
        check_output=_check_questions,
        decoding_schema=lambda inputs: narrowed(
            PaperQuestions.model_json_schema(), questions=exactly(inputs["k"])
        ),
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=600,
        expected_output_tokens=200,
        description="XSum §3.2: k broad questions about a paper from its title and abstract.",
    )
)


# -- answers (§3.4) ---------------------------------------------------------------------------


def _check_answer(output: XSumAnswer, inputs: Mapping[str, Any]) -> list[str]:
    if output.abstain:
        return []
    known = {p["id"] for p in inputs["passages"]}
    problems = unknown_citations(output.answer, known)
    if not output.answer.strip():
        problems.append('"answer" is empty but "abstain" is false; answer, or set "abstain" to true')
    elif not cited_aliases(output.answer):
        problems.append("the answer cites no passage; cite the passages it relies on, e.g. [S1]")
    return problems


def _answer_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What ``_check_answer`` accepts, for a model decoding under the schema: an abstention, or an
    answer citing only the passages shown, at least once."""
    aliases = [p["id"] for p in inputs["passages"]]
    if not aliases:  # an empty alternation makes no grammar; the check refuses the answer
        return XSumAnswer.model_json_schema()
    answer = {"type": "string", "pattern": cited_text_pattern(aliases)}
    return {
        "anyOf": [
            {"type": "object", "properties": {"abstain": {"const": True}}, "required": ["abstain"]},
            {
                "type": "object",
                "properties": {"abstain": {"const": False}, "answer": answer},
                "required": ["abstain", "answer"],
            },
        ]
    }


def _format_answer_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    values = {"question": str(inputs["question"]), "passages": format_passages(inputs["passages"])}
    if "draft" in inputs:
        values["draft"] = str(inputs["draft"])
    return values


XSUM_ANSWER: Task[XSumAnswer] = register_task(
    Task(
        name="xsum_answer",
        version=1,
        template="xsum_answer.v1.txt",
        output_model=XSumAnswer,
        offline=offline.answer_offline,
        inputs=("question", "passages"),
        trim_input="passages",
        format_inputs=_format_answer_inputs,
        check_output=_check_answer,
        decoding_schema=_answer_schema,
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=1000,
        expected_output_tokens=250,
        description="XSum §3.4: a cited answer from the 20 reranked chunks, or an explicit abstention.",
    )
)


def _refine_offline(question: str, passages: Sequence[Mapping[str, str]], draft: str) -> XSumAnswer:
    """Offline there is nothing to revise with: the draft stands."""
    return XSumAnswer(abstain=False, answer=draft)


XSUM_REFINE: Task[XSumAnswer] = register_task(
    Task(
        name="xsum_refine",
        version=1,
        template="xsum_refine.v1.txt",
        output_model=XSumAnswer,
        offline=_refine_offline,
        inputs=("question", "passages", "draft"),
        trim_input="passages",
        format_inputs=_format_answer_inputs,
        check_output=_check_answer,
        decoding_schema=_answer_schema,
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=1000,
        expected_output_tokens=250,
        description="The public code's second pass over the same context (off by default).",
    )
)


# -- summaries (§3.5) and the plain-RAG baseline ----------------------------------------------


def _summary_size(input_tokens: int) -> int:
    return min(MAX_SUMMARY_TOKENS, max(MIN_SUMMARY_TOKENS, input_tokens + 256))


def _check_summary(output: WrittenText, inputs: Mapping[str, Any]) -> list[str]:
    known = {source["id"] for source in inputs.get("sources") or inputs["passages"]}
    problems = unknown_citations(output.text, known)
    if not cited_aliases(output.text):
        problems.append("the summary cites no source; cite the sources of its statements, e.g. [S1]")
    return problems


def _summary_grammar(inputs: Mapping[str, Any]) -> str:
    return cited_prose([source["id"] for source in inputs.get("sources") or inputs["passages"]])


def _format_editor_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    pairs = "\n\n".join(
        f"Q{position}: {qa['question']}\nA{position}: {qa['answer']}"
        for position, qa in enumerate(inputs["questions_and_answers"], 1)
    )
    sources = "\n".join(f"[{source['id']}] {source['source']}" for source in inputs["sources"])
    return {"topic": str(inputs["topic"]), "questions_and_answers": pairs, "sources": sources}


XSUM_EDITOR: Task[WrittenText] = register_task(
    Task(
        name="xsum_editor",
        version=1,
        template="xsum_editor.v1.txt",
        output_model=WrittenText,
        offline=offline.editor_offline,
        inputs=("topic", "questions_and_answers", "sources"),
        format_inputs=_format_editor_inputs,
        check_output=_check_summary,
        decoding_grammar=_summary_grammar,
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=MIN_SUMMARY_TOKENS,
        expected_output_tokens=900,
        text_field="text",
        max_tokens_for=lambda inputs: _summary_size(
            sum(count_tokens(qa["answer"]) for qa in inputs["questions_and_answers"])
        ),
        description="XSum §3.5, the editor: one cited summary from a target's answers.",
    )
)

XSUM_TOPIC_SUMMARY: Task[WrittenText] = register_task(
    Task(
        name="xsum_topic_summary",
        version=1,
        template="xsum_topic_summary.v1.txt",
        output_model=WrittenText,
        offline=offline.topic_summary_offline,
        inputs=("topic", "passages"),
        trim_input="passages",
        format_inputs=lambda inputs: {
            "topic": str(inputs["topic"]),
            "passages": format_passages(inputs["passages"]),
        },
        check_output=_check_summary,
        decoding_grammar=_summary_grammar,
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=MIN_SUMMARY_TOKENS,
        expected_output_tokens=700,
        text_field="text",
        max_tokens_for=lambda inputs: _summary_size(
            sum(count_tokens(p["text"]) for p in inputs["passages"]) // 2
        ),
        description="The plain-RAG baseline: one cited summary from the topic's top passages.",
    )
)


# -- judges (§4.2): G-Eval coverage, CheckEval --------------------------------------------------

GEVAL_COVERAGE: Task[CoverageRating] = register_task(
    Task(
        name="geval_coverage",
        version=1,
        template="geval_coverage.v1.txt",
        output_model=CoverageRating,
        offline=offline.coverage_offline,
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=600,
        expected_output_tokens=200,
        description="G-Eval's coverage criterion (1-5) of a summary against its reference.",
    )
)


def _check_probabilities(output: ScoreProbabilities, inputs: Mapping[str, Any]) -> list[str]:
    if not output.probabilities or sum(output.probabilities.values()) <= 0:
        return ["the model gave no score among 1-5 any probability"]
    return []


GEVAL_COVERAGE_PROBABILITIES: Task[ScoreProbabilities] = register_task(
    Task(
        name="geval_coverage_probabilities",
        version=1,
        template="geval_coverage_form.v1.txt",
        output_model=ScoreProbabilities,
        offline=offline.coverage_probabilities_offline,
        check_output=_check_probabilities,
        choice_options=("1", "2", "3", "4", "5"),
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=1,
        description="G-Eval's coverage (1-5) as the probabilities of the score's token, for the weighted score.",
    )
)


def _check_checklist(output: Checklist, inputs: Mapping[str, Any]) -> list[str]:
    if len(output.questions) > inputs["max_questions"]:
        return [f"there are {len(output.questions)} questions; write at most {inputs['max_questions']}"]
    return []


CHECKEVAL_CHECKLIST: Task[Checklist] = register_task(
    Task(
        name="checkeval_checklist",
        version=1,
        template="checkeval_checklist.v1.txt",
        output_model=Checklist,
        offline=offline.checklist_offline,
        input_defaults={"max_questions": CHECKLIST_MAX_QUESTIONS},
        check_output=_check_checklist,
        decoding_schema=lambda inputs: narrowed(
            Checklist.model_json_schema(), questions={"maxItems": inputs["max_questions"]}
        ),
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=800,
        expected_output_tokens=300,
        description="CheckEval: yes/no questions, one per key point of the reference.",
    )
)


CHECKEVAL_REFINE: Task[Checklist] = register_task(
    Task(
        name="checkeval_refine",
        version=1,
        template="checkeval_refine.v1.txt",
        output_model=Checklist,
        offline=offline.refine_checklist_offline,
        input_defaults={"max_questions": CHECKLIST_MAX_QUESTIONS},
        format_inputs=lambda inputs: {
            "reference": str(inputs["reference"]),
            "questions": "\n".join(f"{n}. {q}" for n, q in enumerate(inputs["questions"], 1)),
            "max_questions": str(inputs["max_questions"]),
        },
        check_output=_check_checklist,
        decoding_schema=lambda inputs: narrowed(
            Checklist.model_json_schema(), questions={"maxItems": inputs["max_questions"]}
        ),
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=800,
        expected_output_tokens=300,
        description="CheckEval's checklist refinement: the draft's questions merged, split, reworded or dropped.",
    )
)


def _check_checklist_answers(output: ChecklistAnswers, inputs: Mapping[str, Any]) -> list[str]:
    if len(output.answers) != len(inputs["questions"]):
        return [f"there are {len(output.answers)} answers for {len(inputs['questions'])} questions"]
    return []


CHECKEVAL_ANSWERS: Task[ChecklistAnswers] = register_task(
    Task(
        name="checkeval_answers",
        version=1,
        template="checkeval_answers.v1.txt",
        output_model=ChecklistAnswers,
        offline=offline.checklist_answers_offline,
        format_inputs=lambda inputs: {
            "summary": str(inputs["summary"]),
            "questions": "\n".join(f"{n}. {q}" for n, q in enumerate(inputs["questions"], 1)),
        },
        check_output=_check_checklist_answers,
        decoding_schema=lambda inputs: narrowed(
            ChecklistAnswers.model_json_schema(), answers=exactly(len(inputs["questions"]))
        ),
        temperature=TEMPERATURE,
        top_p=TOP_P,
        max_tokens=400,
        expected_output_tokens=100,
        description="CheckEval: the checklist answered for one summary; the score is the share of yes.",
    )
)

GENERATION_TASKS = (XSUM_QUESTIONS, XSUM_ANSWER, XSUM_REFINE, XSUM_EDITOR, XSUM_TOPIC_SUMMARY)
JUDGE_TASKS = (
    GEVAL_COVERAGE,
    GEVAL_COVERAGE_PROBABILITIES,
    CHECKEVAL_CHECKLIST,
    CHECKEVAL_REFINE,
    CHECKEVAL_ANSWERS,
)
