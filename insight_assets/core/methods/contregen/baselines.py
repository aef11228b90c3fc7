"""The baselines on the same questions (§4.2), and ConTReGen's answer in the same shape.

- *RetGen*: one retrieval of k passages with the question, one answer.
- *budget-matched RetGen*: one retrieval of as many passages as the question's tree retrieved in
  all (the issue's: recall compared at equal retrieval; the paper's comparison is not). Its answer
  reads the leading passages that fit the prompt budget.
- *IterRetGen* (Shao et al., 2023, as ConTReGen's §4.2 runs it): the previous answer followed by
  the question is the next retrieval query, and each iteration refines the previous answer with its
  own k passages (the previous answer is shown as a finding, its citations as sources); 5
  iterations. Its retrieval is everything the iterations retrieved; what it used is what its final
  answer saw (the last written round's passages and the sources its previous answer cited).

Every answer is written by the root's task (``contregen_answer``), so the methods differ in what
they retrieve and how, not in the writing prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...llm.results import FINISHED
from ...llm.results import TRUNCATED as CUT_OFF
from ...retrieval.citing import Source, chunk_citations, cited_chunks, strip_citations
from .schemas import (
    CONTREGEN,
    FAILED,
    ITERATIVE,
    NO_INPUT,
    TRUNCATED,
    WRITTEN,
    Answer,
    Tree,
    TreeQuestion,
    Usage,
)
from .tasks import CONTREGEN_ANSWER
from .tree import search_each, spend, synthesis_inputs

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Hit, Retriever

# How IterRetGen shows a round the answer it refines (as a finding of the answer prompt).
PREVIOUS_ANSWER = "The previous answer, to refine with the passages above"


def tree_answer(tree: Tree) -> Answer:
    """ConTReGen's answer: the root's synthesis; its retrieval, every passage the tree retrieved."""
    root = tree.root
    status = root.summary_status or FAILED  # written or truncated with a text; failed or no_input without
    return Answer(
        question_id=tree.question.question_id,
        method=CONTREGEN,
        status=status,
        text=root.summary,
        cited=tuple(cited_chunks(root.summary)),
        retrieved=tuple(tree.retrieved()),
        used=tuple(tree.used()),
        calls=tree.usage.calls,
        input_tokens=tree.usage.input_tokens,
        output_tokens=tree.usage.output_tokens,
        error=root.error if not root.summary else None,
        finish_reason={WRITTEN: FINISHED, TRUNCATED: CUT_OFF}.get(status),
    )


def _chunk_ids(found: Sequence[Sequence[Hit]]) -> list[list[str]]:
    return [[hit.chunk_id for hit in hits] for hits in found]


def _written(item, ids: Mapping[str, str]) -> tuple[str, str]:
    text = chunk_citations(item.value.text.strip(), ids)
    return text, TRUNCATED if item.finish_reason == CUT_OFF else WRITTEN


def one_retrieval(
    client: LLMClient,
    retriever: Retriever,
    questions: Sequence[TreeQuestion],
    ks: Sequence[int],
    method: str,
    retrieval,
    answering,
    sources: dict[str, Source],
) -> list[Answer]:
    """RetGen (every k the same) or budget-matched RetGen (k per question): retrieve, answer."""
    found = _chunk_ids(
        search_each(retriever, [q.question for q in questions], ks, retrieval.retrieval_mode, sources)
    )
    prepared = [
        synthesis_inputs(None, q.question, ids, [], sources, answering.answer_words, answering.context_tokens)
        for q, ids in zip(questions, found, strict=True)
    ]
    batch = client.run_many(CONTREGEN_ANSWER, [inputs for inputs, _ in prepared])
    answers = []
    for question, retrieved, (inputs, ids), item in zip(questions, found, prepared, batch.items, strict=True):
        usage = Usage()
        spend(usage, CONTREGEN_ANSWER, inputs, item)
        common: dict[str, Any] = {
            "question_id": question.question_id,
            "method": method,
            "retrieved": tuple(retrieved),
            "used": tuple(ids.values()),
            "calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        }
        if not retrieved:
            answers.append(Answer(status=NO_INPUT, error="the question retrieved nothing", **common))
        elif not item.ok:
            answers.append(Answer(status=FAILED, error=item.error or item.status, **common))
        else:
            text, status = _written(item, ids)
            answers.append(
                Answer(
                    status=status,
                    text=text,
                    cited=tuple(cited_chunks(text)),
                    finish_reason=item.finish_reason,
                    **common,
                )
            )
    return answers


def iterative(
    client: LLMClient,
    retriever: Retriever,
    questions: Sequence[TreeQuestion],
    retrieval,
    answering,
    sources: dict[str, Source],
) -> list[Answer]:
    """IterRetGen: ``answering.iterations`` rounds; round t retrieves with the answer of round t-1
    followed by the question (round 1, and a round after a failed one, with the question alone) and
    refines that answer with its passages."""
    count = len(questions)
    queries = [q.question for q in questions]
    retrieved: list[list[str]] = [[] for _ in range(count)]
    usages = [Usage() for _ in range(count)]
    # The last written round: text, status, finish reason, the chunks it saw.
    latest: list[tuple[str, str, str | None, tuple[str, ...]] | None] = [None] * count
    errors: list[str | None] = [None] * count
    for _ in range(answering.iterations):
        found = _chunk_ids(
            search_each(retriever, queries, [retrieval.top_k] * count, retrieval.retrieval_mode, sources)
        )
        prepared = [
            synthesis_inputs(
                None,
                q.question,
                ids,
                [(PREVIOUS_ANSWER, last[0])] if last else [],
                sources,
                answering.answer_words,
                answering.context_tokens,
            )
            for q, ids, last in zip(questions, found, latest, strict=True)
        ]
        batch = client.run_many(CONTREGEN_ANSWER, [inputs for inputs, _ in prepared])
        for i, (ids_found, (inputs, ids), item) in enumerate(zip(found, prepared, batch.items, strict=True)):
            retrieved[i].extend(ids_found)
            if not ids_found:
                queries[i] = questions[i].question
                continue
            spend(usages[i], CONTREGEN_ANSWER, inputs, item)
            if not item.ok:
                errors[i] = item.error or item.status
                queries[i] = questions[i].question
                continue
            text, status = _written(item, ids)
            latest[i] = (text, status, item.finish_reason, tuple(ids.values()))
            queries[i] = f"{strip_citations(text)} {questions[i].question}"
    answers = []
    for question, chunks, usage, last, error in zip(
        questions, retrieved, usages, latest, errors, strict=True
    ):
        common: dict[str, Any] = {
            "question_id": question.question_id,
            "method": ITERATIVE,
            "retrieved": tuple(dict.fromkeys(chunks)),
            "calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        }
        if last is None:
            status = FAILED if error else NO_INPUT
            answers.append(Answer(status=status, error=error or "no iteration retrieved anything", **common))
            continue
        text, status, finish, seen = last
        answers.append(
            Answer(
                status=status,
                text=text,
                cited=tuple(cited_chunks(text)),
                used=seen,
                finish_reason=finish,
                error=f"an iteration failed: {error}" if error else None,
                **common,
            )
        )
    return answers
