"""``insight-assets ask --method contregen``: a question's tree of sub-questions and its cited answer."""

from __future__ import annotations

import argparse
import sys

from insight_assets.defs.commands import (
    AskFlow,
    embedder_resource,
    environment_llm,
    not_built,
    print_calls,
    storage_resource,
)


def ask(args: argparse.Namespace) -> int:
    """ConTReGen for one question: the tree, its synthesis into a cited answer, the tree shown."""
    collection, question = args.collection, args.question
    from insight_assets.core.clustering import theme_labels
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import contregen
    from insight_assets.core.methods.contregen.report import tree_text
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import load_sources, render_citations

    storage = storage_resource()
    try:
        retriever = Retriever.open(
            storage.warehouse,
            storage.vectors,
            collection,
            embedder_resource().get_embedder(),
            contregen.PROFILE,
        )
    except IndexMissing as error:
        return not_built(collection, error)
    themes = theme_labels(storage.warehouse, collection)
    asked = contregen.TreeQuestion("cli", question, source="cli")
    with environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            (tree,), found = contregen.grow_trees(client, retriever, [asked], themes=themes)
            sources = {**load_sources(storage.warehouse, collection, contregen.PROFILE), **found}
            (answer,) = contregen.write_answers(client, retriever, [tree], sources, baselines=False)
        except LLMError as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        if not answer.text:
            print(f"No answer: {answer.error}", file=sys.stderr)
            return 1
        flag = " (cut off at max_tokens)" if answer.status == contregen.schemas.TRUNCATED else ""
        print(f"Question: {question}\n\nAnswer ({client.provider_label}){flag}:\n")
        print(render_citations(answer.text, sources))
        print("\nTree (sub-questions, whether kept, and the sources each kept):\n")
        print(tree_text(tree, sources))
        print_calls(client)
    return 0


ASK = AskFlow("contregen", "a tree of sub-questions, then a cited answer (ConTReGen)", ask)
COMMANDS = ()
