"""Exceptions raised at the API boundary, before any stream exists.

Failures of a stream itself are never raised: they are `error` events.
"""

from __future__ import annotations

__all__ = ["ConfigError", "RxllmError"]


class RxllmError(Exception):
    """Base of every exception rxllm raises on purpose."""


class ConfigError(RxllmError, ValueError):
    """A provider cannot be built as asked: unknown name, missing key, bad option."""
