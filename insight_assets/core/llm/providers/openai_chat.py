"""OpenAI chat completions, for OpenAI itself and for OpenAI-compatible servers (Ollama, vLLM,
llama.cpp), through the official ``openai`` SDK with its retries switched off.

To a compatible server a JSON task also sends its schema inside ``response_format``: llama.cpp's
servers (``llama-server``, ``python -m llama_cpp.server``) then constrain decoding to it, as the
``local`` provider does; servers that do not know the key ignore it. OpenAI itself gets plain
``json_object`` (its strict ``json_schema`` mode refuses most pydantic schemas).

A task with ``choice_options`` asks for one token with its 20 most likely alternatives
(``logprobs``, ``top_logprobs``) and replies with the options' probabilities."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..rate_limits import parse_rate_limit_headers
from ..settings import OPENAI, OPENAI_COMPATIBLE, ModelParams
from .base import Completion, ErrorContext, Message, call_stainless_sdk, choice_reply
from .schema_bounds import decoding_schema

# Local servers ignore the key, but the SDK refuses to start without one (and would otherwise
# read OPENAI_API_KEY from the environment, which must not decide where a key comes from).
_PLACEHOLDER_KEY = "not-needed"


class OpenAIChatProvider:
    def __init__(self, *, name: str, api_key: str | None, base_url: str | None, context: ErrorContext):
        import openai

        self.name = name
        self._openai = openai
        self._context = context
        self._client = openai.OpenAI(api_key=api_key or _PLACEHOLDER_KEY, base_url=base_url, max_retries=0)

    def complete(self, messages: Sequence[Message], params: ModelParams) -> Completion:
        openai = self._openai
        request: dict[str, Any] = {
            "model": params.model,
            "messages": [{"role": message.role, "content": message.content} for message in messages],
            "timeout": params.timeout_s,
        }
        if params.choice_options:
            # One token and its alternatives' log-probabilities: what the options are read from.
            request.update(logprobs=True, top_logprobs=20)
        elif params.json_output:
            request["response_format"] = {"type": "json_object"}
            if self.name == OPENAI_COMPATIBLE and params.json_schema:
                request["response_format"]["schema"] = decoding_schema(params.json_schema)
        if params.temperature is not None:
            request["temperature"] = params.temperature
        if params.top_p is not None:
            request["top_p"] = params.top_p
        # OpenAI's newer models refuse max_tokens; many compatible servers know only max_tokens.
        max_tokens = 1 if params.choice_options else params.max_tokens
        if self.name == OPENAI:
            request["max_completion_tokens"] = max_tokens
        else:
            request["max_tokens"] = max_tokens
        raw = call_stainless_sdk(
            openai,
            lambda: self._client.chat.completions.with_raw_response.create(**request),
            self._context,
            params,
        )
        response = raw.parse()
        choice = response.choices[0] if response.choices else None
        usage = response.usage
        text = (choice.message.content or "") if choice else ""
        if params.choice_options:
            text = choice_reply(_first_token_probabilities(choice), params.choice_options)
        return Completion(
            text=text,
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            truncated=bool(choice and choice.finish_reason == "length"),
            finish_reason=choice.finish_reason if choice else None,
            rate_limit=parse_rate_limit_headers(raw.headers),
        )

    def close(self) -> None:
        self._client.close()


def _first_token_probabilities(choice: Any) -> dict[str, float]:
    """The first reply token's alternatives as {stripped token: probability} (summed where two
    tokens strip to the same text, " 4" and "4")."""
    logprobs = getattr(choice, "logprobs", None) if choice is not None else None
    content = getattr(logprobs, "content", None) or []
    if not content:
        return {}
    found: dict[str, float] = {}
    for alternative in content[0].top_logprobs or []:
        token = alternative.token.strip()
        found[token] = found.get(token, 0.0) + math.exp(alternative.logprob)
    return found
