"""XSum's ``ask`` flow: a cited summary of the papers best matching the question (``insight-assets
ask --method xsum`` and ``summarize --topic``, the page, the MCP server)."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations

# Papers a topic's summary reads when none are named: those holding its best-matching chunks.
TOPIC_PAPERS = 5


def answer(asked: Asked, client) -> MethodAnswer:
    """XSum's summary for the question as a topic, over the papers in ``papers`` (document ids) or
    those holding the chunks that best match it: the questions, answers and summaries stages run for
    that one target, with the build's settings."""
    from insight_assets.core.methods import xsum
    from insight_assets.core.methods.xsum import stages
    from insight_assets.defs.materialization import scope_of

    scope = scope_of(asked.storage, asked.embedder, client, asked.collection)
    topic, retriever = asked.question, scope.retriever(xsum.PROFILE)
    doc_ids = asked.options.get("papers")
    if not doc_ids:
        hits = retriever.search(topic, k=50, mode="hybrid")
        doc_ids = list(dict.fromkeys(hit.doc_id for hit in hits))[:TOPIC_PAPERS]
    doc_ids = [doc for doc in doc_ids if doc in retriever.documents]
    if not doc_ids:
        raise AskFailed(f"no paper of {asked.collection!r} has text to summarize for {topic!r}")
    result = stages.summary_for(scope, topic, doc_ids)
    sources = result.summarized.sources
    # The stage says why when no summary was written; the one written is the editor's.
    summary = next(record for record in result.summarized.written.records if record.text)
    answered = sum(a.status == xsum.ANSWERED for a in result.answers)
    abstained = sum(a.status == xsum.ABSTAINED for a in result.answers)
    flag = " (cut off at max_tokens)" if summary.status == xsum.TRUNCATED else ""
    cited = [sources[chunk_id] for chunk_id in summary.cited if chunk_id in sources]
    listed = "\n".join(
        f"  {number}. {sources[chunk_id].label if chunk_id in sources else chunk_id}"
        for number, chunk_id in enumerate(summary.cited, start=1)
    )
    titles = retriever.index.titles
    return MethodAnswer(
        text=f"Summary ({client.provider_label}){flag}:\n{summary.rendered}\n\nSources:\n{listed}",
        citations=citations((s.title, s.page_start, s.page_end) for s in cited),
        passages=tuple(cited),
        details=(
            "Papers: "
            + "; ".join(titles.get(doc, doc) for doc in doc_ids)
            + f"\nQuestions: {len(result.questions)}, answered {answered}, abstained {abstained}"
        ),
    )


ASK = AskFlow("xsum", "a cited summary of the papers best matching the question", answer)
