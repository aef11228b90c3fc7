"""``insight-assets ask`` (the default method): an answer, unless given, and its related insights."""

from __future__ import annotations

import argparse
import sys

from insight_assets.defs.commands import (
    AskFlow,
    embedder_resource,
    environment_llm,
    not_built,
    storage_resource,
)


class AnswerUnavailable(RuntimeError):
    """No answer could be generated for an asked question; the message says why."""


def ask(args: argparse.Namespace) -> int:
    """Answer (unless given) and related insights for one question, from the stored index."""
    collection, question, answer = args.collection, args.question, args.answer
    from insight_assets.core.curation import QAPair
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import insightgen

    storage = storage_resource()
    embedder = embedder_resource().get_embedder()
    try:
        index, cluster_index = insightgen.load_insightgen_index(
            storage.warehouse, storage.vectors, collection, embedder.variant
        )
    except IndexMissing as error:
        return not_built(collection, error)
    with environment_llm().client(asset="ask", partition=collection, run_id=None) as client:
        try:
            cited: tuple[str, ...] = ()
            if answer is None:
                answer, cited = _generated_answer(
                    client, storage, index, collection, question, embedder.embed
                )
            pair = QAPair("ask", question, answer)
            settings = insightgen.InsightGenSettings(methods=("insightgen",))
            result = insightgen.run_insightgen(client, [pair], index, cluster_index, embedder.embed, settings)
        except (LLMError, AnswerUnavailable) as error:
            print(f"Cannot answer: {error}", file=sys.stderr)
            return 1
        print(f"Question: {question}\n\nAnswer ({client.provider_label if cited else 'given'}):\n{answer}")
        if cited:
            print("\nCited: " + "; ".join(index.titles.get(doc_id, doc_id) for doc_id in cited))
        (run,) = result.outcome.runs
        if not run.insights:
            print(f"\nNo insights: {run.error}", file=sys.stderr)
            return 1
        print(f"\nRelated insights ({client.provider_label}):")
        for number, insight in enumerate(run.insights, start=1):
            sources = "; ".join(index.source_labels.get(chunk_id, chunk_id) for chunk_id in insight.chunk_ids)
            print(
                f"\n{number}. [{insight.type}] {insight.hook}\n   {insight.body}\n   → {insight.realization}"
            )
            print(f"   Sources: {sources}")
        summary = client.summary()
        print(f"\n{summary.calls} model calls, {summary.cache_hits} from cache, cost ${summary.cost_usd:.4f}")
    return 0


def _generated_answer(
    client, storage, index, collection: str, question: str, embed
) -> tuple[str, tuple[str, ...]]:
    """An answer from the compressed papers nearest the question (by their stored chunk vectors)."""
    import numpy as np

    from insight_assets.core import curation

    compressed = curation.load_compressed(storage.warehouse, collection)
    query = np.asarray(embed([question]), dtype=np.float32)[0]
    nearest = index.nearest_documents(
        query,
        curation.AnswerSettings().max_documents_for_user_questions,
        among={doc.document_id for doc in compressed},
    )
    asked = curation.Question(
        question_id=curation.question_id(question, ()),
        question=question,
        document_ids=tuple(sorted(nearest)),
        combination_index=None,
        source=curation.USER,
    )
    outcome = curation.generate_answers(client, [asked], compressed, curation.AnswerSettings(), embed)
    (result,) = outcome.answers
    if result.status != "kept":
        raise AnswerUnavailable(result.error or outcome.budget_error or "no answer was produced")
    return result.answer, result.cited_document_ids


def _ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--answer", help="insightgen: your answer; without it one is generated from the papers"
    )


ASK = AskFlow("insightgen", "related insights from the theme graph", ask, _ask_arguments, default=True)
COMMANDS = ()
