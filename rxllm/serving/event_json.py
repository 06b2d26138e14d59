"""An event as the Redis log stores it, JSON, and back, lone surrogates included.

A provider's JSON may escape half a character alone (`"\\ud800"`): json decoding gives
a lone surrogate. The pipeline mends it in every event it makes (a pair split between
two deltas joined, a lone half U+FFFD), not in an event built by hand. The log
keeps such an event as it came, so a replay replaces it exactly as the live response
did (`UIMessageEncoder`). pydantic's JSON can neither write one (it is not UTF-8) nor read
its escape, so then, and only then, the stdlib's JSON does: ASCII, the lone half as
its `\\uXXXX` escape, which any JSON reader takes.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from rxllm.events import Event, EventAdapter

__all__ = ["dump_event", "json_or_none", "load_event"]

# The Python dump, not the JSON one: `mode="json"` spoils a lone surrogate in a key.
_dumps_ascii = json.JSONEncoder(separators=(",", ":"), default=to_jsonable_python).encode


def dump_event(event: Event) -> str:
    """`event.model_dump_json()`; an event holding a lone surrogate is the same JSON
    escaped to ASCII."""
    try:
        return event.model_dump_json()
    except PydanticSerializationError:
        return _dumps_ascii(event.model_dump())


def load_event(data: bytes | str) -> Event:
    """The event `dump_event` wrote: `EventAdapter.validate_json(data)`, but a lone
    surrogate's escape is read too. Anything else raises as validation does."""
    try:
        return EventAdapter.validate_json(data)
    except ValidationError as error:
        if error.errors(include_url=False)[0]["type"] != "json_invalid":
            raise
        try:
            fields = json.loads(data)
        except ValueError:
            raise error from None
        return EventAdapter.validate_python(fields)


def json_or_none(data: bytes | str) -> Any:
    """`data` read by the stdlib's JSON, which takes a lone surrogate's escape (unlike
    pydantic_core's `from_json`), or None if it is not JSON."""
    try:
        return json.loads(data)
    except ValueError:
        return None
