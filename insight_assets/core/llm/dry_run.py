"""What a dry run reports: the tokens, cost and (for a local model) time of a task's calls, made by
``LLMClient.dry_run`` and by an ``estimate_only`` client without calling any model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DryRunEstimate:
    """What running a task on some inputs would take. Items already in the cache cost nothing.
    ``output_tokens`` assumes the task's typical answer length; ``max_cost_usd`` assumes every
    answer uses all of ``max_tokens`` (repairs, rarely needed, are not counted). Costs are
    ``None`` when the model has no price."""

    task: str
    provider: str
    model: str
    items: int
    cached_items: int
    input_tokens: int
    output_tokens: int
    max_output_tokens: int
    cost_usd: float | None
    max_cost_usd: float | None
    note: str | None = None
    expected_seconds: float | None = None  # local models: from their speed measured on this machine

    def as_metadata(self) -> dict[str, str | int | float]:
        metadata: dict[str, str | int | float] = {
            "llm_dry_run_task": self.task,
            "llm_dry_run_provider": self.provider,
            "llm_dry_run_model": self.model,
            "llm_dry_run_items": self.items,
            "llm_dry_run_cached_items": self.cached_items,
            "llm_dry_run_input_tokens": self.input_tokens,
            "llm_dry_run_output_tokens": self.output_tokens,
        }
        if self.cost_usd is not None and self.max_cost_usd is not None:
            metadata["llm_dry_run_cost_usd"] = round(self.cost_usd, 6)
            metadata["llm_dry_run_max_cost_usd"] = round(self.max_cost_usd, 6)
        if self.note:
            metadata["llm_dry_run_note"] = self.note
        if self.expected_seconds is not None:
            metadata["llm_dry_run_expected_s"] = round(self.expected_seconds, 1)
        return metadata


@dataclass
class EstimateTally:
    items: int = 0
    cached_items: int = 0
    input_tokens: int = 0
    max_output_tokens: int = 0  # summed per item: a task may size max_tokens to its inputs
