"""What the Anthropic wire sends back, in turn 2, of a turn that used a server tool: each
turn-1 stream made by hand from the blocks of Anthropic's server-tool docs (web fetch,
code execution, tool search, MCP connector, programmatic tool calling, `pause_turn`) in
the shapes anthropic-sdk-python's types give them (`BetaServerToolUseBlock`,
`BetaWebFetchBlock`, `BetaBashCodeExecutionToolResultBlock`,
`BetaToolSearchToolResultBlock`, `BetaMCPToolResultBlock`, `BetaFallbackBlock`); turn 2
recorded by a loopback server. Every block goes back as it came, in the order it came
(a result right after its call): each output block's fields are fields of its `*Param`
twin, `caller` and null `citations` included, which is how vercel/ai and pydantic-ai
send them back. Ids and values are made up."""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm import ChatRequest, Done, Message, ToolCall, ToolRequest
from rxllm.providers.anthropic import Anthropic
from rxllm.request import ReasoningPart, TextPart
from tests.providers.test_anthropic_shapes import START, STOP, delta, end, sse, start, stop
from tests.providers.test_probe_anthropic_4 import QUESTION, call, loop, text, thinking
from tests.support import Recorder, Serve, replay

DIRECT = {"type": "direct"}


def server(index: int, call_id: str, name: str, arguments: str, **block: Any) -> list[Any]:
    """A `server_tool_use` (or, with `type`, an `mcp_tool_use`) block: its input arrives
    as `input_json_delta`s after a start whose `input` is `{}`."""
    first = {"type": "server_tool_use", "id": call_id, "name": name, "input": {}, **block}
    return [
        start(index, first),
        delta(index, {"type": "input_json_delta", "partial_json": ""}),
        delta(index, {"type": "input_json_delta", "partial_json": arguments}),
        stop(index),
    ]


def whole(index: int, block: dict[str, Any]) -> list[Any]:
    """A block that arrives whole in its `content_block_start` (every tool result)."""
    return [start(index, block), stop(index)]


def sent_back(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The assistant turn as turn 2 sent it (after the question)."""
    assert body["messages"][1]["role"] == "assistant"
    content: list[dict[str, Any]] = body["messages"][1]["content"]
    return content


FETCHED = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_F",
    "content": {
        "type": "web_fetch_result",
        "url": "https://example.com/paris",
        "retrieved_at": "2025-09-10T12:00:00Z",
        "content": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Sunny, 24 C."},
            "title": "Paris weather",
            "citations": None,  # `BetaDocumentBlock.citations` is Optional; so is the Param's
        },
    },
}


async def test_web_fetch_goes_back_as_it_came(serve: Serve) -> None:
    """server_tool_use (with its `caller`), web_fetch_tool_result (a document whose
    `citations` is null), then text that cited it: the call and its result go back
    unchanged, the text without its citations (the API takes text without them)."""
    first = sse(
        START,
        *server(
            0,
            "srvtoolu_F",
            "web_fetch",
            '{"url": "https://example.com/paris"}',
            caller=DIRECT,
        ),
        *whole(1, FETCHED),
        start(2, {"type": "text", "text": "", "citations": None}),
        delta(
            2,
            {
                "type": "citations_delta",
                "citation": {
                    "type": "char_location",
                    "cited_text": "Sunny",
                    "document_index": 0,
                    "document_title": "Paris weather",
                    "start_char_index": 0,
                    "end_char_index": 5,
                },
            },
        ),
        delta(2, {"type": "text_delta", "text": "It is sunny."}),
        stop(2),
        end("end_turn"),
        STOP,
    )
    _, body = await loop(serve, first, [Message.user("And tomorrow?")])
    assert sent_back(body) == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_F",
            "name": "web_fetch",
            "input": {"url": "https://example.com/paris"},
            "caller": DIRECT,
        },
        FETCHED,
        {"type": "text", "text": "It is sunny."},
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [{"type": "text", "text": "And tomorrow?"}],
    }


BASH_RESULT = {
    "type": "bash_code_execution_tool_result",
    "tool_use_id": "srvtoolu_B",
    "content": {
        "type": "bash_code_execution_result",
        "stdout": "total 4\n-rw-r--r-- 1 user 12 chart.png\n",
        "stderr": "",
        "return_code": 0,
        "content": [{"type": "bash_code_execution_output", "file_id": "file_011CNha8"}],
    },
}
EDIT_RESULT = {
    "type": "text_editor_code_execution_tool_result",
    "tool_use_id": "srvtoolu_E",
    "content": {
        "type": "text_editor_code_execution_view_result",
        "file_type": "text",
        "content": "print('hi')\n",
        "num_lines": 1,
        "start_line": 1,
        "total_lines": 1,
    },
}
FAILED_EDIT = {
    "type": "text_editor_code_execution_tool_result",
    "tool_use_id": "srvtoolu_X",
    "content": {
        "type": "text_editor_code_execution_tool_result_error",
        "error_code": "file_not_found",
        "error_message": None,
    },
}


async def test_code_execution_goes_back_call_then_result(serve: Serve) -> None:
    """code_execution_20250825 runs as `bash_code_execution` and
    `text_editor_code_execution` calls: each result (one with an output file, one an
    error with a null message) goes back right after its call, thinking kept around."""
    first = sse(
        START,
        *thinking(0, "Run it.", "S1"),
        *server(1, "srvtoolu_B", "bash_code_execution", '{"command": "ls -l"}', caller=DIRECT),
        *whole(2, BASH_RESULT),
        *server(
            3,
            "srvtoolu_E",
            "text_editor_code_execution",
            '{"command": "view", "path": "/tmp/a.py"}',
            caller=DIRECT,
        ),
        *whole(4, EDIT_RESULT),
        *server(
            5,
            "srvtoolu_X",
            "text_editor_code_execution",
            '{"command": "view", "path": "/tmp/missing.py"}',
            caller=DIRECT,
        ),
        *whole(6, FAILED_EDIT),
        *thinking(7, "Done.", "S2"),
        *text(8, "The file prints hi."),
        end("end_turn"),
        STOP,
    )
    _, body = await loop(serve, first, [Message.user("Thanks")])
    blocks = sent_back(body)
    assert [(b["type"], b.get("id") or b.get("tool_use_id")) for b in blocks] == [
        ("thinking", None),
        ("server_tool_use", "srvtoolu_B"),
        ("bash_code_execution_tool_result", "srvtoolu_B"),
        ("server_tool_use", "srvtoolu_E"),
        ("text_editor_code_execution_tool_result", "srvtoolu_E"),
        ("server_tool_use", "srvtoolu_X"),
        ("text_editor_code_execution_tool_result", "srvtoolu_X"),
        ("thinking", None),
        ("text", None),
    ]
    assert blocks[1]["input"] == {"command": "ls -l"}
    assert (blocks[2], blocks[4], blocks[6]) == (BASH_RESULT, EDIT_RESULT, FAILED_EDIT)


SEARCHED = {
    "type": "tool_search_tool_result",
    "tool_use_id": "srvtoolu_S",
    "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "weather"}],
    },
}


async def test_tool_search_then_the_call_it_found(serve: Serve) -> None:
    """tool_search_tool_regex finds `weather` (a `tool_reference`), then Claude calls it:
    the search, its result and the client call go back in that order, the call's
    result in the next user message."""
    first = sse(
        START,
        *server(0, "srvtoolu_S", "tool_search_tool_regex", '{"pattern": "weather"}'),
        *whole(1, SEARCHED),
        *call(2, "toolu_W", "weather", '{"city": "Paris"}'),
        end("tool_use"),
        STOP,
    )
    _, body = await loop(serve, first, [Message.tool("toolu_W", "sunny")])
    assert sent_back(body) == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_S",
            "name": "tool_search_tool_regex",
            "input": {"pattern": "weather"},
        },
        SEARCHED,
        {"type": "tool_use", "id": "toolu_W", "name": "weather", "input": {"city": "Paris"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_W", "content": "sunny"}
    ]


MCP_RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_1",
    "is_error": False,
    "content": [{"type": "text", "text": "3 open issues", "citations": None}],
}


async def test_mcp_call_and_result_go_back_with_their_server(serve: Serve) -> None:
    """mcp_tool_use keeps its `server_name` (required on input: BetaMCPToolUseBlockParam),
    mcp_tool_result its `is_error` and content; `mcp_servers` and the beta header are
    the request's, as in turn 1."""
    first = sse(
        START,
        *server(
            0,
            "mcptoolu_1",
            "list_issues",
            '{"repo": "acme/app"}',
            type="mcp_tool_use",
            server_name="github",
        ),
        *whole(1, MCP_RESULT),
        *text(2, "There are 3 open issues."),
        end("end_turn"),
        STOP,
    )
    _, body = await loop(serve, first, [Message.user("Which is oldest?")])
    assert sent_back(body) == [
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_1",
            "name": "list_issues",
            "input": {"repo": "acme/app"},
            "server_name": "github",
        },
        MCP_RESULT,
        {"type": "text", "text": "There are 3 open issues."},
    ]


async def test_a_turn_paused_mid_call_goes_back_to_be_continued(serve: Serve) -> None:
    """`pause_turn` with a code execution call still running (no result yet): the
    continuation sends the turn as it came, its thinking, its text (its trailing space
    kept: only text that ends the final message loses it, and here the call ends it),
    and the open call."""
    first = sse(
        START,
        *thinking(0, "Long job.", "S1"),
        *text(1, "Running the analysis. "),
        *server(2, "srvtoolu_P", "code_execution", '{"code": "run()"}', caller=DIRECT),
        end("pause_turn"),
        STOP,
    )
    record, body = await loop(serve, first, [])
    assert record.terminal.type == "done" and record.terminal.stop_reason == "pause"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert sent_back(body) == [
        {"type": "thinking", "thinking": "Long job.", "signature": "S1"},
        {"type": "text", "text": "Running the analysis. "},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_P",
            "name": "code_execution",
            "input": {"code": "run()"},
            "caller": DIRECT,
        },
    ]


# -- programmatic tool calling -------------------------------------------------------------

PTC_CALLER = {"type": "code_execution_20260120", "tool_id": "srvtoolu_C"}


def _programmatic_turn() -> bytes:
    """The docs' programmatic tool calling response: Claude's code (a code_execution
    call that has no result yet) calls the client tool `query_database`, whose
    `tool_use` names its caller; `container` says where the code waits."""
    code = json.dumps({"code": "rows = await query_database(sql='SELECT 1')\nprint(rows)"})
    return sse(
        START,
        *server(0, "srvtoolu_C", "code_execution", code, caller=DIRECT),
        start(
            1,
            {
                "type": "tool_use",
                "id": "toolu_Q",
                "name": "query_database",
                "input": {},
                "caller": PTC_CALLER,
            },
        ),
        delta(1, {"type": "input_json_delta", "partial_json": '{"sql": "SELECT 1"}'}),
        stop(1),
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "container": {"id": "container_xyz", "expires_at": "2025-12-01T00:00:00Z"},
            },
            "usage": {"output_tokens": 40},
        },
        STOP,
    )


async def test_a_programmatic_call_goes_back_after_the_code_that_made_it(serve: Serve) -> None:
    """The code execution call (pending: no result) then the client call it made; the
    result alone in the next user message ("tool_result blocks only")."""
    record, body = await loop(serve, _programmatic_turn(), [Message.tool("toolu_Q", "[[1]]")])
    assert [call.name for call in record.tool_calls] == ["query_database"]
    blocks = sent_back(body)
    assert [(b["type"], b["id"]) for b in blocks] == [
        ("server_tool_use", "srvtoolu_C"),
        ("tool_use", "toolu_Q"),
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_Q", "content": "[[1]]"}
    ]


def test_a_programmatic_call_carries_its_caller_and_the_turn_its_container() -> None:
    """The `tool_use`'s `caller` is the call's `details` (ToolUseBlockParam takes it back);
    the `container` of `message_delta` is the `Done`'s. Before, both were only logged."""
    events = replay(_programmatic_turn(), "anthropic")
    (request,) = [e for e in events if isinstance(e, ToolRequest)]
    assert request.details == {"caller": PTC_CALLER}
    assert request.to_call().details == {"caller": PTC_CALLER}
    assert isinstance(events[-1], Done) and events[-1].container == "container_xyz"
    assert json.loads(events[-1].model_dump_json())["container"] == "container_xyz"


async def test_a_programmatic_call_goes_back_with_its_caller_and_container(
    serve: Serve,
) -> None:
    """vercel/ai sends `caller` back on the tool_use (convert-to-anthropic-messages-
    prompt.ts), LangChain calls it requisite (langchain#34271); the answer to a pending
    programmatic call needs the container: "container_id is required when there are
    pending tool uses generated by code execution with tools" (anthropic-sdk-python#1150;
    the docs' "Step 3: Provide tool result" passes `container=response.container.id`, as
    the SDK's users do: here in `params`, from the `Done`)."""
    recorder = Recorder(answers={"/messages": _programmatic_turn()})
    base_url = await serve(recorder.handle)
    async with rxllm.provider("anthropic", api_key="sk-probe", base_url=base_url) as p:
        record = await p.complete(ChatRequest(model="m", messages=[QUESTION]))
        assert isinstance(record.terminal, Done)
        history = [QUESTION, record.to_message(), Message.tool("toolu_Q", "[[1]]")]
        container = {"container": record.terminal.container}
        await p.complete(ChatRequest(model="m", messages=history, params=container))
    body = recorder.requests[-1]["body"]
    assert sent_back(body)[1] == {
        "type": "tool_use",
        "id": "toolu_Q",
        "name": "query_database",
        "input": {"sql": "SELECT 1"},
        "caller": PTC_CALLER,
    }
    assert body["container"] == "container_xyz"


def test_a_direct_call_and_a_toolset_member_go_back_as_they_came() -> None:
    """The API writes `caller: {"type": "direct"}` on a tool_use (anthropic-sdk-python's
    fixture tool_use_response.txt) and `toolset_name` on a toolset member's; both are
    fields of ToolUseBlockParam, so the block goes back with them. A call made by hand,
    without details, goes back without them."""
    block = {
        "type": "tool_use",
        "id": "toolu_D",
        "name": "read",
        "input": {},
        "caller": DIRECT,
        "toolset_name": "files",
    }
    events = replay(sse(START, start(0, block), stop(0), end("tool_use"), STOP), "anthropic")
    (request,) = [e for e in events if isinstance(e, ToolRequest)]
    assert request.details == {"caller": DIRECT, "toolset_name": "files"}
    by_hand = ToolCall(id="toolu_H", name="read")
    turn = Message(role="assistant", content=[], tool_calls=[request.to_call(), by_hand])
    body = Anthropic().build_body(ChatRequest(model="m", messages=[QUESTION, turn]))
    plain = {"type": "tool_use", "id": "toolu_H", "name": "read", "input": {}}
    assert sent_back(body) == [block, plain]


def test_a_container_named_at_the_start_is_the_turns() -> None:
    """A message's `container` is also on `message_start` (a reused container); a
    `message_delta` without one keeps it. A turn without one has none, and its `Done`'s
    JSON leaves the key out."""
    first = {"type": "message_start", "message": {**START["message"], "container": {"id": "c1"}}}
    events = replay(sse(first, *text(0, "Hi."), end("end_turn"), STOP), "anthropic")
    assert isinstance(events[-1], Done) and events[-1].container == "c1"
    plain = replay(sse(START, *text(0, "Hi."), end("end_turn"), STOP), "anthropic")
    assert isinstance(plain[-1], Done) and plain[-1].container is None
    assert "container" not in json.loads(plain[-1].model_dump_json())


# -- the fallback block ------------------------------------------------------------------

FALLBACK = {
    "type": "fallback",
    "from": {"model": "claude-fable-5"},
    "to": {"model": "claude-opus-4-8"},
}


def test_a_fallback_block_goes_back_where_it_came() -> None:
    """BetaFallbackBlockParam: "Callers should echo the assistant turn verbatim — block
    included": between two runs of thinking it marks where one verification chain ends,
    and without it the runs merge into one "whose hashes cannot verify (the request is
    rejected)". Before, the wire left the block out as one of another wire."""
    turn = Message(
        role="assistant",
        content=[
            ReasoningPart(text="First model.", signature="S1"),
            ReasoningPart(details=FALLBACK),  # as the record keeps it
            ReasoningPart(text="Second model.", signature="S2"),
            TextPart(text="Answer."),
        ],
    )
    body = Anthropic().build_body(ChatRequest(model="m", messages=[QUESTION, turn]))
    assert sent_back(body) == [
        {"type": "thinking", "thinking": "First model.", "signature": "S1"},
        FALLBACK,
        {"type": "thinking", "thinking": "Second model.", "signature": "S2"},
        {"type": "text", "text": "Answer."},
    ]


async def test_a_fallback_mid_turn_goes_back_between_its_thinking_runs(serve: Serve) -> None:
    first = sse(
        START,
        *thinking(0, "First model.", "S1"),
        *whole(1, FALLBACK),
        *thinking(2, "Second model.", "S2"),
        *text(3, "Answer."),
        end("end_turn"),
        STOP,
    )
    record, body = await loop(serve, first, [Message.user("More?")])
    assert record.terminal.type == "done" and record.terminal.model == "claude-opus-4-8"
    assert [b["type"] for b in sent_back(body)] == ["thinking", "fallback", "thinking", "text"]
