"""A change set as people read it: one structured form (``as_data``: the command line's ``--json``,
the MCP tool, the page) and its Markdown (``as_markdown``: the command line, the UI's metadata, the
digest files). The findings citing a changed paper, or made from one, come first; the papers each
thing cites or was made from are named by title."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .compare import COLLECTION, MODEL, PAPERS, SETTINGS, UPSTREAM, Change, ChangeSet

# Findings listed per group in Markdown; the structured form holds them all.
MARKDOWN_LISTED = 25
_SNIPPET = 240
FINDING_KINDS = ("insight", "summary", "answer", "idea", "judge score")
# Findings that are numbers about other findings: counted in Markdown and on the page, listed in
# the structured form (a judge scores every insight of every question several times).
SCORE_KINDS = ("judge score",)
CAUSES = {
    PAPERS: "a paper it cites or was made from changed",
    COLLECTION: "the collection's papers changed (a collection-wide step drew on them)",
    SETTINGS: "the settings of the step that wrote it changed (its config, model or code); no paper did",
    UPSTREAM: "a step before it made something else (a theme graph fitted anew, say); no paper or setting changed",
    MODEL: "the model answered differently to the same inputs (its cache was cleared, or it is not deterministic)",
}
# What in each method reads every paper: how a finding changes that neither cites nor was made
# from a paper that changed (cause ``collection``).
THROUGH_COLLECTION = {
    "insightgen": "a question's context is drawn from the themes nearest its answer and from passages "
    "of every paper, so a theme that took in new chunks, or a new passage ranked above one it held, "
    "changes the contexts of questions the paper is no part of; a baseline reads as many chunks as "
    "InsightGen's context holds, and the judges compare every method's insights",
    "xsum": "a theme is summarised from the papers holding most of its chunks, and the whole "
    "collection's summary is titled by its largest themes: a theme the graph split, relabelled or "
    "fitted afresh has another summary",
    "contregen": "its trees and answers retrieve passages from every paper, and a lexical or hybrid "
    "search weighs a word by how many passages hold it",
    "insight_rag": "the benchmark keeps a subject only while its words are in fewer than half the "
    "papers (vague otherwise) and balances its matching pairs over every pair of papers; answers "
    "retrieve passages from every paper, and offline a pair of papers is said to cite when they are "
    "more alike than the collection's median pair",
    "scipip": "the field its prompts name is inferred from every paper's summary, and its retrieval "
    "ranks every paper",
}
MOVED_TITLE = "Moved through the collection"
MOVED_LEAD = (
    "These neither cite nor were made from a paper that changed: a step that reads every paper took "
    "the change in."
)
SECTION_TITLES = {
    "insightgen": "InsightGen",
    "xsum": "XSum",
    "contregen": "ConTReGen",
    "insight_rag": "Insight-RAG",
    "scipip": "SciPIP",
}


def when(moment: str | None) -> str:
    """An ISO 8601 moment as people read it: ``2026-12-02 10:30 UTC``."""
    return "-" if not moment else moment[:16].replace("T", " ") + " UTC"


def headline(change_set: ChangeSet) -> str:
    """The digest in one line."""
    if change_set.first:
        return f"the first build of {change_set.collection} ({when(change_set.built_at)}): nothing to compare with"
    if not change_set.changed:
        return f"nothing changed since the build of {when(change_set.previous_built_at)}"
    listed = [c for c in change_set.changes if c.kind in FINDING_KINDS and c.kind not in SCORE_KINDS]
    groups = (
        ("paper", change_set.of("paper")),
        ("theme", change_set.of("theme")),
        ("finding", [c for c in listed if c.cause != COLLECTION]),
        ("judge score", [c for c in change_set.changes if c.kind in SCORE_KINDS]),
    )
    moved = [c for c in listed if c.cause == COLLECTION]
    parts = [
        # "2 themes changed, 1 new"
        ", ".join(
            f"{_plural(n, noun) if i == 0 else n} {change}"
            for i, (change, n) in enumerate(_counts(changes).items())
        )
        for noun, changes in groups
        if changes
    ]
    if moved:
        parts.append(f"{_plural(len(moved), 'other finding')} moved through collection-wide steps")
    return f"since the build of {when(change_set.previous_built_at)}: " + "; ".join(parts)


def finding_groups(findings: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """``as_data``'s findings (judge scores aside) as a digest lists them: the new, changed and gone
    findings a changed paper, setting or model is behind, then those moved through collection-wide
    steps (``THROUGH_COLLECTION``), each group with its title; empty groups left out."""
    listed = [f for f in findings if f["kind"] not in SCORE_KINDS]
    groups = [
        (
            f"{change.capitalize()} findings",
            [f for f in listed if f["change"] == change and f["cause"] != COLLECTION],
        )
        for change in ("new", "changed", "gone")
    ]
    groups.append((MOVED_TITLE, [f for f in listed if f["cause"] == COLLECTION]))
    return [(title, group) for title, group in groups if group]


def through_collection(data: Mapping[str, Any]) -> list[str]:
    """How each method whose findings moved through the collection reads every paper, one sentence
    each (``as_data``'s ``through_collection``)."""
    return [
        f"{SECTION_TITLES.get(section, section)}: {how}."
        for section, how in data["through_collection"].items()
    ]


def sentence(line: str) -> str:
    """A headline as a sentence of its own: capitalised, with its full stop."""
    return line[:1].upper() + line[1:] + "."


def _counts(changes: Sequence[Change]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.change] = counts.get(change.change, 0) + 1
    return counts


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def as_data(change_set: ChangeSet) -> dict[str, Any]:
    """The change set as plain data: papers, themes and findings, each naming its papers."""
    titles = change_set.titles

    def cited(doc_ids: Sequence[str]) -> list[dict[str, str]]:
        return [{"doc_id": doc, "title": titles.get(doc, doc)} for doc in doc_ids]

    themes = change_set.of("theme")
    papers = []
    for change in change_set.of("paper"):
        joined = [
            {"theme_id": int(theme.key), "label": theme.subject}
            for theme in themes
            if change.key in theme.detail.get("papers_gained", ())
            or (theme.change == "new" and change.key in theme.doc_ids)
        ]
        papers.append(
            {
                "doc_id": change.key,
                "title": change.subject,
                "change": change.change,
                **change.detail,
                "themes_joined": joined,
            }
        )
    findings = sorted(
        (c for c in change_set.changes if c.kind in FINDING_KINDS),
        key=lambda c: (
            c.cause != PAPERS,
            ("new", "changed", "gone").index(c.change),
            c.section or "",
            c.kind,
        ),
    )
    return {
        "collection": change_set.collection,
        "build": change_set.build_id,
        "built_at": change_set.built_at,
        "previous_build": change_set.previous_build_id,
        "previous_built_at": change_set.previous_built_at,
        "first": change_set.first,
        "changed": change_set.changed,
        "headline": headline(change_set),
        "papers": papers,
        "themes": [
            {
                "theme_id": int(theme.key),
                "label": theme.subject,
                "change": theme.change,
                "previous_label": theme.before if theme.change == "changed" else None,
                "papers_gained": cited(theme.detail.get("papers_gained", ())),
                "papers_lost": cited(theme.detail.get("papers_lost", ())),
                "papers": theme.detail.get("papers"),
            }
            for theme in themes
        ],
        "findings": [
            {
                "kind": change.kind,
                "method": change.method,
                "section": change.section,
                "key": change.key,
                "change": change.change,
                "cause": change.cause,
                "subject": change.subject,
                "before": change.before,
                "after": change.after,
                "cites": cited(change.doc_ids),
                "drawn_from": cited(change.detail.get("drawn_from", ())),
                "chunk_ids": list(change.chunk_ids),
                **({"writer": change.detail["writer"]} if "writer" in change.detail else {}),
            }
            for change in findings
        ],
        # How each method whose findings (judge scores aside) moved through the collection reads
        # every paper.
        "through_collection": {
            section: THROUGH_COLLECTION[section]
            for section in dict.fromkeys(
                c.section for c in findings if c.cause == COLLECTION and c.kind not in SCORE_KINDS
            )
            if section in THROUGH_COLLECTION
        },
        "unchanged": dict(change_set.unchanged),
        "settings_changed": list(change_set.settings_changed),
    }


def as_markdown(data: Mapping[str, Any], page_link: str | None = "index.html") -> str:
    """``as_data``'s digest in Markdown; ``page_link``: the collection's page, which each finding
    links to its section of (None: no links)."""
    lines = [
        f"## What changed in `{data['collection']}`",
        "",
        sentence(data["headline"]),
    ]
    if data["first"] or not data["changed"]:
        return "\n".join(lines) + "\n"
    compared = (
        f"Build `{data['build']}` ({when(data['built_at'])}) against build `{data['previous_build']}` "
        f"({when(data['previous_built_at'])})."
    )
    lines += ["", compared]
    if data["papers"]:
        lines += ["", "### Papers", ""]
        for paper in data["papers"]:
            joined = ", ".join(f"{t['theme_id']} “{t['label']}”" for t in paper["themes_joined"])
            lines.append(
                f"- {paper['change']}: **{paper['title']}** ({paper['file']}; chunks +{paper['chunks_added']} "
                f"−{paper['chunks_removed']})"
                + (f"; joined themes {joined}" if joined else "")
                + "".join(
                    f"; {name}: {v['before']!r} → {v['after']!r}"
                    for name, v in paper.get("fields", {}).items()
                )
            )
    if data["themes"]:
        lines += ["", "### Themes", ""]
        for theme in data["themes"]:
            moves = theme_moves(theme)
            lines.append(
                f"- {theme['change']}: theme {theme['theme_id']} “{theme['label']}”"
                + (f": {moves}" if moves else "")
            )
    for title, listed in finding_groups(data["findings"]):
        lines += ["", f"### {title} ({len(listed)}: {by_method(listed)})", ""]
        if title == MOVED_TITLE:
            lines += [MOVED_LEAD, "", *(f"- {line}" for line in through_collection(data)), ""]
        lines += [_finding_line(finding, page_link) for finding in listed[:MARKDOWN_LISTED]]
        if len(listed) > MARKDOWN_LISTED:
            lines.append(
                f"- … and {len(listed) - MARKDOWN_LISTED} more (`insight-assets changes --json` lists them all)"
            )
    scores = scores_line(data["findings"])
    if scores:
        lines += ["", scores]
    unchanged = ", ".join(_plural(n, kind) for kind, n in data["unchanged"].items() if n)
    if unchanged:
        lines += ["", f"Unchanged: {unchanged}."]
    return "\n".join(lines) + "\n"


def theme_moves(theme: Mapping[str, Any]) -> str:
    """What happened to a theme (``as_data``'s entry): the papers it gained and lost, its old label."""
    moves = [
        f"{verb} {', '.join(p['title'] for p in theme[key])}"
        for verb, key in (("gained", "papers_gained"), ("lost", "papers_lost"))
        if theme[key]
    ]
    if theme["previous_label"] and theme["previous_label"] != theme["label"]:
        moves.append(f"was “{theme['previous_label']}”")
    return "; ".join(moves)


def scores_line(findings: Sequence[Mapping[str, Any]]) -> str:
    """The changed scores (``SCORE_KINDS``) in one sentence, or "" when none changed."""
    scores = [f for f in findings if f["kind"] in SCORE_KINDS]
    if not scores:
        return ""
    counts = _counts([Change(f["kind"], f["key"], f["change"], f["subject"]) for f in scores])
    changes = ", ".join(f"{n} {change}" for change, n in counts.items())
    return f"Judge scores: {changes} ({by_method(scores)}; `insight-assets changes --json` lists each)."


def by_method(findings: Sequence[Mapping[str, Any]]) -> str:
    """How many of ``findings`` each method's section holds: ``InsightGen 12, XSum 3``."""
    counts: dict[str, int] = {}
    for finding in findings:
        where = SECTION_TITLES.get(finding["section"], finding["section"])
        counts[where] = counts.get(where, 0) + 1
    return ", ".join(f"{where} {n}" for where, n in counts.items())


def _finding_line(finding: Mapping[str, Any], page_link: str | None) -> str:
    where = SECTION_TITLES.get(finding["section"], finding["section"])
    name = f"{where} {finding['kind']} ({finding['method']})"
    if page_link:
        name = f"[{name}]({page_link}#method-{finding['section']})"
    text = finding["before"] if finding["change"] == "gone" else finding["after"]
    line = f"- {name} on “{_snippet(finding['subject'], 160)}”: {_snippet(text)}"
    if finding["change"] == "changed":
        line += f" (was: {_snippet(finding['before'])}; why: {CAUSES[finding['cause']]})"
    cites = "; ".join(p["title"] for p in finding["cites"])
    drawn = "; ".join(p["title"] for p in finding.get("drawn_from", ()))
    return line + (f" Cites: {cites}." if cites else "") + (f" Made from: {drawn}." if drawn else "")


def _snippet(text: str | None, length: int = _SNIPPET) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= length else flat[: length - 1].rstrip() + "…"
