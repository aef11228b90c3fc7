"""Run every insight method over a collection's question-answer pairs, batched.

The chain-of-thought methods share one ``infer_intent`` call per question (the intent depends on
the question and answer only, and the paper keeps the CoT prompts identical across methods); then
every (method, question) is one ``generate_insights`` or ``direct_insights`` call, run
concurrently by the client. A failed call fails only its own (method, question).

Passages are shown to the model under short aliases (``S1``, ``S2``...) instead of 64-character
chunk ids, which models copy unreliably; the answers are mapped back to chunk ids, and a
``[S3]`` left in the text becomes the passage's readable source label (title and pages).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...retrieval.citing import alias
from .schemas import ContextPassage, Insight, UserIntent, uses_chain_of_thought
from .tasks import (
    DIRECT_INSIGHTS,
    GENERATE_INSIGHTS,
    INFER_INTENT,
    direct_insights_inputs,
    generate_insights_inputs,
    infer_intent_inputs,
)

if TYPE_CHECKING:
    from ...curation import QAPair
    from ...llm import LLMClient
    from .contexts import MethodContext

OK, FAILED, SKIPPED = "ok", "failed", "skipped"


@dataclass(frozen=True)
class InsightRun:
    """One method's insights for one question, or why there are none."""

    method: str
    question_id: str
    status: str
    insights: tuple[Insight, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class InsightsOutcome:
    runs: list[InsightRun]
    intents: dict[str, UserIntent]
    budget_error: str | None = None


def _passages(context: MethodContext) -> list[ContextPassage]:
    return [ContextPassage(alias(position), text) for position, text in enumerate(context.texts)]


def _restore(insight: Insight, context: MethodContext, labels: Mapping[str, str]) -> Insight:
    """The insight with chunk ids instead of aliases, and readable sources in its text."""
    ids = {alias(position): chunk_id for position, chunk_id in enumerate(context.chunk_ids)}

    def readable(text: str) -> str:
        return re.sub(
            r"\[(S\d+)\]",
            lambda found: (
                f"[{labels.get(ids[found.group(1)], ids[found.group(1)][:12])}]"
                if found.group(1) in ids
                else found.group(0)
            ),
            text,
        )

    return insight.model_copy(
        update={
            "chunk_ids": list(dict.fromkeys(ids[name] for name in insight.chunk_ids)),
            **{
                field: readable(getattr(insight, field))
                for field in ("hook", "body", "realization", "justification")
            },
        }
    )


def run_insight_methods(
    client: LLMClient,
    pairs: Sequence[QAPair],
    contexts: Sequence[MethodContext],
    *,
    max_insights: int = 5,
    source_labels: Mapping[str, str] | None = None,
) -> InsightsOutcome:
    """Insights for every context (one per method and question). ``source_labels`` maps chunk ids
    to what a reader should see for them (e.g. "SPECTER, pp. 3-4")."""
    labels = source_labels or {}
    by_question = {pair.question_id: pair for pair in pairs}
    runs: dict[tuple[str, str], InsightRun] = {}
    runnable = []
    for context in contexts:
        if context.texts:
            runnable.append(context)
        else:
            runs[(context.method, context.question_id)] = InsightRun(
                context.method, context.question_id, FAILED, error="no context passages were selected"
            )

    needs_intent = sorted({c.question_id for c in runnable if uses_chain_of_thought(c.method)})
    intent_batch = client.run_many(
        INFER_INTENT,
        [infer_intent_inputs(by_question[q].question, by_question[q].answer) for q in needs_intent],
    )
    intents: dict[str, UserIntent] = {}
    intent_errors: dict[str, tuple[str, str]] = {}
    for question_id, item in zip(needs_intent, intent_batch.items, strict=True):
        if item.ok:
            intents[question_id] = item.value
        else:
            intent_errors[question_id] = (item.status, f"infer_intent: {item.error}")
    budget_error = intent_batch.budget_error

    chain, direct = [], []
    for context in runnable:
        if not uses_chain_of_thought(context.method):
            direct.append(context)
        elif context.question_id in intents:
            chain.append(context)
        else:
            status, error = intent_errors[context.question_id]
            runs[(context.method, context.question_id)] = InsightRun(
                context.method, context.question_id, SKIPPED if status == SKIPPED else FAILED, error=error
            )

    def pair_of(context: MethodContext) -> QAPair:
        return by_question[context.question_id]

    batches = []
    if budget_error is None:
        batches = [
            (
                chain,
                client.run_many(
                    GENERATE_INSIGHTS,
                    [
                        generate_insights_inputs(
                            pair_of(c).question,
                            pair_of(c).answer,
                            intents[c.question_id],
                            _passages(c),
                            max_insights,
                        )
                        for c in chain
                    ],
                ),
            ),
            (
                direct,
                client.run_many(
                    DIRECT_INSIGHTS,
                    [
                        direct_insights_inputs(
                            pair_of(c).question, pair_of(c).answer, _passages(c), max_insights
                        )
                        for c in direct
                    ],
                ),
            ),
        ]
    else:
        for context in chain + direct:
            runs[(context.method, context.question_id)] = InsightRun(
                context.method, context.question_id, SKIPPED, error=f"not run: {budget_error}"
            )
    for batch_contexts, batch in batches:
        budget_error = budget_error or batch.budget_error
        for context, item in zip(batch_contexts, batch.items, strict=True):
            key = (context.method, context.question_id)
            if item.ok:
                insights = tuple(_restore(insight, context, labels) for insight in item.value.insights)
                runs[key] = InsightRun(context.method, context.question_id, OK, insights)
            else:
                runs[key] = InsightRun(context.method, context.question_id, item.status, error=item.error)

    ordered = [runs[(c.method, c.question_id)] for c in contexts]
    return InsightsOutcome(ordered, intents, str(budget_error) if budget_error else None)
