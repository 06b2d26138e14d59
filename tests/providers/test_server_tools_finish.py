"""A turn that ends `tool_calls` where the provider ran every call itself asks the client
to run nothing: it is `stop` (the raw reason kept), on the chat wire's every kind of tool
the provider runs, not only LiteLLM's `srvtoolu_` calls (7a03317). Zhipu's typed tool
entries (its Assistant API's stream, GLM-4-AllTools' `code_interpreter`, a `web_search`
entry) and MiniMax's closing frame end `tool_calls` after tools it ran: an agent loop
read `tool_use` and found no call to run. A client call beside a server's is still
`tool_use`."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Done, ServerToolCall, ToolRequest
from tests.support import replay_every_way


def _sse(*payloads: dict[str, Any]) -> bytes:
    lines = [f"data: {json.dumps(p)}\n\n" for p in payloads]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "2024080616285251e6b5e332a0467d",
        "created": 1722932937,
        "model": "glm-4-alltools",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


_SEARCH = {
    "index": 0,
    "id": "ws_1",
    "type": "web_search",
    "web_search": {
        "search_intent": [{"intent": "SEARCH_ALL", "keywords": "gamma"}],
        "search_result": [{"title": "G", "link": "https://g.example/1", "content": "g"}],
    },
}


def test_tool_calls_finish_after_tools_the_provider_ran_is_stop() -> None:
    body = _sse(
        _chunk({"role": "assistant", "tool_calls": [_SEARCH]}),
        _chunk({"content": "gamma it is"}),
        _chunk({}, "tool_calls"),
    )
    events = replay_every_way(body, "zai")
    assert [e.call_id for e in events if isinstance(e, ServerToolCall)] == ["ws_1"]
    assert not [e for e in events if isinstance(e, ToolRequest)]
    (done,) = [e for e in events if isinstance(e, Done)]
    assert (done.stop_reason, done.raw_stop_reason) == ("stop", "tool_calls")


def test_a_client_call_beside_the_providers_is_still_tool_use() -> None:
    call = {
        "index": 1,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    body = _sse(
        _chunk({"role": "assistant", "tool_calls": [_SEARCH]}),
        _chunk({"tool_calls": [call]}),
        _chunk({}, "tool_calls"),
    )
    events = replay_every_way(body, "zai")
    assert [e.name for e in events if isinstance(e, ToolRequest)] == ["get_weather"]
    (done,) = [e for e in events if isinstance(e, Done)]
    assert done.stop_reason == "tool_use"
