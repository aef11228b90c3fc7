"""How many model-calling steps run at once: the ``llm`` pool's limit follows the provider.

The pool ``llm`` (``defs/pools.py``) exists so that a local model is loaded by one step at a time.
A hosted provider loads nothing here, and the calls every step sends are bounded by the provider's
own limit, shared across processes (``core/llm/concurrency.py``): its steps, which do not depend on
each other (XSum, ConTReGen, SciPIP, Insight-RAG, InsightGen), should then run side by side, so that
one step's CPU work overlaps another's waits. So with a hosted provider in the environment the pool
allows ``INSIGHT_ASSETS_LLM_STEPS`` steps at once (default 4), and with the local or offline one, 1.

The limit is the instance's (Dagster keeps it with the runs), so it is set when a command or the UI
starts, and a marker file under ``DAGSTER_HOME`` remembers the value set: a limit the user set
themselves (``dagster instance concurrency set llm N``) differs from it and is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

STEPS_ENV = "INSIGHT_ASSETS_LLM_STEPS"
DEFAULT_HOSTED_STEPS = 4
_MARKER = ".insight_assets_llm_pool"
_UNHOSTED = ("", "offline", "local")


def hosted_provider(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment's provider is a server (``INSIGHT_ASSETS_LLM_PROVIDER``)."""
    return environ.get("INSIGHT_ASSETS_LLM_PROVIDER", "").strip() not in _UNHOSTED


def wanted_steps(environ: Mapping[str, str] = os.environ) -> int:
    """Model-calling steps at once for the environment's provider."""
    if not hosted_provider(environ):
        return 1
    value = environ.get(STEPS_ENV, "").strip()
    if not value:
        return DEFAULT_HOSTED_STEPS
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{STEPS_ENV} must be a number of steps (1 or more), not {value!r}")
    return int(value)


def needs_sizing(home: Path, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the pool may need another limit: a hosted provider, or a limit this module raised."""
    return hosted_provider(environ) or (Path(home) / _MARKER).exists()


def size_llm_pool(instance, home: Path, environ: Mapping[str, str] = os.environ) -> str | None:
    """Give the ``llm`` pool the limit the environment's provider wants, unless the user set it;
    what the user should know, if anything."""
    from insight_assets.defs.pools import LLM_POOL

    steps = wanted_steps(environ)
    marker = Path(home) / _MARKER
    storage = instance.event_log_storage
    current = storage.get_concurrency_info(LLM_POOL).slot_count or 1
    ours = int(marker.read_text(encoding="utf-8")) if marker.exists() else 1
    if current != ours:
        # The user's own limit: kept, and said where it holds a hosted provider's steps back.
        if current < steps:
            return (
                f"The pool `{LLM_POOL}` allows {current} step(s) at once (set in the instance), so model-calling "
                f"steps wait for each other; `dagster instance concurrency set {LLM_POOL} {steps}` lets {steps} run."
            )
        return None
    if current != steps:
        storage.set_concurrency_slots(LLM_POOL, steps)
    if steps == 1:
        marker.unlink(missing_ok=True)
    else:
        marker.write_text(str(steps), encoding="utf-8")
    return None
