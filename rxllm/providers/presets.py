"""Named endpoints of the OpenAI-chat core: each a declaration, not a copy of the loop."""

from __future__ import annotations

from rxllm.providers.openai_chat import OpenAIChat

__all__ = ["custom", "local"]


def local() -> OpenAIChat:
    """The embedded server (`rxllm.local`): OpenAI chat wire, no key."""
    return OpenAIChat("local", default_base_url="", api_key_env=None, requires_api_key=False)


def custom() -> OpenAIChat:
    """Any OpenAI-compatible URL, given as `base_url`; a key only if it wants one."""
    return OpenAIChat(
        "custom", default_base_url="", api_key_env="CUSTOM_API_KEY", requires_api_key=False
    )
