"""server_type=openai: the official openai SDK, chat completions or the responses API (`api` key).

Reasoning models (o-series, gpt-5 family, or any model given reasoning_effort) take
max_completion_tokens / max_output_tokens and a reasoning effort instead of a temperature.
Retries (429, 5xx, timeouts, with backoff and jitter) and timeouts are the SDK's own: we only pass
max_retries and request_timeout to the client.
"""

from __future__ import annotations

import re

from . import Completion, ProviderError, ProviderSettings, Request
from ...errors import first_line

REASONING_MODELS = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)

# Errors that every later request would hit as well: stop the run instead of failing each sample.
FATAL_STATUS = {401: "the API key was rejected", 403: "access denied", 404: "unknown model or endpoint"}


def create(settings: ProviderSettings) -> "OpenAIProvider":
    return OpenAIProvider(settings)


class OpenAIProvider:
    def __init__(self, settings: ProviderSettings):
        import openai

        self.settings = settings
        self.openai = openai
        self.client = openai.OpenAI(api_key=settings.api_key, base_url=settings.base_url,
                                    timeout=settings.request_timeout, max_retries=settings.max_retries)

    @property
    def reasoning(self) -> bool:
        s = self.settings
        return s.reasoning_effort is not None or bool(REASONING_MODELS.match(s.model_name or ""))

    def complete(self, request: Request) -> Completion:
        call = self._responses if self.settings.api == "responses" else self._chat
        try:
            return call(request)
        except self.openai.APIStatusError as exc:
            raise _status_error(exc) from None
        except self.openai.OpenAIError as exc:  # timeouts, connection errors, undecodable bodies
            raise ProviderError(first_line(exc), unreachable=isinstance(exc, self.openai.APIConnectionError)) from None
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"malformed response from the server ({first_line(exc)})") from None

    def chat_arguments(self, request: Request) -> dict:
        s = self.settings
        args = {"model": s.model_name, "messages": request.messages}
        if self.reasoning:
            args["max_completion_tokens"] = s.max_tokens
            if s.reasoning_effort is not None:
                args["reasoning_effort"] = s.reasoning_effort
        else:
            args["max_tokens"] = s.max_tokens
            if s.temperature is not None:
                args["temperature"] = s.temperature
        return args

    def responses_arguments(self, request: Request) -> dict:
        s = self.settings
        conversation = request.messages if request.history else request.prompt
        args = {"model": s.model_name, "input": conversation, "max_output_tokens": s.max_tokens}
        if self.reasoning:
            if s.reasoning_effort is not None:
                args["reasoning"] = {"effort": s.reasoning_effort}
        elif s.temperature is not None:
            args["temperature"] = s.temperature
        return args

    def _chat(self, request: Request) -> Completion:
        response = self.client.chat.completions.create(**self.chat_arguments(request))
        choice = response.choices[0]
        text = choice.message.content
        if text is None:
            raise ProviderError(f"the response has no text (finish_reason={choice.finish_reason})")
        usage = response.usage
        return Completion(text, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"),
                          choice.finish_reason)

    def _responses(self, request: Request) -> Completion:
        response = self.client.responses.create(**self.responses_arguments(request))
        details = response.incomplete_details
        finish = (details.reason if details is not None and details.reason else response.status)
        usage = response.usage
        return Completion(response.output_text, _count(usage, "input_tokens"), _count(usage, "output_tokens"),
                          finish)


def _count(usage, name: str) -> int:
    value = getattr(usage, name, None) if usage is not None else None
    return int(value) if isinstance(value, int) else 0


def _status_error(exc) -> ProviderError:
    """An HTTP error left after the SDK's retries, with the server's own body (trimmed)."""
    body = exc.response.text.strip()[:1000] if exc.response is not None else ""
    reason = FATAL_STATUS.get(exc.status_code)
    message = f"HTTP {exc.status_code}" + (f" ({reason})" if reason else "") + (f": {body}" if body else "")
    return ProviderError(message, fatal=reason is not None)
