"""Grammar-last sampling (``providers/grammar_last.py``) against llama-cpp-python's own sampler, on
the real bundled model: greedy answers are the same token for token, a grammar the model's first
choice breaks is still obeyed, and sampled answers always fit their grammar."""

from __future__ import annotations

import json
import re

import pytest

from insight_assets.core.llm import gguf
from insight_assets.core.llm.grammars import cited_prose
from insight_assets.core.llm.providers.local_gguf import json_schema_grammar
from insight_assets.core.llm.providers.schema_bounds import decoding_schema

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the extra 'local')")
from llama_cpp.llama_grammar import LlamaGrammar

from insight_assets.core.llm.providers.grammar_last import GrammarLastLlama

pytestmark = pytest.mark.local_model

CLAIMS = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": 120},
        "claims": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["summary", "claims"],
}
SCORE = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
}
PASSAGE = (
    "Citation graphs connect research papers that cite one another. Clustering the graph groups "
    "papers by theme, and the links between clusters suggest insights that no single paper states."
)


def _load(model_class):
    return model_class(model_path=str(gguf.bundled_model()), n_ctx=1024, n_threads=1, seed=42, verbose=False)


@pytest.fixture(scope="module")
def models():
    stock, ours = _load(llama_cpp.Llama), _load(GrammarLastLlama)
    yield stock, ours
    stock.close()
    ours.close()


def _answer(model, prompt: str, grammar, *, temperature=0.0, max_tokens=80, seed=42) -> str:
    model.reset()
    reply = model.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        grammar=grammar,
        temperature=temperature,
        frequency_penalty=0.5,
        max_tokens=max_tokens,
        seed=seed,
    )
    return reply["choices"][0]["message"]["content"]


def _json_grammar(schema: dict):
    return LlamaGrammar.from_string(json_schema_grammar(decoding_schema(schema)), verbose=False)


@pytest.mark.parametrize(
    ("prompt", "grammar"),
    [
        (f"Summarize in JSON with claims:\n{PASSAGE}", lambda: _json_grammar(CLAIMS)),
        (f"Rate the clarity of this text from 1 to 5, in JSON:\n{PASSAGE}", lambda: _json_grammar(SCORE)),
        (
            f"Explain this, citing [S1] and [S2]:\n[S1] {PASSAGE}\n[S2] Themes link papers.",
            lambda: LlamaGrammar.from_string(cited_prose(["S1", "S2"]), verbose=False),
        ),
        (f"Summarize:\n{PASSAGE}", lambda: None),
    ],
    ids=["json-claims", "json-score", "cited-prose", "no-grammar"],
)
def test_greedy_answers_are_the_same_as_llama_cpp_pythons_own_sampler(models, prompt, grammar):
    stock, ours = models

    assert _answer(ours, prompt, grammar()) == _answer(stock, prompt, grammar())


def test_a_grammar_the_models_first_choice_breaks_is_obeyed(models):
    """Asked to greet, the model would not start with "banana": every step's pick is rejected by the
    grammar and picked again among the tokens it allows."""
    stock, ours = models
    grammar = 'root ::= "banana" [0-9] [0-9]'
    prompt = "Say hello to the reader."
    assert not _answer(stock, prompt, None, max_tokens=3).lower().startswith("banana")

    answer = _answer(ours, prompt, LlamaGrammar.from_string(grammar, verbose=False))

    assert re.fullmatch(r"banana[0-9][0-9]", answer)
    assert answer == _answer(stock, prompt, LlamaGrammar.from_string(grammar, verbose=False))


def test_sampled_answers_always_fit_their_grammar(models):
    _, ours = models
    answers = [
        _answer(
            ours,
            f"Rate this from 1 to 5, in JSON:\n{PASSAGE}",
            _json_grammar(SCORE),
            temperature=1.0,
            seed=seed,
        )
        for seed in range(4)
    ]

    for answer in answers:
        value = json.loads(answer)
        assert set(value) == {"score", "reason"} and isinstance(value["score"], int)
        assert isinstance(value["reason"], str)
    assert len(set(answers)) > 1  # sampled, not greedy
