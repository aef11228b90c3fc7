"""Each defs folder's face on the command line, one module here per folder (named after it): its
own subcommands (``COMMANDS``) and, where its ``ask`` flow (``defs/<folder>/ask.py``) has options
of its own, the function that adds them (``ASK_ARGUMENTS``). The
modules are found, not listed, and import nothing heavy at module level (``insight-assets --help``
stays instant): their commands import Dagster, the models and the stores inside their functions.
"""

import importlib
import pkgutil
from types import ModuleType


def cli_modules() -> list[ModuleType]:
    """Every module of this package, in name order."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]
