"""``insight-assets summarize`` and ``ask --method xsum``: cited multi-paper summaries (XSum)."""

from __future__ import annotations

import argparse
import sys

from insight_assets.app.asking import Asked, AskFailed, MethodAnswer, citations
from insight_assets.app.commands import (
    AskFlow,
    Command,
    add_collection_argument,
    answer_and_print,
    embedder_resource,
    known_collection,
    missing_key,
    storage_resource,
)

# Papers a topic's summary reads when none are named: those holding its best-matching chunks.
TOPIC_PAPERS = 5


def summarize(args: argparse.Namespace) -> int:
    """The stored XSum summaries of a collection, or a new one for ``topic`` over ``papers`` (or
    the papers best matching the topic), with its citations."""
    collection, topic, papers = args.collection, args.topic, args.papers
    storage = storage_resource()
    problem = known_collection(storage, collection) or (missing_key() if topic else None)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if topic is None:
        return _stored_summaries(storage, collection)
    return _new_summary(storage, collection, topic, papers)


def _stored_summaries(storage, collection: str) -> int:
    from insight_assets.core.methods import xsum

    rows = xsum.store.rendered_summaries(storage.warehouse, collection, xsum.XSUM)
    if not rows:
        print(
            f"collection {collection!r} has no stored summaries: build it (insight-assets build -c {collection}) "
            "or name a --topic.",
            file=sys.stderr,
        )
        return 1
    for row in rows:
        flag = " [truncated]" if row["status"] == "truncated" else ""
        print(f"\n## {row['topic']} ({row['kind']}){flag}\n\n{row['rendered']}")
    return 0


def _resolve_papers(storage, collection: str, names: list[str]) -> tuple[list[str], list[str]]:
    """Document ids for ``names`` (an id or its first 8+ characters, a file name, or a title), and
    the names that match no paper."""
    from insight_assets.core.citations.references import fold
    from insight_assets.core.ingest import paper_names

    rows = paper_names(storage.warehouse, collection)
    found, unknown = [], []
    for name in names:
        matches = [
            row["doc_id"]
            for row in rows
            if name == row["doc_id"]
            or (len(name) >= 8 and row["doc_id"].startswith(name))
            or name == row["file"]
            or (fold(name) and fold(name) == fold(row["title"] or ""))
        ]
        (found if len(matches) == 1 else unknown).append(matches[0] if len(matches) == 1 else name)
    return list(dict.fromkeys(found)), unknown


def _new_summary(storage, collection: str, topic: str, names: list[str] | None) -> int:
    doc_ids = None
    if names:
        doc_ids, unknown = _resolve_papers(storage, collection, names)
        if unknown:
            print(f"No single paper of {collection!r} matches: {'; '.join(unknown)}", file=sys.stderr)
            return 2
    asked = Asked(collection, topic, storage, embedder_resource(), {"papers": doc_ids})
    return answer_and_print(asked, [ASK])


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


def _summarize_arguments(parser: argparse.ArgumentParser) -> None:
    add_collection_argument(parser)
    parser.add_argument("--topic", help="what to summarize; without it, the summaries `build` wrote")
    parser.add_argument(
        "--papers",
        nargs="+",
        help=f"document ids, file names or titles (default: the {TOPIC_PAPERS} papers best matching the topic)",
    )


def _summarize_misuse(args: argparse.Namespace) -> str | None:
    return "--papers needs --topic" if args.papers and not args.topic else None


COMMANDS = (
    Command(
        "summarize",
        "a cited multi-paper summary (XSum): the stored ones, or one for a topic and papers you name",
        summarize,
        _summarize_arguments,
        _summarize_misuse,
    ),
)
ASK = AskFlow("xsum", "a cited summary of the papers best matching the question", answer)
