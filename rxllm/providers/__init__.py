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


def wire_for(name: str) -> WireProtocol:
    """The wire protocol of provider `name`; an unknown name is a `ConfigError`."""
    target = _FACTORIES.get(name)
    if target is None:
        raise ConfigError(
            f"unknown provider {name!r}{did_you_mean(name, PROVIDER_NAMES)}; known "
            f"providers: {', '.join(PROVIDER_NAMES)}"
        )
    module_name, _, factory = target.partition(":")
    module = importlib.import_module(f"rxllm.providers.{module_name}")
    wire: WireProtocol = getattr(module, factory)()
    return wire
