"""``insight-assets summarize`` and ``ask --method xsum``: cited multi-paper summaries (XSum)."""

from __future__ import annotations

import argparse
import sys

from insight_assets.defs.commands import (
    AskFlow,
    Command,
    add_collection_argument,
    embedder_resource,
    environment_llm,
    known_collection,
    missing_key,
    not_built,
    print_calls,
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
    rows = storage.warehouse.rows(
        """SELECT t.kind, t.topic, s.rendered, s.status FROM xsum_summaries s
           JOIN xsum_targets t USING (collection, target_id)
           WHERE s.collection = ? AND s.method = 'xsum' AND s.rendered IS NOT NULL ORDER BY t.kind, t.topic""",
        [collection],
    )
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

    rows = storage.warehouse.rows(
        "SELECT doc_id, file, title FROM parsed_documents WHERE collection = ?", [collection]
    )
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
    from insight_assets.core.index import IndexMissing
    from insight_assets.core.llm import LLMError
    from insight_assets.core.methods import xsum
    from insight_assets.core.methods.xsum import load
    from insight_assets.core.retrieval import Retriever
    from insight_assets.core.retrieval.citing import load_sources

    embedder = embedder_resource().get_embedder()
    try:
        retriever = Retriever.open(storage.warehouse, storage.vectors, collection, embedder, xsum.PROFILE)
    except IndexMissing as error:
        return not_built(collection, error)
    if names:
        doc_ids, unknown = _resolve_papers(storage, collection, names)
        if unknown:
            print(f"No single paper of {collection!r} matches: {'; '.join(unknown)}", file=sys.stderr)
            return 2
    else:
        hits = retriever.search(topic, k=50, mode="hybrid")
        doc_ids = list(dict.fromkeys(hit.doc_id for hit in hits))[:TOPIC_PAPERS]
    doc_ids = [doc for doc in doc_ids if doc in retriever.documents]
    if not doc_ids:
        print(f"No paper of {collection!r} has text to summarize for {topic!r}.", file=sys.stderr)
        return 1
    target = xsum.SummaryTarget("cli", "user", topic, tuple(doc_ids))
    papers = {paper.doc_id: paper for paper in load.load_papers(storage.warehouse, collection)}
    sources = load_sources(storage.warehouse, collection, xsum.PROFILE)
    with environment_llm().client(asset="summarize", partition=collection, run_id=None) as client:
        try:
            result = xsum.summarize(client, retriever, target, papers, sources)
        except LLMError as error:
            print(f"Cannot summarize: {error}", file=sys.stderr)
            return 1
        summary = result.summary
        answered = sum(answer.status == xsum.ANSWERED for answer in result.answers)
        print(f"Topic: {topic}\nPapers: " + "; ".join(papers[doc].title for doc in doc_ids))
        print(
            f"Questions: {len(result.questions)}, answered {answered}, abstained "
            f"{sum(a.status == xsum.ABSTAINED for a in result.answers)}"
        )
        if not summary.text:
            print(f"\nNo summary: {summary.error}", file=sys.stderr)
            return 1
        flag = " (cut off at max_tokens)" if summary.status == xsum.TRUNCATED else ""
        print(f"\nSummary ({client.provider_label}){flag}:\n{summary.rendered}")
        print("\nSources:")
        for number, chunk_id in enumerate(summary.cited, start=1):
            print(f"  {number}. {sources[chunk_id].label if chunk_id in sources else chunk_id}")
        print_calls(client)
    return 0


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


def _ask(args: argparse.Namespace) -> int:
    """The question as a topic, over the papers best matching it."""
    return _new_summary(storage_resource(), args.collection, args.question, None)


COMMANDS = (
    Command(
        "summarize",
        "a cited multi-paper summary (XSum): the stored ones, or one for a topic and papers you name",
        summarize,
        _summarize_arguments,
        _summarize_misuse,
    ),
)
ASK = AskFlow("xsum", "a cited summary of the papers best matching the question", _ask)
