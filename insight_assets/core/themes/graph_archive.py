"""The theme graphs of a collection's last builds, kept by what each was built from.

Themes are carried from build to build (``theme_updates.py``), so a graph depends on the builds
before it: a collection that gains a paper (whose chunks split a theme) and then loses it again
would keep the split, not the themes it had before. Every summary, context and judgement hanging
on them would be asked again for a collection that is exactly what it was two builds ago. So each
built graph is kept (``core/storage/kept_builds.py``, under the asset ``theme_graph``) by the digest
of its inputs (the chunks' ids and texts in order, every theme setting, the embedder and the
asset's code version); a build whose inputs have that digest gets that graph back as it was. The
last ``KEEP_GRAPHS`` per collection are kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.storage import kept_builds
from insight_assets.core.storage.stores import Warehouse
from insight_assets.core.themes.clustering import ThemeGraph

if TYPE_CHECKING:
    from insight_assets.core.startup.lazy import pa
    from insight_assets.core.themes.clustering import ThemeGraphSettings

KEEP_GRAPHS = 5
_ASSET = "theme_graph"
_PARTS = ("theme_clusters", "theme_edges", "theme_assignments")


def built_from(
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    settings: ThemeGraphSettings,
    embedder: str,
    code_version: str,
) -> str:
    """The digest of everything a theme graph is made from but the builds before it."""
    digest = hashlib.sha256()
    header = {"settings": settings.model_dump(mode="json"), "embedder": embedder, "code": code_version}
    digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        digest.update(f"\x00{chunk_id}\x00".encode())
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return digest.hexdigest()


def kept_graph(warehouse: Warehouse, collection: str, inputs: str) -> tuple[ThemeGraph, str] | None:
    """The graph a build of ``collection`` made from ``inputs`` (a ``built_from`` digest), with when
    it was kept; None if none is kept."""
    build = kept_builds.kept(warehouse, collection, _ASSET, inputs)
    if build is None:
        return None
    return ThemeGraph.from_tables(*(build.tables[part] for part in _PARTS)), build.kept_at


def keep_graph(warehouse: Warehouse, collection: str, inputs: str, tables: dict[str, pa.Table]) -> None:
    """Keep a graph (``tables``: its ``ThemeGraph.to_tables``) by what it was built from."""
    build = kept_builds.KeptBuild(inputs, "", kept_builds.content_version(tables), "", tables)
    kept_builds.keep(warehouse, collection, _ASSET, build, inputs, last=KEEP_GRAPHS)
