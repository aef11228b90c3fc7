"""Human-written paragraphs about a collection's papers: a collection paper's related-work section
(or, without one, its introduction) that cites other papers of the collection.

Such a section is a reference written by the field's own authors about those papers, so methods
score what they generate about the cited papers against it (XSum's summaries, ConTReGen's answers).
Their citation markers, "[12]" or "(Kiros et al., 2015)", are not content: ``text.without_citation_markers``
removes them before a text is compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.ingest import load_documents
from insight_assets.core.ingestion.sections import find_section, section_spans

from .intext import CitedReference, cited_documents

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

RELATED_WORK_NAMES = (
    "related work",
    "relation to previous work",
    "previous work",
    "prior work",
    "background",
    "literature review",
)
INTRODUCTION_NAMES = ("introduction",)
# A paragraph is a reference when it cites at least this many other collection papers.
MIN_CITED = 2


@dataclass(frozen=True)
class CitingPaper:
    """A collection paper as reference paragraphs are read from it: its text, headings and
    references (each matched to a collection paper or not)."""

    doc_id: str
    title: str
    text: str
    sections: Sequence[str]
    body_end: int
    references: Sequence[CitedReference]


@dataclass(frozen=True)
class ReferenceParagraph:
    """A section of ``doc_id`` (named ``name``, headed ``heading``) that cites ``cited`` papers."""

    doc_id: str
    title: str
    name: str
    heading: str
    text: str
    cited: tuple[str, ...]

    @property
    def topic(self) -> str:
        return f"{self.name.capitalize()} of '{self.title}'"


def citing_papers(warehouse: Warehouse, collection: str) -> list[CitingPaper]:
    """The collection's papers that cite at least one other paper of it (the ``citations`` asset's
    ``paper_references``)."""
    references: dict[str, list[CitedReference]] = {}
    for row in warehouse.rows(
        """SELECT citing_doc_id, label, first_author, year, cited_doc_id FROM paper_references
           WHERE collection = ? ORDER BY citing_doc_id, ref_index""",
        [collection],
    ):
        references.setdefault(row["citing_doc_id"], []).append(
            CitedReference(
                row["label"] or "", row["first_author"] or "", row["year"] or 0, row["cited_doc_id"]
            )
        )
    return [
        CitingPaper(
            doc.doc_id, doc.title or doc.file, doc.text, doc.sections, doc.body_end, references[doc.doc_id]
        )
        for doc in load_documents(warehouse, collection)
        if any(ref.cited_doc_id for ref in references.get(doc.doc_id, []))
    ]


def reference_paragraphs(
    papers: Sequence[CitingPaper], min_cited: int = MIN_CITED
) -> list[ReferenceParagraph]:
    """Per paper, its related-work section, or else its introduction, when it cites at least
    ``min_cited`` other collection papers."""
    found = []
    for paper in papers:
        spans = section_spans(paper.text, paper.sections, paper.body_end)
        for names in (RELATED_WORK_NAMES, INTRODUCTION_NAMES):
            span = find_section(spans, names)
            if span is None:
                continue
            section = span.text(paper.text)
            cited = [doc for doc in cited_documents(section, paper.references) if doc != paper.doc_id]
            if len(cited) >= min_cited:
                found.append(
                    ReferenceParagraph(
                        paper.doc_id,
                        paper.title,
                        span.name,
                        span.heading,
                        " ".join(section.split()),
                        tuple(sorted(cited)),
                    )
                )
                break
    return found


def collection_paragraphs(
    warehouse: Warehouse, collection: str, min_cited: int = MIN_CITED
) -> list[ReferenceParagraph]:
    """The collection's reference paragraphs (``reference_paragraphs`` of its citing papers)."""
    return reference_paragraphs(citing_papers(warehouse, collection), min_cited)
