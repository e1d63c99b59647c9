"""OpenAI-compatible servers (vLLM, SGLang, DeepSeek, Together, a local model): the openai SDK
pointed at `base_url`. They take the classic max_tokens and temperature whatever the model, and a
reasoning effort only when one is configured."""

from __future__ import annotations

from . import ProviderSettings
from .openai_provider import OpenAIProvider


def create(settings: ProviderSettings) -> "CompatibleProvider":
    return CompatibleProvider(settings)


class CompatibleProvider(OpenAIProvider):
    @property
    def reasoning(self) -> bool:
        return False

    def chat_arguments(self, request) -> dict:
        args = super().chat_arguments(request)
        if self.settings.reasoning_effort is not None:
            args["reasoning_effort"] = self.settings.reasoning_effort
        if self.settings.extra.get("extra_body"):  # upstream's VLLM_* variables (providers.server_extras)
            args["extra_body"] = self.settings.extra["extra_body"]
        return args
