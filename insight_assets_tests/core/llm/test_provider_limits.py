"""One limit of calls in flight per provider, shared by every client and process, adaptive on 429s
and rate-limit headers; failures recorded so that a rebuild does not pay for them again."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from insight_assets.core.llm import SUMMARIZE_PASSAGES, InvalidOutputError, LLMSettings
from insight_assets.core.llm.concurrency import ProviderLimiter, shared_limiter
from insight_assets.core.llm.rate_limits import RateLimitHint, parse_rate_limit_headers
from insight_assets.core.llm.spending import Spent, spending
from insight_assets_tests.fake_model_server import Failure, Reply

from .conftest import PASSAGES, VALID_ANSWER, Harness

ITEMS = [{"question": f"Question {n}?", "passages": PASSAGES} for n in range(40)]


def test_a_hosted_provider_gets_16_calls_at_once_a_local_model_one():
    assert LLMSettings(provider="openai", api_key="k").concurrency == 16
    assert LLMSettings(provider="openai-compatible", model="m", base_url="http://h/v1").concurrency == 16
    assert LLMSettings(provider="local").concurrency == 1
    assert LLMSettings(provider="openai", api_key="k", max_concurrency=40).concurrency == 40


def test_a_hosted_batch_fills_the_providers_default_limit(harness: Harness):
    # As long as a hosted model takes: the client's own work for a call (about 25 ms on 2 cores) is
    # then small beside the wait, and all 16 are out before the first answer comes.
    harness.server.default = Reply(VALID_ANSWER, delay_s=1.0)

    batch = harness.client("openai-compatible", cache=False).run_many(SUMMARIZE_PASSAGES, ITEMS[:32])

    assert [item.status for item in batch.items] == ["ok"] * 32
    assert harness.server.max_in_flight == 16


def test_clients_of_one_provider_share_its_limit(harness: Harness):
    """Two steps (two clients, each with its own batch) never have more than the provider's limit
    in flight together."""
    harness.server.default = Reply(VALID_ANSWER, delay_s=0.2)
    clients = [harness.client("openai", cache=False, max_concurrency=3) for _ in range(2)]
    results = []

    def step(client) -> None:
        results.append(client.run_many(SUMMARIZE_PASSAGES, ITEMS[:9]))

    threads = [threading.Thread(target=step, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(item.status for batch in results for item in batch.items) == ["ok"] * 18
    assert harness.server.max_in_flight == 3


def test_a_429_halves_the_limit_holds_new_calls_for_retry_after_and_it_climbs_back(harness: Harness):
    harness.server.default = Reply(VALID_ANSWER, delay_s=0.05)
    harness.server.queue(
        Failure(429, "rate limited", {"retry-after-ms": "300", "x-ratelimit-remaining-requests": "0"})
    )
    client = harness.client("openai", cache=False, max_concurrency=8)

    batch = client.run_many(SUMMARIZE_PASSAGES, ITEMS)

    assert [item.status for item in batch.items] == ["ok"] * 40
    stats = client.limiter.stats()
    assert stats.rate_limited == 1
    # Halved to 4, then each success adds 1/limit: back up to the ceiling (22 answers from 4 to 8).
    assert stats.limit_now == pytest.approx(8.0)
    arrivals = sorted(request.received_at for request in harness.server.requests)
    refused_at = arrivals[0]
    # No request reached the server within the Retry-After of the refused one but those already sent.
    early = [t for t in arrivals[1:] if refused_at + 0.01 < t < refused_at + 0.3]
    assert len(early) < 8


def test_the_limit_follows_the_remaining_requests_the_server_reports():
    limiter = ProviderLimiter(16)

    limiter.succeeded(RateLimitHint(remaining_requests=2))
    assert limiter.stats().limit_now == 2.0
    limiter.rate_limited(RateLimitHint())
    assert limiter.stats().limit_now == 1.0
    for _ in range(3):
        limiter.succeeded()
    assert 1.0 < limiter.stats().limit_now <= 4.0


def test_rate_limit_headers_of_openai_and_anthropic_are_read():
    soon = (datetime.now(UTC) + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")

    openai = parse_rate_limit_headers(
        {
            "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-requests": "1s",
            "x-ratelimit-reset-tokens": "6m0.5s",
        }
    )
    anthropic = parse_rate_limit_headers(
        {"anthropic-ratelimit-requests-remaining": "3", "anthropic-ratelimit-requests-reset": soon}
    )

    assert openai == RateLimitHint(59, 0, 1.0, 360.5, None)
    assert openai.pause_s() == 360.5  # the tokens are used up until their reset
    assert anthropic.remaining_requests == 3 and 25 < anthropic.reset_requests_s <= 30
    assert parse_rate_limit_headers({"content-type": "application/json"}) is None


def test_processes_share_the_limit_through_slot_files(tmp_path):
    """Two limiters on one slot folder (as two processes would have) hold at most its limit."""
    first, second = (ProviderLimiter(2, slot_dir=tmp_path / "slots") for _ in range(2))
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def call(limiter: ProviderLimiter) -> None:
        with limiter.slot():
            with lock:
                in_flight[0] += 1
                most[0] = max(most[0], in_flight[0])
            time.sleep(0.05)
            with lock:
                in_flight[0] -= 1

    threads = [threading.Thread(target=call, args=(limiter,)) for limiter in (first, second) * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert most[0] == 2


def test_one_limiter_per_endpoint_in_a_process():
    one = shared_limiter("openai", "https://api.example/v1/", 16)

    assert shared_limiter("openai", "https://api.example/v1", 16) is one
    assert shared_limiter("openai", "https://other.example/v1", 16) is not one
    assert shared_limiter("openai", "https://api.example/v1", 20) is one and one.limit == 20


def test_an_answer_invalid_after_its_repair_is_not_bought_again(harness: Harness):
    harness.server.queue(Reply("no json here"), Reply('{"summary": 3}'))
    with pytest.raises(InvalidOutputError):
        harness.client("openai").run(SUMMARIZE_PASSAGES, **ITEMS[0])

    rebuild = harness.client("openai")
    item = rebuild.run_many(SUMMARIZE_PASSAGES, ITEMS[:1]).items[0]

    assert item.status == "failed" and "not asked again" in item.error and "--retry-failed" in item.error
    assert len(harness.server.requests) == 2
    summary = rebuild.summary()
    assert (summary.provider_calls, summary.failed_items, summary.failures_to_retry) == (0, 1, 0)


def test_retry_failed_asks_again_and_a_valid_answer_replaces_the_record(harness: Harness):
    harness.server.queue(Reply("no json here"), Reply('{"summary": 3}'), Reply(VALID_ANSWER))
    with pytest.raises(InvalidOutputError):
        harness.client("openai").run(SUMMARIZE_PASSAGES, **ITEMS[0])

    retried = harness.client("openai", retry_failed=True).run_many(SUMMARIZE_PASSAGES, ITEMS[:1]).items[0]
    after = harness.client("openai").run_many(SUMMARIZE_PASSAGES, ITEMS[:1]).items[0]

    assert retried.status == after.status == "ok"
    assert json.loads(VALID_ANSWER)["summary"] == after.value.summary
    assert len(harness.server.requests) == 3


def test_a_server_error_is_not_recorded_the_next_build_asks_again(harness: Harness):
    harness.server.queue(*[Failure(503, "overloaded")] * 4, Reply(VALID_ANSWER))
    first = harness.client("openai", max_retries=3).run_many(SUMMARIZE_PASSAGES, ITEMS[:1])
    assert first.items[0].status == "failed"
    client = harness.client("openai", max_retries=3)

    again = client.run_many(SUMMARIZE_PASSAGES, ITEMS[:1])

    assert again.items[0].status == "ok"
    assert client.summary().provider_calls == 1


def test_independent_batches_go_out_together(harness: Harness):
    """Two batches of 3 run at once: 6 calls in flight, not 3 then 3."""
    harness.server.default = Reply(VALID_ANSWER, delay_s=0.5)
    client = harness.client("openai", cache=False)

    first, second = client.run_together([(SUMMARIZE_PASSAGES, ITEMS[:3]), (SUMMARIZE_PASSAGES, ITEMS[3:6])])

    assert [item.status for item in (*first.items, *second.items)] == ["ok"] * 6
    assert harness.server.max_in_flight == 6


def test_work_side_by_side_goes_out_together_and_each_piece_is_charged_its_own_calls(harness: Harness):
    """Two methods' work on one client (3 calls, then 2 of another batch) runs at once: 5 in flight,
    and each tally counts only its own calls, the tally around both counts all of them."""
    harness.server.default = Reply(VALID_ANSWER, delay_s=0.5)
    client = harness.client("openai", cache=False)
    tallies: dict[str, Spent] = {}

    def method(name: str, items: list) -> int:
        with spending() as tallies[name]:
            return len(client.run_many(SUMMARIZE_PASSAGES, items).items)

    with spending() as both:
        counts = client.side_by_side(
            [lambda: method("first", ITEMS[:3]), lambda: method("second", ITEMS[3:5])]
        )

    assert counts == [3, 2]
    assert harness.server.max_in_flight == 5
    assert (tallies["first"].calls, tallies["second"].calls, both.calls) == (3, 2, 5)


def test_the_same_request_from_work_side_by_side_is_paid_for_once(harness: Harness):
    """Two pieces of work asking one request at the same moment: the provider is asked once, the
    second reads the first's answer from the cache."""
    harness.server.default = Reply(VALID_ANSWER, delay_s=0.5)
    client = harness.client("openai")

    first, second = client.side_by_side(
        [
            lambda: client.run_many(SUMMARIZE_PASSAGES, ITEMS[:1]),
            lambda: client.run_many(SUMMARIZE_PASSAGES, ITEMS[:1]),
        ]
    )

    assert [first.items[0].status, second.items[0].status] == ["ok", "ok"]
    assert first.items[0].value == second.items[0].value
    assert len(harness.server.requests) == 1
    assert sorted(row.cache_hit for row in client.rows) == [False, True]


def test_a_dry_run_prices_work_side_by_side_one_piece_after_another(harness: Harness):
    """A dry run waits on nothing and its plan stays in order: the pieces run in order, in the
    caller's thread."""
    client = harness.client("openai", estimate_only=True)
    ran: list[tuple[str, int]] = []

    client.side_by_side(
        [lambda: ran.append(("a", threading.get_ident())), lambda: ran.append(("b", threading.get_ident()))]
    )

    assert ran == [("a", threading.get_ident()), ("b", threading.get_ident())]
