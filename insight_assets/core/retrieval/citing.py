"""Passages shown to a model under short aliases, and the citations it writes back.

A prompt shows its passages as ``[S1] (Title, p. 3) text``; the model cites them as ``[S1]`` or
``[S2, S5]``. Before a text is stored, the aliases become chunk ids (``[id2; id5]``), so a text
keeps its sources whatever prompt it passes through next (``aliased`` numbers them again for the
next prompt), and people read them as ``(Title, p. 3; Other title, pp. 4–5)``; a paper from a
library is cited with its citekey or DOI too: ``(Title, @lo2020s2orc, p. 3)``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import lazy_regex

from ..text import sentence_texts

if TYPE_CHECKING:
    from insight_assets.core.storage.stores import Warehouse

    from .search import Hit

# A citation as the models write it: "[S3]" or "[S2, S7]".
ALIAS_CITATION = lazy_regex(r"\[(S\d+(?:\s*,\s*S\d+)*)\]")
# A citation as it is stored: "[<chunk id>]" or "[<chunk id>; <chunk id>]".
CHUNK_CITATION = lazy_regex(r"\[([0-9a-f]{16,}(?:; [0-9a-f]{16,})*)\]")


@dataclass(frozen=True)
class Source:
    """A chunk as a citation: where it is, for the table (chunk id) and for people (title, pages)."""

    chunk_id: str
    doc_id: str
    title: str
    page_start: int
    page_end: int
    text: str = ""
    # The paper's citekey ("@key") or DOI ("doi:10..."), from its library entry; '' for neither.
    cite: str = ""

    @property
    def label(self) -> str:
        pages = (
            f"p. {self.page_start}"
            if self.page_start == self.page_end
            else f"pp. {self.page_start}\u2013{self.page_end}"
        )
        return f"{self.title}, {self.cite + ', ' if self.cite else ''}{pages}"

    @classmethod
    def of(cls, hit: Hit) -> Source:
        return cls(hit.chunk_id, hit.doc_id, hit.title, hit.page_start, hit.page_end, hit.text, hit.cite)


_SOURCE_COLUMNS = """c.chunk_id, c.doc_id, d.title, c.page_start, c.page_end, c.text,
                  coalesce('@' || p.citekey, 'doi:' || p.doi, '') AS cite
           FROM chunks c JOIN parsed_documents d USING (collection, doc_id)
           LEFT JOIN papers p ON p.collection = c.collection AND p.doc_id = c.doc_id"""


def load_sources(warehouse: Warehouse, collection: str, profile: str) -> dict[str, Source]:
    """Every ``profile`` chunk as a citable source, by chunk id, in (document, position) order."""
    rows = warehouse.rows(
        f"""SELECT {_SOURCE_COLUMNS}
           WHERE c.collection = ? AND c.profile = ? ORDER BY d.file, c.chunk_index""",
        [collection, profile],
    )
    return _sources(rows)


def source_with_neighbours(
    warehouse: Warehouse, collection: str, chunk_id: str, neighbours: int = 1
) -> tuple[list[Source], int]:
    """The chunk ``chunk_id`` of ``collection`` with up to ``neighbours`` chunks either side of it
    in its paper (same profile), in reading order, and the chunk's place in that list; ``([], -1)``
    when the collection has no such chunk."""
    rows = warehouse.rows(
        f"""WITH wanted AS (SELECT doc_id, profile, chunk_index FROM chunks WHERE collection = ? AND chunk_id = ?)
           SELECT {_SOURCE_COLUMNS}
           JOIN wanted w ON c.doc_id = w.doc_id AND c.profile = w.profile
           WHERE c.collection = ? AND c.chunk_index BETWEEN w.chunk_index - ? AND w.chunk_index + ?
           ORDER BY c.chunk_index""",
        [collection, chunk_id, collection, neighbours, neighbours],
    )
    found = list(_sources(rows).values())
    return found, next((i for i, source in enumerate(found) if source.chunk_id == chunk_id), -1)


def _sources(rows: list[dict]) -> dict[str, Source]:
    return {
        row["chunk_id"]: Source(
            row["chunk_id"],
            row["doc_id"],
            row["title"] or row["doc_id"][:12],
            row["page_start"],
            row["page_end"],
            row["text"],
            row["cite"],
        )
        for row in rows
    }


def alias(position: int) -> str:
    """The alias of the passage at ``position`` (0-based): S1, S2..."""
    return f"S{position + 1}"


def passage(position: int, hit: Hit | Source) -> dict[str, str]:
    """A passage as a prompt shows it: alias, source label, text."""
    source = hit if isinstance(hit, Source) else Source.of(hit)
    return {"id": alias(position), "source": source.label, "text": source.text}


def format_passages(passages: Sequence[Mapping[str, str]]) -> str:
    return "\n\n".join(f"[{p['id']}] ({p['source']}) {' '.join(p['text'].split())}" for p in passages)


def cited_aliases(text: str) -> list[str]:
    """The aliases ``text`` cites, in order of first citation: "[S2, S5] ... [S1]" gives S2, S5, S1."""
    found = (name.strip() for group in ALIAS_CITATION.findall(text) for name in group.split(","))
    return list(dict.fromkeys(found))


# How ``unknown_citations`` names the problem; a model call rejected for it carries these words in
# its error, which is how a check tells "the writer invented a source" from other failures.
NOT_AMONG_SOURCES = "which are not among the sources"


def unknown_citations(text: str, known: set[str]) -> list[str]:
    """A grounding problem when ``text`` cites an alias that is not in ``known`` (for a repair)."""
    unknown = [name for name in cited_aliases(text) if name not in known]
    if not unknown:
        return []
    allowed = ", ".join(sorted(known, key=lambda name: int(name[1:])))
    return [f"the text cites {', '.join(unknown)}, {NOT_AMONG_SOURCES}; cite only {allowed}"]


def citation_problems(text: str, given: Collection[str], error: str | None = None) -> list[str]:
    """What is wrong with the citations of a stored text whose writer was given the chunks
    ``given``: an alias still in the text (one that named no given passage, so it never became a
    chunk id), a cited chunk that was not given, or, for a text that was not stored (``error``), a
    writer whose every try cited sources it was not given."""
    problems = [f"cites {name}, which names no passage it was given" for name in cited_aliases(text)]
    allowed = set(given)
    problems += [
        f"cites {cid[:12]}, which it was not given" for cid in cited_chunks(text) if cid not in allowed
    ]
    if error and NOT_AMONG_SOURCES in error:
        problems.append("its writer cited sources it was not given (the output was rejected)")
    return problems


def strip_citations(text: str) -> str:
    """``text`` without its citations, alias ("[S2]") or stored ("[chunk id]"), spaces tidied."""
    return " ".join(ALIAS_CITATION.sub(" ", CHUNK_CITATION.sub(" ", text)).split())


def cited_sentences(texts: Sequence[str]) -> list[tuple[str, str]]:
    """(sentence without its citations, the alias citation it carried) for every sentence of
    ``texts``; a sentence without its own citation takes the next one's (answers cite at a
    clause's end)."""
    pairs = []
    for text in texts:
        pending: list[str] = []
        for sentence in sentence_texts(text):
            marks = ALIAS_CITATION.findall(sentence)
            plain = " ".join(ALIAS_CITATION.sub("", sentence).split())
            pending.append(plain)
            if marks:
                names = dict.fromkeys(m.strip() for group in marks for m in group.split(","))
                citation = "[" + ", ".join(names) + "]"
                pairs.extend((line, citation) for line in pending if line)
                pending = []
    return pairs


def chunk_citations(text: str, ids: Mapping[str, str]) -> str:
    """``text`` with alias citations ("[S2, S5]") replaced by chunk-id citations ("[id2; id5]");
    an alias that is not in ``ids`` is left as it is."""

    def replace(found: re.Match[str]) -> str:
        names = [name.strip() for name in found.group(1).split(",")]
        if not all(name in ids for name in names):
            return found.group(0)
        return "[" + "; ".join(dict.fromkeys(ids[name] for name in names)) + "]"

    return ALIAS_CITATION.sub(replace, text)


def cited_chunks(text: str) -> list[str]:
    """The chunk ids a stored text cites, in order of first citation."""
    return list(dict.fromkeys(cid for group in CHUNK_CITATION.findall(text) for cid in group.split("; ")))


def without_unknown_chunks(text: str, known: Collection[str]) -> str:
    """``text`` with the chunk ids that are not in ``known`` taken out of its citations (a
    citation left empty goes): what a writer made up is not passed on to the next prompt."""

    def keep(found: re.Match[str]) -> str:
        kept = [cid for cid in found.group(1).split("; ") if cid in known]
        return "[" + "; ".join(kept) + "]" if kept else ""

    return CHUNK_CITATION.sub(keep, text)


def render_citations(text: str, sources: Mapping[str, Source]) -> str:
    """A stored text for people: "[id2; id5]" becomes "(Title, p. 3; Other title, pp. 4–5)"."""

    def replace(found: re.Match[str]) -> str:
        labels = [sources[cid].label if cid in sources else cid[:12] for cid in found.group(1).split("; ")]
        return "(" + "; ".join(dict.fromkeys(labels)) + ")"

    return CHUNK_CITATION.sub(replace, text)


def aliased(texts: Sequence[str], first: Sequence[str] = ()) -> tuple[list[str], dict[str, str]]:
    """Stored texts with their chunk-id citations as aliases S1, S2..., and the aliases' chunk ids.

    The chunks in ``first`` (a prompt's own passages) take the first aliases, in their order; the
    texts' cited chunks follow in order of first citation across all texts.
    """
    order = list(dict.fromkeys([*first, *(cid for text in texts for cid in cited_chunks(text))]))
    names = {cid: alias(i) for i, cid in enumerate(order)}
    rewritten = [
        CHUNK_CITATION.sub(lambda f: "[" + ", ".join(names[c] for c in f.group(1).split("; ")) + "]", text)
        for text in texts
    ]
    return rewritten, {name: cid for cid, name in names.items()}
