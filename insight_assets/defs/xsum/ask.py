"""XSum's ``ask`` flow: a cited summary of the papers best matching the question (``insight-assets
ask --method xsum`` and ``summarize --topic``, the page, the MCP server)."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations

# Papers a topic's summary reads when none are named: those holding its best-matching chunks.
TOPIC_PAPERS = 5


def answer(asked: Asked, client) -> MethodAnswer:
    """XSum's summary for the question as a topic, over the papers in ``papers`` (document ids) or
    those holding the chunks that best match it."""
    from insight_assets.core.methods import xsum
    from insight_assets.core.methods.xsum import load, stages
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import load_sources

    storage, collection, topic = asked.storage, asked.collection, asked.question
    # The build's settings: as many questions per paper, chunks retrieved and kept, the same reranker.
    asking = asked.built_with(stages.QUESTIONS, stages.QuestionsSettings)
    settings = asked.built_with(stages.ANSWERS, stages.AnswersSettings).xsum(asking.questions_per_paper)
    retriever = Retriever.open(
        storage.warehouse, storage.vectors, collection, asked.embedder.get_embedder(), xsum.PROFILE
    )
    doc_ids = asked.options.get("papers")
    if not doc_ids:
        hits = retriever.search(topic, k=50, mode="hybrid")
        doc_ids = list(dict.fromkeys(hit.doc_id for hit in hits))[:TOPIC_PAPERS]
    doc_ids = [doc for doc in doc_ids if doc in retriever.documents]
    if not doc_ids:
        raise AskFailed(f"no paper of {collection!r} has text to summarize for {topic!r}")
    target = xsum.SummaryTarget("cli", "user", topic, tuple(doc_ids))
    papers = {paper.doc_id: paper for paper in load.load_papers(storage.warehouse, collection)}
    sources = load_sources(storage.warehouse, collection, xsum.PROFILE)
    result = xsum.summarize(client, retriever, target, papers, sources, settings)
    summary = result.summary
    if not summary.text:
        raise AskFailed(f"no summary: {summary.error}")
    answered = sum(a.status == xsum.ANSWERED for a in result.answers)
    abstained = sum(a.status == xsum.ABSTAINED for a in result.answers)
    flag = " (cut off at max_tokens)" if summary.status == xsum.TRUNCATED else ""
    cited = [sources[chunk_id] for chunk_id in summary.cited if chunk_id in sources]
    listed = "\n".join(
        f"  {number}. {sources[chunk_id].label if chunk_id in sources else chunk_id}"
        for number, chunk_id in enumerate(summary.cited, start=1)
    )
    return MethodAnswer(
        text=f"Summary ({client.provider_label}){flag}:\n{summary.rendered}\n\nSources:\n{listed}",
        citations=citations((s.title, s.page_start, s.page_end) for s in cited),
        passages=tuple(cited),
        details=(
            "Papers: "
            + "; ".join(papers[doc].title for doc in doc_ids)
            + f"\nQuestions: {len(result.questions)}, answered {answered}, abstained {abstained}"
        ),
    )


ASK = AskFlow("xsum", "a cited summary of the papers best matching the question", answer)
