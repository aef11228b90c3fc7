"""The literature database (§3.1, Figure 1): each paper's parts located by heading, then summarized
by the tasks into keywords, a one-sentence summary, a background (two motivations), ideas (three
details), a concise method, and its references within the collection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.sections import SectionSpan, find_section, section_spans

from ...text import cut_to_tokens
from .tasks import SCIPIP_DIGEST, SCIPIP_ENTITIES, SCIPIP_METHOD

if TYPE_CHECKING:
    from insight_assets.core.ingestion.documents import ParsedDocument

    from ...llm import LLMClient

INTRODUCTION_NAMES = ("introduction", "motivation")
# A method section's name, tried in order; without one, the first section after the introduction
# that is not related work or background.
METHOD_NAMES = ("method", "approach", "proposed", "our ", "model", "framework", "architecture", "system")
NOT_METHOD = ("related", "background", "preliminar", "abstract", "introduction", "motivation")
# What a task reads of a part, at most: the introduction and the method section are long.
PART_TOKENS = 1500


@dataclass(frozen=True)
class PaperParts:
    """The parts of one paper the summary tasks read, and where they are in its text."""

    doc_id: str
    title: str
    abstract: str
    introduction: str
    methodology: str
    introduction_span: tuple[int, int] | None
    method_span: tuple[int, int] | None


@dataclass(frozen=True)
class PaperSummary:
    doc_id: str
    title: str
    keywords: tuple[str, ...]
    summary: str
    background: str  # the two motivations, numbered as the paper's Table 5 output
    ideas: str  # the three details
    method: str
    cited_doc_ids: tuple[str, ...]  # the collection papers it cites
    status: str = "ok"
    error: str | None = None


def _span(span: SectionSpan | None) -> tuple[int, int] | None:
    return (span.body_start, span.end) if span else None


def method_section(spans: Sequence[SectionSpan]) -> SectionSpan | None:
    top = [s for s in spans if s.level == 1]
    named = find_section([s for s in top if not s.name.startswith(NOT_METHOD)], METHOD_NAMES)
    if named is not None:
        return named
    introduction = find_section(top, INTRODUCTION_NAMES)
    after = [s for s in top if introduction is None or s.start > introduction.start]
    return next((s for s in after if not s.name.startswith(NOT_METHOD)), None)


def paper_parts(document: ParsedDocument) -> PaperParts:
    """The title, abstract, introduction and method section of ``document``; a part not found by
    its heading is empty (the introduction falls back to the body's opening)."""
    spans = section_spans(document.text, document.sections, document.body_end)
    introduction = find_section(spans, INTRODUCTION_NAMES)
    method = method_section(spans)
    intro_text = (
        document.readable(introduction.body_start, introduction.end)
        if introduction
        else document.readable()[: len(document.abstract) * 3 or 4000]
    )
    return PaperParts(
        doc_id=document.doc_id,
        title=document.title,
        abstract=document.abstract,
        introduction=cut_to_tokens(intro_text, PART_TOKENS),
        methodology=cut_to_tokens(document.readable(method.body_start, method.end), PART_TOKENS)
        if method
        else "",
        introduction_span=_span(introduction),
        method_span=_span(method),
    )


def _numbered(items: Sequence[str]) -> str:
    return " ".join(f"{n}. {item.strip().rstrip('.')}." for n, item in enumerate(items, start=1))


def summarize_papers(
    client: LLMClient, parts: Sequence[PaperParts], references: Mapping[str, Sequence[str]]
) -> list[PaperSummary]:
    """Every paper's summary; a paper whose digest or entities call failed is a failed row with
    the reason (a failed method call leaves its method empty and says so)."""
    digests, entities, methods = client.run_together(
        [
            (
                SCIPIP_DIGEST,
                [{"title": p.title, "abstract": p.abstract, "introduction": p.introduction} for p in parts],
            ),
            (SCIPIP_ENTITIES, [{"content": f"{p.title}\n{p.abstract or p.introduction}"} for p in parts]),
            (SCIPIP_METHOD, [{"methodology": p.methodology or p.introduction} for p in parts]),
        ]
    )
    found = []
    for paper, digest, entity, method in zip(
        parts, digests.items, entities.items, methods.items, strict=True
    ):
        cited = tuple(references.get(paper.doc_id, ()))
        failed = [(name, r) for name, r in (("digest", digest), ("entities", entity)) if not r.ok]
        if failed:
            reason = "; ".join(f"{name}: {r.error or r.status}" for name, r in failed)
            found.append(PaperSummary(paper.doc_id, paper.title, (), "", "", "", "", cited, "failed", reason))
            continue
        found.append(
            PaperSummary(
                doc_id=paper.doc_id,
                title=paper.title,
                keywords=tuple(dict.fromkeys(e.lower() for e in entity.value.entities)),
                summary=digest.value.summary.strip(),
                background=_numbered(digest.value.motivations),
                ideas=_numbered(digest.value.details),
                method=method.value.method.strip() if method.ok else "",
                cited_doc_ids=cited,
                error=None if method.ok else f"method: {method.error or method.status}",
            )
        )
    return found
