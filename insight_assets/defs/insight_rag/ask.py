"""Insight-RAG's ``ask`` flow: identified insights, what the retriever returned, the answer."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations

# insight_rag's RETRIEVER_MODES, the first its default, spelled out so that `--help` imports nothing heavy.
INSIGHT_RETRIEVERS = ("index", "sentences", "llm", "parametric")


def answer(asked: Asked, client) -> MethodAnswer:
    """Insight-RAG for one question: the identified insights, what the retriever returned for each
    (with sources), and the answer generated from them."""
    from insight_assets.core.methods.insight_rag import stages
    from insight_assets.core.methods.insight_rag.schemas import OK
    from insight_assets.core.methods.insight_rag.settings import AnswersSettings
    from insight_assets.core.retrieval.citing import cited_chunks, render_citations
    from insight_assets.defs.materialization import scope_of

    mode = asked.options.get("retriever") or INSIGHT_RETRIEVERS[0]
    scope = scope_of(asked.storage, asked.embedder, client, asked.collection)
    result = stages.answer_for(scope, asked.question, mode)
    setup, (identified,), (answered,) = result.setup, result.identified, result.answers
    if identified.status != OK:
        reason = identified.error or "it found no fragment to complete"
        raise AskFailed(f"the insight identifier gave nothing to retrieve: {reason}")
    search = scope.built_settings(stages.ANSWERS, AnswersSettings).insight_search_mode
    lines = [f"Identified insights ({client.provider_label}):"]
    lines += [
        f"- {found.insight} … ({'several answers' if found.multi_answer else 'one answer'})"
        for found in identified.insights
    ]
    lines.append(f"\nRetrieved insights ({mode} retriever, {search} search):")
    for number, (text, chunk_id) in enumerate(
        zip(answered.insights, answered.passage_chunk_ids, strict=True), start=1
    ):
        source = setup.sources.get(chunk_id)
        lines.append(f"{number}. {text}\n   Source: {source.label if source else chunk_id}")
    if not answered.insights:
        lines.append("(none)")
    if answered.status != OK:
        raise AskFailed(f"no answer: {answered.error}")
    cited = [
        setup.sources[chunk_id]
        for chunk_id in dict.fromkeys([*cited_chunks(answered.answer), *answered.passage_chunk_ids])
        if chunk_id in setup.sources
    ]
    return MethodAnswer(
        text="\n".join(lines)
        + f"\n\nAnswer ({client.provider_label}):\n{render_citations(answered.answer, setup.sources)}",
        citations=citations((s.title, s.page_start, s.page_end) for s in cited),
        passages=tuple(cited),
        abstained=_abstains(answered.answer),
    )


def _abstains(text: str) -> bool:
    """Whether the answer is the response generator's "Not found in the context." (the prompt asks
    for exactly that when the context does not answer): it said why it did not answer."""
    from insight_assets.core.methods.insight_rag.offline import ABSTAIN
    from insight_assets.core.retrieval.citing import strip_citations

    return strip_citations(text).strip().rstrip(".").lower() == ABSTAIN.rstrip(".").lower()


ASK = AskFlow("insight-rag", "insights identified, retrieved and answered from (Insight-RAG)", answer)
