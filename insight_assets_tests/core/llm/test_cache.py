"""The persistent cache: reruns cost nothing, keys follow content, two processes can write."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from pydantic import BaseModel

from insight_assets.core.llm import SUMMARIZE_PASSAGES, ResponseCache, Task, cache_key
from insight_assets.core.llm.settings import ModelParams
from insight_assets_tests.fake_model_server import Reply

from .cache_worker import write_entries
from .conftest import PASSAGES, VALID_ANSWER, Harness

ITEMS = [
    {"question": "How does self-attention work?", "passages": PASSAGES},
    {"question": "Why are recurrent networks slow?", "passages": PASSAGES},
]


def test_a_rerun_of_the_same_work_makes_zero_provider_calls(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER)
    first = harness.client("openai").run_many(SUMMARIZE_PASSAGES, ITEMS)
    assert len(harness.server.requests) == 2

    rerun_client = harness.client("openai", context=None)
    rerun = rerun_client.run_many(SUMMARIZE_PASSAGES, ITEMS)

    assert len(harness.server.requests) == 2
    assert rerun.values == first.values
    summary = rerun_client.summary()
    assert (summary.calls, summary.cache_hits, summary.provider_calls) == (2, 2, 0)
    assert (summary.cost_usd, summary.input_tokens) == (0.0, 0)
    assert [row.cache_hit for row in harness.ledger().rows()] == [False, False, True, True]


def test_another_model_or_parameter_is_a_different_entry(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER)
    harness.client("openai").run(SUMMARIZE_PASSAGES, **ITEMS[0])
    harness.client("openai", model="gpt-4o").run(SUMMARIZE_PASSAGES, **ITEMS[0])
    harness.client("openai", temperature=0.7).run(SUMMARIZE_PASSAGES, **ITEMS[0])
    # A different key or timeout asks the same question: same entry.
    harness.client("openai", api_key="fake-other-key-123", timeout_s=9).run(SUMMARIZE_PASSAGES, **ITEMS[0])

    assert len(harness.server.requests) == 3


class Echo(BaseModel):
    text: str


def echo_task(tmp_path: Path, template: str, version: int = 1) -> Task[Echo]:
    path = tmp_path / f"echo{version}-{abs(hash(template))}.txt"
    path.write_text(template, encoding="utf-8")
    return Task(
        name="echo",
        version=version,
        template=path,
        output_model=Echo,
        offline=lambda text: Echo(text=text),
    )


def key_of(task: Task[Echo], text: str, params: ModelParams | None = None) -> str:
    params = params or ModelParams("openai", "gpt-4o-mini", 0.0, 100, 10.0)
    return cache_key(
        model_identity=params.identity(),
        task_name=task.name,
        task_version=task.version,
        template_hash=task.template_hash,
        prompt=task.render({"text": text}),
    )


def test_template_or_version_changes_change_the_key(tmp_path: Path):
    original = echo_task(tmp_path, "Repeat: $text\nJSON: $output_schema")
    edited = echo_task(tmp_path, "Repeat exactly: $text\nJSON: $output_schema")
    bumped = echo_task(tmp_path, "Repeat: $text\nJSON: $output_schema", version=2)

    keys = {key_of(task, "hello") for task in (original, edited, bumped)}

    assert len(keys) == 3
    assert key_of(original, "hello") == key_of(original, "hello")
    assert key_of(original, "hello") != key_of(original, "world")


def test_a_version_bump_asks_the_model_again(harness: Harness, tmp_path: Path):
    harness.server.default = Reply('{"text": "hi"}')
    template = "Repeat: $text\nJSON: $output_schema"
    client = harness.client("openai")

    client.run(echo_task(tmp_path, template), text="hi")
    client.run(echo_task(tmp_path, template), text="hi")
    client.run(echo_task(tmp_path, template, version=2), text="hi")

    assert len(harness.server.requests) == 2


def test_a_cached_answer_that_no_longer_validates_is_asked_again(harness: Harness, tmp_path: Path):
    harness.server.default = Reply('{"text": ""}')
    task = echo_task(tmp_path, "Repeat: $text\nJSON: $output_schema")
    client = harness.client("openai")
    client.run(task, text="hi")
    key = key_of(task, "hi", client.settings.params_for(task))
    client.cache.put(
        key,
        task="echo",
        task_version=1,
        provider="openai",
        model="gpt-4o-mini",
        value_json='{"wrong": 1}',
        input_tokens=1,
        output_tokens=1,
    )

    client.run(task, text="hi")

    assert len(harness.server.requests) == 2
    assert client.cache.get(key).value_json == '{"text":""}'


def test_two_processes_can_write_the_cache_at_once(tmp_path: Path):
    path = tmp_path / "shared" / "cache.sqlite"
    ResponseCache(path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=write_entries, args=(str(path), worker, 150)) for worker in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=60)

    assert [process.exitcode for process in workers] == [0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 300
    assert cache.get("worker1-149").value_json == '{"n": 149}'
