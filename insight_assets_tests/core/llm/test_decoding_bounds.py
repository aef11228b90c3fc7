"""A reply that keeps to the schema a task decodes under passes the task's own check: the bounds a
check holds an answer to (how many sub-questions or queries, one verdict per item, a question's
shape) are in the schema a hosted provider is sent, not only in the prompt. The replies are the
stand-in's, which writes as many items as a schema allows and free text where it allows any."""

from __future__ import annotations

import json

import pytest

from insight_assets.core.methods.contregen.tasks import (
    CONTREGEN_DSP_HOPS,
    CONTREGEN_JUDGE_PASSAGES,
    CONTREGEN_PLAN,
    CONTREGEN_SEARCHAIN,
    CONTREGEN_VERIFY_SUB_QUESTIONS,
)
from insight_assets.core.methods.insight_rag.tasks import INSIGHT_RAG_QUESTION
from insight_assets_tests.fake_model_server import FakeModelServer, Received
from insight_assets_tests.standin_model import StandInModel

PROMPT = """Passages:
[P1] Citation graphs relate scientific papers through their references, and embeddings of documents
place related papers near each other; a reader follows both to find the work a paper builds on.
"""


def _reply(task, inputs: dict):
    """The stand-in's answer to ``task`` under its decoding schema for ``inputs``, parsed."""
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "response_format": {"type": "json_object", "schema": task.decoding_schema(inputs)},
    }
    reply = StandInModel(FakeModelServer())(Received("openai", "/v1/chat/completions", {}, body))
    return task.output_model.model_validate(json.loads(reply.text))


@pytest.mark.parametrize(
    ("task", "inputs"),
    [
        (CONTREGEN_PLAN, {"max_sub_questions": 3}),
        (CONTREGEN_SEARCHAIN, {"max_queries": 2}),
        (CONTREGEN_DSP_HOPS, {"max_queries": 4}),
        (INSIGHT_RAG_QUESTION, {"objects": ["transformer"]}),
        (
            CONTREGEN_VERIFY_SUB_QUESTIONS,
            {"sub_questions": [{"index": 1, "text": "Which graphs?"}, {"index": 2, "text": "Which papers?"}]},
        ),
        (CONTREGEN_JUDGE_PASSAGES, {"passages": [{"id": "S1"}, {"id": "S2"}, {"id": "S3"}]}),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_an_answer_within_the_decoding_schema_passes_the_tasks_check(task, inputs):
    answer = _reply(task, inputs)

    assert task.check_output(answer, inputs) == []
