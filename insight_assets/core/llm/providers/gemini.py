"""Gemini through the official ``google-genai`` SDK (the successor of google-generativeai).

The SDK does not retry unless given ``retry_options``, which we never pass. Thinking tokens of
the 2.5 models are billed as output, so they are counted as output here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import (
    Completion,
    ErrorContext,
    Message,
    connection_error,
    error_for_status,
    httpx_error_classes,
    server_message,
    timeout_error,
)

if TYPE_CHECKING:
    from ..errors import ProviderError
    from ..settings import ModelParams

_ROLES = {"user": "user", "assistant": "model"}


class GeminiProvider:
    name = "gemini"

    def __init__(self, *, api_key: str, base_url: str | None, context: ErrorContext):
        from google import genai
        from google.genai import errors, types

        self._errors = errors
        self._types = types
        self._context = context
        http_options = types.HttpOptions(base_url=base_url) if base_url else None
        # vertexai=False: an environment variable must not switch us to another backend.
        self._client = genai.Client(api_key=api_key, vertexai=False, http_options=http_options)
        self._timeouts, self._transports = httpx_error_classes()

    def complete(self, messages: Sequence[Message], params: ModelParams) -> Completion:
        types = self._types
        contents = [
            types.Content(role=_ROLES[message.role], parts=[types.Part(text=message.content)])
            for message in messages
        ]
        config = types.GenerateContentConfig(
            temperature=params.temperature,
            top_p=params.top_p,
            max_output_tokens=params.max_tokens,
            response_mime_type="application/json" if params.json_output else None,
            http_options=types.HttpOptions(timeout=int(params.timeout_s * 1000)),
        )
        failure: ProviderError | None = None
        try:
            response = self._client.models.generate_content(
                model=params.model, contents=contents, config=config
            )
        except self._errors.APIError as error:
            failure = error_for_status(
                int(error.code or 0),
                server_message(error.details, error.message or str(error.status)),
                _headers_of(error),
                self._context,
                params.model,
            )
        except self._timeouts:
            failure = timeout_error(self._context, params.timeout_s)
        except self._transports as error:
            failure = connection_error(self._context, type(error).__name__)
        if failure is not None:
            raise failure
        usage = response.usage_metadata
        output_tokens = None
        if usage is not None and usage.candidates_token_count is not None:
            output_tokens = usage.candidates_token_count + (usage.thoughts_token_count or 0)
        finish = response.candidates[0].finish_reason if response.candidates else None
        return Completion(
            text=_text_of(response),
            input_tokens=usage.prompt_token_count if usage else None,
            output_tokens=output_tokens,
            truncated=finish is not None and finish.name == "MAX_TOKENS",
            finish_reason=finish.name if finish is not None else None,
        )

    def close(self) -> None:
        self._client.close()


def _text_of(response: Any) -> str:
    parts = []
    for candidate in (response.candidates or [])[:1]:
        content = candidate.content
        for part in (content.parts or []) if content else []:
            if part.text and not part.thought:
                parts.append(part.text)
    return "".join(parts)


def _headers_of(error: Any) -> dict[str, str]:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return dict(headers) if headers is not None else {}
