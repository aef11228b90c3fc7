"""SciPIP's summary tasks (§3.1, Tables 5-7): a paper's digest (summary, motivations, details),
key entities of a text, and a paper's concise method. The paper asks for the digest in two turns
of one chat (the summary, then motivations and details "not mentioned in your summary"); here one
call returns all three, so the details still see the summary they must not repeat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm import Task, exactly, narrowed, one_item_each, register_task
from ...llm.grammars import NOT_IN_JSON_STRING
from . import offline
from .schemas import (
    DETAILS,
    IDEA_TEMPERATURE,
    KEYWORD_MAX_WORDS,
    KEYWORD_MIN_WORDS,
    MAX_KEYWORDS,
    MOTIVATIONS,
    TEMPERATURE,
    ConciseMethod,
    DetailedIdea,
    Entities,
    IdeaList,
    IdeaRatings,
    Inspiration,
    NoveltyDecision,
    PairVerdict,
    PaperDigest,
    ScientistDraft,
    Selection,
    TransformedBackground,
)


def _check_digest(output: PaperDigest, inputs: Mapping[str, Any]) -> list[str]:
    problems = []
    if not output.summary.strip().lower().startswith("the problem of"):
        problems.append('the summary must read "The problem of [problem] can be addressed by [approach]."')
    if len(output.motivations) != MOTIVATIONS:
        problems.append(f"give exactly {MOTIVATIONS} motivations")
    if len(output.details) != DETAILS:
        problems.append(f"give exactly {DETAILS} details")
    return problems


def _digest_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return narrowed(
        PaperDigest.model_json_schema(),
        # The opening the check asks for, in one sentence (no period before its end).
        summary={"pattern": rf"^The problem of [^{NOT_IN_JSON_STRING}.]+[.]$"},
        motivations=exactly(MOTIVATIONS),
        details=exactly(DETAILS),
    )


SCIPIP_DIGEST: Task[PaperDigest] = register_task(
    Task(
        name="scipip_digest",
        version=1,
        template="scipip_digest.v1.txt",
        output_model=PaperDigest,
        offline=offline.digest_offline,
        inputs=("title", "abstract", "introduction"),
        trim_input="introduction",
        check_output=_check_digest,
        decoding_schema=_digest_schema,
        temperature=TEMPERATURE,
        max_tokens=600,
        expected_output_tokens=250,
        description="SciPIP Table 5: a paper's one-sentence summary, two motivations and three details.",
    )
)


def _check_entities(output: Entities, inputs: Mapping[str, Any]) -> list[str]:
    problems = []
    if len(output.entities) > MAX_KEYWORDS:
        problems.append(f"give at most {MAX_KEYWORDS} entities")
    sizes = [e for e in output.entities if not KEYWORD_MIN_WORDS <= len(e.split()) <= KEYWORD_MAX_WORDS]
    if sizes:
        problems.append(f"entities must have {KEYWORD_MIN_WORDS} to {KEYWORD_MAX_WORDS} words: {sizes}")
    return problems


# An entity of 2 to 5 words, single-spaced: a small model otherwise writes whole sentences.
_WORD = rf"[^{NOT_IN_JSON_STRING} ]+"
ENTITY_SCHEMA = {
    "type": "string",
    "pattern": rf"^{_WORD}( {_WORD}){{{KEYWORD_MIN_WORDS - 1},{KEYWORD_MAX_WORDS - 1}}}$",
}


SCIPIP_ENTITIES: Task[Entities] = register_task(
    Task(
        name="scipip_entities",
        version=1,
        template="scipip_entities.v1.txt",
        output_model=Entities,
        offline=offline.entities_offline,
        inputs=("content",),
        trim_input="content",
        check_output=_check_entities,
        decoding_schema=lambda inputs: narrowed(
            Entities.model_json_schema(), entities={"maxItems": MAX_KEYWORDS, "items": ENTITY_SCHEMA}
        ),
        temperature=TEMPERATURE,
        max_tokens=200,
        expected_output_tokens=40,
        description="SciPIP Table 6: up to 5 key entities (2-5 words) of a paper's abstract or a background.",
    )
)

SCIPIP_METHOD: Task[ConciseMethod] = register_task(
    Task(
        name="scipip_method",
        version=2,
        template="scipip_method.v2.txt",
        output_model=ConciseMethod,
        offline=offline.method_offline,
        inputs=("methodology",),
        trim_input="methodology",
        temperature=TEMPERATURE,
        max_tokens=700,
        expected_output_tokens=300,
        description="SciPIP Table 7: a paper's method section as a concise summarized method.",
    )
)

SUMMARY_TASKS = (SCIPIP_DIGEST, SCIPIP_ENTITIES, SCIPIP_METHOD)


# -- idea generation (§3.3, Tables 8-12), the direct baseline and the idea judge (Table 1) ----------


def _task(
    name: str,
    output_model,
    offline_fn,
    inputs,
    *,
    max_tokens: int,
    expected: int,
    description: str,
    temperature: float = IDEA_TEMPERATURE,
    version: int = 2,
    **extra,
):
    """A generation task: sampled at ``IDEA_TEMPERATURE`` unless it reads rather than writes.
    Version 2 of the idea prompts names the collection's field where version 1 said "AI"."""
    return register_task(
        Task(
            name=name,
            version=version,
            template=f"{name}.v{version}.txt",
            output_model=output_model,
            offline=offline_fn,
            inputs=inputs,
            temperature=temperature,
            max_tokens=max_tokens,
            expected_output_tokens=expected,
            description=description,
            **extra,
        )
    )


def _check_titles(output: IdeaList, inputs: Mapping[str, Any]) -> list[str]:
    known = {item["title"] for item in inputs["inspirations"]}
    unknown = sorted({t for idea in output.ideas for t in idea.inspired_by if t not in known})
    return (
        [f"inspired_by names papers that are not listed: {unknown}; use the titles as written"]
        if unknown
        else []
    )


def _check_selection(output: Selection, inputs: Mapping[str, Any]) -> list[str]:
    numbers = {item["number"] for item in inputs["ideas"]}
    wrong = sorted(set(output.selected) - numbers)
    return [f"ideas {wrong} do not exist; choose among {sorted(numbers)}"] if wrong else []


def _check_ratings(output: IdeaRatings, inputs: Mapping[str, Any]) -> list[str]:
    wanted = sorted(item["number"] for item in inputs["ideas"])
    given = sorted(rating.idea for rating in output.ratings)
    return [] if given == wanted else [f"rate each of the ideas {wanted} exactly once (got {given})"]


def _selection_schema(inputs: Mapping[str, Any]) -> dict[str, Any]:
    numbers = [item["number"] for item in inputs["ideas"]]
    return narrowed(
        Selection.model_json_schema(),
        selected={"items": {"type": "integer", "enum": numbers}, "maxItems": len(numbers)},
    )


# Table 12's demonstration when no retrieved paper has a concise method to show.
EXPANSION_EXAMPLE = {
    "example_title": "a paper on key-value cache eviction (built-in example)",
    "example_method": (
        "To bound the memory of long-context inference, the method keeps a fixed budget of cached "
        "tokens per attention head. At each decoding step it scores every cached token by its attention "
        "accumulated over recent steps, keeps the highest-scoring tokens and a recent window, and evicts "
        "the rest; the budget is split across layers in proportion to the entropy of their attention. "
        "No training is needed: the policy is applied to a pretrained model at inference time."
    ),
}


def _numbered_ideas(inputs: Mapping[str, Any]) -> dict[str, str]:
    return {
        "background": inputs["background"],
        "ideas": "\n".join(f"{i['number']}. {i.get('title', '')}: {i['idea']}" for i in inputs["ideas"]),
        "count": str(inputs["count"]),
        "field": inputs["field"],
    }


SCIPIP_TRANSFORM = _task(
    "scipip_transform",
    TransformedBackground,
    offline.transform_offline,
    ("background", "keywords", "field"),
    format_inputs=lambda i: {
        "background": i["background"],
        "keywords": ", ".join(i["keywords"]) or "(none)",
        "field": i["field"],
    },
    max_tokens=900,
    expected=400,
    temperature=TEMPERATURE,
    description="SciPIP Table 8: the background explained in detail, its technical terms defined.",
)
SCIPIP_BRAINSTORM = _task(
    "scipip_brainstorm",
    IdeaList,
    offline.recombine_offline,
    ("background", "count", "field"),
    max_tokens=1200,
    expected=500,
    description="SciPIP Table 9: ideas from the model's own knowledge.",
)
SCIPIP_INSPIRATION = _task(
    "scipip_inspiration",
    Inspiration,
    offline.inspiration_offline,
    ("background", "title", "method", "field"),
    max_tokens=300,
    expected=100,
    temperature=TEMPERATURE,
    description="SciPIP §3.3.2: what a retrieved paper's method offers the background, or nothing.",
)
SCIPIP_IDEAS = _task(
    "scipip_ideas",
    IdeaList,
    offline.ideas_offline,
    ("background", "inspirations", "count", "field"),
    format_inputs=lambda i: {
        "background": i["background"],
        "inspirations": "\n".join(f"- {item['title']}: {item['text']}" for item in i["inspirations"]),
        "count": str(i["count"]),
        "field": i["field"],
    },
    check_output=_check_titles,
    max_tokens=1500,
    expected=600,
    description="SciPIP Table 10: ideas from the retrieved papers' inspirations, each naming its papers.",
)
SCIPIP_INTEGRATE = _task(
    "scipip_integrate",
    Selection,
    offline.integrate_offline,
    ("background", "ideas", "count", "field"),
    format_inputs=_numbered_ideas,
    check_output=_check_selection,
    decoding_schema=_selection_schema,
    max_tokens=200,
    expected=30,
    temperature=TEMPERATURE,
    description="SciPIP Table 11: the ideas of both paths that best address the background, kept unmodified.",
)
SCIPIP_EXPAND = _task(
    "scipip_expand",
    DetailedIdea,
    offline.expand_offline,
    ("background", "idea", "field", "example_title", "example_method"),
    input_defaults=EXPANSION_EXAMPLE,
    max_tokens=1500,
    expected=700,
    description="SciPIP Table 12: an idea expanded into a detailed method.",
)
SCIPIP_DIRECT = _task(
    "scipip_direct",
    IdeaList,
    offline.recombine_offline,
    ("background", "count", "field"),
    max_tokens=1200,
    expected=500,
    description="The direct baseline (Table 2's GPT-4o row): ideas from one prompt with the background.",
)
SCIPIP_JUDGE_IDEAS = _task(
    "scipip_judge_ideas",
    IdeaRatings,
    offline.judge_ideas_offline,
    ("background", "ideas", "context"),
    format_inputs=lambda i: {
        "background": i["background"],
        "ideas": "\n".join(f"Idea {item['number']}: {item['text']}" for item in i["ideas"]),
    },
    check_output=_check_ratings,
    # One rating per idea, in order: SmolLM2 otherwise answered an empty list.
    decoding_schema=lambda i: one_item_each(
        IdeaRatings.model_json_schema(), "ratings", "idea", [item["number"] for item in i["ideas"]]
    ),
    max_tokens=2000,
    expected=60,
    temperature=TEMPERATURE,
    version=1,
    description="SciPIP Table 1: novelty, clarity, feasibility, relevance (0-5) and helpfulness of each idea.",
)


def _scientist_idea_text(idea: Mapping[str, Any]) -> str:
    return f"{idea['title']} ({idea['name']}): {idea['experiment']}"


SCIPIP_AI_SCIENTIST_IDEA = _task(
    "scipip_ai_scientist_idea",
    ScientistDraft,
    offline.scientist_idea_offline,
    ("background", "previous", "field"),
    format_inputs=lambda i: {
        "background": i["background"],
        "previous": "\n".join(f"- {title}" for title in i["previous"]) or "(none yet)",
        "field": i["field"],
    },
    max_tokens=900,
    expected=350,
    version=1,
    description="The AI Scientist's idea generation: the next idea given those already generated.",
)
SCIPIP_AI_SCIENTIST_REFLECT = _task(
    "scipip_ai_scientist_reflect",
    ScientistDraft,
    offline.scientist_reflect_offline,
    ("background", "idea", "round", "rounds", "field"),
    format_inputs=lambda i: {
        "background": i["background"],
        "idea": _scientist_idea_text(i["idea"]),
        "round": str(i["round"]),
        "rounds": str(i["rounds"]),
        "field": i["field"],
    },
    max_tokens=900,
    expected=350,
    version=1,
    description="The AI Scientist's self-reflection on an idea, until it says it is done.",
)
SCIPIP_AI_SCIENTIST_NOVELTY = _task(
    "scipip_ai_scientist_novelty",
    NoveltyDecision,
    offline.novelty_offline,
    ("idea", "papers", "field"),
    format_inputs=lambda i: {
        "idea": i["idea"],
        "papers": "\n".join(f"{n}. {text}" for n, text in enumerate(i["papers"], start=1)) or "(none)",
        "field": i["field"],
    },
    max_tokens=300,
    expected=80,
    temperature=TEMPERATURE,
    version=1,
    description="The AI Scientist's novelty check, against the collection's most related papers.",
)
SCIPIP_JUDGE_PAIR = _task(
    "scipip_judge_pair",
    PairVerdict,
    offline.judge_pair_offline,
    ("background", "idea_a", "idea_b", "context"),
    format_inputs=lambda i: {"background": i["background"], "idea_a": i["idea_a"], "idea_b": i["idea_b"]},
    max_tokens=400,
    expected=80,
    temperature=TEMPERATURE,
    version=1,
    description="SciPIP Fig. 4: which of two ideas for one background is better on each criterion, or a tie.",
)

IDEA_TASKS = (
    SCIPIP_ENTITIES,
    SCIPIP_TRANSFORM,
    SCIPIP_BRAINSTORM,
    SCIPIP_INSPIRATION,
    SCIPIP_IDEAS,
    SCIPIP_INTEGRATE,
    SCIPIP_EXPAND,
    SCIPIP_DIRECT,
    SCIPIP_AI_SCIENTIST_IDEA,
    SCIPIP_AI_SCIENTIST_REFLECT,
    SCIPIP_AI_SCIENTIST_NOVELTY,
)
JUDGE_TASKS = (SCIPIP_JUDGE_IDEAS, SCIPIP_JUDGE_PAIR)
