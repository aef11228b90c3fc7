"""``insight-assets``: build and inspect collections without opening the Dagster UI.

This module parses and dispatches. The commands live beside what they serve: those spanning every
defs folder (build, collections, deployment, estimate) in ``app/collection_commands.py``, the others in each defs folder's
module of ``app/cli/`` (``COMMANDS``), and ``ask --method NAME`` runs the method folder's flow
(``ASK`` in ``defs/<folder>/ask.py``; its options are its ``app/cli/`` module's ``ASK_ARGUMENTS``).
"""

from __future__ import annotations

import argparse
import os
import sys

from insight_assets.app import collection_commands, commands, library
from insight_assets.app.cli import cli_modules
from insight_assets.app.commands import Command
from insight_assets.app.mcp.server import COMMAND as MCP_COMMAND
from insight_assets.core.runtime.heap import settle_before_exit
from insight_assets.core.runtime.signals import restore_default_interrupts
from insight_assets.defs.asking import ask_flows

# ``ask --method all``: every method answers, side by side.
EVERY_METHOD = "all"


def _ask_command(by_method: dict, options: list) -> Command:
    """``ask``: the shared arguments, each flow's own (``options``), and the flow of ``--method``
    (or all); ``by_method``: the flows, the default first."""
    flows = list(by_method.values())

    def arguments(parser: argparse.ArgumentParser) -> None:
        commands.add_collection_argument(parser)
        parser.add_argument("question", help="the question, in quotes")
        parser.add_argument(
            "--method",
            choices=[*by_method, EVERY_METHOD],
            default=flows[0].method,
            help="the method that answers (default: %(default)s): "
            + "; ".join(f"{flow.method}, {flow.help}" for flow in flows)
            + f"; {EVERY_METHOD}, every method side by side (exit status 1 if any could not answer)",
        )
        parser.add_argument("--json", action="store_true", help="print the answers as one JSON document")
        for add_arguments in options:
            add_arguments(parser)

    def run(args: argparse.Namespace) -> int:
        from insight_assets.defs.asking import Asked

        storage = commands.storage_resource()
        problem = commands.known_collection(storage, args.collection) or commands.missing_key()
        if problem:
            print(problem, file=sys.stderr)
            return 2
        asked = Asked(args.collection, args.question, storage, commands.embedder_resource(), vars(args))
        chosen = flows if args.method == EVERY_METHOD else [by_method[args.method]]
        return commands.answer_and_print(asked, chosen, as_json=args.json)

    return Command(
        "ask", "answer a question from a built collection, with the method you pick", run, arguments
    )


def all_commands() -> list[Command]:
    modules = cli_modules()  # light: their commands import inside their functions
    options = [module.ASK_ARGUMENTS for module in modules if getattr(module, "ASK_ARGUMENTS", None)]
    return [
        *collection_commands.COMMANDS,
        library.COMMAND,
        _ask_command(ask_flows(), options),
        *(command for module in modules for command in module.COMMANDS),
        MCP_COMMAND,
    ]


def main(argv: list[str] | None = None) -> int:
    restore_default_interrupts()  # stoppable, with stoppable children, when started in the background
    # The bundled embedder needs no network; say so before transformers looks for one.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    parser = argparse.ArgumentParser(prog="insight-assets", description=__doc__.splitlines()[0])
    subcommands = parser.add_subparsers(dest="command", required=True)
    by_name = {}
    for command in all_commands():
        command.arguments(subcommands.add_parser(command.name, help=command.help))
        by_name[command.name] = command
    args = parser.parse_args(argv)
    command = by_name[args.command]
    misuse = command.misuse(args)
    if misuse:
        parser.error(misuse)
    try:
        return command.run(args)
    except Exception as error:
        # A store that cannot be opened or a deployment setting that does not work is one sentence.
        from insight_assets.core.deployment import DeploymentError
        from insight_assets.core.storage.stores import StoreError

        if not isinstance(error, DeploymentError | StoreError):
            raise
        print(f"insight-assets {args.command}: {error}", file=sys.stderr)
        return 2


def entry() -> None:
    """The ``insight-assets`` command: ``main``, then an exit that does not walk the heap first
    (``core/runtime/heap.py``); tests call ``main`` itself."""
    code = main()
    settle_before_exit()
    sys.exit(code)


if __name__ == "__main__":
    entry()
