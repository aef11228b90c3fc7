"""InsightGen's ``ask`` flow (the default method): an answer, unless given, and its related insights."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations


def answer(asked: Asked, client) -> MethodAnswer:
    """Answer (unless given) and related insights for one question: the curation's answer stage and
    InsightGen's insights stage run for that question, with the build's settings."""
    from insight_assets.core.curation import stages as curation_stages
    from insight_assets.core.curation.answers import KEPT
    from insight_assets.core.methods.insightgen import stages
    from insight_assets.defs.materialization import scope_of

    scope = scope_of(asked.storage, asked.embedder, client, asked.collection)
    given = asked.options.get("answer")
    answered = curation_stages.answer_for(scope, asked.question, given)
    if answered.status != KEPT:
        raise AskFailed("no answer: " + (answered.error or "none was produced"))
    found = stages.insights_for(scope, answered)
    if found.result is None:
        raise AskFailed("no question-answer pair to find insights for")
    (run,) = found.result.outcome.runs
    if not run.insights:
        raise AskFailed(f"no related insights: {run.error}")
    index, cited = found.index, answered.cited_document_ids
    lines = [f"Answer ({client.provider_label if given is None else 'given'}):\n{answered.answer}"]
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


ASK = AskFlow("insightgen", "related insights from the theme graph", answer, default=True)
