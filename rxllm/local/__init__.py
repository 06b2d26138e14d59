"""The embedded local provider: scripted turns over real HTTP, no API key needed."""

from rxllm.local.rejections import REJECTIONS
from rxllm.local.script import FAULTS, HTTP_FAULTS, Script, script_for
from rxllm.local.server import WIRES, LocalServer, shared_server_url

__all__ = [
    "FAULTS",
    "HTTP_FAULTS",
    "REJECTIONS",
    "WIRES",
    "LocalServer",
    "Script",
    "script_for",
    "shared_server_url",
]
