"""What a stored parse was made with, without loading the parser (PyMuPDF and its layout model load
in about a third of a second): the definitions name it in an asset's code version."""

from __future__ import annotations

from insight_assets.core.ingestion.text_quality import QualitySettings

# Bump whenever the text or structure produced for the same file can change.
PARSER_VERSION = "7"
DEFAULT_QUALITY = QualitySettings()


def parser_version(quality: QualitySettings = DEFAULT_QUALITY) -> str:
    """What a stored parse was made with: the parser's version and the text-quality thresholds, so
    that changing either parses again."""
    return f"{PARSER_VERSION}/q{quality.key()}"
