"""Keep API keys out of everything this package writes or raises.

SDK errors can quote request headers or a masked form of the key ("sk-abc***xyz"), so messages
taken from them pass through a ``Redactor`` before they reach an exception, a log line, a ledger
row or asset metadata.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from insight_assets.core.startup.lazy import lazy_regex

REDACTED = "[redacted]"

# Shapes of provider keys, whole or masked by the provider in its own error text.
_KEY_SHAPES = lazy_regex(
    r"""
      \bsk-[A-Za-z0-9_\-*.]{6,}        # OpenAI and Anthropic (sk-ant-...)
    | \bAIza[0-9A-Za-z_\-*]{10,}       # Google API keys
    | (?i:bearer)\s+[A-Za-z0-9_\-*.=]{8,}
    """,
    re.VERBOSE,
)

# Shorter secrets are not searched for: replacing every "abc" in a message would garble it, and a
# key that short is not a real provider key.
_MIN_SECRET_LENGTH = 6


class Redactor:
    """Replaces the given secrets, and anything shaped like a provider key, by ``[redacted]``."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        self._secrets = sorted(
            {secret for secret in secrets if secret and len(secret) >= _MIN_SECRET_LENGTH},
            key=len,
            reverse=True,
        )

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return _KEY_SHAPES.sub(REDACTED, text)
