"""ConTReGen's ``ask`` flow: a question's tree of sub-questions and its cited answer (``insight-assets ask
--method contregen``, the page, the MCP server)."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFlow, MethodAnswer, citations


def answer(asked: Asked, client) -> MethodAnswer:
    """ConTReGen for one question: the trees and answers stages run for it, with the
    build's settings (the tree as deep and wide, the answer as long, as the collection's own); the
    tree shown. With ``notes``, the reader's notes are retrieved beside the papers' passages."""
    from insight_assets.core.methods import contregen
    from insight_assets.core.methods.contregen import stages
    from insight_assets.core.methods.contregen.report import tree_text
    from insight_assets.core.retrieval.citing import cited_chunks, render_citations
    from insight_assets.defs.materialization import scope_of

    scope = scope_of(asked.storage, asked.embedder, client, asked.collection)
    if asked.options.get("notes"):
        from insight_assets.core.reader_notes import WithReaderNotes

        notes = WithReaderNotes(
            scope.retriever(contregen.PROFILE), scope.warehouse, scope.vectors_uri, asked.collection
        )
        scope.retrievers = {contregen.PROFILE: notes}
    written = stages.answer_for(scope, asked.question)
    # The answers stage says why when no answer was written; one written is ConTReGen's own.
    (tree,), (found,), sources = written.trees, written.answers, written.sources
    flag = " (cut off at max_tokens)" if found.status == contregen.schemas.TRUNCATED else ""
    cited = [sources[chunk_id] for chunk_id in cited_chunks(found.text) if chunk_id in sources]
    return MethodAnswer(
        text=f"Answer ({client.provider_label}){flag}:\n\n{render_citations(found.text, sources)}",
        citations=citations((s.title, s.page_start, s.page_end, s.cite) for s in cited),
        passages=tuple(cited),
        details="Tree (sub-questions, whether kept, and the sources each kept):\n\n"
        + tree_text(tree, sources),
    )


ASK = AskFlow("contregen", "a tree of sub-questions, then a cited answer (ConTReGen)", answer)
