"""Wire protocols by provider name: one module per protocol, presets as declared options.

Modules load on first use, so naming one provider never imports the others.
"""

from __future__ import annotations

import importlib

from rxllm.errors import ConfigError, did_you_mean
from rxllm.providers.base import WireProtocol

__all__ = ["PROVIDER_NAMES", "WireProtocol", "wire_for"]

# name -> "module:factory" inside rxllm.providers; the factory takes no arguments.
_FACTORIES: dict[str, str] = {
    "openai": "openai_chat:OpenAIChat",
    "openai-responses": "openai_responses:OpenAIResponses",
    "anthropic": "anthropic:Anthropic",
    "google": "google:Google",
    "openrouter": "presets:openrouter",
    "nvidia": "presets:nvidia",
    "deepseek": "presets:deepseek",
    "moonshot": "presets:moonshot",
    "custom": "presets:custom",
    "local": "presets:local",
    "azure-openai": "presets:azure_openai",
    "groq": "presets:groq",
    "mistral": "presets:mistral",
    "vllm": "presets:vllm",
    "ollama": "presets:ollama",
    "llamacpp": "presets:llamacpp",
    "xai": "presets:xai",
    "zai": "presets:zai",
    "together": "presets:together",
    "snowflake": "presets:snowflake",
}

PROVIDER_NAMES = tuple(sorted(_FACTORIES))

# Names users reach for that are not provider names, with the one to use. A hint only,
# never an alias: a provider has one name in records, logs, fallbacks and telemetry.
_LM_STUDIO = "'custom' with base_url='http://localhost:1234/v1', allow_private_network=True"
_HINTS: dict[str, str] = {
    "gemini": "'google'",
    "claude": "'anthropic'",
    "azure": "'azure-openai'",
    "openai-chat": "'openai'",
    "responses": "'openai-responses'",
    "grok": "'xai' (Grok's maker) or 'groq'",  # a typo's closest name is 'groq' alone
    "lmstudio": _LM_STUDIO,
    "lm-studio": _LM_STUDIO,
}


def wire_for(name: str) -> WireProtocol:
    """The wire protocol of provider `name`; an unknown name is a `ConfigError`, and
    anything but a str a `TypeError`."""
    if not isinstance(name, str):
        given = type(name).__name__
        named = getattr(name, "name", None)
        also = f" (this one's is {named!r})" if isinstance(named, str) else ""
        raise TypeError(f"a provider is named by a str such as 'openai', got {given}{also}")
    target = _FACTORIES.get(name)
    if target is None:
        raise ConfigError(
            f"unknown provider {name!r}{_hint(name)}; known providers: {', '.join(PROVIDER_NAMES)}"
        )
    module_name, _, factory = target.partition(":")
    module = importlib.import_module(f"rxllm.providers.{module_name}")
    wire: WireProtocol = getattr(module, factory)()
    return wire


def _hint(name: str) -> str:
    """`" (did you mean ...?)"` for a well-known other name of a provider, a name in
    other case, or a typo; else ""."""
    key = name.lower()
    hint = _HINTS.get(key) or (repr(key) if key in _FACTORIES else None)
    return f" (did you mean {hint}?)" if hint else did_you_mean(name, PROVIDER_NAMES)
