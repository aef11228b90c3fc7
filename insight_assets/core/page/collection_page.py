"""The collection's page: one self-contained HTML file that shows what every method made of a
collection, side by side.

Self-contained: styles inline, pictures as data URIs, no script and no request to any server, so
it opens from disk, offline, and can be mailed. The headline numbers come first; tables scroll
sideways in their own box instead of widening the page, so it reads on a phone and a laptop.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from insight_assets.core.papers import citation_label

from .headlines import OFFLINE_PREFIX, StoredHeadline

STYLE = """
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6575; --line: #d9dee7; --accent: #2456a6; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; } h2 { font-size: 1.3rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
.numbers { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: 0.5rem;
  list-style: none; padding: 0; margin: 1rem 0; }
.numbers li { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; }
.numbers b { display: block; font-size: 1.6rem; line-height: 1.2; }
.standin { background: #fff4d6; border: 1px solid #e7c66b; border-radius: 6px; padding: 0.5rem 0.75rem; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f5f9; white-space: nowrap; }
img { max-width: 100%; height: auto; border: 1px solid var(--line); }
nav { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; } nav a { color: var(--accent); }
.answers { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0.75rem; }
.answers article { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; min-width: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; font-size: 0.9rem; margin: 0.5rem 0; }
.muted { color: var(--muted); font-size: 0.9rem; } .failed { color: #a3261b; }
"""


@dataclass(frozen=True)
class CollectionFacts:
    """What the collection holds: its papers, the files that could not be read (and why), its
    chunks per profile, its citation links and their picture."""

    papers: Sequence[Mapping[str, Any]]  # title, file, pages; library metadata (ingest.paper_names)
    problems: Sequence[Mapping[str, Any]]  # file, kind, severity, message
    chunks: Mapping[str, int]  # profile -> chunks
    citation_links: int
    citation_graph_png: bytes = field(repr=False, default=b"")


@dataclass(frozen=True)
class MethodSection:
    """A method on the page: its headline (None: its report was not built), and its report file."""

    method: str
    title: str
    paper: str
    report_file: str
    headline: StoredHeadline | None


@dataclass(frozen=True)
class SideBySide:
    """One question and every method's answer (``asking.Answered.as_dict()``), or why none was asked."""

    question: str | None
    answers: Sequence[Mapping[str, Any]] = ()
    why_not: str = ""


def standins(sections: Sequence[MethodSection], side_by_side: SideBySide) -> list[str]:
    """Who wrote, judged or answered with an offline stand-in, as "method wrote" phrases."""
    found = []
    for section in sections:
        if section.headline is None:
            continue
        headline = section.headline.headline
        for role, label in (("wrote", headline.writer), ("judged", headline.judge)):
            if label.startswith(OFFLINE_PREFIX):
                found.append(f"{section.method} {role}")
    if any(str(a.get("model", "")).startswith(OFFLINE_PREFIX) for a in side_by_side.answers):
        found.append("the answers to the question")
    return found


def answered_the_question(answer: dict) -> bool:
    """Whether a method's answer (``asking.Answered.as_dict``) answers: it did not fail, and did not
    say that the papers hold no answer ("Not found in the context.")."""
    return answer.get("error") is None and not (answer.get("answer") or {}).get("abstained")


def render_page(
    collection: str,
    facts: CollectionFacts,
    sections: Sequence[MethodSection],
    side_by_side: SideBySide,
    since: str = "",
) -> str:
    """The page; ``since``: its first section, what the last build changed (``changes_section``)."""
    built = sum(section.headline is not None for section in sections)
    numbers = [
        (len(facts.papers), "papers"),
        (len({p["file"] for p in facts.problems if p["severity"] == "error"}), "files not usable"),
        (sum(facts.chunks.values()), "chunks"),
        (facts.citation_links, "citation links"),
        (f"{built} / {len(sections)}", "method reports"),
    ]
    if side_by_side.answers:
        answered = sum(map(answered_the_question, side_by_side.answers))
        numbers.append((f"{answered} / {len(side_by_side.answers)}", "methods answered the question"))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(collection)}: insight_assets</title><style>{STYLE}</style></head><body><main>",
        '<header id="top">',
        f"<h1>Collection <code>{escape(collection)}</code></h1>",
        '<ul class="numbers">'
        + "".join(f"<li><b>{escape(str(n))}</b>{escape(what)}</li>" for n, what in numbers)
        + "</ul>",
    ]
    offline = standins(sections, side_by_side)
    if offline:
        parts.append(
            '<p class="standin"><strong>Offline stand-ins, not a language model:</strong> '
            + escape(", ".join(offline))
            + ". Their texts are extracted from the papers and their scores are lexical measures; "
            "configure a model (INSIGHT_ASSETS_LLM_PROVIDER) for real ones.</p>"
        )
    parts.append(_models_table(sections, side_by_side))
    parts.append(
        "<nav>"
        + ('<a href="#changes">Since the last build</a>' if since else "")
        + '<a href="#collection">Collection</a><a href="#question">Question</a>'
        + "".join(f'<a href="#method-{escape(s.method)}">{escape(s.method)}</a>' for s in sections)
        + "</nav></header>"
    )
    if since:
        parts.append(since)
    parts.append(_collection_section(facts))
    parts.append(_question_section(side_by_side, sections))
    parts.extend(_method_section(section) for section in sections)
    parts.append("</main></body></html>")
    return "\n".join(parts)


def _models_table(sections: Sequence[MethodSection], side_by_side: SideBySide) -> str:
    answered = {a["method"]: a for a in side_by_side.answers}
    rows = []
    for section in sections:
        headline = section.headline.headline if section.headline else None
        answer = answered.get(section.method)
        rows.append(
            {
                "method": section.method,
                "wrote": (headline.writer if headline else "") or "-",
                "judged": (headline.judge if headline else "") or "-",
                "answered the question with": answer["model"] if answer else "-",
                "report": f'<a href="{escape(section.report_file)}">{escape(section.report_file)}</a>'
                if section.headline
                else "not built yet",
            }
        )
    return _table(rows, ["method", "wrote", "judged", "answered the question with", "report"], raw={"report"})


def _collection_section(facts: CollectionFacts) -> str:
    papers = [_paper_row(paper) for paper in facts.papers]
    columns = ["title", "authors", "year", "cite as", "file", "pages"]
    if not any(paper.get("authors") or paper.get("year") or paper.get("cite as") for paper in papers):
        columns = ["title", "file", "pages"]  # a folder of PDFs: nothing but what the PDFs say
    chunks = ", ".join(f"{count} {profile}" for profile, count in sorted(facts.chunks.items())) or "none"
    parts = [
        '<section id="collection" data-section="collection"><h2>The collection</h2>',
        f"<h3>Papers ({len(papers)})</h3>",
        _table(papers, columns, raw={"title"}),
        f"<h3>Files with problems ({len({p['file'] for p in facts.problems})})</h3>",
        _table(facts.problems, ["file", "severity", "kind", "message"])
        if facts.problems
        else '<p class="muted">None: every file was read.</p>',
        f"<p>Chunks: {escape(chunks)}.</p>",
        f"<h3>Citation graph ({facts.citation_links} links)</h3>",
        _picture(facts.citation_graph_png, "the papers of the collection and which cites which")
        if facts.citation_graph_png
        else '<p class="muted">No picture.</p>',
        "</section>",
    ]
    return "\n".join(parts)


def _paper_row(paper: Mapping[str, Any]) -> dict:
    """A paper as the page lists it: its title linking back to its library item where it has one
    (``zotero://select/...`` opens it in Zotero), its authors, year and how to cite it."""
    title = escape(str(paper["title"]))
    link = paper.get("link")
    authors = list(paper.get("authors") or [])
    return {
        "title": f'<a href="{escape(link)}">{title}</a>' if link else title,
        # Names are "Family, Given": a semicolon between people.
        "authors": "; ".join(authors[:3]) + (" et al." if len(authors) > 3 else ""),
        "year": paper.get("year"),
        "cite as": citation_label(paper),
        "file": paper["file"],
        "pages": paper["pages"],
    }


def _question_section(side_by_side: SideBySide, sections: Sequence[MethodSection]) -> str:
    parts = ['<section id="question" data-section="question"><h2>One question, every method</h2>']
    if side_by_side.question is None or not side_by_side.answers:
        parts.append(f'<p class="muted">{escape(side_by_side.why_not or "No question was asked.")}</p>')
        return "\n".join([*parts, "</section>"])
    titles = {s.method: s.title for s in sections}
    parts.append(f'<p><strong>Question:</strong> {escape(side_by_side.question)}</p><div class="answers">')
    for answer in side_by_side.answers:
        method = answer["method"]
        parts.append(f'<article data-method="{escape(method)}"><h3>{escape(titles.get(method, method))}</h3>')
        found = answer.get("answer")
        if found is None:
            parts.append(f'<p class="failed">Could not answer: {escape(str(answer.get("error")))}</p>')
        else:
            parts.append(f"<pre>{escape(found['text'])}</pre>")
            if found.get("abstained"):
                parts.append(
                    '<p class="failed">It found no answer in the papers: not counted as answered.</p>'
                )
            if found["citations"]:
                parts.append(
                    "<p><strong>Cites:</strong> "
                    + "; ".join(escape(citation["label"]) for citation in found["citations"])
                    + "</p>"
                )
            if found.get("details"):
                parts.append(
                    f"<details><summary>How</summary><pre>{escape(found['details'])}</pre></details>"
                )
        parts.append(
            f'<p class="muted">{escape(str(answer["model"]))}: {answer["calls"]} model calls '
            f"({answer['cache_hits']} from cache), {answer['input_tokens']} tokens in, "
            f"{answer['output_tokens']} out, ${answer['cost_usd']:.4f}, {answer['seconds']:.1f} s</p></article>"
        )
    parts.append("</div></section>")
    return "\n".join(parts)


def _method_section(section: MethodSection) -> str:
    parts = [
        f'<section id="method-{escape(section.method)}" data-section="method" data-method="{escape(section.method)}">',
        f"<h2>{escape(section.title)}</h2>",
        f'<p class="muted">After: {escape(section.paper)}.</p>',
    ]
    stored = section.headline
    if stored is None:
        parts.append(
            f'<p class="muted">Its report has not been built for this collection: materialize '
            f"<code>{escape(section.report_file)}</code>'s asset (or the whole collection).</p>"
        )
        return "\n".join([*parts, "</section>"])
    for table in stored.headline.tables:
        parts.append(f"<h3>{escape(table.caption)}</h3>")
        parts.append(_table(table.rows, table.columns) if table.rows else '<p class="muted">No rows.</p>')
    if stored.chart:
        parts.append(_picture(stored.chart, stored.chart_caption))
    if stored.headline.notes:
        parts.append("<ul>" + "".join(f"<li>{escape(note)}</li>" for note in stored.headline.notes) + "</ul>")
    parts.append(
        f'<p><a href="{escape(section.report_file)}">The full report ({escape(section.report_file)})</a></p>'
    )
    return "\n".join([*parts, "</section>"])


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], raw: set[str] = frozenset()) -> str:
    """A table in a box of its own that scrolls sideways; cells escaped unless their column is ``raw``."""

    def cell(column: str, value: Any) -> str:
        text = "" if value is None else _number(value) if isinstance(value, float) else str(value)
        return text if column in raw else escape(text)

    head = "".join(f"<th>{escape(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(c, row.get(c))}</td>" for c in columns) + "</tr>" for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _number(value: float) -> str:
    """Three significant digits, but never an exponent for a large number."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _picture(png: bytes, caption: str) -> str:
    encoded = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{encoded}" alt="{escape(caption)}">'
        f'<figcaption class="muted">{escape(caption)}</figcaption></figure>'
    )
