"""ConTReGen's generation metrics where a human reference exists (§4.1: ROUGE-L, NLI entailment and
contradiction), and its facet coverage (§5.5.2, Table 7).

The reference: a collection paper's related-work section (or introduction) that cites other papers
of the collection (``core/citations/paragraphs.py``, XSum's evaluation targets). Its topic ("Related
work of '<title>'") becomes a question whose gold documents are the papers it cites, and what every
method writes for it is scored against the section:

- ``rouge_l``: ROUGE-L F1 (Porter stemming), citation markers removed from both texts;
- ``entailment`` / ``contradiction``: the share of the answer's sentences that the reference entails
  / contradicts, judged sentence by sentence by the judge model ("NLI by the judge model": the paper
  used an NLI model, and none ships here); offline, a lexical stand-in that sees entailment as the
  sentence's content words being in the reference and cannot see a contradiction.

Facet coverage: a question's facets are the themes (theme-graph clusters) of its gold documents'
sections; a facet is covered when a passage the method retrieved lies in it (a passage lies in the
theme of its paper's section that holds its first page).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import lazy_regex

from ...retrieval.citing import strip_citations
from ...text import sentence_texts, without_citation_markers
from .schemas import TreeQuestion

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

    from ...citations.paragraphs import ReferenceParagraph

REFERENCE = "reference"
ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
# A citation removed before a full stop leaves "sentences ." behind.
_SPACE_BEFORE_PUNCTUATION = lazy_regex(r"\s+([.,;:])")


def reference_question_id(paragraph: ReferenceParagraph) -> str:
    digest = hashlib.sha256(f"{paragraph.doc_id}\n{paragraph.heading}".encode()).hexdigest()
    return f"ref-{digest[:14]}"


def reference_questions(paragraphs: Sequence[ReferenceParagraph], limit: int) -> list[TreeQuestion]:
    """The first ``limit`` paragraphs as questions: the topic asked, the cited papers as gold."""
    return [
        TreeQuestion(reference_question_id(p), p.topic, tuple(p.cited), REFERENCE) for p in paragraphs[:limit]
    ]


def questions_to_explore(
    generated: Sequence,
    which: str,
    limit: int | None,
    paragraphs: Sequence[ReferenceParagraph],
    references: int,
) -> list[TreeQuestion]:
    """The collection's questions from ``which`` source ("all" for any; the first ``limit``), then
    the first ``references`` reference paragraphs' questions."""
    chosen = [
        TreeQuestion(q.question_id, q.question, q.document_ids, q.source)
        for q in generated
        if which == "all" or q.source == which
    ]
    return (chosen[:limit] if limit is not None else chosen) + reference_questions(paragraphs, references)


def reference_texts(paragraphs: Sequence[ReferenceParagraph]) -> dict[str, str]:
    """Each paragraph's text by the id of the question it becomes."""
    return {reference_question_id(p): p.text for p in paragraphs}


def plain(text: str) -> str:
    """A text without citations of either kind: ours ("[chunk ids]") and a paper's markers."""
    return _SPACE_BEFORE_PUNCTUATION.sub(
        r"\1", " ".join(strip_citations(without_citation_markers(text)).split())
    )


def rouge_l(reference: str, answer: str) -> float:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return round(scorer.score(plain(reference), plain(answer))["rougeL"].fmeasure, 4)


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences, as the NLI judge reads them (citations removed)."""
    return [s for s in sentence_texts(plain(answer)) if len(s.split()) >= 3]


def nli_shares(verdicts: Sequence[str]) -> tuple[float, float]:
    """(entailment, contradiction): the shares of the sentences judged so."""
    if not verdicts:
        return 0.0, 0.0
    return (
        round(sum(v == ENTAILMENT for v in verdicts) / len(verdicts), 4),
        round(sum(v == CONTRADICTION for v in verdicts) / len(verdicts), 4),
    )


def passage_themes(warehouse: Warehouse, collection: str) -> tuple[dict[str, int], dict[str, set[int]]]:
    """Each ``passage`` chunk's theme (that of its paper's section chunk holding its first page),
    and each paper's themes; empty without a theme graph."""
    sections: dict[str, list[tuple[int, int, int]]] = {}
    for row in warehouse.rows(
        """SELECT c.doc_id, c.page_start, c.page_end, a.cluster FROM theme_assignments a
           JOIN chunks c ON c.collection = a.collection AND c.chunk_id = a.chunk_id
           WHERE a.collection = ?""",
        [collection],
    ):
        sections.setdefault(row["doc_id"], []).append((row["page_start"], row["page_end"], row["cluster"]))
    themes: dict[str, int] = {}
    for row in warehouse.rows(
        "SELECT chunk_id, doc_id, page_start FROM chunks WHERE collection = ? AND profile = 'passage'",
        [collection],
    ):
        for start, end, cluster in sections.get(row["doc_id"], []):
            if start <= row["page_start"] <= end:
                themes[row["chunk_id"]] = cluster
                break
    paper_themes = {doc: {cluster for _, _, cluster in spans} for doc, spans in sections.items()}
    return themes, paper_themes


def facet_coverage(
    gold: Sequence[str],
    retrieved: Sequence[str],
    themes: Mapping[str, int],
    paper_themes: Mapping[str, set[int]],
) -> float | None:
    """The share of the gold papers' themes that a retrieved passage lies in; ``None`` when the
    gold papers have no theme (no gold, or no theme graph)."""
    facets = set().union(*(paper_themes.get(doc, set()) for doc in gold)) if gold else set()
    if not facets:
        return None
    reached = {themes[cid] for cid in retrieved if cid in themes}
    return round(len(facets & reached) / len(facets), 4)
