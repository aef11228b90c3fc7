"""The defs folders, found rather than listed: each sub-package of ``insight_assets.defs`` is one
domain (ingestion, curation, citations, or a method). No dagster import here.
"""

import importlib
import pkgutil
from types import ModuleType

import insight_assets.defs


def domains() -> list[str]:
    """The defs folders' names, sorted."""
    return sorted(info.name for info in pkgutil.iter_modules(insight_assets.defs.__path__) if info.ispkg)


def domain_modules(module: str) -> list[ModuleType]:
    """Each domain's ``module`` (e.g. ``"domain"``), for the domains that have one."""
    found = []
    for domain in domains():
        name = f"insight_assets.defs.{domain}.{module}"
        if importlib.util.find_spec(name) is not None:
            found.append(importlib.import_module(name))
    return found
