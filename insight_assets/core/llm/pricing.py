"""The one price table: USD per million input and output tokens.

Prices are list prices for standard (non-batch, non-cached) requests as published by each provider
around mid-2025; they make cost estimates and budgets, not invoices. A model is found by its exact
name, else by the longest listed name it extends with "-" (so "gpt-4o-mini-2024-07-18" is priced as
"gpt-4o-mini"). An unlisted model has no price: its cost is ``None`` with a note saying so, never a
guess and never a crash. The offline and local providers cost nothing. Each entry also holds the
model's context window, which prompts are fitted to (``window.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .settings import LOCAL, OFFLINE


@dataclass(frozen=True)
class Price:
    """List prices per million tokens, and the model's context window in tokens (``None``: unknown)."""

    input_per_mtok: float
    output_per_mtok: float
    context_tokens: int | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


PRICES: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-4o": Price(2.50, 10.00, 128_000),
        "gpt-4o-mini": Price(0.15, 0.60, 128_000),
        "gpt-4.1": Price(2.00, 8.00, 1_047_576),
        "gpt-4.1-mini": Price(0.40, 1.60, 1_047_576),
        "gpt-4.1-nano": Price(0.10, 0.40, 1_047_576),
        "gpt-5": Price(1.25, 10.00, 400_000),
        "gpt-5-mini": Price(0.25, 2.00, 400_000),
        "gpt-5-nano": Price(0.05, 0.40, 400_000),
        "o3": Price(2.00, 8.00, 200_000),
        "o3-mini": Price(1.10, 4.40, 200_000),
        "o4-mini": Price(1.10, 4.40, 200_000),
    },
    "anthropic": {
        "claude-3-haiku": Price(0.25, 1.25, 200_000),
        "claude-3-5-haiku": Price(0.80, 4.00, 200_000),
        "claude-3-5-sonnet": Price(3.00, 15.00, 200_000),
        "claude-3-7-sonnet": Price(3.00, 15.00, 200_000),
        "claude-haiku-4-5": Price(1.00, 5.00, 200_000),
        "claude-sonnet-4": Price(3.00, 15.00, 200_000),
        "claude-sonnet-4-5": Price(3.00, 15.00, 200_000),
        "claude-opus-4": Price(15.00, 75.00, 200_000),
        "claude-opus-4-1": Price(15.00, 75.00, 200_000),
    },
    "gemini": {
        "gemini-1.5-flash": Price(0.075, 0.30, 1_048_576),
        "gemini-1.5-pro": Price(1.25, 5.00, 2_097_152),
        "gemini-2.0-flash": Price(0.10, 0.40, 1_048_576),
        "gemini-2.0-flash-lite": Price(0.075, 0.30, 1_048_576),
        "gemini-2.5-flash": Price(0.30, 2.50, 1_048_576),
        "gemini-2.5-flash-lite": Price(0.10, 0.40, 1_048_576),
        "gemini-2.5-pro": Price(1.25, 10.00, 1_048_576),
    },
}

_FREE = Price(0.0, 0.0)


def price_for(provider: str, model: str) -> Price | None:
    if provider in (OFFLINE, LOCAL):
        return _FREE
    table = PRICES.get(provider, {})
    if model in table:
        return table[model]
    # Gemini model names may come as "models/gemini-2.0-flash".
    bare = model.removeprefix("models/")
    candidates = [name for name in table if bare == name or bare.startswith(name + "-")]
    return table[max(candidates, key=len)] if candidates else None


def estimate_cost(provider: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = price_for(provider, model)
    return None if price is None else price.cost(input_tokens, output_tokens)


def unpriced_note(provider: str, model: str) -> str:
    return (
        f"no price for {provider} model {model!r}: its cost is unknown (add it to "
        "insight_assets/core/llm/pricing.py PRICES to have it counted)"
    )


def context_window(provider: str, model: str) -> int | None:
    """The model's context window from the price table (``None``: not listed)."""
    price = price_for(provider, model)
    return price.context_tokens if price is not None else None
