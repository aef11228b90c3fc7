"""The exported SCOpE-QA records: kept answers only, the documented fields."""

from __future__ import annotations

import io
import json

from insight_assets.core.curation import SCOPE_QA_FIELDS, export_records, write_jsonl
from insight_assets.core.curation.answers import Answer


def answer(number: int, status: str, source: str = "generated") -> Answer:
    return Answer(
        question_id=f"q-{number}",
        question=f"Question {number}?",
        answer=f"Answer {number} cites “Paper A”.",
        document_ids=("a", "b"),
        cited_document_ids=("a",),
        source=source,
        answer_source="offline (extractive)",
        status=status,
    )


ANSWERS = [answer(1, "kept"), answer(2, "duplicate"), answer(3, "failed"), answer(4, "kept", "user")]


def test_only_kept_answers_with_the_documented_fields():
    records = export_records("quantization", ANSWERS)
    assert [r["question_id"] for r in records] == ["q-1", "q-4"]
    assert all(tuple(record) == SCOPE_QA_FIELDS for record in records)
    assert records[1] == {
        "collection": "quantization",
        "question_id": "q-4",
        "question": "Question 4?",
        "answer": "Answer 4 cites “Paper A”.",
        "document_ids": ["a", "b"],
        "cited_document_ids": ["a"],
        "source": "user",
    }
    with_titles = export_records("quantization", ANSWERS, {"a": "Paper A"})
    assert with_titles[0]["document_titles"] == ["Paper A", None]


def test_write_jsonl_to_a_path_and_to_a_stream(tmp_path):
    records = export_records("quantization", ANSWERS)
    path = tmp_path / "out" / "scope_qa.jsonl"
    assert write_jsonl(records, path) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == records and "“Paper A”" in lines[0]
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    stream = io.StringIO()
    assert write_jsonl(records, stream) == 2 and stream.getvalue() == path.read_text(encoding="utf-8")
