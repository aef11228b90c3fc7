"""What a llama.cpp grammar lets the bundled model write next, asked of llama.cpp itself: a check
on the grammar, independent of which token the model would pick (which depends on the CPU's kernels)."""

from __future__ import annotations

from typing import Any


def allows_after(model: Any, grammar: Any, prefix: str, text: str) -> bool:
    """Whether ``grammar``, having read ``prefix``, lets the one token of ``text`` come next."""
    import llama_cpp
    from llama_cpp import _internals

    from insight_assets.core.llm.providers.grammar_last import grammar_allows

    def tokens(text: str) -> list[int]:
        return model.llama.tokenize(text.encode(), add_bos=False, special=False)

    sampler = _internals.LlamaSampler()
    sampler.add_grammar(model.llama._model, grammar)
    for token in tokens(prefix):
        # llama.cpp aborts the process when a grammar is made to accept a token it refuses.
        if not grammar_allows(sampler, token):
            raise ValueError(f"the grammar refuses the prefix {prefix!r} itself")
        llama_cpp.llama_sampler_accept(sampler.sampler, token)
    [next_token] = tokens(text)
    return grammar_allows(sampler, next_token)
