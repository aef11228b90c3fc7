"""The stand-in hosted model answers within the schema a request carries: patterns, ids it lists,
titles it shows, and 429s with rate-limit headers past its own limit."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from insight_assets.core.curation.question_tasks import _question_shape
from insight_assets.core.llm.grammars import cited_text_pattern
from insight_assets.core.llm.tasks import one_item_each
from insight_assets.core.methods.scipip.tasks import ENTITY_SCHEMA, _digest_schema
from insight_assets_tests.fake_model_server import FakeModelServer, Received
from insight_assets_tests.standin_model import StandInModel


def _request(prompt: str, schema: dict | None) -> Received:
    body = {"messages": [{"role": "user", "content": prompt}]}
    if schema is not None:
        body["response_format"] = {"type": "json_object", "schema": schema}
    return Received("openai", "/v1/chat/completions", {}, body)


PROMPT = """Rate each passage.
[P1] Citation graphs relate scientific papers through their references.
[P2] Embeddings of documents place related papers near each other.
- SPECTER: Document-level Representation Learning: a paper about embeddings.
"""


def test_answers_match_the_patterns_the_tasks_decode_with():
    model = StandInModel(FakeModelServer())
    patterns = [
        cited_text_pattern(["P1", "P2"]),
        _question_shape({"min_words": 15, "max_words": 35})["pattern"],
        ENTITY_SCHEMA["pattern"],
        _digest_schema({})["properties"]["summary"]["pattern"],
    ]
    for pattern in patterns:
        schema = {"type": "object", "properties": {"text": {"type": "string", "pattern": pattern}}}
        reply = model(_request(PROMPT, schema))
        assert re.fullmatch(pattern, json.loads(reply.text)["text"]), pattern


def test_listed_ids_are_rated_once_each_and_titles_are_the_prompts():
    model = StandInModel(FakeModelServer())
    rating = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "relevance": {"type": "integer", "minimum": 0, "maximum": 5},
        },
    }
    schema = {
        "type": "object",
        "properties": {
            "ratings": {"type": "array", "items": rating},
            "inspired_by": {"type": "array", "items": {"type": "string"}},
        },
    }
    answer = json.loads(model(_request(PROMPT, schema)).text)

    assert [item["id"] for item in answer["ratings"]] == ["P1", "P2"]
    assert all(0 <= item["relevance"] <= 5 for item in answer["ratings"])
    assert answer["inspired_by"] == ["SPECTER: Document-level Representation Learning"]
    # A const per item (one_item_each) is kept as the schema says.
    each = one_item_each(schema, "ratings", "id", ["P2"])
    assert [item["id"] for item in json.loads(model(_request(PROMPT, each)).text)["ratings"]] == ["P2"]


def test_prose_cites_a_listed_label_and_answers_are_a_function_of_the_request():
    model = StandInModel(FakeModelServer())

    first, again = model(_request(PROMPT, None)), model(_request(PROMPT, None))

    assert first.text.endswith("[P1].") and first.text == again.text


def test_the_items_of_one_answer_quote_distinct_runs_of_the_prompt():
    """A phrase it names is one its prompt holds, and distinct items are about different places of it."""
    model = StandInModel(FakeModelServer())
    schema = {
        "type": "object",
        "properties": {
            "questions": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 3}
        },
    }
    questions = json.loads(model(_request(PROMPT, schema)).text)["questions"]

    words = " ".join(re.findall(r"[a-z][a-z]{2,}", PROMPT.lower()))
    quoted = [re.sub(r" \[P1\]$", "", question) for question in questions]
    assert len(set(quoted)) == 3
    # Each is a run of the prompt's words (the last one may be cut, and a run may wrap to the start).
    assert all(" ".join(q.split()[:-1]) in words + " " + words for q in quoted)


def test_past_its_limit_it_answers_429_with_rate_limit_headers():
    server = FakeModelServer().start()
    model = server.responder = StandInModel(server, max_in_flight=0, retry_after_s=0.25)
    request = urllib.request.Request(
        f"{server.url}/v1/chat/completions",
        data=json.dumps(_request(PROMPT, None).body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
    finally:
        server.stop()

    # The request itself is in flight: one more than a limit of 0.
    assert refused.value.code == 429 and refused.value.headers["retry-after-ms"] == "250"
    assert refused.value.headers["x-ratelimit-remaining-requests"] == "0" and model.rate_limited == 1
