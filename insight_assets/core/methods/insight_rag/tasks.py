"""Insight-RAG's tasks: phrase a benchmark question, identify insights, complete a fragment (the
``llm`` retriever), answer a question with or without context, and match two papers.

The identifier, answering and matching prompts are Appendix A's (A.1-A.5), all at temperature 0.
The identifier answers in the public code's JSON list format; a reply that is not valid JSON gets
one repair request and then fails, recorded as a failed row (the public code silently returns no
insight there). Some inputs serve only the offline implementation (a similarity, a threshold) and
never reach a prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm import Task, narrowed, question_shape, register_task
from ...retrieval.citing import format_passages, unknown_citations
from . import offline
from .benchmark import contains
from .schemas import (
    INSIGHT_MAX_TOKENS,
    TEMPERATURE,
    Completion,
    InsightList,
    MatchDecision,
    PhrasedQuestion,
    ShortAnswer,
    TripleList,
)


def _check_triples(output: TripleList, inputs: Mapping[str, Any]) -> list[str]:
    count = len(inputs["sentences"])
    wrong = sorted({t.sentence for t in output.triples if not 1 <= t.sentence <= count})
    return [f"sentence numbers {wrong} do not exist; use 1 to {count}"] if wrong else []


INSIGHT_RAG_TRIPLES: Task[TripleList] = register_task(
    Task(
        name="insight_rag_triples",
        version=1,
        template="insight_rag_triples.v1.txt",
        output_model=TripleList,
        offline=offline.triples_offline,
        inputs=("sentences",),
        trim_input="sentences",
        decoding_schema=lambda inputs: narrowed(
            TripleList.model_json_schema(),
            "ExtractedTriple",
            sentence={"enum": list(range(1, len(inputs["sentences"]) + 1))},
        ),
        format_inputs=lambda inputs: {
            "sentences": "\n".join(f"{n}. {s}" for n, s in enumerate(inputs["sentences"], start=1))
        },
        check_output=_check_triples,
        temperature=TEMPERATURE,
        max_tokens=1500,
        expected_output_tokens=300,
        description="Insight-RAG §3: knowledge triples of a chunk's sentences.",
    )
)


def _check_question(output: PhrasedQuestion, inputs: Mapping[str, Any]) -> list[str]:
    problems = []
    if not output.question.strip().endswith("?"):
        problems.append("the question must end with a question mark")
    if any(contains(output.question, answer) for answer in inputs["objects"]):
        problems.append("the question contains its answer; ask for it without naming it")
    return problems


INSIGHT_RAG_QUESTION: Task[PhrasedQuestion] = register_task(
    Task(
        name="insight_rag_question",
        version=1,
        template="insight_rag_question.v1.txt",
        output_model=PhrasedQuestion,
        offline=offline.phrase_question_offline,
        inputs=("subject", "relation_text", "multi", "objects"),
        format_inputs=lambda inputs: {
            "subject": inputs["subject"],
            "relation": inputs["relation_text"],
            "answers": "several" if inputs["multi"] else "one",
        },
        check_output=_check_question,
        # A question, as the check wants it: a capital first and the question mark last.
        decoding_schema=lambda inputs: narrowed(
            PhrasedQuestion.model_json_schema(), question=question_shape(10, 300)
        ),
        temperature=TEMPERATURE,
        max_tokens=120,
        expected_output_tokens=30,
        description="Insight-RAG §3: a triple's subject and relation as a question about its object.",
    )
)


def _check_insights(output: InsightList, inputs: Mapping[str, Any]) -> list[str]:
    if len(output.root) > 10:
        return [f"there are {len(output.root)} insights; give at most 10"]
    return []


INSIGHT_RAG_IDENTIFY: Task[InsightList] = register_task(
    Task(
        name="insight_rag_identify",
        version=1,
        template="insight_rag_identify.v1.txt",
        output_model=InsightList,
        offline=offline.identify_offline,
        inputs=("task",),
        check_output=_check_insights,
        temperature=TEMPERATURE,
        max_tokens=300,
        expected_output_tokens=40,
        description="Insight-RAG's insight identifier (Appendix A.1): fragments to complete, with multiplicity.",
    )
)


INSIGHT_RAG_COMPLETE: Task[Completion] = register_task(
    Task(
        name="insight_rag_complete",
        version=1,
        template="insight_rag_complete.v1.txt",
        output_model=Completion,
        offline=offline.complete_offline,
        inputs=("fragment", "multi", "facts"),
        trim_input="facts",
        format_inputs=lambda inputs: {
            "fragment": inputs["fragment"],
            "facts": "\n".join(f"- {fact}" for fact in inputs["facts"]) or "(none)",
        },
        text_field="text",
        temperature=TEMPERATURE,
        max_tokens=INSIGHT_MAX_TOKENS,
        description="Insight-RAG's retriever, llm mode: the model completes the fragment from the top triples.",
    )
)


def _check_answer(output: ShortAnswer, inputs: Mapping[str, Any]) -> list[str]:
    return unknown_citations(output.answer, {p["id"] for p in inputs["passages"]})


def _answer_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    passages = inputs["passages"]
    if not passages:
        return {
            "instruction": "Answer the question.",
            "citing": "",
            "question": inputs["question"],
            "context": "",
        }
    return {
        "instruction": "Answer the question using the context.",
        "citing": " Cite the passage each answer comes from, e.g. [S1].",
        "question": inputs["question"],
        "context": "\nContext:\n" + format_passages(passages),
    }


INSIGHT_RAG_ANSWER: Task[ShortAnswer] = register_task(
    Task(
        name="insight_rag_answer",
        version=1,
        template="insight_rag_answer.v1.txt",
        output_model=ShortAnswer,
        offline=offline.answer_offline,
        inputs=("question", "passages"),
        trim_input="passages",
        format_inputs=_answer_inputs,
        check_output=_check_answer,
        text_field="answer",
        temperature=TEMPERATURE,
        max_tokens=200,
        expected_output_tokens=30,
        description="Insight-RAG's response generator (A.2, A.3): a short answer, with or without context.",
    )
)


def _match_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    help_items = inputs["insights"]
    if not help_items:
        return {
            "with_help": "",
            "help_rule": "",
            "paper_a": inputs["paper_a"],
            "paper_b": inputs["paper_b"],
            "help": "",
        }
    return {
        "with_help": ", and some useful insights",
        "help_rule": (
            " You may use the insights to better predict whether the papers are relevant or not. The "
            "insights should only serve as supportive evidence; do not rely on them blindly."
        ),
        "paper_a": inputs["paper_a"],
        "paper_b": inputs["paper_b"],
        "help": "\n\nUseful insights:\n" + "\n".join(f"- {item}" for item in help_items),
    }


INSIGHT_RAG_MATCH: Task[MatchDecision] = register_task(
    Task(
        name="insight_rag_match",
        version=1,
        template="insight_rag_match.v1.txt",
        output_model=MatchDecision,
        offline=offline.match_offline,
        inputs=("paper_a", "paper_b", "insights", "similarity", "threshold"),
        input_defaults={"insights": (), "similarity": 0.0, "threshold": 0.0},
        format_inputs=_match_inputs,
        temperature=TEMPERATURE,
        max_tokens=500,
        expected_output_tokens=150,
        description="Insight-RAG's matching task (A.4, A.5): does one paper cite the other.",
    )
)

TRIPLE_TASKS = (INSIGHT_RAG_TRIPLES,)
BENCHMARK_TASKS = (INSIGHT_RAG_QUESTION,)
ANSWER_TASKS = (INSIGHT_RAG_IDENTIFY, INSIGHT_RAG_COMPLETE, INSIGHT_RAG_ANSWER, INSIGHT_RAG_MATCH)
