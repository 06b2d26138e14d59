"""Hypothesis profiles and the strategies the property, fuzz and load tests share.

Profiles: `ci` (the default) is small, derandomized and keeps no example database, so
`make test` is fast and the same on every run; `RXLLM_HYPOTHESIS=thorough` draws
twenty times more examples at random and remembers failures in `.hypothesis/`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import rxllm
from rxllm.events import Event
from rxllm.providers import PROVIDER_NAMES
from tests.support import CAPTURES, NO_CAPTURES

__all__ = [
    "BODIES",
    "needs_captures",
    "examples",
    "json_values",
    "outcome",
    "wire_of",
]

_COMMON: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("thorough", **_COMMON)
PROFILE = os.environ.get("RXLLM_HYPOTHESIS", "ci")
settings.load_profile(PROFILE)
_SCALE = 20 if PROFILE == "thorough" else 1


def examples(n: int) -> int:
    """`n` examples in the default profile, more in the thorough one."""
    return n * _SCALE


BODIES: list[Path] = sorted(CAPTURES.glob("*/*.sse")) if CAPTURES.is_dir() else []
needs_captures = pytest.mark.skipif(
    not BODIES,
    reason=NO_CAPTURES,
)


def wire_of(path: Path) -> str:
    """The provider that reads a capture: its folder's name, except Google's folder
    (`gemini`) and Responses-API recordings kept in another provider's folder."""
    if path.name.startswith("responses_api_"):
        return "openai-responses"
    name = {"gemini": "google"}.get(path.parent.name, path.parent.name)
    assert name in PROVIDER_NAMES, f"no provider reads the captures of {path.parent.name}"
    return name


def outcome(data: Any, provider: str) -> list[Event]:
    """The events of a replay, checked against the contract: never `on_error`, one
    completion, exactly one terminal event and it is the last, every error named."""
    events: list[Event] = []
    errors: list[Exception] = []
    completed: list[bool] = []
    rxllm.replay(data, provider=provider).subscribe(
        events.append, errors.append, lambda: completed.append(True)
    )
    assert not errors, (provider, errors)
    assert completed == [True], provider
    terminals = [e for e in events if e.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and events[-1] is terminals[0], [e.type for e in events]
    for event in events:
        assert event.provider == provider, (provider, event)
        if event.type == "error":
            assert event.error.message.strip(), event
            assert event.error.provider == provider, event
    return events


# JSON values as providers send them: scalars of every type (including the awkward
# ones: huge and negative numbers, floats, empty and non-ASCII strings), nested.
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
