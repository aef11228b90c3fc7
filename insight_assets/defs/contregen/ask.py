"""ConTReGen's ``ask`` flow: a question's tree of sub-questions and its cited answer (``insight-assets ask
--method contregen``, the page, the MCP server)."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations


def answer(asked: Asked, client) -> MethodAnswer:
    """ConTReGen for one question: the tree, its synthesis into a cited answer, the tree shown."""
    from insight_assets.core.methods import contregen
    from insight_assets.core.methods.contregen import stages
    from insight_assets.core.methods.contregen.report import tree_text
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import cited_chunks, load_sources, render_citations

    storage, collection = asked.storage, asked.collection
    retriever = Retriever.open(
        storage.warehouse, storage.vectors, collection, asked.embedder.get_embedder(), contregen.PROFILE
    )
    if asked.options.get("notes"):
        from insight_assets.core.reader_notes import WithReaderNotes

        retriever = WithReaderNotes(retriever, storage.warehouse, storage.vectors_uri, collection)
    question = contregen.TreeQuestion("cli", asked.question, source="cli")
    # The build's settings: the tree as deep and wide, the answer as long, as the collection's own.
    writing = asked.built_with(stages.ANSWERS, stages.AnswersSettings)
    settings = asked.built_with(stages.TREES, stages.TreesSettings).method(writing)
    (tree,), found = contregen.grow_trees(client, retriever, [question], settings)
    sources = {**load_sources(storage.warehouse, collection, contregen.PROFILE), **found}
    (written,) = contregen.write_answers(client, retriever, [tree], sources, settings, baselines=False)
    if not written.text:
        raise AskFailed(f"no answer: {written.error}")
    flag = " (cut off at max_tokens)" if written.status == contregen.schemas.TRUNCATED else ""
    cited = [sources[chunk_id] for chunk_id in cited_chunks(written.text) if chunk_id in sources]
    return MethodAnswer(
        text=f"Answer ({client.provider_label}){flag}:\n\n{render_citations(written.text, sources)}",
        citations=citations((s.title, s.page_start, s.page_end, s.cite) for s in cited),
        passages=tuple(cited),
        details="Tree (sub-questions, whether kept, and the sources each kept):\n\n"
        + tree_text(tree, sources),
    )


ASK = AskFlow("contregen", "a tree of sub-questions, then a cited answer (ConTReGen)", answer)
