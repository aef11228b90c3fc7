"""InsightGen's ``ask`` flow (the default method): an answer, unless given, and its related insights."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations

if TYPE_CHECKING:  # annotations only: asking loads no model library until it asks
    from collections.abc import Callable

    from insight_assets.core.curation import AnswerSettings
    from insight_assets.core.index import CollectionIndex
    from insight_assets.core.llm import LLMClient
    from insight_assets.defs.resources import StorageResource


def answer(asked: Asked, client) -> MethodAnswer:
    """Answer (unless given) and related insights for one question, from the stored index."""
    from insight_assets.core.curation import AnswerSettings, QAPair
    from insight_assets.core.curation import stages as curation_stages
    from insight_assets.core.methods import insightgen
    from insight_assets.core.methods.insightgen import stages

    storage, question = asked.storage, asked.question
    embedder = asked.embedder.get_embedder()
    index, cluster_index = insightgen.load_insightgen_index(
        storage.warehouse, storage.vectors, asked.collection, embedder.variant
    )
    given = asked.options.get("answer")
    cited: tuple[str, ...] = ()
    if given is None:
        answering = asked.built_with(curation_stages.ANSWERS, AnswerSettings)
        given, cited = _generated_answer(
            client, storage, index, asked.collection, question, embedder.embed, answering
        )
    # The build's settings (context selection, insights per question), for InsightGen alone.
    built = asked.built_with(stages.INSIGHTS, stages.InsightsSettings).method()
    settings = dataclasses.replace(built, methods=("insightgen",))
    result = insightgen.run_insightgen(
        client, [QAPair("ask", question, given)], index, cluster_index, embedder.embed, settings
    )
    (run,) = result.outcome.runs
    if not run.insights:
        raise AskFailed(f"no related insights: {run.error}")
    lines = [f"Answer ({client.provider_label if cited else 'given'}):\n{given}"]
    if cited:
        lines.append("Cited: " + "; ".join(index.titles.get(doc_id, doc_id) for doc_id in cited))
    lines.append(f"Related insights ({client.provider_label}):")
    for number, insight in enumerate(run.insights, start=1):
        sources = "; ".join(index.source_labels.get(chunk_id, chunk_id) for chunk_id in insight.chunk_ids)
        lines.append(
            f"{number}. [{insight.type}] {insight.hook}\n   {insight.body}\n   → {insight.realization}"
            f"\n   Sources: {sources}"
        )
    passages = _cited_passages(index, run)
    return MethodAnswer(
        text="\n\n".join(lines),
        citations=citations(
            [(index.titles.get(doc_id, doc_id), 0, 0) for doc_id in cited]
            + [(p.title, p.page_start, p.page_end) for p in passages]
        ),
        passages=tuple(passages),
    )


def _cited_passages(index, run) -> list:
    """The passages the insights draw on, once each, as citable sources."""
    from insight_assets.core.retrieval.citing import Source

    chunks = {chunk.chunk_id: chunk for chunk in index.chunks}
    used = dict.fromkeys(chunk_id for insight in run.insights for chunk_id in insight.chunk_ids)
    return [
        Source(
            chunk.chunk_id,
            chunk.doc_id,
            index.titles[chunk.doc_id],
            chunk.page_start,
            chunk.page_end,
            chunk.text,
            index.cites.get(chunk.doc_id, ""),
        )
        for chunk in (chunks[chunk_id] for chunk_id in used if chunk_id in chunks)
    ]


def _generated_answer(
    client: LLMClient,
    storage: StorageResource,
    index: CollectionIndex,
    collection: str,
    question: str,
    embed: Callable,
    settings: AnswerSettings,
) -> tuple[str, tuple[str, ...]]:
    """An answer from the compressed papers nearest the question (by their stored chunk vectors)."""
    import numpy as np

    from insight_assets.core import curation

    compressed = curation.load_compressed(storage.warehouse, collection)
    query = np.asarray(embed([question]), dtype=np.float32)[0]
    nearest = index.nearest_documents(
        query,
        settings.max_documents_for_user_questions,
        among={doc.document_id for doc in compressed},
    )
    asked = curation.Question(
        question_id=curation.question_id(question, ()),
        question=question,
        document_ids=tuple(sorted(nearest)),
        combination_index=None,
        source=curation.USER,
    )
    outcome = curation.generate_answers(client, [asked], compressed, settings, embed)
    (result,) = outcome.answers
    if result.status != "kept":
        raise AskFailed("no answer: " + (result.error or outcome.budget_error or "none was produced"))
    return result.answer, result.cited_document_ids


ASK = AskFlow("insightgen", "related insights from the theme graph", answer, default=True)
