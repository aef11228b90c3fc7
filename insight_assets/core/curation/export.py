"""The curated question–answer pairs as a SCOpE-QA-style JSON Lines file.

One JSON object per line, one line per kept answer (duplicates and failures are left out), in
question order::

    {"collection": "quantization",
     "question_id": "q-3f1c0a9b2e4d5f60",
     "question": "How do different strategies for ... reflect ... ?",
     "answer": "... as \"Paper Title\" shows ...",
     "document_ids": ["doc-a", "doc-b", "doc-c"],
     "cited_document_ids": ["doc-a", "doc-c"],
     "source": "generated",
     "document_titles": ["Paper Title", "...", "..."]}

- ``collection``: the collection's name.
- ``question_id``: a stable id, a hash of the question and its documents.
- ``question``, ``answer``: the texts; a user's answer is exported as the user wrote it.
- ``document_ids``: the documents the answer was written from (the question's combination, or
  the documents the user named or that were found for a user's question).
- ``cited_document_ids``: the documents the answer cites, a subset of ``document_ids``.
- ``source``: ``"generated"`` for questions generated from the collection, ``"user"`` for
  questions from the collection's ``questions.jsonl``.
- ``document_titles``: only when titles are given; the titles of ``document_ids``, in order
  (``null`` for an id without a title).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from .answers import KEPT, Answer

SCOPE_QA_FIELDS = (
    "collection",
    "question_id",
    "question",
    "answer",
    "document_ids",
    "cited_document_ids",
    "source",
)


def export_records(
    collection: str, answers: Sequence[Answer], titles: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """One record per kept answer, with the fields of ``SCOPE_QA_FIELDS`` in that order (and
    ``document_titles`` when ``titles`` maps document ids to titles)."""
    records = []
    for answer in answers:
        if answer.status != KEPT:
            continue
        record: dict[str, Any] = {
            "collection": collection,
            "question_id": answer.question_id,
            "question": answer.question,
            "answer": answer.answer,
            "document_ids": list(answer.document_ids),
            "cited_document_ids": list(answer.cited_document_ids),
            "source": answer.source,
        }
        if titles is not None:
            record["document_titles"] = [titles.get(i) for i in answer.document_ids]
        records.append(record)
    return records


def write_jsonl(records: Iterable[Mapping[str, Any]], path_or_stream: Path | str | IO[str]) -> int:
    """Write one JSON object per line; returns how many. A file is replaced atomically, so a
    reader never sees half of it."""
    lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in records]
    if not isinstance(path_or_stream, (str, Path)):
        path_or_stream.writelines(lines)
        return len(lines)
    path = Path(path_or_stream)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.writelines(lines)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return len(lines)
