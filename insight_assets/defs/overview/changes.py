"""``collection_changes``: what each build of a collection changed against the one before (see
``core/changes/``), kept in the warehouse, written as a digest (Markdown and a page of its own
under data/reports/<collection>/changes/) and shown as the asset's metadata.

It runs after every method's report and before the collection's page, which opens with it. Reused
like any step when nothing upstream changed: a rebuild that changed nothing does no work and writes
no digest; the command line and the MCP tool tell it from the builds' notes (``store.digest_data``)."""

import datetime
import hashlib
import json
from pathlib import Path

import dagster as dg
from pydantic import Field

from insight_assets.core.changes import store
from insight_assets.core.changes.compare import THEME_KEPT_SHARE, compare
from insight_assets.core.changes.digest import as_data, as_markdown, sentence
from insight_assets.core.changes.snapshot import take_snapshot
from insight_assets.core.page.changes_section import digest_page
from insight_assets.core.page.collection_page import STYLE
from insight_assets.defs.domain import method_pages
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import nothing_to_do
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.resources import StorageResource

DIGESTS = "changes"  # the digests' folder beside the collection's page


class ChangesConfig(dg.Config):
    theme_kept_share: float = Field(
        default=THEME_KEPT_SHARE,
        gt=0.0,
        le=1.0,
        description="A theme of the new theme graph keeps an earlier theme's id when it holds at least "
        "this share of that theme's chunks still in the collection.",
    )


CHECK = "something_changed"


@dg.asset(
    kinds={"duckdb"},
    code_version="1",
    check_specs=[
        collection_check(
            CHECK,
            "collection_changes",
            "Warns when the build has nothing to report: the collection's first build, or one that changed nothing.",
        )
    ],
    **asset_settings("overview", deps=[page.report for page in method_pages()]),
)
def collection_changes(
    context: dg.AssetExecutionContext, config: ChangesConfig, storage: StorageResource
) -> dg.MaterializeResult:
    """What this build changed against the collection's previous one: papers added, removed or
    changed (and their chunks), themes matched by membership with the papers they gained and lost,
    and every method's findings new, changed (with the old text and why) and gone, each naming the
    papers it cites. One row per change in ``changes``; the digest in the metadata."""
    return materialize_each(
        context, storage, lambda collection: _changes(context, config, storage, collection)
    )


def _changes(
    context: dg.AssetExecutionContext, config: ChangesConfig, storage: StorageResource, collection: str
) -> CollectionReport:
    warehouse = storage.warehouse
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    snapshot = take_snapshot(warehouse, collection, context.run_id, now)
    if not snapshot.papers:
        raise nothing_to_do(collection, "no parsed paper to compare: `parsed_documents` holds none.")
    before = store.previous_snapshot(warehouse, collection, context.run_id)
    change_set, kept = compare(before, snapshot, theme_kept_share=config.theme_kept_share)
    store.record(warehouse, change_set, kept)
    data = as_data(change_set)
    metadata = {
        "changes": dg.MetadataValue.md(as_markdown(data, page_link=None)),
        "headline": data["headline"],
        "changed": change_set.changed,
        "dagster/row_count": len(change_set.changes),
    }
    if change_set.changed:
        path = write_digest(Path(storage.reports_dir) / collection, data)
        metadata["digest"] = dg.MetadataValue.path(str(path.resolve()))
    # The content's version: the snapshot without its build, so the page is rebuilt only when
    # something it shows changed.
    content = {**kept.to_json(), "build_id": None, "built_at": None}
    version = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]
    check = dg.AssetCheckResult(
        check_name=CHECK,
        passed=change_set.changed,
        severity=dg.AssetCheckSeverity.WARN,
        description=sentence(data["headline"]),
    )
    return CollectionReport(metadata=metadata, checks=[check], data_version=version)


def digest_page_path(folder: Path, built_at: str, build: str) -> Path:
    """Where the page of a build's digest is: data/reports/<collection>/changes/<when>-<build>.html,
    named by its moment and build (its Markdown beside it, ``.md``)."""
    return folder / DIGESTS / f"{built_at[:19].replace(':', '').replace('-', '')}-{build[:8]}.html"


def write_digest(folder: Path, data: dict) -> Path:
    """The digest of a build that changed something, as Markdown and as a page (``digest_page_path``)."""
    path = digest_page_path(folder, data["built_at"], data["build"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".md").write_text(as_markdown(data, page_link="../index.html"), encoding="utf-8")
    path.write_text(digest_page(data, STYLE), encoding="utf-8")
    return path
