"""MkDocs hooks: pages that are made from the code, so that they cannot drift from it.

- ``<!-- assets -->`` becomes the table of every asset, read from the Dagster definitions;
- ``<!-- include: PATH -->`` becomes the file at PATH (relative to the repository), its first
  heading dropped and its links into ``docs/`` made relative to the site: one text for a reader of
  the source tree and of the site (the README is the site's home page).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r"<!-- include: (\S+) -->")


def _first_sentence(text: str) -> str:
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    match = re.search(r"(?<=[.:])\s+(?=[A-Z(])", paragraph)
    return paragraph[: match.start()] if match else paragraph


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def asset_table() -> str:
    """One row per asset in build order: its defs folder, what it holds (its description's first
    sentence), what it reads, the checks that guard it and the stores it writes (its kinds)."""
    from insight_assets.definitions import defs
    from insight_assets.defs.sources import COLLECTION_FILES

    graph = defs.resolve_asset_graph()
    rows = [
        "| asset | folder | what it holds | reads | checks | stored in |",
        "|---|---|---|---|---|---|",
    ]
    for level in graph.toposorted_asset_keys_by_level:
        for key in sorted(level, key=lambda key: key.to_user_string()):
            if key == COLLECTION_FILES:
                continue
            node = graph.get(key)
            reads = sorted(
                parent.to_user_string() for parent in node.parent_keys if parent != COLLECTION_FILES
            )
            checks = sorted(check.name for check in node.check_keys)
            rows.append(
                f"| `{key.to_user_string()}` | {node.group_name} | {_cell(_first_sentence(node.description or ''))} "
                f"| {', '.join(f'`{name}`' for name in reads) or 'the folder'} "
                f"| {', '.join(f'`{name}`' for name in checks) or '—'} "
                f"| {', '.join(sorted(node.kinds - {'pdf', 'sklearn', 'pytorch'})) or '—'} |"
            )
    return "\n".join(rows)


def _included(match: re.Match) -> str:
    text = (ROOT / match.group(1)).read_text(encoding="utf-8")
    return re.sub(r"\A# .*\n", "", text).replace("](docs/", "](")


def on_page_markdown(markdown: str, **_) -> str:
    if "<!-- assets -->" in markdown:
        markdown = markdown.replace("<!-- assets -->", asset_table())
    return INCLUDE.sub(_included, markdown)
