"""On the demo built offline, no text any method wrote or read from a paper quotes its boilerplate
(acknowledgements, funding, affiliations, copyright lines): it is stored, marked, and nowhere else."""

from __future__ import annotations

import json
import re

from insight_assets.core.text import split_sentences

# The text every method reads (chunks, compressed papers, triples' sentences) and writes.
TEXT_COLUMNS = {
    "chunks": ["text"],
    "compressed_documents": ["text"],
    "generated_questions": ["question"],
    "generated_answers": ["answer"],
    "insights": ["hook", "body", "realization"],
    "insight_rag_sentences": ["sentence"],
    "knowledge_triples": ["sentence"],
    "insight_rag_benchmark": ["question"],
    "insight_rag_answers": ["answer"],
    "xsum_questions": ["question"],
    "xsum_answers": ["answer"],
    "xsum_summaries": ["summary"],
    "contregen_answers": ["answer"],
    "contregen_node_summaries": ["summary"],
    "scipip_papers": ["summary", "background", "method"],
    "scipip_ideas": ["idea", "problem", "detailed_method"],
}
# A quoted piece of boilerplate: one of its sentences, this long at least (shorter ones, such as
# "Acknowledgements", are words any text may hold).
MIN_QUOTE_CHARS = 30


def squeezed(text: str) -> str:
    return " ".join(text.split())


def test_no_method_reads_or_writes_a_papers_boilerplate(demo_offline):
    warehouse = demo_offline.storage.warehouse
    spans = [
        span
        for row in warehouse.rows("SELECT boilerplate FROM parsed_documents WHERE collection = 'demo'")
        for span in json.loads(row["boilerplate"])
    ]
    kinds = {span["kind"] for span in spans}
    assert {"acknowledgements", "affiliations", "copyright"} <= kinds, kinds
    quotes = {
        squeezed(span["text"][start:end])
        for span in spans
        for start, end in split_sentences(span["text"])
        if len(squeezed(span["text"][start:end])) >= MIN_QUOTE_CHARS
    }
    assert any("thank" in quote for quote in quotes)

    found = []
    for table, columns in TEXT_COLUMNS.items():
        for row in warehouse.rows(f"SELECT {', '.join(columns)} FROM {table} WHERE collection = 'demo'"):
            for column, value in row.items():
                text = squeezed(value or "")
                found += [(table, column, quote) for quote in quotes if quote in text]
    assert not found, found[:5]
    written = " ".join(
        squeezed(row["text"]) for row in warehouse.rows("SELECT text FROM chunks WHERE collection = 'demo'")
    )
    assert not re.search(r"\bwe thank\b", written, re.IGNORECASE)
