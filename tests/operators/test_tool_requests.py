"""tool_requests: the tool calls a stream asks the client to run."""

from __future__ import annotations

from reactivex.testing.marbles import marbles_testing

from rxllm.events import ServerToolCall, ToolRequest
from rxllm.operators import tool_requests
from tests.operators.marbles import EVENTS

CALLS = {
    **EVENTS,
    "q": ToolRequest(provider="p", call_id="call_1", name="f", index=0, arguments={"x": 1}),
    "v": ServerToolCall(provider="p", call_id="ws_1", name="web_search"),
}


def test_only_complete_client_calls() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-q-v-D-|", CALLS).pipe(tool_requests()))
        assert results == exp("---q-----|", CALLS)
