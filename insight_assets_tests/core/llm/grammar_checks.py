"""What a llama.cpp grammar lets the bundled model write next, asked of llama.cpp itself: a check
on the grammar, independent of which token the model would pick (which depends on the CPU's kernels)."""

from __future__ import annotations

import ctypes
from typing import Any


def allows_after(model: Any, grammar: Any, prefix: str, text: str) -> bool:
    """Whether ``grammar``, having read ``prefix``, lets the one token of ``text`` come next."""
    import llama_cpp
    from llama_cpp import _internals

    def tokens(text: str) -> list[int]:
        return model.llama.tokenize(text.encode(), add_bos=False, special=False)

    def allowed(token: int) -> bool:
        candidate = llama_cpp.llama_token_data(id=token, logit=1.0, p=0.0)
        candidates = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(candidate), size=1, selected=-1, sorted=False
        )
        llama_cpp.llama_sampler_apply(sampler.sampler, ctypes.byref(candidates))
        return candidate.logit != float("-inf")

    sampler = _internals.LlamaSampler()
    sampler.add_grammar(model.llama._model, grammar)
    for token in tokens(prefix):
        # llama.cpp aborts the process when a grammar is made to accept a token it refuses.
        if not allowed(token):
            raise ValueError(f"the grammar refuses the prefix {prefix!r} itself")
        llama_cpp.llama_sampler_accept(sampler.sampler, token)
    [next_token] = tokens(text)
    return allowed(next_token)
