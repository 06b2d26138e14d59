"""Streams that Python agent frameworks and evaluation harnesses pin in their tests, or
name in their stream handling (UKGovernmentBEIS/inspect_ai's LiteLLM proxy provider,
openai/openai-agents-python's chat stream handler and its end-of-stream tests): the
shapes the earlier sweeps did not replay.

Each body is written by hand from the source named beside it (its essential chunks,
ids and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the source says the stream means.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, ServerToolCall, ServerToolResult
from tests.support import Expect, check, kinds, replay_every_way, summarize
from tests.test_reasoning_history import record_of


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- Claude's server tools through LiteLLM's chat wire ------------------------------------
#
# BerriAI/litellm litellm/llms/anthropic/chat/handler.py (`ModelResponseIterator
# .chunk_parser`), which UKGovernmentBEIS/inspect_ai's LiteLLM proxy provider reads and
# its web search design notes describe ("server calls come back as ordinary
# `tool_calls` (only the `srvtoolu_` id marks them)"; "results go in
# `provider_specific_fields`"; "the stream re-sends result lists"): a `server_tool_use`
# block is a `tool_calls` entry under its `srvtoolu_` id, its input streamed as
# arguments at the call's `tool_index`; each `*_tool_result` block is added to a list
# sent whole in the delta's `provider_specific_fields` (`web_search_results` for web
# search and fetch); a `citations_delta` is `provider_specific_fields.citation`; and the
# stream wrapper (litellm_core_utils/streaming_handler.py, `finish_reason_handler`)
# turns the `stop` of `end_turn` into `tool_calls` once any call passed.

CLAUDE = "claude-sonnet-4-5-20250929"


def _proxy(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-7c1f0e2a",
        "created": 1760000000,
        "model": CLAUDE,
        "object": "chat.completion.chunk",
        "choices": [choice],
        **extra,
    }


def _call(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> Any:
    entry = {"id": call_id, "type": "function", "index": index}
    entry["function"] = {"name": name, "arguments": arguments}
    return _proxy({"content": "", "tool_calls": [entry]})


def _fields(**fields: Any) -> dict[str, Any]:
    return _proxy({"content": "", "provider_specific_fields": fields})


SEARCH_ID = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"
PAGE = "https://weather.example/paris"
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": SEARCH_ID,
    "content": [
        {
            "type": "web_search_result",
            "title": "Paris weather",
            "url": PAGE,
            "encrypted_content": "EqgfCioIARgBIiQ3YTk",
            "page_age": None,
        }
    ],
}


def test_claude_web_search_through_litellm_is_the_server_s_not_a_call_to_run() -> None:
    """Claude answers with its web search through LiteLLM's proxy: text, the search's
    call (`srvtoolu_` id, `web_search`, its query in two pieces), its result in
    `provider_specific_fields.web_search_results`, a citation, the answer, `tool_calls`
    (LiteLLM's word for Anthropic's `end_turn` after a call), then the usage. The search
    is a `server_tool_call` and `server_tool_result`, the citation one, and the turn ends
    `stop`: nothing asks the client to run. Before, the search was a `tool_request` an
    agent would run as its own `web_search` (and send back answered), the result and the
    citation were logged only, and the turn ended `tool_use`."""
    query = {"query": "paris weather today"}
    text = ["I'll look that up.", " It is sunny in Paris, 24 C."]
    cited = {
        "type": "web_search_result_location",
        "cited_text": "Sunny, 24 C",
        "url": PAGE,
        "title": "Paris weather",
        "encrypted_index": "Eo8BCioIAhgBIiQ",
    }
    body = _sse(
        _proxy({"role": "assistant", "content": text[0]}),
        _call(0, "", SEARCH_ID, "web_search"),
        _call(0, '{"query": "paris'),
        _call(0, ' weather today"}'),
        _fields(web_search_results=[SEARCH_RESULT]),
        _fields(citation=cited),
        _proxy({"content": text[1]}),
        _proxy({}, "tool_calls"),
        _proxy({}, usage={"prompt_tokens": 2100, "completion_tokens": 80, "total_tokens": 2180}),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="".join(text),
            usage=(2100, 80, 0, 0, 2180),
            raw_stop_reason="tool_calls",
            model=CLAUDE,
        ),
    )
    assert kinds(events) == [
        "text",
        "server_tool_call",
        "server_tool_result",
        "citation",
        "text",
        "usage",
        "done",
    ]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [(SEARCH_ID, "web_search", query)]
    results = [(e.call_id, e.name, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [(SEARCH_ID, "web_search", SEARCH_RESULT["content"])]
    citations = [(e.url, e.title, e.cited_text) for e in events if isinstance(e, Citation)]
    assert citations == [(PAGE, "Paris weather", "Sunny, 24 C")]
    turn = record_of(events, "custom").to_message()
    assert not turn.tool_calls  # nothing goes back as a call the client answered
    assert turn.text == "".join(text)


def test_a_server_fetch_beside_a_client_call_through_litellm() -> None:
    """The same proxy, Claude fetching a page (`web_fetch`, its result in the same list)
    and then calling the client's `get_weather` at the next `tool_index`; the list of
    results comes again whole with a later chunk. The fetch is the server's, said once;
    `get_weather` alone is requested, and the turn ends `tool_use`."""
    fetch_id = "srvtoolu_01Hq5"
    page = {"type": "document", "source": {"type": "text", "media_type": "text/plain"}}
    fetched = {
        "type": "web_fetch_tool_result",
        "tool_use_id": fetch_id,
        "content": {"type": "web_fetch_result", "url": PAGE, "content": page},
    }
    body = _sse(
        _call(0, "", fetch_id, "web_fetch"),
        _call(0, json.dumps({"url": PAGE})),
        _fields(web_search_results=[fetched]),
        _proxy({"content": "Now the forecast."}),
        _call(1, "", "toolu_01Bx", "get_weather"),
        _call(1, '{"city": "Paris"}'),
        _fields(web_search_results=[fetched]),
        _proxy({}, "tool_calls"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="Now the forecast.",
            tools=(("toolu_01Bx", "get_weather", {"city": "Paris"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=CLAUDE,
        ),
    )
    assert kinds(events) == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "tool_start",
        "tool_request",
        "done",
    ]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [(fetch_id, "web_fetch", {"url": PAGE})]
    results = [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [(fetch_id, fetched["content"])]
    history = record_of(events, "custom").to_message()
    assert [call.id for call in history.tool_calls] == ["toolu_01Bx"]


def test_claude_code_execution_through_litellm_reports_its_result_from_tool_results() -> None:
    """The same proxy, Claude running code: the `bash_code_execution` call (`srvtoolu_`
    id, its input in one piece) and its result block in `provider_specific_fields
    .tool_results` (the list LiteLLM keeps for every result but web search and fetch),
    beside a `container` field, then the answer and `tool_calls` again. The run is the
    server's, its output the result's content; the container is logged, the turn ends
    `stop`."""
    run_id = "srvtoolu_01Kp7"
    output = {
        "type": "bash_code_execution_result",
        "stdout": "42\n",
        "stderr": "",
        "return_code": 0,
        "content": [],
    }
    ran = {"type": "bash_code_execution_tool_result", "tool_use_id": run_id, "content": output}
    body = _sse(
        _call(0, "", run_id, "bash_code_execution"),
        _call(0, '{"command": "python -c \\"print(6 * 7)\\""}'),
        _fields(tool_results=[ran], container={"id": "container_011CQ", "expires_at": None}),
        _proxy({"content": "It prints 42."}),
        _proxy({}, "tool_calls"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="It prints 42.", raw_stop_reason="tool_calls", model=CLAUDE),
    )
    assert kinds(events) == ["server_tool_call", "server_tool_result", "text", "done"]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [(run_id, "bash_code_execution", {"command": 'python -c "print(6 * 7)"'})]
    results = [(e.call_id, e.name, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [(run_id, "bash_code_execution", output)]


# -- OpenAI Agents SDK: a stream cut before its finish ------------------------------------


def test_a_whole_call_cut_before_its_finish_is_not_requested() -> None:
    """openai/openai-agents-python tests/models/test_chatcompletions_stream_eof.py
    (`test_official_stream_rejects_eof_before_terminal_choice`, output "tool"): one chunk
    holding a whole call (`lookup`, arguments `{}`), then the body ends, no finish and no
    `[DONE]`. Its arguments parse, yet nothing says the call is complete: the SDK raises
    and runs no tool. Read right, as a guard: the call shows (`tool_start`), none is
    requested, and the turn ends `truncated`."""
    chunk = {
        "id": "chatcmpl-synthetic",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call-synthetic",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": "{}"},
                        }
                    ]
                },
                "finish_reason": None,
            }
        ],
    }
    events = replay_every_way(_sse(chunk, done=False), "openai")
    check(summarize(events), Expect(text="", terminal="error", error_kind="truncated"))
    assert kinds(events) == ["tool_start", "error"]
