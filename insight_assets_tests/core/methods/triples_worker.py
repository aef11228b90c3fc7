"""Run in fresh processes by the determinism test: the offline triples of the demo's passage chunks,
read as ``knowledge_triples`` reads them (a batch of concurrent calls), printed as JSON rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from insight_assets.core.ingestion.chunking import PASSAGE, PROFILES
from insight_assets.core.ingestion.ingest import chunk_documents
from insight_assets.core.ingestion.pdf import parse_pdf
from insight_assets.core.llm import LLMClient, LLMSettings
from insight_assets.core.methods.insight_rag.collection import read_triples


def main(folder: str) -> None:
    documents = [parse_pdf(path).document for path in sorted(Path(folder).glob("*.pdf"))]
    rows = [
        {"doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "text": chunk.text}
        for chunk in chunk_documents(documents, [PROFILES[PASSAGE]])
    ]
    with LLMClient(LLMSettings(provider="offline", max_concurrency=8)) as client:
        read = read_triples(client, rows)
    print(json.dumps([{"triple_id": t.triple_id, **t.__dict__} for t in read.triples]))


if __name__ == "__main__":
    main(sys.argv[1])
