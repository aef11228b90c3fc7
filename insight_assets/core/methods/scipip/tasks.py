"""SciPIP's summary tasks (§3.1, Tables 5-7): a paper's digest (summary, motivations, details),
key entities of a text, and a paper's concise method. The paper asks for the digest in two turns
of one chat (the summary, then motivations and details "not mentioned in your summary"); here one
call returns all three, so the details still see the summary they must not repeat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm import Task, register_task
from . import offline
from .schemas import (
    DETAILS,
    KEYWORD_MAX_WORDS,
    KEYWORD_MIN_WORDS,
    MAX_KEYWORDS,
    MOTIVATIONS,
    TEMPERATURE,
    ConciseMethod,
    Entities,
    PaperDigest,
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


SCIPIP_DIGEST: Task[PaperDigest] = register_task(
    Task(
        name="scipip_digest",
        version=1,
        template="scipip_digest.v1.txt",
        output_model=PaperDigest,
        offline=offline.digest_offline,
        inputs=("title", "abstract", "introduction"),
        check_output=_check_digest,
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


SCIPIP_ENTITIES: Task[Entities] = register_task(
    Task(
        name="scipip_entities",
        version=1,
        template="scipip_entities.v1.txt",
        output_model=Entities,
        offline=offline.entities_offline,
        inputs=("content",),
        check_output=_check_entities,
        temperature=TEMPERATURE,
        max_tokens=200,
        expected_output_tokens=40,
        description="SciPIP Table 6: up to 5 key entities (2-5 words) of a paper's abstract or a background.",
    )
)

SCIPIP_METHOD: Task[ConciseMethod] = register_task(
    Task(
        name="scipip_method",
        version=1,
        template="scipip_method.v1.txt",
        output_model=ConciseMethod,
        offline=offline.method_offline,
        inputs=("methodology",),
        temperature=TEMPERATURE,
        max_tokens=700,
        expected_output_tokens=300,
        description="SciPIP Table 7: a paper's method section as a concise summarized method.",
    )
)

SUMMARY_TASKS = (SCIPIP_DIGEST, SCIPIP_ENTITIES, SCIPIP_METHOD)
