"""What a defs folder plugs into the project besides its assets, named in one typed object.

A folder may declare ``DOMAIN = Domain(...)`` in its ``domain.py``: its section of the collection's
page, and the dry-run pricing of an asset of its own that is not a declared stage (the page's
question put to every method). Everything else a stage needs (its dry run, its smoke settings, its
asset) is read from its declaration (``core/runtime/stage.py``); the ``ask`` flows and commands are the
command line's (``app/cli/``).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from insight_assets.defs.folders import domain_modules
from insight_assets.defs.pages import MethodPage


class DomainError(RuntimeError):
    """A defs folder whose declaration does not hold together."""


@dataclass(frozen=True)
class Domain:
    """A defs folder's parts besides its assets: ``page``, its section of the collection's page
    (see ``defs/pages.py``); ``price``, by asset name, how the dry run prices an asset that is not a
    declared stage (called with the asset's config values and the dry run, ``dry_run.estimate_collection``)."""

    name: str
    page: MethodPage | None = None
    price: Mapping[str, Callable[[Mapping[str, Any], Any], None]] = field(default_factory=dict)


def all_domains() -> list[Domain]:
    """Every defs folder's ``DOMAIN``, in folder order; one named after another folder is an error."""
    found = {module.__name__.split(".")[-2]: module.DOMAIN for module in domain_modules("domain")}
    for folder, domain in found.items():
        if domain.name != folder:
            raise DomainError(
                f"defs/{folder}/domain.py declares the domain {domain.name!r}; name it {folder!r}"
            )
    return list(found.values())


def method_pages() -> list[MethodPage]:
    """Every defs folder's page section: the core method first, then by method name."""
    pages = [domain.page for domain in all_domains() if domain.page is not None]
    return sorted(pages, key=lambda page: (not page.core, page.method))
