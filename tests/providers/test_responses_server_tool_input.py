"""OpenAI Responses: a tool the provider runs is shown with its input, once the input is
known. An `output_item.added` carries none (a web search's `action` has no query yet, a
code interpreter's `code` and an MCP call's `arguments` are empty): the call is shown at
`response.code_interpreter_call_code.done` / `response.mcp_call_arguments.done`, else at
the item's `response.output_item.done`, right before its result, as the Anthropic wire
shows a server tool at its block's end and as pydantic-ai's `models/openai.py` maps these
items (`{container_id, code}`, the search `action` less its `sources`, `queries`, the MCP
arguments). Bodies are built by hand from the OpenAI streaming events reference and from
the essential lines of the recordings named; ids shortened."""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.events import Event, ServerToolCall, ServerToolResult
from rxllm.serving.ui_message_stream import UIMessageEncoder
from tests.providers.test_openai_responses_shapes import added, done, on, wire
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, log_messages, replay_every_way, summarize

P = "openai-responses"
MODEL = "gpt-4o-2024-08-06"


def created() -> dict[str, Any]:
    response = {"id": "resp_1", "object": "response", "model": MODEL, "status": "in_progress"}
    return {"type": "response.created", "response": {**response, "output": []}}


def completed(*output: Any) -> dict[str, Any]:
    response = {"id": "resp_1", "object": "response", "model": MODEL, "status": "completed"}
    return {"type": "response.completed", "response": {**response, "output": list(output)}}


def answer(index: int, mid: str, text: str) -> list[dict[str, Any]]:
    part = {"type": "output_text", "annotations": [], "text": text}
    item = {"id": mid, "type": "message", "status": "completed", "role": "assistant"}
    return [
        added(index, {**item, "status": "in_progress", "content": []}),
        on("response.output_text.delta", index, mid, content_index=0, delta=text),
        done(index, {**item, "content": [part]}),
    ]


def server_tools(events: list[Event]) -> list[tuple[str, str, str, Any]]:
    """Each server tool event: (type, call id, name, arguments or content)."""
    return [
        (e.type, e.call_id, e.name, e.arguments if isinstance(e, ServerToolCall) else e.content)
        for e in events
        if isinstance(e, ServerToolCall | ServerToolResult)
    ]


def content(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in ("id", "type")}


# -- pydantic-ai tests/models/cassettes/test_openai_responses/
#    test_openai_responses_model_web_search_tool_stream.yaml (gpt-4o, web_search_preview):
#    the call added with `action: {"type": "search"}` and no query, the progress events,
#    then the done item whose action holds the query.
async def test_a_web_search_is_shown_with_the_query_of_its_done_item(
    serve_body: ServeBody,
) -> None:
    ws = "ws_68775472e58c"
    call = {"id": ws, "type": "web_search_call", "status": "in_progress"}
    searched = {**call, "status": "completed"}
    searched["action"] = {"type": "search", "query": "top world news October 5 2023"}
    events = await run(
        serve_body,
        created(),
        added(0, {**call, "action": {"type": "search"}}),
        on("response.web_search_call.in_progress", 0, ws),
        on("response.web_search_call.searching", 0, ws),
        on("response.web_search_call.completed", 0, ws),
        done(0, searched),
        *answer(1, "msg_6877547520cc", "Here are the top three news stories"),
        completed(searched),
    )
    assert server_tools(events) == [
        ("server_tool_call", ws, "web_search_call", {"action": searched["action"]}),
        ("server_tool_result", ws, "web_search_call", content(searched)),
    ]
    assert summarize(events).stop_reason == "stop"


def test_the_sources_a_search_found_are_its_result_not_its_input() -> None:
    # `include: ["web_search_call.action.sources"]`: the done item's action lists them
    sources = [{"type": "url", "url": "https://a.example/"}]
    searched = {"id": "ws_1", "type": "web_search_call", "status": "completed"}
    searched["action"] = {"type": "search", "query": "q", "sources": sources}
    events = replay_every_way(wire(created(), done(0, searched), completed(searched)), P)
    assert server_tools(events) == [
        (
            "server_tool_call",
            "ws_1",
            "web_search_call",
            {"action": {"type": "search", "query": "q"}},
        ),
        ("server_tool_result", "ws_1", "web_search_call", content(searched)),
    ]


# -- pydantic-ai tests/models/cassettes/test_openai_responses/
#    test_openai_responses_model_mcp_server_tool_stream.yaml (gpt-4o, a hosted MCP server):
#    `mcp_list_tools` added with no tools and done with one; an `mcp_call` added with empty
#    `arguments`, which stream as `response.mcp_call_arguments.delta` and `.done`, then its
#    done item with the server's `output`.
async def test_an_mcp_call_is_shown_with_its_arguments_at_their_done_event(
    serve_body: ServeBody,
) -> None:
    lid, cid = "mcpl_064f1d59", "mcp_064f1d59"
    listed = {"id": lid, "type": "mcp_list_tools", "server_label": "test_server"}
    tool = {"description": "Returns a list of my favorite games.", "name": "get_my_games"}
    tool = {**tool, "input_schema": {"properties": {}, "type": "object"}}
    call = {"id": cid, "type": "mcp_call", "status": "in_progress", "approval_request_id": None}
    call = {**call, "arguments": "", "error": None, "name": "get_my_games", "output": None}
    call = {**call, "server_label": "test_server"}
    ran = {**call, "status": "completed", "arguments": "{}"}
    ran["output"] = '["Lies of P", "Bloodborne", "Sekiro"]'
    with log_messages() as messages:
        events = await run(
            serve_body,
            created(),
            added(0, {**listed, "tools": []}),
            on("response.mcp_list_tools.in_progress", 0, lid),
            on("response.mcp_list_tools.completed", 0, lid),
            done(0, {**listed, "tools": [tool]}),
            added(1, call),
            on("response.mcp_call.in_progress", 1, cid),
            on("response.mcp_call_arguments.delta", 1, cid, delta="{}"),
            on("response.mcp_call_arguments.done", 1, cid, arguments="{}"),
            on("response.mcp_call.completed", 1, cid),
            done(1, ran),
            *answer(2, "msg_064f1d59", "You have the following games"),
            completed({**listed, "tools": [tool]}, ran),
        )
    assert server_tools(events) == [
        ("server_tool_call", lid, "mcp_list_tools", {"server_label": "test_server"}),
        ("server_tool_result", lid, "mcp_list_tools", content({**listed, "tools": [tool]})),
        (
            "server_tool_call",
            cid,
            "mcp_call",
            {"server_label": "test_server", "name": "get_my_games", "arguments": {}},
        ),
        ("server_tool_result", cid, "mcp_call", content(ran)),
    ]
    assert not [m for m in messages if "mcp_call_arguments" in m]  # read, not unknown


# -- OpenAI streaming reference: a code interpreter call is added with empty `code` and
#    its `container_id`; `response.code_interpreter_call_code.delta` streams the code,
#    `.done` gives it whole, then `.interpreting`, `.completed` and the done item with its
#    `outputs` (vercel/ai openai-code-interpreter-tool.1.chunks.txt has this order).
CODE = "import math\nprint(math.sqrt(2))\n"
INTERPRETER = {
    "id": "ci_1",
    "type": "code_interpreter_call",
    "status": "in_progress",
    "code": "",
    "container_id": "cntr_1",
    "outputs": None,
}
RAN = {**INTERPRETER, "status": "completed", "code": CODE}
RAN["outputs"] = [{"type": "logs", "logs": "1.4142135623730951\n"}]


def interpreter_until_it_runs() -> list[dict[str, Any]]:
    return [
        created(),
        added(0, INTERPRETER),
        on("response.code_interpreter_call.in_progress", 0, "ci_1"),
        on("response.code_interpreter_call_code.delta", 0, "ci_1", delta=CODE[:12]),
        on("response.code_interpreter_call_code.delta", 0, "ci_1", delta=CODE[12:]),
        on("response.code_interpreter_call_code.done", 0, "ci_1", code=CODE),
        on("response.code_interpreter_call.interpreting", 0, "ci_1"),
    ]


async def test_a_code_interpreter_call_is_shown_with_its_code_once(
    serve_body: ServeBody,
) -> None:
    with log_messages() as messages:
        events = await run(
            serve_body,
            *interpreter_until_it_runs(),
            on("response.code_interpreter_call.completed", 0, "ci_1"),
            done(0, RAN),
            *answer(1, "msg_1", "The square root of 2 is 1.414."),
            completed(RAN),
        )
    assert server_tools(events) == [
        (
            "server_tool_call",
            "ci_1",
            "code_interpreter_call",
            {"container_id": "cntr_1", "code": CODE},
        ),
        ("server_tool_result", "ci_1", "code_interpreter_call", content(RAN)),
    ]
    assert not [m for m in messages if "code_interpreter_call_code" in m]  # read, not unknown


def test_the_code_is_shown_once_written_before_the_interpreter_has_run() -> None:
    # the stream cut while the code runs: the call was shown at its code's done event
    events = replay_every_way(wire(*interpreter_until_it_runs()), P)
    assert server_tools(events) == [
        (
            "server_tool_call",
            "ci_1",
            "code_interpreter_call",
            {"container_id": "cntr_1", "code": CODE},
        ),
    ]
    assert events[-1].type == "error"


@pytest.mark.parametrize(
    ("kind", "event", "field", "value", "expected"),
    [
        # openai-python's earlier names of these events (ResponseCodeInterpreterCallCodeDone
        # Event `response.code_interpreter_call.code.done`; ResponseMcpCallArgumentsDoneEvent
        # `response.mcp_call.arguments_done`, its `arguments` an object)
        ("code_interpreter_call", "response.code_interpreter_call.code.done", "code", "1", "1"),
        ("mcp_call", "response.mcp_call.arguments_done", "arguments", {"a": 1}, {"a": 1}),
        ("mcp_call", "response.mcp_call_arguments.done", "arguments", '{"a": 1}', {"a": 1}),
    ],
)
def test_an_input_done_event_shows_the_call_before_its_item_is_done(
    kind: str, event: str, field: str, value: Any, expected: Any
) -> None:
    item = {"id": "x_1", "type": kind, "status": "in_progress", field: ""}
    events = replay_every_way(
        wire(created(), added(0, item), on(event, 0, "x_1", **{field: value})), P
    )
    assert server_tools(events) == [("server_tool_call", "x_1", kind, {field: expected})]


def test_a_provider_run_item_the_terminal_closes_is_shown_with_its_input() -> None:
    # no `output_item.done`: the terminal response's item is read in its place
    files = {"id": "fs_1", "type": "file_search_call", "status": "in_progress", "queries": []}
    found = {**files, "status": "completed", "queries": ["embedding model"], "results": None}
    events = replay_every_way(wire(created(), added(0, files), completed(found)), P)
    assert server_tools(events) == [
        ("server_tool_call", "fs_1", "file_search_call", {"queries": ["embedding model"]}),
        ("server_tool_result", "fs_1", "file_search_call", content(found)),
    ]


def test_served_the_call_carries_its_code_before_its_output() -> None:
    # rxllm.serving: a provider-run tool's input-available part holds the input shown
    events = replay_every_way(wire(*interpreter_until_it_runs(), done(0, RAN), completed(RAN)), P)
    encoder = UIMessageEncoder("m")
    parts = [part for event in events for part in encoder.parts(event)]
    tools = [p for p in parts if str(p["type"]).startswith("tool-")]
    assert [p["type"] for p in tools] == [
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
    ]
    assert tools[1]["input"] == {"container_id": "cntr_1", "code": CODE}


# -- a url_citation's `start_index`/`end_index` mark the answer's own text (often the link
#    itself, as in vercel/ai openai-web-search-tool.1.chunks.txt), not text quoted from
#    the source: `cited_text` stays empty, as on the Gemini wire.
def test_a_url_citation_has_no_cited_text() -> None:
    url = "https://www.example.com/berlin"
    text = f"Berlin Art Week runs this week ([example.com]({url}))."
    start = text.index("(")
    cite = {"type": "url_citation", "url": url, "title": "Berlin", "start_index": start}
    cite["end_index"] = len(text) - 1
    part = {"type": "output_text", "annotations": [cite], "text": text}
    item = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant"}
    events = replay_every_way(
        wire(
            created(),
            added(0, {**item, "status": "in_progress", "content": []}),
            on("response.output_text.delta", 0, "msg_1", content_index=0, delta=text),
            on(
                "response.output_text.annotation.added",
                0,
                "msg_1",
                content_index=0,
                annotation_index=0,
                annotation=cite,
            ),
            done(0, {**item, "content": [part]}),
            completed({**item, "content": [part]}),
        ),
        P,
    )
    citations = [(e.url, e.title, e.cited_text) for e in events if e.type == "citation"]
    assert citations == [(url, "Berlin", None)]
