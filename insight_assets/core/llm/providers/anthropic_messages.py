"""Anthropic's Messages API through the official ``anthropic`` SDK, its retries switched off."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..rate_limits import parse_rate_limit_headers
from .base import Completion, ErrorContext, Message, call_stainless_sdk

if TYPE_CHECKING:
    from ..settings import ModelParams


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, *, api_key: str, base_url: str | None, context: ErrorContext):
        import anthropic

        self._anthropic = anthropic
        self._context = context
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)

    def complete(self, messages: Sequence[Message], params: ModelParams) -> Completion:
        anthropic = self._anthropic
        request: dict[str, Any] = {
            "model": params.model,
            "max_tokens": params.max_tokens,
            "messages": [{"role": message.role, "content": message.content} for message in messages],
            "timeout": params.timeout_s,
        }
        if params.temperature is not None:
            # Recent SDKs dropped the keyword (newer models fix their own sampling); the API
            # still takes the field for the models that accept it.
            request["extra_body"] = {"temperature": params.temperature}
        elif params.top_p is not None:
            # Anthropic asks for one of the two, and newer models refuse both: temperature wins.
            request["extra_body"] = {"top_p": params.top_p}
        raw = call_stainless_sdk(
            anthropic,
            lambda: self._client.messages.with_raw_response.create(**request),
            self._context,
            params,
        )
        response = raw.parse()
        text = "".join(block.text for block in response.content if block.type == "text")
        return Completion(
            text=text,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            truncated=response.stop_reason == "max_tokens",
            finish_reason=response.stop_reason,
            rate_limit=parse_rate_limit_headers(raw.headers),
        )

    def close(self) -> None:
        self._client.close()
