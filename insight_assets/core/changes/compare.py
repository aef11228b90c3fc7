"""Two snapshots of a collection compared: what one build changed against the one before.

Papers are matched by document id (a hash of the file): a paper whose file stayed but whose id
changed had its text changed. Themes are matched by membership, since a refitted theme graph may
number its clusters anew: a theme of the new graph keeps the id of an earlier theme when it holds
at least ``theme_kept_share`` of that theme's chunks that are still in the collection (chunks rather
than papers: in a small collection every theme spans most papers, so papers alone cannot tell two
themes apart); pairs are taken best share first, one to one. Findings are matched by kind and key.

Each changed finding says why (``cause``): ``papers`` when a paper it cites or was made from (its
question's, theme's or query's papers, the passages retrieved for it: ``Finding.drawn_from``) was
added, removed or changed; ``collection`` when other papers changed (collection-wide steps draw on
them all);
``settings`` when no paper changed but the settings of the step that wrote it did (its config,
models or code); ``upstream`` when neither did but a step before it made something else (a theme
graph fitted anew); else ``model``: with the same inputs the model answered differently (its cache
was cleared, or it is not deterministic).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .snapshot import Finding, Paper, Snapshot, Theme, theme_key

THEME_KEPT_SHARE = 0.5

PAPERS = "papers"
COLLECTION = "collection"
SETTINGS = "settings"
UPSTREAM = "upstream"
MODEL = "model"


@dataclass(frozen=True)
class Change:
    """One changed thing: a paper, a theme or a finding. ``doc_ids``: the papers behind it (those
    a finding cites, a theme's papers gained and lost, the paper itself); a finding's ``detail``
    names those it was made from (``drawn_from``)."""

    kind: str  # paper, theme, or a finding's kind (insight, summary, answer, idea, judge score)
    key: str
    change: str  # added, removed, text changed, metadata changed, rechunked; new, changed, gone
    subject: str
    doc_ids: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    before: str | None = None
    after: str | None = None
    cause: str | None = None
    section: str | None = None  # the method's section of the collection's page
    method: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangeSet:
    """What ``build_id`` changed against ``previous_build_id`` (None: the collection's first build)."""

    collection: str
    build_id: str
    built_at: str
    previous_build_id: str | None
    previous_built_at: str | None
    changes: Sequence[Change] = ()
    unchanged: Mapping[str, int] = field(default_factory=dict)  # kind -> how many stayed the same
    titles: Mapping[str, str] = field(default_factory=dict)  # doc_id -> title, of both builds
    settings_changed: Sequence[str] = ()  # the steps whose settings differ between the builds

    @property
    def first(self) -> bool:
        return self.previous_build_id is None

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def of(self, kind: str, change: str | None = None) -> list[Change]:
        return [c for c in self.changes if c.kind == kind and (change is None or c.change == change)]


def compare(
    before: Snapshot | None,
    after: Snapshot,
    *,
    theme_kept_share: float = THEME_KEPT_SHARE,
) -> tuple[ChangeSet, Snapshot]:
    """What ``after`` changed against ``before``, and ``after`` with the theme ids it keeps (the
    snapshot to keep for the next build)."""
    if before is None:
        return ChangeSet(after.collection, after.build_id, after.built_at, None, None), after
    after = _with_kept_theme_ids(after, carry_theme_ids(before.themes, after.themes, theme_kept_share))
    themes = after.themes
    paper_changes = _paper_changes(before.papers, after.papers)
    touched = {doc for change in paper_changes for doc in change.doc_ids}
    settings_changed = _steps_changed(before, after, "settings")
    upstream_changed = set(_steps_changed(before, after, "upstream"))
    theme_changes, themes_unchanged = _theme_changes(before.themes, themes)
    finding_changes, unchanged = _finding_changes(
        before.findings, after.findings, touched, set(settings_changed), upstream_changed
    )
    unchanged = {
        "paper": len(after.papers) - sum(c.change != "removed" for c in paper_changes),
        "theme": themes_unchanged,
        **unchanged,
    }
    titles = {doc: paper.title for doc, paper in {**before.papers, **after.papers}.items()}
    change_set = ChangeSet(
        after.collection,
        after.build_id,
        after.built_at,
        before.build_id,
        before.built_at,
        paper_changes + theme_changes + finding_changes,
        unchanged,
        titles,
        tuple(settings_changed),
    )
    return change_set, after


def _with_kept_theme_ids(after: Snapshot, kept: Sequence[Theme]) -> Snapshot:
    """``after`` with its themes' kept ids (``kept``, in ``after.themes``' order), and the findings
    about a theme keyed by that id."""
    ids = {theme.theme_id: carried.theme_id for theme, carried in zip(after.themes, kept, strict=True)}
    findings = [
        dataclasses.replace(
            finding, key=theme_key(ids[finding.theme], finding.method), theme=ids[finding.theme]
        )
        if finding.theme in ids
        else finding
        for finding in after.findings
    ]
    return dataclasses.replace(after, themes=list(kept), findings=findings)


def _steps_changed(before: Snapshot, after: Snapshot, part: str) -> list[str]:
    """The steps whose ``part`` of what they read (``Snapshot.steps``) differs between the builds."""
    return sorted(
        asset
        for asset, step in after.steps.items()
        if asset in before.steps and before.steps[asset].get(part) != step.get(part)
    )


def carry_theme_ids(before: Sequence[Theme], after: Sequence[Theme], kept_share: float) -> list[Theme]:
    """``after``'s themes, each with the id of the earlier theme it continues (see the module's
    rule), or a new id above every earlier one."""
    present = {chunk for theme in after for chunk in theme.chunk_ids}
    pairs = []
    for old in before:
        still_here = {chunk for chunk in old.chunk_ids if chunk in present}
        if not still_here:
            continue
        for position, new in enumerate(after):
            share = len(still_here & set(new.chunk_ids)) / len(still_here)
            if share >= kept_share:
                pairs.append((share, old.theme_id, position))
    kept: dict[int, int] = {}  # position in after -> the earlier id it keeps
    for _, old_id, position in sorted(pairs, key=lambda pair: (-pair[0], pair[1], pair[2])):
        if position not in kept and old_id not in kept.values():
            kept[position] = old_id
    next_id = max([theme.theme_id for theme in before] + [-1]) + 1
    carried = []
    for position, theme in enumerate(after):
        if position in kept:
            carried.append(dataclasses.replace(theme, theme_id=kept[position]))
        else:
            carried.append(dataclasses.replace(theme, theme_id=next_id))
            next_id += 1
    return carried


def _paper_changes(before: Mapping[str, Paper], after: Mapping[str, Paper]) -> list[Change]:
    changes = []
    before_by_file = {paper.file: paper for paper in before.values()}
    replaced = {
        paper.doc_id: before_by_file[paper.file]
        for paper in after.values()
        if paper.doc_id not in before
        and paper.file in before_by_file
        and before_by_file[paper.file].doc_id not in after
    }
    replaced_ids = {old.doc_id for old in replaced.values()}
    for doc, paper in after.items():
        if doc in replaced:
            old = replaced[doc]
            changes.append(_paper_change(paper, "text changed", old, (old.doc_id, doc)))
        elif doc not in before:
            changes.append(_paper_change(paper, "added", None, (doc,)))
        elif paper.metadata() != before[doc].metadata():
            changes.append(_paper_change(paper, "metadata changed", before[doc], (doc,)))
        elif paper.chunk_ids != before[doc].chunk_ids:
            changes.append(_paper_change(paper, "rechunked", before[doc], (doc,)))
    for doc, paper in before.items():
        if doc not in after and doc not in replaced_ids:
            changes.append(_paper_change(paper, "removed", paper, (doc,)))
    return changes


def _paper_change(paper: Paper, change: str, old: Paper | None, doc_ids: tuple[str, ...]) -> Change:
    old_chunks = set(old.chunk_ids) if old and change != "removed" else set()
    new_chunks = set() if change == "removed" else set(paper.chunk_ids)
    detail: dict[str, Any] = {
        "file": paper.file,
        "chunks_added": len(new_chunks - old_chunks),
        "chunks_removed": len((set(paper.chunk_ids) if change == "removed" else old_chunks) - new_chunks),
    }
    if change == "metadata changed" and old is not None:
        detail["fields"] = {
            name: {"before": value, "after": paper.metadata()[name]}
            for name, value in old.metadata().items()
            if value != paper.metadata()[name]
        }
    return Change(
        "paper",
        paper.doc_id,
        change,
        paper.title,
        doc_ids,
        before=old.title if old else None,
        after=None if change == "removed" else paper.title,
        cause=PAPERS,
        detail=detail,
    )


def _theme_changes(before: Sequence[Theme], after: Sequence[Theme]) -> tuple[list[Change], int]:
    earlier = {theme.theme_id: theme for theme in before}
    later = {theme.theme_id: theme for theme in after}
    changes, unchanged = [], 0
    for theme_id, theme in later.items():
        old = earlier.get(theme_id)
        if old is None:
            changes.append(_theme_change(theme, "new", (), theme.doc_ids))
            continue
        gained = tuple(sorted(set(theme.doc_ids) - set(old.doc_ids)))
        lost = tuple(sorted(set(old.doc_ids) - set(theme.doc_ids)))
        if gained or lost or old.label != theme.label:
            changes.append(_theme_change(theme, "changed", lost, gained, old.label))
        else:
            unchanged += 1
    for theme_id, old in earlier.items():
        if theme_id not in later:
            changes.append(_theme_change(old, "gone", old.doc_ids, ()))
    return changes, unchanged


def _theme_change(
    theme: Theme, change: str, lost: tuple[str, ...], gained: tuple[str, ...], old_label: str | None = None
) -> Change:
    return Change(
        "theme",
        str(theme.theme_id),
        change,
        theme.label,
        tuple(sorted(set(lost) | set(gained))),
        before=old_label if change == "changed" else (theme.label if change == "gone" else None),
        after=None if change == "gone" else theme.label,
        cause=PAPERS if lost or gained else COLLECTION,
        detail={"papers_gained": list(gained), "papers_lost": list(lost), "papers": len(theme.doc_ids)},
    )


def _finding_changes(
    before: Sequence[Finding],
    after: Sequence[Finding],
    touched: set[str],
    settings_changed: set[str],
    upstream_changed: set[str],
) -> tuple[list[Change], dict[str, int]]:
    earlier = {finding.identity: finding for finding in before}
    later = {finding.identity: finding for finding in after}

    def cause(finding: Finding, cited: set[str]) -> str:
        if cited & touched:
            return PAPERS
        if touched:
            return COLLECTION
        if finding.step in settings_changed:
            return SETTINGS
        return UPSTREAM if finding.step in upstream_changed else MODEL

    changes, unchanged = [], {}
    for identity, finding in later.items():
        old = earlier.get(identity)
        unchanged.setdefault(finding.kind, 0)
        if old is not None and old.text == finding.text:
            unchanged[finding.kind] += 1
            continue
        behind = _papers_behind(finding) | (_papers_behind(old) if old else set())
        changes.append(
            _finding_change(finding, "new" if old is None else "changed", old, cause(finding, behind))
        )
    for identity, old in earlier.items():
        if identity not in later:
            changes.append(_finding_change(old, "gone", old, cause(old, _papers_behind(old))))
    return changes, unchanged


def _papers_behind(finding: Finding) -> set[str]:
    """The papers a finding cites and those it was made from."""
    return set(finding.doc_ids) | set(finding.drawn_from)


def _finding_change(finding: Finding, change: str, old: Finding | None, cause: str) -> Change:
    detail: dict[str, Any] = {"drawn_from": sorted(set(finding.drawn_from) - set(finding.doc_ids))}
    if old is not None and change == "changed" and old.writer != finding.writer:
        detail["writer"] = {"before": old.writer, "after": finding.writer}
    return Change(
        finding.kind,
        finding.key,
        change,
        finding.subject,
        finding.doc_ids,
        finding.chunk_ids,
        before=old.text if old else None,
        after=None if change == "gone" else finding.text,
        cause=cause,
        section=finding.section,
        method=finding.method,
        detail=detail,
    )
