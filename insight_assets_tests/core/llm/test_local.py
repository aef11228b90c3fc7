"""Provider ``local`` with the real bundled model (SmolLM2-135M through llama.cpp): structured and
prose answers, the ledger and cache, the context window, and bad model files."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from pathlib import Path

import pytest

from insight_assets.core.llm import (
    CallLedger,
    ConfigurationError,
    LLMClient,
    LLMSettings,
    ResponseCache,
    Task,
    gguf,
)
from insight_assets.core.llm.cache import DEFAULT_CACHE_FILE
from insight_assets.core.llm.grammars import cited_prose
from insight_assets.core.llm.providers import Message
from insight_assets.core.llm.providers.local_gguf import LocalProvider
from insight_assets.core.llm.providers.schema_bounds import DECODING_MAX_ITEMS, decoding_schema
from insight_assets.core.llm.settings import LOCAL
from insight_assets_tests.core.llm import model_tasks
from insight_assets_tests.core.llm.grammar_checks import allows_after
from insight_assets_tests.core.llm.model_tasks import Keywords

pytestmark = pytest.mark.local_model

MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"


@pytest.fixture
def keywords_task(tmp_path: Path) -> Task:
    return model_tasks.keywords_task(tmp_path)


def _client(tmp_path: Path, **settings) -> LLMClient:
    data = tmp_path / "data"
    return LLMClient(
        LLMSettings(provider=LOCAL, **settings),
        cache=ResponseCache.in_data_dir(data),
        ledger=CallLedger.in_data_dir(data),
    )


def test_a_structured_task_decodes_under_its_schema_and_is_cached_and_recorded(tmp_path, keywords_task):
    client = _client(tmp_path)
    sentence = "Transformers use self-attention to relate distant words in long documents."

    answer = client.run(keywords_task, sentence=sentence)

    assert answer.keywords and all(isinstance(word, str) for word in answer.keywords)
    assert client.writer_label(keywords_task) == f"local/{MODEL_NAME}"
    [row] = client.rows
    assert (row.provider, row.model, row.status, row.cost_usd) == (LOCAL, MODEL_NAME, "ok", 0.0)
    assert row.input_tokens > 20 and 0 < row.output_tokens <= 200 and row.latency_s > 0
    [(value_json,)] = _cached_values(tmp_path)
    assert Keywords.model_validate_json(value_json) == answer
    # The same question again is answered from the cache, without the model.
    again = _client(tmp_path)
    assert again.run(keywords_task, sentence=sentence) == answer
    assert [row.cache_hit for row in again.rows] == [True]


def _cached_values(tmp_path: Path) -> list[tuple[str]]:
    with sqlite3.connect(tmp_path / "data" / DEFAULT_CACHE_FILE) as connection:
        return connection.execute("SELECT value_json FROM responses").fetchall()


def test_a_prose_task_is_written_freely_within_its_max_tokens(tmp_path):
    task = model_tasks.prose_task(tmp_path)
    client = _client(tmp_path)

    batch = client.run_many(task, [{"topic": "research papers"}])

    [item] = batch.items
    assert item.ok and len(item.value.text.split()) >= 5
    assert item.finish_reason in ("stop", "length")
    assert client.rows[0].output_tokens <= 60


def test_a_prompt_longer_than_the_window_is_a_context_too_long_row(tmp_path, keywords_task):
    client = _client(tmp_path, context_tokens=512)
    long_sentence = "Attention relates words. " * 200

    batch = client.run_many(keywords_task, [{"sentence": long_sentence}, {"sentence": "Graphs link papers."}])

    too_long, short = batch.items
    assert too_long.status == "failed" and too_long.error.startswith("context_too_long")
    assert "context window of 512" in too_long.error
    assert short.ok
    assert len(ResponseCache.in_data_dir(tmp_path / "data")) == 1


def test_a_missing_model_path_is_one_clear_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-model.gguf"
    with pytest.raises(ConfigurationError, match=f"local model '{missing}' does not exist"):
        LLMSettings(provider=LOCAL, model=str(missing)).check_ready()


def test_a_file_that_is_not_a_gguf_is_refused_before_any_call(tmp_path):
    text = tmp_path / "notes.gguf"
    text.write_text("these are not model weights\n" * 10)
    with pytest.raises(ConfigurationError, match="is not a GGUF file"):
        LLMSettings(provider=LOCAL, model=str(text)).check_ready()


def test_a_truncated_gguf_fails_clearly_and_caches_nothing(tmp_path, keywords_task):
    truncated = tmp_path / "truncated.gguf"
    with gguf.bundled_model().open("rb") as source:
        truncated.write_bytes(source.read(2_000_000))
    client = _client(tmp_path, model=str(truncated))
    client.settings.check_ready()  # the header is intact: only loading can tell

    with pytest.raises(ConfigurationError, match=f"local model '{truncated}' could not be loaded"):
        client.run(keywords_task, sentence="Graphs link papers.")

    assert len(ResponseCache.in_data_dir(tmp_path / "data")) == 0


def test_open_lists_are_bounded_for_decoding_only():
    schema = Keywords.model_json_schema()
    bounded = decoding_schema(schema)
    assert bounded["properties"]["keywords"]["maxItems"] == DECODING_MAX_ITEMS
    assert "maxItems" not in schema["properties"]["keywords"]
    nested = decoding_schema({"type": "array", "minItems": 20, "items": {"type": "array", "maxItems": 2}})
    assert nested["maxItems"] == 20 and nested["items"]["maxItems"] == 2
    assert json.dumps(decoding_schema({"type": "string"})) == '{"type": "string"}'


def test_small_integer_ranges_are_decoded_as_their_values(tmp_path):
    """The converter ignores minimum and maximum; their values, enumerated, it follows."""
    schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5}}}
    assert decoding_schema(schema)["properties"]["score"]["enum"] == [0, 1, 2, 3, 4, 5]
    assert "enum" not in decoding_schema({"type": "integer", "minimum": 0, "maximum": 10**6})
    assert "enum" not in decoding_schema({"type": "integer", "minimum": 1})
    assert "enum" not in decoding_schema({"type": "number", "minimum": 0, "maximum": 5})
    model = LocalProvider(gguf.bundled_model(), context_cap=None, threads=None).model
    grammar = model.grammar(schema)
    assert allows_after(model, grammar, '{"score": ', "5")
    assert not allows_after(model, grammar, '{"score": ', "6")


def test_a_schema_whose_grammar_llama_cpp_rejects_falls_back_to_any_json_instead_of_crashing(tmp_path):
    # llama-cpp-python's converter writes this pattern's "\." into a GBNF string llama.cpp cannot
    # parse; used as it is, the process dies with a segmentation fault when sampling starts.
    task = model_tasks.keywords_task(tmp_path)
    schema = {
        "type": "object",
        "properties": {"keywords": {"type": "array", "items": {"type": "string", "pattern": r"^[a-z]+\.$"}}},
        "required": ["keywords"],
    }
    provider = LocalProvider(gguf.bundled_model(), context_cap=None, threads=None)
    params = dataclasses.replace(LLMSettings(provider=LOCAL).params_for(task), json_schema=schema)

    reply = provider.complete([Message("user", task.render({"sentence": "Graphs link papers."}))], params)

    assert isinstance(json.loads(reply.text), dict | list)


def test_json_strings_are_decoded_without_the_raw_newlines_json_forbids(tmp_path):
    """llama-cpp-python's schema converter lets raw control characters into a JSON string: asked to
    rate a poem, SmolLM2 copied its lines into the reason, newlines and all, and the reply failed to
    parse. Whether it does depends on the CPU's kernels (it did with AVX-512, not with AVX2 alone), so
    the grammars are checked on the newline itself; under ours the model's rating parses."""
    from llama_cpp.llama_grammar import LlamaGrammar

    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer"}, "reason": {"type": "string"}},
        "required": ["score", "reason"],
    }
    provider = LocalProvider(gguf.bundled_model(), context_cap=None, threads=None)
    inside_a_string = '{"score": 3, "reason": "Roses are red,'
    converted = LlamaGrammar.from_json_schema(json.dumps(decoding_schema(schema)), verbose=False)
    ours = provider.model.grammar(schema)
    assert allows_after(provider.model, converted, inside_a_string, "\n")
    assert allows_after(provider.model, ours, inside_a_string, " blue")
    assert not allows_after(provider.model, ours, inside_a_string, "\n")

    prompt = "Rate this poem in JSON:\nRoses are red,\nviolets are blue,\npapers cite papers,\nand so do you."
    params = dataclasses.replace(
        LLMSettings(provider=LOCAL).params_for(model_tasks.keywords_task(tmp_path)), json_schema=schema
    )
    reply = provider.complete([Message("user", prompt)], params)

    assert set(json.loads(reply.text)) == {"score", "reason"}


def test_cited_prose_is_a_grammar_llama_cpp_accepts_and_the_model_cites_only_given_aliases(tmp_path):
    provider = LocalProvider(gguf.bundled_model(), context_cap=None, threads=None)
    grammar = cited_prose(["S1", "S2"])
    assert provider.model.grammar(gbnf=grammar) is not None  # parsed by llama.cpp, not dropped
    task = model_tasks.prose_task(tmp_path)
    params = dataclasses.replace(LLMSettings(provider=LOCAL).params_for(task), text_grammar=grammar)

    reply = provider.complete([Message("user", "Explain citation graphs, citing [S1] and [S2].")], params)

    cited = re.findall(r"\[([^\]]*)\]", reply.text)
    assert cited and all(set(group.split(", ")) <= {"S1", "S2"} for group in cited)


def test_a_choice_task_reads_the_options_probabilities_from_the_models_logits(tmp_path, keywords_task):
    """G-Eval's score form: the local model gives the probability of each score token (summing to
    one over the options), cached like any answer; a sampled answer still works after it."""
    from insight_assets.core.methods.xsum.tasks import GEVAL_COVERAGE_PROBABILITIES

    client = _client(tmp_path)
    assert client.reads_token_probabilities(GEVAL_COVERAGE_PROBABILITIES)
    reference = "Transformers rely on self-attention. They replaced recurrent networks in translation."

    value = client.run(GEVAL_COVERAGE_PROBABILITIES, reference=reference, summary="Cats sleep a lot.")

    assert set(value.probabilities) == {"1", "2", "3", "4", "5"}
    assert abs(sum(value.probabilities.values()) - 1) < 1e-3 and len(set(value.probabilities.values())) > 1
    assert 1 <= value.expectation <= 5
    [row] = client.rows
    assert row.status == "ok" and row.output_tokens == 1 and row.input_tokens > 50
    again = _client(tmp_path)
    assert again.run(GEVAL_COVERAGE_PROBABILITIES, reference=reference, summary="Cats sleep a lot.") == value
    assert again.run(keywords_task, sentence="Graphs link papers through citations.").keywords


def test_score_probabilities_after_a_shared_prompt_prefix_are_those_of_a_fresh_evaluation(tmp_path):
    """G-Eval's prompts for two summaries of one reference share everything up to the summary: the
    second reuses the model's cache of that prefix, and reads the same probabilities as when the
    model starts from nothing. The same prompt twice, and prompts sharing nothing, too."""
    from insight_assets.core.methods.xsum.tasks import GEVAL_COVERAGE_PROBABILITIES as task

    provider = LocalProvider(gguf.bundled_model(), context_cap=None, threads=None)
    params = LLMSettings(provider=LOCAL).params_for(task)
    reference = "Transformers rely on self-attention. They replaced recurrent networks in translation."
    first, second = (
        [Message("user", task.render({"reference": reference, "summary": summary}))]
        for summary in ("Cats sleep a lot.", "Self-attention replaced recurrence in translation.")
    )
    other = [Message("user", "Rate from 1 to 5 how formal this is: hello there.")]

    def fresh(messages):
        provider.model.llama.reset()
        return provider.complete(messages, params).text

    expected = {
        name: json.loads(fresh(messages)) for name, messages in (("second", second), ("other", other))
    }
    fresh(first)
    after_shared_prefix = json.loads(provider.complete(second, params).text)
    after_same_prompt = json.loads(provider.complete(second, params).text)
    after_other_prompt = json.loads(provider.complete(other, params).text)

    assert (after_shared_prefix, after_same_prompt, after_other_prompt) == (
        expected["second"],
        expected["second"],
        expected["other"],
    )
