"""ConTReGen's tasks: plan, verify (two steps), synthesize (node and root), and judge an answer.

Planning and verification run at temperature 0, writing at 0.3 (the paper gives neither). The two
verification steps are batched as the issue asks: one call judges every sub-question of a plan,
one call judges every passage of a node. Some inputs are for the offline implementation only
(cosine similarities, thresholds, the theme graph's labels) and never reach a prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...llm import Task, exactly, list_problems, narrowed, one_item_each, register_task
from ...llm.grammars import cited_prose
from ...retrieval.citing import cited_aliases, format_passages, unknown_citations
from . import offline
from .schemas import (
    ANSWER_MAX_TOKENS,
    NODE_SUMMARY_MAX_TOKENS,
    PLAN_TEMPERATURE,
    WRITE_TEMPERATURE,
    AnswerJudgement,
    FollowUp,
    PassageVerdicts,
    Plan,
    QueryChain,
    ReasonedAnswer,
    SentenceVerdicts,
    SubQuestionVerdicts,
    WrittenText,
)

# -- planning (§2.1) -----------------------------------------------------------------------------


def _check_plan(output: Plan, inputs: Mapping[str, Any]) -> list[str]:
    problems = []
    if len(output.sub_questions) > inputs["max_sub_questions"]:
        problems.append(
            f"there are {len(output.sub_questions)} sub-questions; write at most {inputs['max_sub_questions']}"
        )
    if any(not question.strip() for question in output.sub_questions):
        problems.append("a sub-question is empty")
    return problems


CONTREGEN_PLAN: Task[Plan] = register_task(
    Task(
        name="contregen_plan",
        version=1,
        template="contregen_plan.v1.txt",
        output_model=Plan,
        offline=offline.plan_offline,
        inputs=("query", "question", "explored", "passages", "max_sub_questions"),
        trim_input="passages",
        format_inputs=lambda inputs: {
            "query": str(inputs["query"]),
            "question": str(inputs["question"]),
            "explored": "; ".join(inputs["explored"]) or "none",
            "passages": format_passages(inputs["passages"]) or "(none)",
            "max_sub_questions": str(inputs["max_sub_questions"]),
        },
        check_output=_check_plan,
        # The bound the check holds the plan to, in the schema a provider decodes under.
        decoding_schema=lambda inputs: narrowed(
            Plan.model_json_schema(), sub_questions={"maxItems": inputs["max_sub_questions"]}
        ),
        temperature=PLAN_TEMPERATURE,
        max_tokens=600,
        expected_output_tokens=150,
        description="ConTReGen §2.1: sub-questions for a node from its question and passages.",
    )
)


# -- verification (§2.1, Figure 5) ---------------------------------------------------------------


def _check_sub_question_verdicts(output: SubQuestionVerdicts, inputs: Mapping[str, Any]) -> list[str]:
    expected = list(range(1, len(inputs["sub_questions"]) + 1))
    given = sorted(verdict.index for verdict in output.verdicts)
    problems = []
    if given != expected:
        problems.append(f"give exactly one verdict for each sub-question, indexes {expected}; got {given}")
    empty = [v.index for v in output.verdicts if v.needed and not v.search_query.strip()]
    if empty:
        problems.append(f"needed sub-questions {empty} have no search_query; rewrite each needed one")
    return problems


CONTREGEN_VERIFY_SUB_QUESTIONS: Task[SubQuestionVerdicts] = register_task(
    Task(
        name="contregen_verify_sub_questions",
        version=2,
        template="contregen_verify_sub_questions.v2.txt",
        output_model=SubQuestionVerdicts,
        offline=offline.verify_sub_questions_offline,
        inputs=("query", "parent", "sub_questions", "need_similarity", "repeat_similarity"),
        format_inputs=lambda inputs: {
            "query": str(inputs["query"]),
            "parent": str(inputs["parent"]),
            "sub_questions": "\n".join(f"{q['index']}. {q['text']}" for q in inputs["sub_questions"]),
        },
        check_output=_check_sub_question_verdicts,
        # One verdict per sub-question, as the check wants them, in the schema decoded under.
        decoding_schema=lambda inputs: one_item_each(
            SubQuestionVerdicts.model_json_schema(),
            "verdicts",
            "index",
            [q["index"] for q in inputs["sub_questions"]],
        ),
        temperature=PLAN_TEMPERATURE,
        max_tokens=1200,
        expected_output_tokens=350,
        description="ConTReGen's verification, step i: is each sub-question needed; if so, its search query.",
    )
)


def _check_passage_verdicts(output: PassageVerdicts, inputs: Mapping[str, Any]) -> list[str]:
    expected = sorted(p["id"] for p in inputs["passages"])
    given = sorted(verdict.id for verdict in output.verdicts)
    if given != expected:
        return [
            f"give exactly one verdict for each passage, ids {', '.join(expected)}; got {', '.join(given)}"
        ]
    return []


CONTREGEN_JUDGE_PASSAGES: Task[PassageVerdicts] = register_task(
    Task(
        name="contregen_judge_passages",
        version=2,
        template="contregen_judge_passages.v2.txt",
        output_model=PassageVerdicts,
        offline=offline.judge_passages_offline,
        inputs=("query", "question", "passages", "floor"),
        trim_input="passages",
        format_inputs=lambda inputs: {
            "query": str(inputs["query"]),
            "question": str(inputs["question"]),
            "passages": format_passages(inputs["passages"]),
        },
        check_output=_check_passage_verdicts,
        decoding_schema=lambda inputs: one_item_each(
            PassageVerdicts.model_json_schema(), "verdicts", "id", [p["id"] for p in inputs["passages"]]
        ),
        temperature=PLAN_TEMPERATURE,
        max_tokens=800,
        expected_output_tokens=250,
        description="ConTReGen's verification, step ii: is each retrieved passage relevant to the original query.",
    )
)


# -- synthesis (§2.2) ----------------------------------------------------------------------------


def _known_aliases(inputs: Mapping[str, Any]) -> set[str]:
    return {p["id"] for p in inputs["passages"]} | {s["id"] for s in inputs["sources"]}


def _check_written(output: WrittenText, inputs: Mapping[str, Any]) -> list[str]:
    known = _known_aliases(inputs)
    problems = unknown_citations(output.text, known)
    if known and not cited_aliases(output.text):
        problems.append("the text cites no source; cite the source of every statement, e.g. [S1]")
    return problems


def _format_findings(findings: Sequence[Mapping[str, str]]) -> str:
    if not findings:
        return "(none)"
    return "\n\n".join(f"On '{f['question']}': {f['summary']}" for f in findings)


def _format_synthesis(inputs: Mapping[str, Any]) -> dict[str, str]:
    values = {
        "query": str(inputs["query"]),
        "passages": format_passages(inputs["passages"]) or "(none)",
        "findings": _format_findings(inputs["findings"]),
        "sources": "\n".join(f"[{s['id']}] {s['source']}" for s in inputs["sources"]) or "(none)",
        "words": str(inputs["words"]),
    }
    if "question" in inputs:
        values["question"] = str(inputs["question"])
    return values


CONTREGEN_SUMMARIZE: Task[WrittenText] = register_task(
    Task(
        name="contregen_summarize",
        version=2,
        template="contregen_summarize.v2.txt",
        output_model=WrittenText,
        offline=offline.summarize_offline,
        inputs=("query", "question", "passages", "findings", "sources", "words"),
        trim_input="passages",
        format_inputs=_format_synthesis,
        check_output=_check_written,
        decoding_grammar=lambda inputs: cited_prose(sorted(_known_aliases(inputs))),
        temperature=WRITE_TEMPERATURE,
        max_tokens=NODE_SUMMARY_MAX_TOKENS,
        expected_output_tokens=250,
        text_field="text",
        description="ConTReGen §2.2: a node's summary of its passages and its children's summaries.",
    )
)

CONTREGEN_ANSWER: Task[WrittenText] = register_task(
    Task(
        name="contregen_answer",
        version=2,
        template="contregen_answer.v2.txt",
        output_model=WrittenText,
        offline=offline.answer_offline,
        inputs=("query", "passages", "findings", "sources", "words"),
        trim_input="passages",
        format_inputs=_format_synthesis,
        check_output=_check_written,
        decoding_grammar=lambda inputs: cited_prose(sorted(_known_aliases(inputs))),
        temperature=WRITE_TEMPERATURE,
        max_tokens=ANSWER_MAX_TOKENS,
        expected_output_tokens=450,
        text_field="text",
        description="The root's long-form answer (ConTReGen), and the baselines' (passages only).",
    )
)


# -- the multi-hop baselines (§4.2: Self-Ask, SearChain, DSP) ---------------------------------------


def _format_hops(inputs: Mapping[str, Any]) -> dict[str, str]:
    values = {
        "question": str(inputs["question"]),
        "passages": format_passages(inputs["passages"]) or "(none)",
        "steps": "\n".join(f"- {s['question']} -> {s['answer']}" for s in inputs.get("steps", ()))
        or "(none)",
    }
    if "max_queries" in inputs:
        values["max_queries"] = str(inputs["max_queries"])
    return values


def _check_chain(output: QueryChain, inputs: Mapping[str, Any]) -> list[str]:
    return list_problems(output.queries, inputs["max_queries"], "query")


def _check_follow_up(output: FollowUp, inputs: Mapping[str, Any]) -> list[str]:
    if output.follow_up_needed and not output.follow_up.strip():
        return ["follow_up_needed is true but the follow-up question is empty"]
    return []


CONTREGEN_SELF_ASK: Task[FollowUp] = register_task(
    Task(
        name="contregen_self_ask",
        version=1,
        template="contregen_self_ask.v1.txt",
        output_model=FollowUp,
        offline=offline.follow_up_offline,
        inputs=("question", "steps", "passages"),
        trim_input="passages",
        format_inputs=_format_hops,
        check_output=_check_follow_up,
        temperature=PLAN_TEMPERATURE,
        max_tokens=200,
        expected_output_tokens=60,
        description="Self-Ask (baseline): the next follow-up question, or none.",
    )
)


def _chain_task(name: str, template: str, description: str) -> Task[QueryChain]:
    """A task answering with a chain of queries (SearChain's rest of the chain, DSP's hops)."""
    return register_task(
        Task(
            name=name,
            version=1,
            template=template,
            output_model=QueryChain,
            offline=offline.chain_offline,
            inputs=("question", "steps", "passages", "max_queries"),
            input_defaults={"steps": ()},
            trim_input="passages",
            format_inputs=_format_hops,
            check_output=_check_chain,
            decoding_schema=lambda inputs: narrowed(
                QueryChain.model_json_schema(), queries={"maxItems": inputs["max_queries"]}
            ),
            temperature=PLAN_TEMPERATURE,
            max_tokens=400,
            expected_output_tokens=120,
            description=description,
        )
    )


CONTREGEN_SEARCHAIN = _chain_task(
    "contregen_searchain",
    "contregen_searchain.v1.txt",
    "SearChain (baseline): the rest of the chain of queries, refined by the checked answers.",
)
CONTREGEN_DSP_HOPS = _chain_task(
    "contregen_dsp_hops",
    "contregen_dsp_hops.v1.txt",
    "DSP (baseline): the question's multi-hop search queries.",
)

CONTREGEN_DSP_ANSWER: Task[ReasonedAnswer] = register_task(
    Task(
        name="contregen_dsp_answer",
        version=1,
        template="contregen_dsp_answer.v1.txt",
        output_model=ReasonedAnswer,
        offline=offline.reasoned_answer_offline,
        inputs=("query", "passages", "findings", "sources", "words"),
        trim_input="passages",
        format_inputs=_format_synthesis,
        check_output=_check_written,
        temperature=WRITE_TEMPERATURE,
        max_tokens=ANSWER_MAX_TOKENS + 300,
        expected_output_tokens=600,
        description="DSP's predict stage (baseline): reasoning step by step, then the cited answer.",
    )
)

# -- the judge -----------------------------------------------------------------------------------

CONTREGEN_JUDGE_ANSWER: Task[AnswerJudgement] = register_task(
    Task(
        name="contregen_judge_answer",
        version=1,
        template="contregen_judge_answer.v1.txt",
        output_model=AnswerJudgement,
        offline=offline.judge_answer_offline,
        format_inputs=lambda inputs: {
            "question": str(inputs["question"]),
            "answer": str(inputs["answer"]),
            "reference": str(inputs["reference"]) or "(none: judge coverage from the question alone)",
        },
        temperature=PLAN_TEMPERATURE,
        max_tokens=500,
        expected_output_tokens=150,
        description="Coverage and relevance (1-5) of a long-form answer to its question.",
    )
)


def _check_verdicts(output: SentenceVerdicts, inputs: Mapping[str, Any]) -> list[str]:
    if len(output.verdicts) != len(inputs["sentences"]):
        return [f"there are {len(output.verdicts)} verdicts for {len(inputs['sentences'])} sentences"]
    return []


CONTREGEN_NLI: Task[SentenceVerdicts] = register_task(
    Task(
        name="contregen_nli",
        version=1,
        template="contregen_nli.v1.txt",
        output_model=SentenceVerdicts,
        offline=offline.nli_offline,
        format_inputs=lambda inputs: {
            "reference": str(inputs["reference"]),
            "sentences": "\n".join(f"{n}. {s}" for n, s in enumerate(inputs["sentences"], 1)),
        },
        check_output=_check_verdicts,
        decoding_schema=lambda inputs: narrowed(
            SentenceVerdicts.model_json_schema(), verdicts=exactly(len(inputs["sentences"]))
        ),
        temperature=PLAN_TEMPERATURE,
        max_tokens=600,
        expected_output_tokens=150,
        description="NLI by the judge model: does the reference entail or contradict each answer sentence.",
    )
)

TREE_TASKS = (CONTREGEN_PLAN, CONTREGEN_VERIFY_SUB_QUESTIONS, CONTREGEN_JUDGE_PASSAGES)
WRITE_TASKS = (
    CONTREGEN_SUMMARIZE,
    CONTREGEN_ANSWER,
    CONTREGEN_SELF_ASK,
    CONTREGEN_SEARCHAIN,
    CONTREGEN_DSP_HOPS,
    CONTREGEN_DSP_ANSWER,
)
JUDGE_TASKS = (CONTREGEN_JUDGE_ANSWER, CONTREGEN_NLI)
