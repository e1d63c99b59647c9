"""server_type=anthropic: the official anthropic SDK, messages API, optional extended thinking.

With thinking_budget set, the model thinks within that many tokens (part of max_tokens) and the
thinking blocks are left out of the answer. Retries and timeouts are the SDK's own.
"""

from __future__ import annotations

from . import Completion, ProviderError, ProviderSettings, Request
from ...errors import first_line

FATAL_STATUS = {401: "the API key was rejected", 403: "access denied", 404: "unknown model or endpoint"}


def create(settings: ProviderSettings) -> "AnthropicProvider":
    return AnthropicProvider(settings)


class AnthropicProvider:
    def __init__(self, settings: ProviderSettings):
        import anthropic

        self.settings = settings
        self.anthropic = anthropic
        self.client = anthropic.Anthropic(api_key=settings.api_key, base_url=settings.base_url,
                                          timeout=settings.request_timeout, max_retries=settings.max_retries)

    def message_arguments(self, request: Request) -> dict:
        s = self.settings
        args = {"model": s.model_name, "max_tokens": s.max_tokens, "messages": request.messages}
        if s.thinking_budget:
            args["thinking"] = {"type": "enabled", "budget_tokens": s.thinking_budget}
        elif s.temperature is not None:
            # Sent in the body: recent SDK versions no longer list temperature as an argument.
            args["extra_body"] = {"temperature": s.temperature}
        return args

    def complete(self, request: Request) -> Completion:
        try:
            message = self.client.messages.create(**self.message_arguments(request))
            text = "".join(block.text for block in message.content if block.type == "text")
            usage = message.usage
            return Completion(text, _count(usage, "input_tokens"), _count(usage, "output_tokens"),
                              message.stop_reason)
        except self.anthropic.APIStatusError as exc:
            body = exc.response.text.strip()[:1000] if exc.response is not None else ""
            reason = FATAL_STATUS.get(exc.status_code)
            raise ProviderError(f"HTTP {exc.status_code}" + (f" ({reason})" if reason else "")
                                + (f": {body}" if body else ""), fatal=reason is not None) from None
        except self.anthropic.AnthropicError as exc:  # timeouts, connection errors, undecodable bodies
            raise ProviderError(first_line(exc),
                                unreachable=isinstance(exc, self.anthropic.APIConnectionError)) from None
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"malformed response from the server ({first_line(exc)})") from None


def _count(usage, name: str) -> int:
    value = getattr(usage, name, None) if usage is not None else None
    return int(value) if isinstance(value, int) else 0
