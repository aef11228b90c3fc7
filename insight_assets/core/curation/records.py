"""The records the curation stages hand each other, and the helpers they share.

Plain frozen dataclasses, so the Dagster layer can store them as rows and the stages can be tested
without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from insight_assets.core.startup.lazy import np

# Question.source / Answer.source: generated from the collection, or from the user's file.
GENERATED = "generated"
USER = "user"

Embed = Callable[[list[str]], "np.ndarray"]
"""Texts to vectors: one row per text, in order; rows need not be normalised."""


@dataclass(frozen=True)
class SourceDocument:
    """One parsed paper: ``text`` is its body text, the reference list already removed."""

    document_id: str
    title: str
    text: str


@dataclass(frozen=True)
class CompressedDocument:
    """A paper reduced to what question and answer generation read.

    ``text`` is the compact rendering of the four fields (see ``render_compressed``), the only part
    of the document later prompts see; ``tokens`` is its length, ``source_tokens`` the length of the
    (possibly cut) body text the compression read.
    """

    document_id: str
    title: str
    main_topics: list[str]
    contributions: list[str]
    conclusions: list[str]
    key_findings: list[str]
    text: str
    tokens: int
    source_tokens: int


@dataclass(frozen=True)
class ItemFailure:
    """One item a stage could not process: a document id, ``"combination <index>"`` or a question
    id, and the error (for combinations prefixed with the task that failed)."""

    item: str
    error: str


@dataclass(frozen=True)
class Question:
    """A curated question. ``document_ids`` are the documents its answer is written from: the
    combination's for generated questions, the user's (possibly none) for user questions."""

    question_id: str
    question: str
    document_ids: tuple[str, ...]
    combination_index: int | None
    source: str  # "generated" or "user"
    user_answer: str | None = None


def question_id(question: str, document_ids: Sequence[str]) -> str:
    """A stable id from the question's text and its documents (in any order)."""
    key = " ".join(question.split()) + "\n" + "\n".join(sorted(document_ids))
    return "q-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def word_count(text: str) -> int:
    return len(text.split())


def render_compressed(
    title: str,
    main_topics: Sequence[str],
    contributions: Sequence[str],
    key_findings: Sequence[str],
    conclusions: Sequence[str],
) -> str:
    """The compact text of a compressed document; empty sections are left out::

    Title: ...
    Main topics: a; b; c
    Contributions:
    - ...
    Key findings:
    - ...
    Conclusions:
    - ...
    """
    lines = [f"Title: {title}"]
    if main_topics:
        lines.append("Main topics: " + "; ".join(main_topics))
    for heading, items in (
        ("Contributions", contributions),
        ("Key findings", key_findings),
        ("Conclusions", conclusions),
    ):
        if items:
            lines.append(f"{heading}:")
            lines.extend(f"- {item}" for item in items)
    return "\n".join(lines)


def rendered_statements(text: str) -> list[str]:
    """The bullet items of a ``render_compressed`` text (contributions, findings, conclusions)."""
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ") and line[2:].strip()]


@dataclass(frozen=True)
class QAPair:
    """A question and its kept answer: what the insight and summary methods start from."""

    question_id: str
    question: str
    answer: str
