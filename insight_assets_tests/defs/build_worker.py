"""Build a collection in a process of its own, for the crash tests to kill with SIGKILL.

Run as ``python -m insight_assets_tests.defs.build_worker '<json>'`` with ``storage``, ``embedder``
and ``llm`` (resource fields, ``llm`` may be null), ``collection`` and ``assets`` (asset names; null
for the default selection of ``materialize_collection``).
"""

from __future__ import annotations

import json
import sys

import dagster as dg

from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource
from insight_assets.defs.runs import ALL_ASSETS, materialize_collection


def main(arguments: dict) -> int:
    names = arguments.get("assets")
    assets = [asset for asset in ALL_ASSETS if asset.key.to_user_string() in names] if names else None
    llm = LLMResource(**arguments["llm"]) if arguments.get("llm") else None
    with dg.DagsterInstance.ephemeral() as instance:
        result = materialize_collection(
            instance,
            StorageResource(**arguments["storage"]),
            EmbedderResource(**arguments["embedder"]),
            arguments["collection"],
            llm=llm,
            assets=assets,
            raise_on_error=False,
        )
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
