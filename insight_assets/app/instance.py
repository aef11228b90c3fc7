"""The Dagster instance settings a collection build needs: ``dagster.yaml`` under ``DAGSTER_HOME``.

Without them, ``dagster dev``'s sensor starts a run for every new collection folder at once, each
loading its own embedding model. The settings written here:

- ``concurrency.runs.max_concurrent_runs``: how many runs are in progress at once (the rest wait in
  the run queue): half the cores, at least 1, or ``INSIGHT_ASSETS_MAX_CONCURRENT_RUNS``;
- a tag limit on ``dagster/partition``: at most one run per collection at a time;
- ``concurrency.pools.default_limit: 1``: one step at a time in each pool, across all runs. The
  pools are the model-loading steps: ``embedding`` (the embedder) and ``llm`` (model calls, which
  load the local model when it is the provider). With a hosted provider in the environment the
  ``llm`` pool's own limit is raised to the steps it may run at once (``app/llm_steps.py``), here
  and whenever a command starts.

A second block says where the instance keeps runs, event logs and schedules: with
``INSIGHT_ASSETS_POSTGRES_URL`` set, in that PostgreSQL database (``storage: postgres``, the URL read
from the variable when the instance loads, so no password is written here); without it, in SQLite
under ``DAGSTER_HOME`` as Dagster keeps them, with the event log's files kept open between uses
(``instance_class``, see ``app/instance_storage.py``).

The settings live between marker comments, rewritten on every start (so the environment variables
take effect), and the rest of the file is the user's. A file that already configures concurrency
(or storage) itself is never changed there: the user is told what it lacks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from insight_assets.app import llm_steps
from insight_assets.core.deployment import POSTGRES_URL_ENV, Deployment
from insight_assets.core.runtime.cores import available_cores

MAX_RUNS_ENV = "INSIGHT_ASSETS_MAX_CONCURRENT_RUNS"
COLLECTION_TAG = "dagster/partition"
BEGIN_MARKER = "# >>> insight_assets: run queue and pools (rewritten at each start; see below)"
END_MARKER = "# <<< insight_assets"
STORAGE_BEGIN_MARKER = (
    "# >>> insight_assets: instance storage (rewritten at each start from INSIGHT_ASSETS_POSTGRES_URL)"
)
STORAGE_END_MARKER = "# <<< insight_assets storage"
_TELEMETRY_OFF = "# Runs stay on this machine: no usage statistics are sent (set true to opt in).\ntelemetry:\n  enabled: false\n"
# Top-level keys through which a user configures run concurrency, or the storage, themselves.
_CONCURRENCY_KEYS = ("concurrency", "run_queue", "run_coordinator")
# The instance class of the SQLite storage block (named, not imported: it imports Dagster's storage).
INSTANCE_CLASS = ("insight_assets.app.instance_storage", "KeptOpenInstance")
_STORAGE_KEYS = ("storage", "run_storage", "event_log_storage", "schedule_storage", "instance_class")


@dataclass(frozen=True)
class InstanceConfigOutcome:
    """What ``ensure_instance_config`` did to ``path``, and what the user should know."""

    path: Path
    action: str  # "created", "added", "refreshed", "unchanged" or "left_alone"
    message: str | None = None  # for the user: what was added, or what to add by hand


def max_concurrent_runs(environ: Mapping[str, str] = os.environ, cores: int | None = None) -> int:
    """Runs in progress at once: the environment's choice, else half the cores (each run's steps use
    the cores: the embedder and the local model take all of them), at least 1."""
    value = environ.get(MAX_RUNS_ENV, "").strip()
    if value:
        try:
            chosen = int(value)
        except ValueError:
            raise ValueError(f"{MAX_RUNS_ENV}={value!r} is not a whole number of runs") from None
        if chosen < 1:
            raise ValueError(f"{MAX_RUNS_ENV}={value!r}: at least one run must be allowed")
        return chosen
    return max(1, (cores or available_cores()) // 2)


def concurrency_block(runs: int) -> str:
    """The managed part of ``dagster.yaml``, marker comments included."""
    return f"""{BEGIN_MARKER}
# To manage these settings yourself, delete the two marker lines; the block is then left alone.
concurrency:
  runs:
    # Runs in progress at once; the others wait in the queue. From the cores, or {MAX_RUNS_ENV}.
    max_concurrent_runs: {runs}
    # One run per collection at a time: a second build of the same collection waits for the first.
    tag_concurrency_limits:
      - key: "{COLLECTION_TAG}"
        value:
          applyLimitPerUniqueValue: true
        limit: 1
  pools:
    # One step at a time in each pool across all runs: the pools `embedding` and `llm` hold the steps
    # that load a model. Raise one with `dagster instance concurrency set llm 4`.
    default_limit: 1
{END_MARKER}
"""


def storage_block(postgres: bool = True) -> str:
    """The managed storage part of ``dagster.yaml``: the instance on the deployment's PostgreSQL, or
    (``postgres=False``) in SQLite under ``DAGSTER_HOME``, its event log kept open."""
    if not postgres:
        return f"""{STORAGE_BEGIN_MARKER}
# Runs, event logs and schedules in SQLite under DAGSTER_HOME, in Dagster's own files, with the event
# log's files kept open between writes instead of reopened for each event. With {POSTGRES_URL_ENV}
# set, this block holds the PostgreSQL storage instead.
instance_class:
  module: {INSTANCE_CLASS[0]}
  class: {INSTANCE_CLASS[1]}
{STORAGE_END_MARKER}
"""
    return f"""{STORAGE_BEGIN_MARKER}
# Runs, event logs and schedules in PostgreSQL, shared by every machine of the deployment. The URL is
# read from the variable when the instance loads; unset it and the instance is SQLite here again.
storage:
  postgres:
    postgres_url:
      env: {POSTGRES_URL_ENV}
{STORAGE_END_MARKER}
"""


def ensure_instance_config(home: Path, environ: Mapping[str, str] = os.environ) -> InstanceConfigOutcome:
    """Make ``home/dagster.yaml`` hold the run queue and pool settings and the storage settings
    (PostgreSQL with its URL in the environment, else SQLite), keeping what the user wrote."""
    outcome = _ensure_run_queue(Path(home) / "dagster.yaml", environ)
    postgres = Deployment.from_environment(environ).postgres_url is not None
    if not postgres and BEGIN_MARKER not in outcome.path.read_text(encoding="utf-8"):
        return outcome  # the user runs this file's concurrency: only a deployment's PostgreSQL is added
    changed, said = _ensure_storage(outcome.path, postgres)
    action = "refreshed" if changed and outcome.action == "unchanged" else outcome.action
    message = "\n".join(text for text in (outcome.message, said) if text) or None
    return InstanceConfigOutcome(outcome.path, action, message)


def _ensure_storage(path: Path, postgres: bool) -> tuple[bool, str | None]:
    """Put the storage block for PostgreSQL (``postgres``) or SQLite in ``path``; whether the file
    changed, and what the user should know."""
    text = path.read_text(encoding="utf-8")
    block = storage_block(postgres)
    updated = _replaced_block(text, STORAGE_BEGIN_MARKER, STORAGE_END_MARKER, block)
    if updated is not None:
        if updated == text:
            return False, None
        path.write_text(updated, encoding="utf-8")
        return True, None
    try:
        settings = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return False, None  # left as it is; the run queue's message says so
    own = [key for key in _STORAGE_KEYS if isinstance(settings, dict) and key in settings]
    if own and not postgres:
        return False, None  # the user's own storage
    if own:
        return False, (
            f"{path} configures the instance's storage itself ({', '.join(own)}), so {POSTGRES_URL_ENV} was "
            f"not applied to it; the warehouse still uses it. To keep the instance there too, use:\n{storage_block()}"
        )
    path.write_text(text.rstrip("\n") + "\n\n" + block, encoding="utf-8")
    return True, None


def _replaced_block(text: str, begin: str, end: str, block: str) -> str | None:
    """``text`` with what lies between the markers ``begin`` and ``end`` (included) replaced by
    ``block``; ``None`` when the markers are not both there."""
    if begin not in text or end not in text:
        return None
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1].removeprefix("\n")
    return before + block + after


def _ensure_run_queue(path: Path, environ: Mapping[str, str]) -> InstanceConfigOutcome:
    """Make ``path`` hold the run queue and pool settings, keeping what the user wrote."""
    block = concurrency_block(max_concurrent_runs(environ))
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_TELEMETRY_OFF + "\n" + block, encoding="utf-8")
        return InstanceConfigOutcome(path, "created")
    text = path.read_text(encoding="utf-8")
    refreshed = _replaced_block(text, BEGIN_MARKER, END_MARKER, block)
    if refreshed is not None:
        if refreshed == text:
            return InstanceConfigOutcome(path, "unchanged")
        path.write_text(refreshed, encoding="utf-8")
        return InstanceConfigOutcome(path, "refreshed")
    try:
        settings = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        message = f"{path} is not valid YAML ({exc}); it was left as it is. Fix it, then add:\n{block}"
        return InstanceConfigOutcome(path, "left_alone", message)
    if not isinstance(settings, dict):
        message = (
            f"{path} does not hold a mapping of settings; it was left as it is. It should hold:\n{block}"
        )
        return InstanceConfigOutcome(path, "left_alone", message)
    own = [key for key in _CONCURRENCY_KEYS if key in settings]
    if own:
        missing = _missing_settings(settings)
        if not missing:
            return InstanceConfigOutcome(path, "unchanged")
        message = (
            f"{path} configures concurrency itself ({', '.join(own)}), so it was left as it is, but it "
            f"lacks {'; '.join(missing)}. Without them, new collections can all build at once. "
            f"insight_assets would use:\n{block}"
        )
        return InstanceConfigOutcome(path, "left_alone", message)
    path.write_text(text.rstrip("\n") + "\n\n" + block, encoding="utf-8")
    return InstanceConfigOutcome(path, "added", f"Added the run queue and pool settings to {path}.")


def _missing_settings(settings: dict) -> list[str]:
    """What of the run queue, the per-collection limit and the pool limit a user's settings lack."""
    runs = {**_section(settings, "run_queue"), **_section(_section(settings, "concurrency"), "runs")}
    pools = _section(_section(settings, "concurrency"), "pools")
    missing = []
    if "max_concurrent_runs" not in runs:
        missing.append("concurrency.runs.max_concurrent_runs")
    limits = runs.get("tag_concurrency_limits") or []
    if not any(isinstance(limit, dict) and limit.get("key") == COLLECTION_TAG for limit in limits):
        missing.append(f"a tag_concurrency_limits entry for {COLLECTION_TAG!r}")
    if "default_limit" not in pools and "default_op_concurrency_limit" not in _section(
        settings, "concurrency"
    ):
        missing.append("concurrency.pools.default_limit")
    return missing


def _section(settings: dict, key: str) -> dict:
    value = settings.get(key)
    return value if isinstance(value, dict) else {}


def main() -> int:
    """``python -m insight_assets.app.instance``: make ``$DAGSTER_HOME/dagster.yaml`` current."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        print("DAGSTER_HOME is not set: no instance to configure.", file=sys.stderr)
        return 2
    try:
        outcome = ensure_instance_config(Path(home))
    except ValueError as exc:
        print(f"Cannot configure the Dagster instance: {exc}", file=sys.stderr)
        return 2
    if outcome.message:
        print(outcome.message, file=sys.stderr)
    if llm_steps.needs_sizing(Path(home)):
        # The UI's runs read the pool's limit from the instance: make it the provider's now.
        import dagster as dg

        try:
            note = llm_steps.size_llm_pool(dg.DagsterInstance.get(), Path(home))
        except ValueError as exc:
            print(f"Cannot size the pool of model-calling steps: {exc}", file=sys.stderr)
            return 2
        if note:
            print(note, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
