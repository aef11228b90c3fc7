"""What summaries are written for: targets, each a topic and a set of papers.

- ``cluster``: each theme-graph cluster's papers (those holding at least one of its chunks; the
  ``max_papers`` holding most of them), its label as the topic;
- ``collection``: the whole collection when it has at most ``max_papers`` papers;
- ``user``: the lines of ``summaries.jsonl`` in the collection's folder,
  ``{"topic": ..., "document_ids": [...]}`` or ``{"topic": ..., "titles": [...]}`` (a title matches
  ignoring case, spacing and punctuation); every line that cannot be used is reported with its
  number and left out;
- ``evaluation``: our SurveySum. A collection paper whose related-work section (or, without one,
  its introduction) cites at least ``MIN_CITED_FOR_EVALUATION`` other collection papers gives a
  target of those papers, with that section's text as the reference summary.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...citations.paragraphs import CitingPaper, reference_paragraphs
from ...citations.references import fold
from ...jsonl import LineProblem, UnusableLine, read_lines
from .schemas import MAX_TARGET_PAPERS, MIN_CITED_FOR_EVALUATION, SummaryTarget

USER_TARGETS_FILE = "summaries.jsonl"
_USER_KEYS = ("topic", "document_ids", "titles")


def target_id(kind: str, topic: str, doc_ids: Sequence[str]) -> str:
    digest = hashlib.sha256(json.dumps([kind, topic, sorted(doc_ids)]).encode()).hexdigest()
    return f"{kind}-{digest[:12]}"


def _target(kind: str, topic: str, doc_ids: Sequence[str], **reference: Any) -> SummaryTarget:
    return SummaryTarget(target_id(kind, topic, doc_ids), kind, topic, tuple(doc_ids), **reference)


def cluster_targets(
    clusters: Mapping[int, str],
    chunks_per_doc: Mapping[int, Counter[str]],
    max_papers: int = MAX_TARGET_PAPERS,
) -> list[SummaryTarget]:
    """One target per cluster: its label and the ``max_papers`` papers holding most of its chunks
    (ties by id). ``chunks_per_doc[cluster]`` counts the cluster's chunks per paper."""
    targets = []
    for cluster, label in sorted(clusters.items()):
        counts = chunks_per_doc.get(cluster, Counter())
        ranked = sorted(counts, key=lambda doc: (-counts[doc], doc))[:max_papers]
        if ranked:
            targets.append(_target("cluster", label, sorted(ranked)))
    return targets


def collection_target(
    collection: str, doc_ids: Collection[str], labels: Sequence[str], max_papers: int = MAX_TARGET_PAPERS
) -> list[SummaryTarget]:
    """The whole collection as one target when it has at most ``max_papers`` papers; the topic is
    the collection's name with its largest themes' labels."""
    if not doc_ids or len(doc_ids) > max_papers:
        return []
    topic = f"{collection}: {'; '.join(labels[:3])}" if labels else collection
    return [_target("collection", topic, sorted(doc_ids))]


def _user_target(
    value: Any, titles: Mapping[str, str], max_papers: int, searchable: Collection[str] | None
) -> SummaryTarget:
    if not isinstance(value, dict):
        raise UnusableLine(f"expected a JSON object, found {type(value).__name__}")
    unknown = sorted(set(value) - set(_USER_KEYS))
    if unknown:
        raise UnusableLine(
            f"unknown key {', '.join(map(repr, unknown))}; the keys are {', '.join(_USER_KEYS)}"
        )
    topic = value.get("topic")
    if not isinstance(topic, str) or not topic.strip():
        raise UnusableLine('"topic" must be a non-empty string')
    if ("document_ids" in value) == ("titles" in value):
        raise UnusableLine('give exactly one of "document_ids" and "titles"')
    key = "document_ids" if "document_ids" in value else "titles"
    names = value[key]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise UnusableLine(f'"{key}" must be a non-empty list of non-empty strings')
    if key == "document_ids":
        missing = [name for name in names if name not in titles]
        doc_ids = list(names)
    else:
        by_title = {fold(title): doc_id for doc_id, title in titles.items() if fold(title)}
        missing = [name for name in names if fold(name) not in by_title]
        doc_ids = [by_title.get(fold(name), "") for name in names]
    if missing:
        what = "document ids" if key == "document_ids" else "titles"
        raise UnusableLine(f"unknown {what}: {'; '.join(missing)}")
    doc_ids = list(dict.fromkeys(doc_ids))
    unsearchable = [doc for doc in doc_ids if searchable is not None and doc not in searchable]
    if unsearchable:
        raise UnusableLine(f"papers with no chunks to retrieve from: {', '.join(unsearchable)}")
    if len(doc_ids) > max_papers:
        raise UnusableLine(
            f"names {len(doc_ids)} papers; a target holds at most {max_papers} (max_target_papers)"
        )
    return _target("user", " ".join(topic.split()), sorted(doc_ids))


def user_targets(
    path: Path,
    titles: Mapping[str, str],
    max_papers: int = MAX_TARGET_PAPERS,
    searchable: Collection[str] | None = None,
) -> tuple[list[SummaryTarget], list[LineProblem]]:
    """The usable targets of ``path`` (none when it does not exist) and the problems found.
    ``titles`` maps the collection's document ids to their titles; ``searchable``, when given,
    holds the papers that have chunks (a line naming another is a problem)."""
    return read_lines(path, lambda value: _keyed(_user_target(value, titles, max_papers, searchable)))


def _keyed(target: SummaryTarget) -> tuple[SummaryTarget, str]:
    return target, target.target_id


def evaluation_targets(
    papers: Sequence[CitingPaper], min_cited: int = MIN_CITED_FOR_EVALUATION
) -> list[SummaryTarget]:
    """A target per paper whose related-work section, or else introduction, cites at least
    ``min_cited`` other collection papers: those papers, with the section's text as reference
    (``core/citations/paragraphs.py``)."""
    return [
        _target(
            "evaluation",
            paragraph.topic,
            list(paragraph.cited),
            reference=paragraph.text,
            reference_doc_id=paragraph.doc_id,
            reference_section=paragraph.heading,
        )
        for paragraph in reference_paragraphs(papers, min_cited)
    ]
