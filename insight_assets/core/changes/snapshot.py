"""What a build of a collection holds, as the next build compares it: its papers, its themes and
every method's findings, read from the warehouse after the build.

A snapshot is small and plain (ids, texts, the papers each thing cites), so it is kept as JSON
beside the build (``store.py``) and two of them are compared without the tables they came from
(``compare.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from insight_assets.core.storage.stores import Warehouse


@dataclass(frozen=True)
class Paper:
    doc_id: str
    file: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    doi: str | None = None
    chunk_ids: tuple[str, ...] = ()  # of every chunking profile

    def metadata(self) -> dict[str, Any]:
        """What a library or the PDF says of the paper, as a change of it is shown."""
        return {"title": self.title, "authors": list(self.authors), "year": self.year, "doi": self.doi}


@dataclass(frozen=True)
class Theme:
    """A theme of the theme graph: ``theme_id`` is the id it keeps across builds (``compare``), at
    first its cluster number."""

    theme_id: int
    label: str
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """One thing a method found: an insight, a summary, an answer, an idea or a judge's score.
    ``key`` names it within its kind across builds; ``section`` is its method's section of the
    collection's page. ``doc_ids``: the papers it cites; ``drawn_from``: the papers it was made
    from (its question's combination, its theme's or target's papers, the query paper, the
    passages retrieved for it or its context held), whether it cites them or not."""

    kind: str
    key: str
    section: str
    method: str
    subject: str  # what it is about: the question, topic or research background
    text: str
    doc_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...] = ()
    writer: str = ""  # the model (or offline stand-in) that wrote or judged it
    step: str = ""  # the asset that wrote it
    drawn_from: tuple[str, ...] = ()
    # The theme it is about (an XSum summary of a theme's papers), at first by its cluster number:
    # ``key`` names the theme rather than its label and papers, and ``compare`` gives it the id the
    # theme keeps, so that a theme that gained a paper has its summary changed, not gone and new.
    theme: int | None = None

    @property
    def identity(self) -> tuple[str, str]:
        return self.kind, self.key


@dataclass(frozen=True)
class Snapshot:
    collection: str
    build_id: str  # the Dagster run that built it
    built_at: str  # ISO 8601, UTC
    papers: Mapping[str, Paper]  # doc_id ->
    themes: Sequence[Theme]
    findings: Sequence[Finding]
    # asset -> what its build read as the build recorded it (``asset_builds``): ``settings``, its
    # code version, config and models; ``upstream``, a digest of every upstream asset's data version
    steps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "build_id": self.build_id,
            "built_at": self.built_at,
            "papers": [asdict(paper) for paper in self.papers.values()],
            "themes": [asdict(theme) for theme in self.themes],
            "findings": [asdict(finding) for finding in self.findings],
            "steps": dict(self.steps),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Snapshot:
        papers = [Paper(**_tuples(row)) for row in data["papers"]]
        return cls(
            data["collection"],
            data["build_id"],
            data["built_at"],
            {paper.doc_id: paper for paper in papers},
            [Theme(**_tuples(row)) for row in data["themes"]],
            [Finding(**_tuples(row)) for row in data["findings"]],
            data.get("steps", {}),
        )


def _tuples(row: Mapping[str, Any]) -> dict[str, Any]:
    return {key: tuple(value) if isinstance(value, list) else value for key, value in row.items()}


@dataclass(frozen=True)
class FindingSource:
    """Where one kind of finding is stored: ``table``, written by the asset of that name, and a
    query giving ``key``, ``method``, ``subject``, ``text``, ``writer``, the chunks (``chunk_ids``)
    or paper titles (``titles``) it cites and the papers it was made from (``drawn_from``; and,
    optionally, ``drawn_from_chunks``: the chunks its model read, whose papers it was made from
    too: an InsightGen question's context, each method's, and all of them for its judgements, which
    compare every method's insights)."""

    kind: str
    section: str
    table: str
    sql: str
    cites_titles: bool = False


def _cited_answers(
    table: str,
    item: str,
    text: str,
    subjects: str,
    subject: str,
    sources: str,
    retrieved: str = "[]",
    retrieved_chunks: str = "[]",
) -> str:
    """The query of a method's texts that cite chunks (``cited_chunk_ids``), one per ``item`` and
    method, each about the ``subject`` that table ``subjects`` gives its item and made from the
    papers its rows' ``sources`` list (all rows of the item together), its own ``retrieved`` papers
    and the papers of its own ``retrieved_chunks``."""
    return f"""SELECT a.{item} || '/' || a.method AS key, a.method, coalesce(t.subject, a.{item}) AS subject,
                      coalesce(a.{text}, 'failed: ' || a.error) AS text, coalesce(a.cited_chunk_ids, []) AS chunk_ids,
                      a.writer, list_concat(coalesce(t.sources, []), coalesce({retrieved}, [])) AS drawn_from,
                      coalesce({retrieved_chunks}, []) AS drawn_from_chunks
               FROM {table} a LEFT JOIN (SELECT {item}, any_value({subject}) AS subject,
                                                flatten(list(coalesce({sources}, []))) AS sources
                                         FROM {subjects} WHERE collection = $collection GROUP BY {item}) t USING ({item})
               WHERE a.collection = $collection"""


# Each method's findings. A method's baselines are findings too (their ``method`` says which).
FINDING_SOURCES = (
    FindingSource(
        "insight",
        "insightgen",
        "insights",
        """SELECT i.question_id || '/' || i.method || '/' || i.insight_index AS key, i.method,
                  coalesce(q.question, i.question_id) AS subject, i.hook || ': ' || i.body AS text,
                  i.chunk_ids, i.writer, coalesce(q.doc_ids, []) AS drawn_from,
                  coalesce(r.chunk_ids, []) AS drawn_from_chunks
           FROM insights i LEFT JOIN (SELECT question_id, any_value(question) AS question, any_value(doc_ids) AS doc_ids
                                      FROM generated_questions WHERE collection = $collection
                                      GROUP BY question_id) q USING (question_id)
                           LEFT JOIN (SELECT question_id, method, any_value(chunk_ids) AS chunk_ids
                                      FROM insight_runs WHERE collection = $collection
                                      GROUP BY question_id, method) r USING (question_id, method)
           WHERE i.collection = $collection""",
    ),
    FindingSource(
        "judge score",
        "insightgen",
        "judge_scores",
        """SELECT concat_ws('/', s.level, s.question_id, s.method, s.label, s.insight_index, s.repetition) AS key,
                  s.method, coalesce(q.question, s.question_id) AS subject,
                  'overall ' || coalesce(CAST(round(s.overall, 2) AS VARCHAR), '-') AS text,
                  [] AS chunk_ids, s.judge AS writer, coalesce(q.doc_ids, []) AS drawn_from,
                  coalesce(r.chunk_ids, []) AS drawn_from_chunks
           FROM judge_scores s LEFT JOIN (SELECT question_id, any_value(doc_ids) AS doc_ids, any_value(question) AS question
                                          FROM generated_questions WHERE collection = $collection
                                          GROUP BY question_id) q USING (question_id)
                               LEFT JOIN (SELECT question_id, flatten(list(chunk_ids)) AS chunk_ids
                                          FROM insight_runs WHERE collection = $collection
                                          GROUP BY question_id) r USING (question_id)
           WHERE s.collection = $collection""",
    ),
    FindingSource(
        "summary",
        "xsum",
        "xsum_summaries",
        """SELECT a.target_id || '/' || a.method AS key, a.method, coalesce(t.topic, a.target_id) AS subject,
                  coalesce(a.summary, 'failed: ' || a.error) AS text, coalesce(a.cited_chunk_ids, []) AS chunk_ids,
                  a.writer, coalesce(t.doc_ids, []) AS drawn_from, t.kind AS target_kind
           FROM xsum_summaries a LEFT JOIN (SELECT target_id, any_value(topic) AS topic, any_value(kind) AS kind,
                                                   any_value(doc_ids) AS doc_ids
                                            FROM xsum_targets WHERE collection = $collection
                                            GROUP BY target_id) t USING (target_id)
           WHERE a.collection = $collection""",
    ),
    FindingSource(
        "answer",
        "contregen",
        "contregen_answers",
        _cited_answers(
            "contregen_answers",
            "question_id",
            "answer",
            "contregen_trees",
            "query",
            "list_concat(gold_doc_ids, passage_doc_ids)",
            retrieved_chunks="a.retrieved_chunk_ids",  # a baseline's own retrieval
        ),
    ),
    FindingSource(
        "answer",
        "insight_rag",
        "insight_rag_answers",
        _cited_answers(
            "insight_rag_answers",
            "item_id",
            "answer",
            "insight_rag_benchmark",
            # A matching item is a pair of papers (its ``drawn_from``), with no question of its own.
            "coalesce(nullif(question, ''), CASE WHEN kind = 'matching' "
            "THEN 'Does one of these two papers cite the other?' END)",
            "list_concat(gold_doc_ids, [paper_a, paper_b])",
            "a.ranked_doc_ids",
        ),
    ),
    FindingSource(
        "idea",
        "scipip",
        "scipip_ideas",
        """SELECT i.query_id || '/' || i.method || '/' || i.position AS key, i.method,
                  coalesce(r.background, i.query_id) AS subject, i.title || ': ' || i.idea AS text,
                  coalesce(i.inspired_by, []) AS titles, i.writer,
                  list_concat(CASE WHEN starts_with(i.query_id, 'paper:') THEN [substr(i.query_id, 7)] ELSE [] END,
                              coalesce(r.retrieved, [])) AS drawn_from
           FROM scipip_ideas i LEFT JOIN (SELECT query_id, any_value(background) AS background,
                                                 flatten(list(list_concat(coalesce(retrieved_doc_ids, []),
                                                                          coalesce(inspiring_doc_ids, [])))) AS retrieved
                                          FROM scipip_idea_runs WHERE collection = $collection
                                          GROUP BY query_id) r USING (query_id)
           WHERE i.collection = $collection""",
        cites_titles=True,
    ),
)


def take_snapshot(warehouse: Warehouse, collection: str, build_id: str, built_at: str) -> Snapshot:
    """The collection's papers, themes and findings as the warehouse holds them now. A method whose
    tables were never written has no findings."""
    with warehouse.session() as db:
        papers = _papers(db, collection)
        chunk_docs = {chunk: paper.doc_id for paper in papers.values() for chunk in paper.chunk_ids}
        themes = _themes(db, collection, chunk_docs)
        titles = {paper.title.casefold(): paper.doc_id for paper in papers.values()}
        tables = {row["table_name"] for row in db.rows("SELECT table_name FROM information_schema.tables")}
        findings = [
            _about_theme(finding, row, themes)
            for source in FINDING_SOURCES
            if source.table in tables
            for finding, row in _findings(db, collection, source, chunk_docs, titles)
        ]
        steps = _steps(db, collection)
    return Snapshot(collection, build_id, built_at, papers, themes, findings, steps)


def _steps(db, collection: str) -> dict[str, dict[str, str]]:
    """What each built asset read, as its build recorded it (what reuse compares), in two parts: a
    change of its settings is told apart from a change upstream of it."""
    steps = {}
    for row in db.rows(
        "SELECT asset, inputs FROM asset_builds WHERE collection = ? AND inputs IS NOT NULL", [collection]
    ):
        inputs = json.loads(row["inputs"])
        upstream = json.dumps(inputs.get("upstream"), sort_keys=True)
        steps[row["asset"]] = {
            "settings": f"{inputs.get('code_version')}|{inputs.get('config')}|{inputs.get('models')}",
            "upstream": hashlib.sha256(upstream.encode()).hexdigest()[:16],
        }
    return steps


def _papers(db, collection: str) -> dict[str, Paper]:
    chunks: dict[str, list[str]] = {}
    for row in db.rows(
        "SELECT doc_id, chunk_id FROM chunks WHERE collection = ? ORDER BY doc_id, profile, chunk_index",
        [collection],
    ):
        chunks.setdefault(row["doc_id"], []).append(row["chunk_id"])
    rows = db.rows(
        """SELECT d.doc_id, d.file, coalesce(d.title, d.file) AS title, coalesce(p.authors, []) AS authors,
                  p.year, p.doi
           FROM parsed_documents d LEFT JOIN papers p USING (collection, doc_id)
           WHERE d.collection = ? ORDER BY d.file""",
        [collection],
    )
    return {
        row["doc_id"]: Paper(
            row["doc_id"],
            row["file"],
            row["title"],
            tuple(row["authors"]),
            row["year"],
            row["doi"],
            tuple(chunks.get(row["doc_id"], ())),
        )
        for row in rows
    }


def _themes(db, collection: str, chunk_docs: Mapping[str, str]) -> list[Theme]:
    members: dict[int, list[str]] = {}
    for row in db.rows(
        "SELECT cluster, chunk_id FROM theme_assignments WHERE collection = ? ORDER BY cluster, position",
        [collection],
    ):
        members.setdefault(row["cluster"], []).append(row["chunk_id"])
    return [
        Theme(
            row["cluster"],
            row["label"] or f"theme {row['cluster']}",
            tuple(members.get(row["cluster"], ())),
            tuple(sorted({chunk_docs[c] for c in members.get(row["cluster"], ()) if c in chunk_docs})),
        )
        for row in db.rows(
            "SELECT cluster, label FROM theme_clusters WHERE collection = ? ORDER BY cluster", [collection]
        )
    ]


def _about_theme(finding: Finding, row: Mapping[str, Any], themes: Sequence[Theme]) -> Finding:
    """``finding`` keyed by what it summarises rather than by its target's label and papers, which
    a paper joining the theme changes: a theme's summary by the theme (its number, unless two
    themes share its label), the whole collection's as the one it is."""
    kind = row.get("target_kind")
    if kind == "collection":
        return dataclasses.replace(finding, key=f"collection/{finding.method}")
    numbers = [theme.theme_id for theme in themes if theme.label == finding.subject]
    if kind == "cluster" and len(numbers) == 1:
        return dataclasses.replace(finding, key=theme_key(numbers[0], finding.method), theme=numbers[0])
    return finding


def theme_key(theme_id: int, method: str) -> str:
    """The key of a theme's summary by ``method``."""
    return f"theme-{theme_id}/{method}"


def _findings(
    db, collection: str, source: FindingSource, chunk_docs: Mapping[str, str], titles: Mapping[str, str]
) -> list[tuple[Finding, Mapping[str, Any]]]:
    """The findings of ``source``, each with the row it was read from."""
    found = []
    for row in db.rows(source.sql.replace("$collection", "$1"), [collection]):
        chunk_ids = tuple(row.get("chunk_ids") or ())
        context = [chunk_docs.get(chunk) for chunk in row.get("drawn_from_chunks") or ()]
        if source.cites_titles:
            cited = [titles.get(title.casefold()) for title in row["titles"]]
        else:
            cited = [chunk_docs.get(chunk) for chunk in chunk_ids]
        found.append(
            (
                Finding(
                    source.kind,
                    row["key"],
                    source.section,
                    row["method"],
                    row["subject"] or "",
                    row["text"] or "",
                    tuple(sorted({doc for doc in cited if doc})),
                    chunk_ids,
                    row["writer"] or "",
                    source.table,
                    tuple(sorted({doc for doc in [*(row.get("drawn_from") or ()), *context] if doc})),
                ),
                row,
            )
        )
    return found
