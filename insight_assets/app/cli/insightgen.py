"""``insight-assets ask``'s option for the default method (the flow is ``defs/insightgen/ask.py``)."""

from __future__ import annotations

import argparse


def ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--answer", help="insightgen: your answer; without it one is generated from the papers"
    )


ASK_ARGUMENTS = ask_arguments
COMMANDS = ()
