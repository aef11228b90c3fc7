"""The defs folders, found rather than listed: each sub-package of ``insight_assets.defs`` is one
domain (ingestion, curation, citations, the page, or a method) and holds

- assets and checks, in any of its modules (``assets.py`` and friends): a method's stage assets are
  made from its declared stages (``ASSETS = stage_assets(stages.STAGES)``, see ``stage_assets.py``);
- optionally ``domain.py``: ``DOMAIN = Domain(...)``, its section of the collection's page (see
  ``defs/domain.py``).

Its ``ask`` flow, where it answers one question, is ``ask.py`` in its folder; its own commands are
``app/cli/<folder>.py``.

A new method adds its folder and nothing here changes.
"""

import functools
import importlib

import dagster as dg

from insight_assets.core.collection_sources import CollectionSource
from insight_assets.core.ingestion.ingest import fingerprint
from insight_assets.core.runtime.heap import loading_for_good
from insight_assets.defs import ingestion
from insight_assets.defs.folders import domain_modules, domains

__all__ = [
    "ALL_ASSETS",
    "INGESTION_ASSETS",
    "asset_named",
    "assets_named",
    "domain_assets",
    "domain_modules",
    "domains",
]


def _identity(asset) -> tuple[frozenset, frozenset]:
    # Dagster hands out a fresh definition per load, so "the same" is the same keys.
    return frozenset(asset.keys), frozenset(asset.check_keys)


def domain_assets(*names: str) -> list:
    """The assets and checks of the named defs folders (all by default), each once: a module that
    imports another folder's asset, to depend on it, finds it too."""
    folders = [importlib.import_module(f"insight_assets.defs.{name}") for name in names or domains()]
    found = (asset for folder in folders for asset in dg.load_assets_from_package_module(folder))
    return list({_identity(asset): asset for asset in found}.values())


# Every asset and what it imports lives as long as the process (see core/runtime/heap.py).
with loading_for_good():
    ALL_ASSETS = domain_assets()
# The ingestion folder's among ALL_ASSETS, by keys: the same definitions, not another load's.
_INGESTION_KEYS = {_identity(asset) for asset in dg.load_assets_from_package_module(ingestion)}
INGESTION_ASSETS = [asset for asset in ALL_ASSETS if _identity(asset) in _INGESTION_KEYS]


def assets_named(*names: str) -> list[dg.AssetsDefinition]:
    """The catalog's assets of these names, in this order (for a run of a few of them)."""
    by_name = {key.to_user_string(): asset for asset in ALL_ASSETS for key in asset.keys}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise KeyError(f"no asset named {', '.join(unknown)}")
    return [by_name[name] for name in names]


def asset_named(name: str) -> dg.AssetsDefinition:
    """The catalog's asset ``name``."""
    return assets_named(name)[0]


@functools.cache
def _code_versions() -> str:
    """A digest of every asset's code version: a build of other code is another build."""
    versions = sorted(
        f"{key.to_user_string()}={version}"
        for asset in ALL_ASSETS
        for key, version in asset.code_versions_by_key.items()
    )
    return fingerprint(versions)


def build_signature(source: CollectionSource, llm, embedder) -> str:
    """What a collection's build is made from: its source's signature, the assets' code versions
    and the models' identities (the ``llm`` and ``embedder`` resources)."""
    return fingerprint(
        [source.signature(), _code_versions(), repr(llm.identity()), repr(embedder.identity())]
    )
