"""What every command of ``insight-assets`` shares: ``Command``, the resources and stores as the
commands get them, the Dagster instance, and how a command says a collection is unknown or unbuilt.

The commands that span every defs folder (``build``, ``collections``, ``deployment``,
``estimate``) are in ``collection_commands.py``; a defs folder adds its own in its module of
``app/cli/``: ``COMMANDS``, a tuple of ``Command`` (its ``ask --method`` flow is
``defs/<folder>/ask.py``'s ``ASK``); ``insight_assets/cli.py`` collects and dispatches them. Runs go through the same Dagster instance as ``dagster dev`` (``DAGSTER_HOME``, by default
``data/dagster_home``), so everything built here shows up in the UI's run history and lineage.

Imports stay inside the functions: ``insight-assets --help`` loads no model library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from insight_assets.app import progress

DEFAULT_DAGSTER_HOME = Path("data/dagster_home")


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command or flow without options of its own."""


def _no_problem(args: argparse.Namespace) -> str | None:
    return None


@dataclass(frozen=True)
class Command:
    """A subcommand: its name and help, the arguments it adds to its parser, what it runs (its exit
    status), and ``misuse``: a combination of arguments argparse cannot refuse, said in words."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    misuse: Callable[[argparse.Namespace], str | None] = _no_problem


def add_collection_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--collection", "-c", required=True, help="collection (folder) name")


def storage_resource():
    """The storage resource as the definitions have it, once the deployment's stores answer (else a
    ``DeploymentError`` naming the setting, which ``cli.main`` prints as one sentence)."""
    from insight_assets.core.deployment import Deployment
    from insight_assets.defs.resources import StorageResource

    Deployment.from_environment().check_stores()
    return StorageResource()


def stores():
    """The project's stores as ``storage_resource`` has them, without Dagster: for commands that only
    read (``collections``), which should not pay for loading it."""
    from insight_assets.core.deployment import Deployment
    from insight_assets.core.storage.project import Storage

    Deployment.from_environment().check_stores()
    return Storage()


def embedder_choice():
    """The embedder as ``embedder_resource`` has it, without Dagster (``search``)."""
    from insight_assets.core.embedding.models import EmbedderChoice

    return EmbedderChoice()


def embedder_resource():
    from insight_assets.defs.resources import EmbedderResource

    return EmbedderResource()


def environment_llm():
    """The model the environment selects (INSIGHT_ASSETS_LLM_*), its key read at call time."""
    from insight_assets.defs.resources import LLMResource

    return LLMResource()


def missing_key() -> str | None:
    """Why the model the environment selects cannot run, before any run starts."""
    from insight_assets.core.llm import ConfigurationError

    try:
        environment_llm().settings().check_ready()
    except ConfigurationError as error:
        return f"INSIGHT_ASSETS_LLM_PROVIDER: {error} (unset it to build offline)."
    return None


def not_built(collection: str, error: Exception) -> int:
    """Say that what a command reads has not been built (an ``IndexMissing``); exit status 1."""
    print(
        f"collection {collection!r}: {error} (insight-assets build --collection {collection} builds it).",
        file=sys.stderr,
    )
    return 1


def answer_and_print(asked, flows: list, *, as_json: bool = False) -> int:
    """Put ``asked`` to each flow with the environment's model, print the answers (text, or one
    JSON document), and return 0 when every method answered, else 1."""
    from insight_assets.defs import asking

    with progress.steps_view(
        f"asking {len(flows)} method(s)", len(flows), unit="answered", stream=sys.stderr
    ) as view:
        answers = asking.ask_each(asked, flows, environment_llm(), view)
    if as_json:
        print(json.dumps(asking.as_json(asked, answers), indent=2, ensure_ascii=False))
    else:
        print(asking.as_text(asked, answers))
    for found in answers:
        if not found.ok:
            print(f"{found.method}: {found.error}", file=sys.stderr)
    return 0 if all(found.ok for found in answers) else 1


def known_collection(storage, name: str, found=None) -> str | None:
    """An error message when ``name`` is not a valid, existing collection (``found``: the project's
    ``Sources``, when the caller has listed them already)."""
    from insight_assets.core.collection_sources import (
        InvalidCollectionKey,
        find_sources,
        validate_collection_key,
    )

    try:
        validate_collection_key(name)
    except InvalidCollectionKey as error:
        return str(error)
    found = found or find_sources(storage.collections_root)
    if name not in found.collections:
        unreadable = "".join(f"\n  {reason}" for reason in found.unreadable.values())
        return (
            f"No folder for collection {name!r} under {Path(storage.collections_root).resolve()}, and no "
            f"library collection of that name; known collections: {', '.join(found.collections) or 'none'}."
            + unreadable
        )
    return None


def instance():
    import dagster as dg

    from insight_assets.app import llm_steps
    from insight_assets.app.instance import ensure_instance_config

    if not os.environ.get("DAGSTER_HOME"):
        os.environ["DAGSTER_HOME"] = str(DEFAULT_DAGSTER_HOME.resolve())
    # As ./run does: telemetry off, a run queue and pools sized to the cores.
    try:
        outcome = ensure_instance_config(Path(os.environ["DAGSTER_HOME"]))
    except ValueError as exc:
        raise SystemExit(f"Cannot configure the Dagster instance: {exc}") from None
    if outcome.message:
        print(outcome.message, file=sys.stderr)
    dagster_instance = dg.DagsterInstance.get()
    home = Path(os.environ["DAGSTER_HOME"])
    if llm_steps.needs_sizing(home):
        try:
            note = llm_steps.size_llm_pool(dagster_instance, home)
        except ValueError as exc:
            raise SystemExit(f"Cannot size the pool of model-calling steps: {exc}") from None
        if note:
            print(note, file=sys.stderr)
    return dagster_instance


def failure_reasons(result) -> list[str]:
    """Why each failed step of a run failed: a ``dg.Failure``'s description, else the error's message."""
    reasons = []
    for event in result.all_events:
        if event.event_type_value != "STEP_FAILURE":
            continue
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            reason = data.user_failure_data.description
        else:
            reason = f"{data.error.cls_name}: {data.error.message.strip()}" if data.error else "unknown error"
        reasons.append(f"{event.step_key}: {reason}")
    return reasons
