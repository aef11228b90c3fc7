"""The MCP server's read tools: ``search`` finds passages (in one collection or in all of them) and
``fetch`` reads one back whole, with its neighbours and its paper's metadata.

Both answer in the shape ChatGPT's connectors and deep research expect of a ``search(query)`` /
``fetch(id)`` pair (results with ``id``, ``title``, ``url`` and ``text``; a fetched document with
``id``, ``title``, ``text``, ``url`` and ``metadata``), with our citation fields beside them. They
read what the build left and never wait for a model call of another tool: they run while an
``ask`` does.
"""

from __future__ import annotations

import json

from insight_assets.app.mcp.citing import quoted, split_passage_id
from insight_assets.app.mcp.collections import Collections, ToolOutput, ToolProblem, build_hint

MAX_K = 50
NEIGHBOURS = 1  # passages either side that ``fetch`` returns with the one asked for


def _as_text(data: dict) -> str:
    """Structured content as the tool's text: JSON, as connectors that read only text expect."""
    return json.dumps(data, ensure_ascii=False, indent=1)


def search(
    collections: Collections,
    query: str,
    collection: str | None = None,
    k: int = 10,
    mode: str = "hybrid",
    notes: bool = False,
) -> ToolOutput:
    """The ``k`` passages that best match ``query`` in ``collection`` (every built collection when
    None), reranked, each cited; with ``notes``, the reader's matching notes, apart."""
    from insight_assets.app.passages import SEARCH_MODES, note_json, search_notes, search_passages
    from insight_assets.core.retrieval.index import IndexMissing

    if not query.strip():
        raise ToolProblem("the query is empty: say in words what to look for")
    if mode not in SEARCH_MODES:
        raise ToolProblem(f"unknown search mode {mode!r}; choose one of {', '.join(SEARCH_MODES)}")
    if not 1 <= k <= MAX_K:
        raise ToolProblem(f"k must be between 1 and {MAX_K}, not {k}")
    if collection:
        built = {collection: collections.check_built(collection)}
    else:
        built = collections.built_collections()
    if not built:
        raise ToolProblem("no collection is built yet: `insight-assets build --collection NAME` builds one")
    found, your_notes = [], []
    for name, builds in built.items():
        try:
            opened = collections.opened.get(name, builds)
        except IndexMissing as missing:
            if collection:
                raise ToolProblem(f"collection {name!r}: {missing} ({build_hint(name)})") from None
            continue  # searching everything: a collection without vectors has nothing to find
        hits = search_passages(opened.search, collections.llm, query, k=k, mode=mode)
        found += [opened.papers.passage(hit, hit.score) for hit in hits]
        if notes:
            closest = search_notes(collections.storage, collections.embedder, name, query)
            your_notes += [{"collection": name, **note_json(hit)} for hit in closest]
    # One model scores every collection's passages: their reranked scores compare.
    results = sorted(found, key=lambda passage: -passage["score"])[:k]
    for result in results:
        result["text"] = result["quote"]
    data = {"query": query, "collection": collection, "results": results}
    if notes:
        data["your_notes"] = your_notes
    if not results and not your_notes:
        where = repr(collection) if collection else "any built collection"
        return ToolOutput(f"No passage of {where} matches {query!r}.", data)
    return ToolOutput(_as_text(data), data)


def fetch(collections: Collections, passage: str) -> ToolOutput:
    """The passage ``passage`` (an id from ``search`` or ``ask``) whole, with its neighbours in its
    paper and the paper's metadata."""
    from insight_assets.core.retrieval.citing import source_with_neighbours

    try:
        collection, chunk_id = split_passage_id(passage)
    except ValueError as problem:
        raise ToolProblem(str(problem)) from None
    builds = collections.check_built(collection)
    sources, position = source_with_neighbours(
        collections.storage.warehouse, collection, chunk_id, NEIGHBOURS
    )
    if position < 0:
        raise ToolProblem(
            f"collection {collection!r} has no passage {chunk_id!r}: passage ids change when a paper "
            "or its chunking does; search again for a current one"
        )
    papers = collections.opened.papers(collection, builds)
    source = sources[position]
    cited = papers.passage(source)
    data = {
        "id": cited["id"],
        "title": source.title,
        "text": quoted(source.text),
        "url": cited["url"],
        "metadata": {
            "citation": cited["citation"],
            "pages": cited["pages"],
            "page_start": source.page_start,
            "page_end": source.page_end,
            "paper": papers.paper(source.doc_id, source.title),
            "before": [papers.passage(s) for s in sources[:position]],
            "after": [papers.passage(s) for s in sources[position + 1 :]],
        },
    }
    return ToolOutput(_as_text(data), data)
