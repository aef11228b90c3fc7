"""What the last build changed, on the collection's page ("Since the last build") and as a page of
its own per build that changed something (``digest_page``), from the digest's structured form
(``core/changes/digest.as_data``), so that the page says what the command line and the MCP tool say."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from insight_assets.core.changes.digest import (
    CAUSES,
    MOVED_LEAD,
    MOVED_TITLE,
    SECTION_TITLES,
    by_method,
    finding_groups,
    scores_line,
    sentence,
    theme_moves,
    through_collection,
    when,
)

# Findings shown per group on the page; the digest's own page lists them all.
ON_PAGE = 12


def since_section(
    data: Mapping[str, Any] | None,
    earlier: Sequence[tuple[str, str]],
    page: str = "",
    listed: int | None = ON_PAGE,
) -> str:
    """The "Since the last build" section. ``data``: the last change set's digest (None: none yet);
    ``earlier``: ``(link, headline)`` of the kept digest pages, newest first; ``page``: the
    collection page's address from where this is shown (its method sections are linked)."""
    parts = ['<section id="changes" data-section="changes"><h2>Since the last build</h2>']
    if data is None:
        parts.append("<p>No build of this collection has compared with another yet.</p>")
    else:
        parts.append(f'<p data-headline="1">{escape(sentence(data["headline"]))}</p>')
        if data["changed"] and not data["first"]:
            parts.append(
                f'<p class="muted">This build: {escape(when(data["built_at"]))}; the one before: '
                f"{escape(when(data['previous_built_at']))}.</p>"
            )
            parts.append(_papers(data["papers"]))
            parts.append(_themes(data["themes"]))
            parts.append(_findings(data, page, listed))
    if earlier:
        parts.append("<h3>Earlier builds' digests</h3><ul>")
        parts += [f'<li><a href="{escape(link)}">{escape(text)}</a></li>' for link, text in earlier]
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def digest_page(data: Mapping[str, Any], style: str) -> str:
    """One build's digest as a page of its own, beside the collection's page (one folder down)."""
    title = f"{data['collection']}: what changed on {when(data['built_at'])}"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title><style>{style}</style></head><body><main>",
            f'<p><a href="../index.html">← the collection\'s page</a></p><h1>{escape(title)}</h1>',
            since_section(data, (), page="../index.html", listed=None),
            "</main></body></html>",
        ]
    )


def _titles(papers: Sequence[Mapping[str, str]]) -> str:
    return "; ".join(escape(paper["title"]) for paper in papers)


def _papers(papers: Sequence[Mapping[str, Any]]) -> str:
    if not papers:
        return "<p>No paper came in, left or changed.</p>"
    items = []
    for paper in papers:
        joined = ", ".join(f"{t['theme_id']} “{escape(t['label'])}”" for t in paper["themes_joined"])
        fields = "".join(
            f"; {escape(name)}: {escape(repr(v['before']))} → {escape(repr(v['after']))}"
            for name, v in paper.get("fields", {}).items()
        )
        items.append(
            f'<li data-change="{escape(paper["change"])}"><strong>{escape(paper["change"])}</strong>: '
            f'{escape(paper["title"])} <span class="muted">({escape(paper["file"])}; chunks '
            f"+{paper['chunks_added']} −{paper['chunks_removed']})</span>"
            + (f"; joined themes {joined}" if joined else "")
            + fields
            + "</li>"
        )
    return "<h3>Papers</h3><ul>" + "".join(items) + "</ul>"


def _themes(themes: Sequence[Mapping[str, Any]]) -> str:
    if not themes:
        return ""
    items = []
    for theme in themes:
        moves = theme_moves(theme)
        items.append(
            f"<li><strong>{escape(theme['change'])}</strong>: theme {theme['theme_id']} “{escape(theme['label'])}”"
            + (f": {escape(moves)}" if moves else "")
            + "</li>"
        )
    return "<h3>Themes</h3><ul>" + "".join(items) + "</ul>"


def _findings(data: Mapping[str, Any], page: str, listed: int | None) -> str:
    findings = data["findings"]
    parts = []
    for title, group in finding_groups(findings):
        parts.append(f"<h3>{escape(title)} ({len(group)}: {escape(by_method(group))})</h3>")
        if title == MOVED_TITLE:
            parts.append(f"<p>{escape(MOVED_LEAD)}</p><ul>")
            parts += [f"<li>{escape(line)}</li>" for line in through_collection(data)]
            parts.append("</ul>")
        parts.append("<ul>")
        parts += [_finding(finding, page) for finding in group[:listed]]
        if listed is not None and len(group) > listed:
            parts.append(f'<li class="muted">… and {len(group) - listed} more in this build\'s digest.</li>')
        parts.append("</ul>")
    scores = scores_line(findings)
    if scores:
        parts.append(f"<p>{escape(scores)}</p>")
    return "".join(parts)


def _finding(finding: Mapping[str, Any], page: str) -> str:
    where = SECTION_TITLES.get(finding["section"], finding["section"])
    text = finding["before"] if finding["change"] == "gone" else finding["after"]
    item = (
        f'<li data-kind="{escape(finding["kind"])}"><a href="{escape(page)}#method-{escape(finding["section"])}">'
        f'{escape(where)} {escape(finding["kind"])}</a> <span class="muted">({escape(finding["method"])}) on '
        f"“{escape(finding['subject'])}”</span><pre>{escape(text or '')}</pre>"
    )
    if finding["change"] == "changed":
        item += f'<p class="muted">Was: {escape(finding["before"] or "")}<br>Why: {escape(CAUSES[finding["cause"]])}</p>'
    if finding["cites"]:
        item += f'<p class="muted">Cites: {_titles(finding["cites"])}</p>'
    if finding.get("drawn_from"):
        item += f'<p class="muted">Made from: {_titles(finding["drawn_from"])}</p>'
    return item + "</li>"
