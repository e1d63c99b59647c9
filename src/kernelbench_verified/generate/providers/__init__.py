"""LLM providers behind one registry, chosen by the generate config's `server_type`.

Each provider is a small module with `create(settings) -> provider`; a provider answers
`complete(request) -> Completion` or raises ProviderError. The SDKs (openai, anthropic) are imported
inside those modules only, so the rest of the package works without them.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass, field

from ...errors import UserError


@dataclass(frozen=True)
class Request:
    """One sample to generate: the prompt and where it belongs (replay uses the ids). In a refinement
    (num_turns > 1) `history` holds the earlier turns as (role, text) pairs and `turn` counts from 0."""
    prompt: str
    level: int
    pid: int
    sid: int
    turn: int = 0
    history: tuple = ()

    @property
    def messages(self) -> list[dict]:
        """The conversation in the chat format every provider sends: earlier turns, then the prompt."""
        return [{"role": role, "content": text} for role, text in self.history] + \
            [{"role": "user", "content": self.prompt}]


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None


class ProviderError(Exception):
    """A request that failed after the SDK's own retries. `fatal` errors (bad key, unknown model)
    would fail every other request the same way, so they stop the run; `unreachable` ones (no
    connection, a timeout) stop it when several come in a row before any success."""

    def __init__(self, message: str, fatal: bool = False, unreachable: bool = False):
        super().__init__(message)
        self.fatal, self.unreachable = fatal, unreachable


@dataclass(frozen=True)
class Preset:
    module: str                       # providers/{module}.py
    key_env: str | tuple | None = None  # environment variable(s) holding the API key, the first set wins
    base_url: str | None = None       # default endpoint; None = the SDK's own
    key_required: bool = True         # local servers accept any key
    apis: tuple = ("chat",)           # values of the `api` key this provider understands


REGISTRY: dict[str, Preset] = {
    "openai": Preset("openai_provider", "OPENAI_API_KEY", apis=("chat", "responses")),
    "anthropic": Preset("anthropic_provider", "ANTHROPIC_API_KEY", apis=("chat",)),
    # OpenAI-compatible servers: the same SDK pointed at another base_url.
    "compatible": Preset("compatible_provider", "OPENAI_API_KEY", key_required=False, apis=("chat", "responses")),
    "deepseek": Preset("compatible_provider", "DEEPSEEK_API_KEY", "https://api.deepseek.com"),
    "together": Preset("compatible_provider", "TOGETHER_API_KEY", "https://api.together.xyz/v1"),
    # Upstream KernelBench's other server types, through their OpenAI-compatible endpoints, reading the
    # variables upstream reads (its name first; google's SDK also reads GOOGLE_API_KEY).
    "google": Preset("compatible_provider", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                     "https://generativelanguage.googleapis.com/v1beta/openai/"),
    "fireworks": Preset("compatible_provider", ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"),
                        "https://api.fireworks.ai/inference/v1"),
    "sambanova": Preset("compatible_provider", "SAMBANOVA_API_KEY", "https://api.sambanova.ai/v1"),
    "moonshot": Preset("compatible_provider", "MOONSHOT_API_KEY", "https://api.moonshot.ai/v1"),
    "vllm": Preset("compatible_provider", "VLLM_API_KEY", "http://localhost:8000/v1", key_required=False),
    "sglang": Preset("compatible_provider", "SGLANG_API_KEY", "http://localhost:30000/v1", key_required=False),
    "replay": Preset("replay_provider", key_required=False),
}

SDK_PACKAGES = {"openai_provider": "openai", "compatible_provider": "openai", "anthropic_provider": "anthropic"}


@dataclass(frozen=True)
class ProviderSettings:
    """The resolved keys a provider needs (plain values, checked before any request)."""
    server_type: str
    model_name: str | None
    api_key: str | None
    base_url: str | None
    api: str
    max_tokens: int
    temperature: float | None
    request_timeout: float
    max_retries: int
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    replay_dir: str | None = None
    extra: dict = field(default_factory=dict)


def preset_for(server_type: str) -> Preset:
    if server_type not in REGISTRY:
        raise UserError(f"unknown server_type={server_type!r}: choose one of {', '.join(REGISTRY)}")
    return REGISTRY[server_type]


def resolve_api_key(server_type: str, api_key_env: str | None) -> str | None:
    """The key from the environment; a missing required key stops the run before any work."""
    preset = preset_for(server_type)
    names = [api_key_env] if api_key_env else \
        [preset.key_env] if isinstance(preset.key_env, str) else list(preset.key_env or ())
    key = next((os.environ[name] for name in names if os.environ.get(name)), None)
    if not key and preset.key_required:
        others = f" (or {' or '.join(names[1:])})" if len(names) > 1 else ""
        raise UserError(f"server_type={server_type} needs an API key: set {names[0]}{others} "
                        "(or name another variable with api_key_env=...)")
    return key or ("EMPTY" if preset.module != "replay_provider" else None)


def default_base_url(server_type: str) -> str | None:
    """The endpoint when base_url= is not given: the preset's, or for vllm upstream's VLLM_SERVER_ADDRESS
    and VLLM_SERVER_PORT (localhost and 8000 when unset)."""
    if server_type == "vllm" and (os.environ.get("VLLM_SERVER_ADDRESS") or os.environ.get("VLLM_SERVER_PORT")):
        port = os.environ.get("VLLM_SERVER_PORT") or "8000"
        if not port.isdigit():
            raise UserError(f"VLLM_SERVER_PORT={port!r} is not a port number")
        return f"http://{os.environ.get('VLLM_SERVER_ADDRESS') or 'localhost'}:{port}/v1"
    return preset_for(server_type).base_url


def server_extras(server_type: str) -> dict:
    """What upstream's environment variables add to a vllm request: VLLM_ENABLE_THINKING=0 (or false, no)
    turns a Qwen3-style chat template's thinking off, VLLM_STOP_TOKEN_IDS=151645,... stops on those tokens.
    Upstream sends stop id 151645 (Qwen's <|im_end|>) when the variable is unset; here nothing is sent then,
    since other models' tokenizers give that id another meaning."""
    if server_type != "vllm":
        return {}
    body = {}
    if os.environ.get("VLLM_ENABLE_THINKING", "1").strip().lower() in ("0", "false", "no"):
        body["chat_template_kwargs"] = {"enable_thinking": False}
    stops = os.environ.get("VLLM_STOP_TOKEN_IDS", "")
    if stops.strip():
        ids = [s.strip() for s in stops.split(",") if s.strip()]
        if not all(i.isdigit() for i in ids):
            raise UserError(f"VLLM_STOP_TOKEN_IDS={stops!r} must be token ids separated by commas, e.g. 151645")
        body["stop_token_ids"] = [int(i) for i in ids]
    return {"extra_body": body} if body else {}


def create_provider(settings: ProviderSettings):
    preset = preset_for(settings.server_type)
    if settings.api not in preset.apis:
        raise UserError(f"api={settings.api!r} is not supported by server_type={settings.server_type} "
                        f"(choose {' | '.join(preset.apis)})")
    package = SDK_PACKAGES.get(preset.module)
    if package and importlib.util.find_spec(package) is None:
        raise UserError(f"server_type={settings.server_type} needs the {package} package: "
                        "pip install -e '.[generate]'")
    module = importlib.import_module(f"{__name__}.{preset.module}")
    return module.create(settings)


