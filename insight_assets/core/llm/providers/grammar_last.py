"""Grammar-constrained decoding that checks the grammar on the token picked, not on every token.

llama-cpp-python (0.3.x) puts a task's grammar inside its sampler chain, before the pick: at every
step the grammar is matched against all of the vocabulary (49,152 tokens for SmolLM2), which took
6.5 ms a token on one core beside the model's own 10.5. llama.cpp's own sampler (``common/sampling``,
used by its server and CLI) picks first with the rest of the chain and checks the grammar on that
one token; only a rejected pick is redone with the grammar applied to every token first.

For greedy decoding the answer is the same token by token: the best token overall, when the
grammar allows it, is also the best allowed one. Sampled decoding follows llama.cpp's rule, not
llama-cpp-python's: a draw the grammar refuses is drawn again among the allowed tokens. Without
truncation (top-k, top-p, min-p) that is the same distribution; with it, the first draw was truncated
among all tokens rather than among the allowed ones, and a seed gives other draws either way.

Imported only where llama.cpp is installed and a model is loaded.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals

# The layout of llama.cpp's ``llama_token_data``, to fill the candidates from the logits in numpy.
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def grammar_allows(grammar: Any, token: int) -> bool:
    """Whether the grammar sampler ``grammar`` (a ``LlamaSampler`` holding one grammar), in the state
    the tokens it accepted so far left it, lets ``token`` come next."""
    candidate = llama_cpp.llama_token_data(id=token, logit=1.0, p=0.0)
    candidates = llama_cpp.llama_token_data_array(
        data=ctypes.pointer(candidate), size=1, selected=-1, sorted=False
    )
    llama_cpp.llama_sampler_apply(grammar.sampler, ctypes.byref(candidates))
    return candidate.logit != float("-inf")


class GrammarLastSampler:
    """Samples with ``chain`` (penalties, then the pick), then checks the grammar on the pick.

    Has the one method llama-cpp-python calls on its sampler, ``sample(ctx, idx)``; like llama.cpp's
    ``llama_sampler_sample`` it accepts the token it returns, into the chain and the grammar."""

    def __init__(self, chain: Any, grammar: Any, n_vocab: int):
        self._chain = chain  # llama-cpp-python's LlamaSampler objects, which free themselves
        self._grammar = grammar
        self._n_vocab = n_vocab
        self._buffer = (llama_cpp.llama_token_data * n_vocab)()
        self._candidates = np.frombuffer(self._buffer, dtype=_TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._array = llama_cpp.llama_token_data_array()

    def sample(self, ctx: Any, idx: int = -1) -> int:
        self._load(ctx, idx)
        token = self._pick()
        if not grammar_allows(self._grammar, token):
            self._load(ctx, idx)
            llama_cpp.llama_sampler_apply(self._grammar.sampler, ctypes.byref(self._array))
            token = self._pick()
        llama_cpp.llama_sampler_accept(self._chain.sampler, token)
        llama_cpp.llama_sampler_accept(self._grammar.sampler, token)
        return token

    def _load(self, ctx: Any, idx: int) -> None:
        """Every token with its logit at position ``idx``, as ``llama_sampler_sample`` starts."""
        logits = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        self._candidates["id"] = self._ids  # a chain may have reordered them
        self._candidates["logit"] = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        self._candidates["p"] = 0.0
        self._array.data = ctypes.cast(self._buffer, llama_cpp.llama_token_data_p)
        self._array.size = self._n_vocab
        self._array.selected = -1
        self._array.sorted = False

    def _pick(self) -> int:
        llama_cpp.llama_sampler_apply(self._chain.sampler, ctypes.byref(self._array))
        if self._array.selected < 0:
            raise RuntimeError("llama.cpp's sampler chain selected no token")
        return int(self._array.data[self._array.selected].id)


class GrammarLastLlama(llama_cpp.Llama):
    """``llama_cpp.Llama`` whose grammar, when a call has one, is checked after the pick."""

    def _init_sampler(self, *args: Any, grammar: Any = None, **options: Any) -> Any:
        chain = super()._init_sampler(*args, grammar=None, **options)
        if grammar is None:
            return chain
        checker = _internals.LlamaSampler()
        checker.add_grammar(self._model, grammar)
        return GrammarLastSampler(chain, checker, self._n_vocab)
