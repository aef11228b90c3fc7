"""Model adapters: one thin wrapper per SDK, chosen by ``LLMSettings.provider``.

The SDKs are imported when an adapter is created, so importing this package (or running offline)
does not load them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..settings import ANTHROPIC, GEMINI, LOCAL, OPENAI, OPENAI_COMPATIBLE, LLMSettings
from .base import ChatProvider, Completion, ErrorContext, Message
from .offline import OFFLINE_LABEL, OfflineProvider

if TYPE_CHECKING:
    from ..redaction import Redactor

__all__ = [
    "OFFLINE_LABEL",
    "ChatProvider",
    "Completion",
    "Message",
    "OfflineProvider",
    "make_chat_provider",
]


def make_chat_provider(settings: LLMSettings, redact: Redactor, model: str | None = None) -> ChatProvider:
    """The adapter for a model provider; ``settings.check_ready()`` must have passed. ``model``:
    the GGUF file for ``local`` (a task may override the settings' model)."""
    if settings.provider == LOCAL:
        from ..gguf import model_file
        from .local_gguf import LocalProvider

        return LocalProvider(
            model_file(model or settings.model), context_cap=settings.context_tokens, threads=settings.threads
        )
    context = ErrorContext(provider=settings.provider, key_env=settings.key_env_name, redact=redact)
    api_key = settings.api_key or ""
    if settings.provider in (OPENAI, OPENAI_COMPATIBLE):
        from .openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(
            name=settings.provider,
            api_key=settings.api_key,
            base_url=settings.base_url,
            context=context,
        )
    if settings.provider == ANTHROPIC:
        from .anthropic_messages import AnthropicProvider

        return AnthropicProvider(api_key=api_key, base_url=settings.base_url, context=context)
    if settings.provider == GEMINI:
        from .gemini import GeminiProvider

        return GeminiProvider(api_key=api_key, base_url=settings.base_url, context=context)
    raise ValueError(f"{settings.provider!r} is not a model provider")
