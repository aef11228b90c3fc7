"""What a defs folder plugs into the project besides its assets, named in one typed object.

Every folder of ``insight_assets.defs`` declares ``DOMAIN = Domain(...)`` in its ``domain.py``: its
dry-run steps, its op config for a smoke run with a slow model, its ``ask`` flow and its section
of the collection's page. The dry run, the smoke runs and the page read these objects, so a part
misnamed or left out is an error where it is declared (an attribute its module lacks, an asset
that does not exist, a page and an ask flow of different methods), never a part silently dropped.

The command line finds the same ``ask`` flows, and the folders' own commands, in ``app/cli/`` (one
module per folder, named after it) without loading Dagster: ``insight-assets --help`` stays instant.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from insight_assets.app.commands import AskFlow
from insight_assets.app.dry_run import EstimateStep
from insight_assets.defs.folders import domain_modules, domains
from insight_assets.defs.model_calls import ModelCallConfig
from insight_assets.defs.pages import MethodPage


class DomainError(RuntimeError):
    """A defs folder whose declaration does not hold together."""


@dataclass(frozen=True)
class Domain:
    """A defs folder's parts besides its assets.

    ``estimate_steps``: its model-calling assets, whose configs' stages the dry run runs (see
    ``app/estimating.py``);
    ``smoke_settings``: op config by asset name for a fast smoke run with a slow model (see
    ``defs/runs.py``); ``ask``: its ``ask`` flow (the one its ``app/cli/`` module names); ``page``: its
    section of the collection's page (see ``defs/pages.py``)."""

    name: str
    estimate_steps: Sequence[EstimateStep] = ()
    smoke_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    ask: AskFlow | None = None
    page: MethodPage | None = None

    def __post_init__(self) -> None:
        for step in self.estimate_steps:
            if step.run is None and getattr(step.config, "stage", None) in (None, ModelCallConfig.stage):
                raise DomainError(
                    f"defs folder {self.name!r}: the dry-run step of {step.asset!r} has no stage: give "
                    f"{step.config.__name__} a `stage(self, scope)` method (the code its asset runs)"
                )
        if self.page is not None and (self.ask is None or self.ask.method != self.page.method):
            raise DomainError(
                f"defs folder {self.name!r}: its page is method {self.page.method!r} but its ask flow is "
                f"{self.ask.method if self.ask else 'missing'!r}; the page shows that flow's answer"
            )


def all_domains() -> list[Domain]:
    """Every defs folder's ``DOMAIN``, in folder order; a folder without its ``domain.py`` is an error."""
    found = {module.__name__.split(".")[-2]: module.DOMAIN for module in domain_modules("domain")}
    missing = sorted(set(domains()) - set(found))
    if missing:
        raise DomainError(
            f"defs folder(s) {', '.join(missing)} declare no DOMAIN: add a domain.py (see defs/domain.py)"
        )
    for folder, domain in found.items():
        if domain.name != folder:
            raise DomainError(
                f"defs/{folder}/domain.py declares the domain {domain.name!r}; name it {folder!r}"
            )
    return list(found.values())


def smoke_settings(asset_names: set[str]) -> dict[str, Mapping[str, Any]]:
    """Every folder's smoke settings, by asset; a setting for an asset that does not exist is an error."""
    settings = {asset: config for domain in all_domains() for asset, config in domain.smoke_settings.items()}
    unknown = sorted(set(settings) - asset_names)
    if unknown:
        raise DomainError(f"smoke settings for assets that do not exist: {', '.join(unknown)}")
    return settings
