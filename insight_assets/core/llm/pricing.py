"""The one price table: USD per million input and output tokens.

Prices are list prices for standard (non-batch, non-cached) requests as published by each provider
around mid-2025; they make cost estimates and budgets, not invoices. A model is found by its exact
name, else by the longest listed name it extends with "-" (so "gpt-4o-mini-2024-07-18" is priced as
"gpt-4o-mini"). An unlisted model has no price: its cost is ``None`` with a note saying so, never a
guess and never a crash. The offline provider costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .settings import OFFLINE


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


PRICES: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4.1-nano": Price(0.10, 0.40),
        "gpt-5": Price(1.25, 10.00),
        "gpt-5-mini": Price(0.25, 2.00),
        "gpt-5-nano": Price(0.05, 0.40),
        "o3": Price(2.00, 8.00),
        "o3-mini": Price(1.10, 4.40),
        "o4-mini": Price(1.10, 4.40),
    },
    "anthropic": {
        "claude-3-haiku": Price(0.25, 1.25),
        "claude-3-5-haiku": Price(0.80, 4.00),
        "claude-3-5-sonnet": Price(3.00, 15.00),
        "claude-3-7-sonnet": Price(3.00, 15.00),
        "claude-haiku-4-5": Price(1.00, 5.00),
        "claude-sonnet-4": Price(3.00, 15.00),
        "claude-sonnet-4-5": Price(3.00, 15.00),
        "claude-opus-4": Price(15.00, 75.00),
        "claude-opus-4-1": Price(15.00, 75.00),
    },
    "gemini": {
        "gemini-1.5-flash": Price(0.075, 0.30),
        "gemini-1.5-pro": Price(1.25, 5.00),
        "gemini-2.0-flash": Price(0.10, 0.40),
        "gemini-2.0-flash-lite": Price(0.075, 0.30),
        "gemini-2.5-flash": Price(0.30, 2.50),
        "gemini-2.5-flash-lite": Price(0.10, 0.40),
        "gemini-2.5-pro": Price(1.25, 10.00),
    },
}

_FREE = Price(0.0, 0.0)


def price_for(provider: str, model: str) -> Price | None:
    if provider == OFFLINE:
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
