"""Two parallel calls of one turn with the same id: DeepSeek and Z.ai (GLM) have sent
`call_00_...` ids that repeat within a turn (HKUDS/nanobot#3943), and Gemini through
OpenRouter alike (OpenRouterTeam/ai-sdk-provider#471). The calls are two; their ids must
be too, or the results cannot be told apart and the next request repeats an id ("Duplicate
value for 'tool_call_id'"). The repeat is renamed as it starts, `{id}_2`, in its events
and in the history sent back. Bodies written by hand from those reports.
"""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm import ChatRequest, Message
from rxllm.events import ToolRequest
from tests.providers.test_probe_openai_chat import _chunk, _sse
from tests.support import Recorder, Serve, replay_every_way


def _call(index: int, path: str, **fields: Any) -> dict[str, Any]:
    function = {"name": "read", "arguments": json.dumps({"p": path})}
    return {"index": index, "id": "call_00_abc", "type": "function", "function": function} | fields


_TWO_CALLS = _sse(
    _chunk({"role": "assistant", "tool_calls": [_call(0, "a")]}),
    _chunk({"tool_calls": [_call(1, "b")]}),
    _chunk({}, "tool_calls"),
)


def _requests(body: bytes, provider: str = "deepseek") -> list[tuple[str, dict[str, Any]]]:
    events = replay_every_way(body, provider)
    return [(e.call_id, e.arguments) for e in events if isinstance(e, ToolRequest)]


def test_the_repeated_id_is_renamed_as_its_call_starts() -> None:
    # Before: two tool_requests, both `call_00_abc`.
    assert _requests(_TWO_CALLS) == [("call_00_abc", {"p": "a"}), ("call_00_abc_2", {"p": "b"})]


def test_fragments_that_repeat_the_servers_id_stay_with_their_call() -> None:
    # The wire matches a call by the id the server sent: a server that repeats the id and
    # name on every fragment of the renamed call continues it, not a third call.
    body = _sse(
        _chunk({"tool_calls": [_call(0, "a")]}),
        _chunk({"tool_calls": [_call(1, "b") | {"function": {"name": "read", "arguments": ""}}]}),
        _chunk({"tool_calls": [_call(1, "b")]}),
        _chunk({}, "tool_calls"),
    )
    assert _requests(body) == [("call_00_abc", {"p": "a"}), ("call_00_abc_2", {"p": "b"})]


async def test_each_result_goes_back_to_its_own_call(serve: Serve) -> None:
    """The whole loop over HTTP. Before: the history sent the calls as `call_00_abc` and
    `call_00_abc_2` and both results as `call_00_abc_2`, the first call with none."""
    recorder = Recorder(answers={"/chat/completions": _TWO_CALLS})
    base_url = await serve(recorder.handle)
    question = Message.user("Read a and b")
    async with rxllm.provider("deepseek", api_key="sk-test", base_url=base_url) as p:
        record = await p.complete(ChatRequest(model="deepseek-chat", messages=[question]))
        first, second = (call.call_id for call in record.tool_calls)
        history = [
            question,
            record.to_message(),
            Message.tool(first, "A"),
            Message.tool(second, "B"),
        ]
        await p.complete(ChatRequest(model="deepseek-chat", messages=history))
    sent = recorder.requests[1]["body"]["messages"]
    calls = [call["id"] for call in sent[1]["tool_calls"]]
    results = [(m["tool_call_id"], m["content"]) for m in sent[2:]]
    assert calls == ["call_00_abc", "call_00_abc_2"]
    assert results == [("call_00_abc", "A"), ("call_00_abc_2", "B")]
