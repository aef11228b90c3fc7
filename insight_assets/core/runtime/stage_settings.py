"""Settings as a stage takes them (see ``core/runtime/stage.py``): pydantic models, each default, bound and
description written once; the Dagster config of a stage's asset is generated from its model
(``defs/stage_assets.py``), and a name that is not a field is an error."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from insight_assets.core.llm import Task, TaskParams
from insight_assets.core.startup.lazy import LazyModel

__all__ = ["JudgeModel", "JudgedSettings", "Settings", "StageSettings", "settings_problems"]


class Settings(LazyModel):
    """Settings as people write them: a name that is not a field is an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StageSettings(Settings):
    """What every model-calling stage takes: overrides of the configured model for the stage's
    tasks (unset: the `llm` resource's, or the task's own default). A stage's settings add its own."""

    model: str | None = Field(default=None, description="Model for this asset's tasks.")
    temperature: float | None = Field(default=None, description="Sampling temperature.")
    top_p: float | None = Field(default=None, description="Nucleus sampling: the probability mass kept.")
    max_tokens: int | None = Field(default=None, description="Longest answer, in tokens.")
    timeout_s: float | None = Field(default=None, description="Seconds to wait for one answer.")
    max_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Calls at once inside this asset, at most the provider's limit (the llm resource's max_concurrency).",
    )

    def task_overrides(self, tasks: tuple[Task[Any], ...]) -> dict[str, TaskParams]:
        """These values for each of ``tasks``."""
        params = TaskParams(
            model=self.model,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
        )
        return {task.name: params for task in tasks}


class JudgeModel(Settings):
    """One judge: a name for the report and, optionally, another provider or model than the `llm`
    resource's (its key from `api_key_env`, by default the provider's usual variable). An empty
    name: the stage names the judge after its model."""

    name: str = ""
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None


class JudgedSettings(StageSettings):
    """A judging stage's settings: one judge, which may be another model than the generator's."""

    judge_provider: str | None = Field(
        default=None, description="Judge provider; unset: the `llm` resource's."
    )
    judge_model: str | None = Field(default=None, description="Judge model; unset: the provider's default.")
    judge_base_url: str | None = Field(default=None, description="Judge server (openai-compatible).")
    judge_api_key_env: str | None = Field(
        default=None, description="Environment variable of the judge's key."
    )

    def panel(self) -> list[JudgeModel]:
        """The judges this stage runs: the one its ``judge_*`` fields name."""
        return [
            JudgeModel(
                provider=self.judge_provider,
                model=self.judge_model,
                base_url=self.judge_base_url,
                api_key_env=self.judge_api_key_env,
            )
        ]


def settings_problems(error: ValidationError) -> str:
    """A settings model's refusal in one line: each field and what is wrong with it."""
    problems = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)
