"""Two small tasks for tests against real models: one answers in JSON, one in prose. They have no
offline implementation: a real model must answer them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from insight_assets.core.llm import Task


class Keywords(BaseModel):
    keywords: list[str] = Field(min_length=1, description="Short keywords.")


class Prose(BaseModel):
    text: str = Field(min_length=1)


def _task(folder: Path, name: str, prompt: str, output_model, **extra) -> Task:
    template = folder / f"{name}.txt"
    template.write_text(prompt, encoding="utf-8")
    return Task(name=name, version=1, template=template, output_model=output_model, offline=None, **extra)


def keywords_task(folder: Path) -> Task[Keywords]:
    return _task(
        folder,
        "model_keywords",
        "List three keywords of this sentence: $sentence\n"
        "Reply with one JSON object only, following this JSON schema:\n$output_schema",
        Keywords,
        max_tokens=200,
    )


def prose_task(folder: Path) -> Task[Prose]:
    return _task(
        folder,
        "model_prose",
        "In two sentences, explain what a citation graph is. Topic: $topic",
        Prose,
        text_field="text",
        max_tokens=60,
    )
