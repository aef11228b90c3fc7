"""Reruns that do no work: a step whose inputs are those of its last complete build returns that
build's report instead of building again.

A step's inputs (``StepInputs``) are its code version, its config, the settings of the models it
uses (each resource's ``identity()``) and the data version of every asset upstream of it: all its
ancestors, not only its parents, since a step may read a grandparent's table. Every build records a
data version (its content's where the asset gives one, else one of its own: ``data_version``), so a
change anywhere upstream reaches every step below it, and a rebuilt step whose content came out the
same stops it.

The warehouse keeps the inputs and the report beside each build's note (``asset_builds``), in the
store that holds the rows they describe: a new warehouse reuses nothing. Not reused: a build that
left work undone (a model call that failed on the way, such as a server error, a failed embedding
batch, a budget stop: the next run retries it), one whose files (the paths in its metadata) or
other outputs (``outputs_present``) are gone, and, when the run asks to retry failures
(``--retry-failed``), one with model calls that failed for good. Such failures (an answer invalid
after its repair, a refused request) are recorded with the cached answers and are final otherwise:
asked again unchanged they would fail again, at a price.

A declared stage keeps everything it makes in the warehouse, or there and in one vector table
(its ``vectors``), so its last few complete builds are kept too, by their inputs
(``core/storage/kept_builds.py``): a step whose inputs are again those of an earlier build (a paper
added, then removed) gets that build's rows, vectors and report back (``restore_kept``) instead of
asking the cache for every answer and doing its own work around them again. Its data version is
its rows' digest, so a stage rebuilt with the same result, or restored, leaves the steps after it
as they were.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from insight_assets.core.storage import kept_builds
from insight_assets.core.storage.stores import VectorStore, Warehouse

# Metadata that counts what a build did (model calls, files parsed, texts embedded, seconds) rather
# than what it made: a reused build does none of it, so a reuse reports these as 0.
_WORK_COUNTS = frozenset(
    {
        "documents_parsed",
        "documents_reused",
        "chunks_embedded",
        "chunks_reused",
        "chunks_pooled",
        "texts_embedded",
        "texts_reused",
        "notes_embedded",
        "notes_reused",
        "words_embedded",
        "words_per_second",
        "rechunked",
    }
)
# Metadata that tells what a build changed (the digest, ``overview/changes.py``): a reuse changed
# nothing, and says so instead of repeating the digest of the build it reuses.
_NEWS = {"changes": "Nothing changed since the last build: this one reused it."}
# Metadata every model-calling step reports (``materialization.llm_metadata``): work left undone that
# the next run must try again.
_UNDONE_COUNTS = {
    "llm_failures_to_retry": "model call(s) failed",
    "llm_budget_refusals": "call(s) refused by the budget",
}


def digest(value: Any) -> str:
    """A short digest of ``value``'s JSON (keys sorted): what a build read, as a key."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class StepInputs:
    """What one step of one collection reads: the parts its result is a function of."""

    code_version: str
    config: str  # digest of the step's config, defaults included
    models: str  # digest of the identities of the resources it uses
    upstream: Mapping[str, str | None]  # every ancestor asset -> its data version

    @property
    def key(self) -> str:
        return digest(dataclasses.asdict(self))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> StepInputs:
        return cls(**json.loads(text))

    def changes_since(self, earlier: StepInputs) -> list[str]:
        """What differs from ``earlier``, in words."""
        changes = []
        if self.code_version != earlier.code_version:
            changes.append(f"code version {earlier.code_version} -> {self.code_version}")
        if self.config != earlier.config:
            changes.append("config changed")
        if self.models != earlier.models:
            changes.append("model or embedder settings changed")
        moved = sorted(
            name
            for name in {*self.upstream, *earlier.upstream}
            if self.upstream.get(name) != earlier.upstream.get(name)
        )
        if moved:
            changes.append(f"upstream changed: {', '.join(moved)}")
        return changes


@functools.cache
def _catalog_dependencies() -> dict[str, frozenset[str]]:
    """Each asset of the code location -> the assets it depends on."""
    from insight_assets.defs.catalog import ALL_ASSETS  # the catalog imports every asset module

    return {
        key.to_user_string(): frozenset(dep.to_user_string() for dep in asset.asset_deps.get(key, ()))
        for asset in ALL_ASSETS
        for key in asset.keys
    }


def built_by_steps(asset: str) -> bool:
    """Whether ``asset`` is one the steps build (not a source such as the collections' folders)."""
    return asset in _catalog_dependencies()


def ancestors(asset: str, parents: frozenset[str]) -> list[str]:
    """Every asset upstream of ``asset`` (whose own dependencies are ``parents``), sorted. An asset
    outside the code location (a test's own) has its parents followed where the catalog knows them."""
    graph = _catalog_dependencies()
    found: set[str] = set()
    stack = list(parents)
    while stack:
        name = stack.pop()
        if name not in found:
            found.add(name)
            stack.extend(graph.get(name, ()))
    return sorted(found)


def step_inputs(context: dg.AssetExecutionContext, builds: Mapping[str, Mapping]) -> StepInputs:
    """The inputs of ``context``'s step for the collection whose build notes are ``builds``."""
    key = context.asset_key
    parents = frozenset(dep.to_user_string() for dep in context.assets_def.asset_deps.get(key, ()))
    identities = {
        name: getattr(context.resources, name).identity()
        for name in sorted(context.assets_def.required_resource_keys)
        if hasattr(getattr(context.resources, name, None), "identity")
    }
    return StepInputs(
        code_version=str(context.assets_def.code_versions_by_key.get(key)),
        config=digest(context.op_execution_context.op_config),
        models=digest(identities),
        upstream={
            name: builds.get(name, {}).get("data_version")
            for name in ancestors(key.to_user_string(), parents)
        },
    )


# -- reports ------------------------------------------------------------------------------------


def undone_work(metadata: Mapping[str, Any]) -> str | None:
    """Why a build's result is not final (model calls that failed, a budget stop), from its metadata.
    The offline stand-in's failures are final: asked again, it fails the same way."""
    if str(metadata.get("llm_provider", "")).startswith("offline"):
        return None
    if "llm_failures_to_retry" not in metadata and "llm_failed_items" in metadata:
        # A build from before failures were recorded: every failure is still to retry.
        metadata = {**metadata, "llm_failures_to_retry": metadata["llm_failed_items"]}
    found = [
        f"{metadata[name]} {words}"
        for name, words in _UNDONE_COUNTS.items()
        if isinstance(metadata.get(name), int) and metadata[name] > 0
    ]
    return "; ".join(found) or None


def without_work(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A build's metadata as a reuse of it reports it: what the build made as it was, what it did
    (``_WORK_COUNTS``, model calls and tokens, seconds) as 0, and what it changed as nothing."""
    reported = {}
    for key, value in metadata.items():
        if key in _NEWS:
            reported[key] = dg.MetadataValue.md(_NEWS[key])
            continue
        number = value.value if isinstance(value, dg.FloatMetadataValue | dg.IntMetadataValue) else value
        is_work = key in _WORK_COUNTS or key.startswith("llm_") or key.endswith("_seconds")
        reported[key] = type(number)(0) if is_work and isinstance(number, int | float) else value
    return reported


def data_version(content: str | None, inputs: StepInputs, run_id: str, incomplete: str | None) -> str:
    """The data version a build records, which the steps below it compare: its content's (the
    asset's own) when it has one and the build left nothing undone; else one of this build's own,
    so that a rebuild (after failed calls, deleted files, a build cut short) reaches them."""
    if content and not incomplete:
        return content
    return digest([content, inputs.key, run_id])


def encode_report(
    metadata: Mapping[str, Any], checks: list[dg.AssetCheckResult], data_version: str | None
) -> str:
    """A build's report as text for the warehouse (Dagster's own serialisation of metadata values)."""
    return dg.serialize_value(
        {
            "metadata": dict(metadata),
            "checks": [
                {
                    "check_name": check.check_name,
                    "passed": check.passed,
                    "severity": check.severity.value,
                    "description": check.description,
                    "metadata": dict(check.metadata or {}),
                }
                for check in checks
            ],
            "data_version": data_version,
        }
    )


def decode_report(text: str) -> tuple[dict[str, Any], list[dg.AssetCheckResult], str | None]:
    """(metadata, checks, data version) of an encoded report."""
    stored = dg.deserialize_value(text)
    checks = [
        dg.AssetCheckResult(
            check_name=check["check_name"],
            passed=check["passed"],
            severity=dg.AssetCheckSeverity(check["severity"]),
            description=check["description"],
            metadata=check["metadata"],
        )
        for check in stored["checks"]
    ]
    return dict(stored["metadata"]), checks, stored["data_version"]


def missing_files(metadata: Mapping[str, Any]) -> list[str]:
    """The files and folders a report points to (its path metadata) that no longer exist."""
    paths = [value.path for value in metadata.values() if isinstance(value, dg.PathMetadataValue)]
    return [path for path in paths if not Path(path).exists()]


@dataclasses.dataclass(frozen=True)
class Reuse:
    """The decision for one step: the stored report to return, or why it is built."""

    report: str | None
    why: str


def decide(
    note: Mapping | None,
    inputs: StepInputs,
    load_report: Callable[[], str | None],
    outputs_present: Callable[[], bool] | None,
    *,
    retry_failed: bool = False,
) -> Reuse:
    """Reuse the build noted in ``note`` (a row of ``Warehouse.builds``) when it read ``inputs``,
    finished its work and its outputs are all there; else say why the step builds."""
    if note is None:
        return Reuse(None, "first build")
    if not note.get("inputs") or not note.get("reported"):
        return Reuse(None, "the last build did not finish, or kept no report")
    if note.get("incomplete"):
        return Reuse(None, f"the last build left work undone ({note['incomplete']})")
    changes = inputs.changes_since(StepInputs.from_json(note["inputs"]))
    if changes:
        return Reuse(None, "; ".join(changes))
    report = load_report()
    if report is None:
        return Reuse(None, "the last build kept no report")
    metadata = decode_report(report)[0]
    failed = metadata.get("llm_failed_items")
    failed = failed.value if isinstance(failed, dg.IntMetadataValue) else failed
    if retry_failed and isinstance(failed, int) and failed > 0:
        return Reuse(None, f"asked to retry its {failed} failed model call(s)")
    gone = missing_files(metadata)
    if gone:
        return Reuse(None, f"its files are gone ({', '.join(gone)})")
    if outputs_present is not None and not outputs_present():
        return Reuse(None, "its outputs outside the warehouse are gone")
    return Reuse(report, f"reused: nothing it reads changed since run {str(note['run_id'])[:8]}")


# -- builds kept by their inputs (core/storage/kept_builds.py) -----------------------------------


def restore_kept(
    warehouse: Warehouse,
    collection: str,
    asset: str,
    inputs: StepInputs,
    run_id: str,
    config: Mapping[str, Any] | None,
    *,
    retry_failed: bool,
    otherwise: Reuse,
    vectors: VectorStore | None = None,
) -> Reuse:
    """An earlier kept build of the step that read these very ``inputs``, put back as its last build
    (its rows and its table in ``vectors`` written again, its note recorded for the next run to
    compare with), else ``otherwise``."""
    build = restorable(
        warehouse, collection, asset, inputs, retry_failed=retry_failed, vectors_kind=vectors and vectors.kind
    )
    if build is None:
        return otherwise
    warehouse.forget_build_inputs(collection, asset)
    if vectors is not None:
        kept_builds.put_back_vectors(vectors, collection, build.vectors[vectors.kind])
    warehouse.replace_partition(collection, build.tables)
    metadata = decode_report(build.report)[0]
    warehouse.record_build(
        collection,
        asset,
        rows=metadata.get("dagster/row_count"),
        data_version=build.data_version,
        run_id=run_id,
        inputs=build.inputs,
        report=build.report,
        config=config,
    )
    return Reuse(
        build.report,
        f"restored: its inputs are again those of its build in run {build.run_id[:8]} ({otherwise.why})",
    )


def restorable(
    warehouse: Warehouse,
    collection: str,
    asset: str,
    inputs: StepInputs,
    *,
    retry_failed: bool,
    vectors_kind: str | None,
    contents: bool = True,
) -> kept_builds.KeptBuild | None:
    """The kept build of the step that read these very ``inputs`` and may stand for a build now (it
    kept its vector table of ``vectors_kind``, if the step has one, and its failures are not to be
    retried), else ``None``; ``contents=False``: without its rows (see ``kept_builds.kept``)."""
    build = kept_builds.kept(warehouse, collection, asset, inputs.key, contents=contents)
    if build is None or (vectors_kind is not None and vectors_kind not in build.vectors):
        return None
    note = {"inputs": build.inputs, "reported": True, "run_id": build.run_id}
    if decide(note, inputs, lambda: build.report, None, retry_failed=retry_failed).report is None:
        return None
    return build


def step_decision(
    context: dg.AssetExecutionContext,
    warehouse,
    collection: str,
    note: Mapping | None,
    inputs: StepInputs,
    present: Callable[[], bool] | None,
    reuse_builds: bool,
    vectors: VectorStore | None = None,
) -> Reuse:
    """Reuse the last build (``note``) when it read ``inputs``; else, for a step that keeps all it
    makes in the warehouse (and ``vectors``, its one table outside it), restore a kept earlier build
    that read them; else build, and why."""
    if not reuse_builds:
        return Reuse(None, "it reads the collection's folder")
    asset = context.asset_key.to_user_string()
    retry_failed = _retries_failed(context)
    decision = decide(
        note, inputs, lambda: warehouse.build_report(collection, asset), present, retry_failed=retry_failed
    )
    if decision.report is not None or (present is not None and vectors is None):
        return decision
    config = context.op_execution_context.op_config
    return restore_kept(
        warehouse,
        collection,
        asset,
        inputs,
        context.run_id,
        config,
        retry_failed=retry_failed,
        otherwise=decision,
        vectors=vectors,
    )


def _retries_failed(context: dg.AssetExecutionContext) -> bool:
    """Whether the run asks model calls that failed for good to be asked again."""
    llm = getattr(context.resources, "llm", None)
    return bool(llm is not None and llm.retries_failed())
