"""``insight-assets ask --method insight-rag``: identified insights, what the retriever returned, the answer."""

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

# insight_rag's RETRIEVER_MODES, the first its default, spelled out so that `--help` imports nothing heavy.
INSIGHT_RETRIEVERS = ("index", "sentences", "llm", "parametric")


def ask(args: argparse.Namespace) -> int:
    """Insight-RAG for one question: the identified insights, what the retriever returned for each
    (with sources), and the answer generated from them."""
    collection, question, mode = args.collection, args.question, args.retriever
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import insight_rag
    from insight_assets.core.methods.insight_rag.schemas import BURIED, OK
    from insight_assets.core.retrieval.citing import render_citations

    storage = storage_resource()
    settings = insight_rag.AnswerSettings(retriever_modes=(mode,))
    try:
        setup = insight_rag.store.open_setup(
            storage.warehouse, storage.lancedb_uri, embedder_resource().get_embedder(), collection, settings
        )
    except IndexMissing as error:
        return not_built(collection, error)
    asked = insight_rag.BenchmarkItem(item_id="cli", kind=BURIED, question=question)
    with environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            (identified,) = insight_rag.identify(client, [asked], setup)
            if identified.status != OK:
                reason = identified.error or "it found no fragment to complete"
                print(f"The insight identifier gave nothing to retrieve: {reason}", file=sys.stderr)
                return 1
            (answered,) = insight_rag.answer(client, [asked], [identified], setup, baselines=False)
        except LLMError as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        print(f"Question: {question}\n\nIdentified insights ({client.provider_label}):")
        for found in identified.insights:
            print(f"- {found.insight} … ({'several answers' if found.multi_answer else 'one answer'})")
        print(f"\nRetrieved insights ({mode} retriever):")
        for number, (text, chunk_id) in enumerate(
            zip(answered.insights, answered.passage_chunk_ids, strict=True), start=1
        ):
            source = setup.sources.get(chunk_id)
            print(f"{number}. {text}\n   Source: {source.label if source else chunk_id}")
        if not answered.insights:
            print("(none)")
        if answered.status != OK:
            print(f"\nNo answer: {answered.error}", file=sys.stderr)
            return 1
        print(f"\nAnswer ({client.provider_label}):\n{render_citations(answered.answer, setup.sources)}")
        print_calls(client)
    return 0


def _ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--retriever",
        choices=INSIGHT_RETRIEVERS,
        default=INSIGHT_RETRIEVERS[0],
        help="insight-rag's insight retriever (default: %(default)s)",
    )


ASK = AskFlow(
    "insight-rag", "insights identified, retrieved and answered from (Insight-RAG)", ask, _ask_arguments
)
COMMANDS = ()
