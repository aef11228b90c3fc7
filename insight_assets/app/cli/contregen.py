"""``insight-assets ask --method contregen``'s option (the flow is ``defs/contregen/ask.py``)."""

from __future__ import annotations

import argparse


def ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--notes",
        action="store_true",
        help="contregen: also retrieve your own highlights and notes (a Zotero library's), cited as 'your notes'",
    )


ASK_ARGUMENTS = ask_arguments
COMMANDS = ()
