"""``insight-assets ask --method insight-rag``'s option (the flow is ``defs/insight_rag/ask.py``)."""

from __future__ import annotations

import argparse

from insight_assets.defs.insight_rag.ask import INSIGHT_RETRIEVERS


def ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--retriever",
        choices=INSIGHT_RETRIEVERS,
        default=INSIGHT_RETRIEVERS[0],
        help="insight-rag's insight retriever (default: %(default)s)",
    )


ASK_ARGUMENTS = ask_arguments
COMMANDS = ()
