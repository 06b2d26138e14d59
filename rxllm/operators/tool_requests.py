"""tool_requests: the tool calls a stream asks the client to run."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from rxllm.events import ToolRequest
from rxllm.operators.of_type import of_type

__all__ = ["tool_requests"]


def tool_requests() -> Callable[[Observable[object]], Observable[ToolRequest]]:
    """The `tool_request` events: calls whose arguments are complete, valid JSON
    objects, safe to dispatch.

    ::

        source:  -s-t-q1-s-q2-done-|
        tool_requests()
        result:  -----q1---q2------|

    `tool_start` (arguments still arriving) and provider-run tools
    (`server_tool_call`, never dispatched) are skipped. The same as
    `of_type(ToolRequest)`, by the name an agent loop reads.

    Returns:
        An operator from events to `ToolRequest`s.
    """
    return of_type(ToolRequest)
