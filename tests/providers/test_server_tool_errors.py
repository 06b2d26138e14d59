"""A tool the provider ran that failed says so: `ServerToolResult.is_error`, read from
each wire's own words, on bodies built by hand from the providers' docs (no capture in
/work/shared/captures holds a failed server tool).

- Anthropic (docs.claude.com, the web search, web fetch, code execution, tool search
  and MCP connector pages): a `*_tool_result` block whose content is the tool's error
  object (`{"type": "<tool>_tool_result_error", "error_code": ...}`), or an
  `mcp_tool_result` with `is_error: true`; the chat wire's reading of the same blocks
  through LiteLLM's proxy (`provider_specific_fields`) alike.
- OpenAI Responses (the API reference's output items): a `web_search_call`,
  `file_search_call`, `code_interpreter_call`, `image_generation_call` or `mcp_call`
  whose status is `failed`, an `mcp_call` or `mcp_list_tools` with an `error`; Tinfoil's
  web search frames on the chat wire, read as those items.
- Gemini (ai.google.dev/api, `CodeExecutionResult.outcome`): `OUTCOME_FAILED`,
  `OUTCOME_DEADLINE_EXCEEDED`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import EventAdapter, ServerToolResult
from tests.support import replay_every_way


def _results(body: bytes, provider: str) -> list[tuple[str, bool]]:
    events = replay_every_way(body, provider)
    return [(e.call_id, e.is_error) for e in events if isinstance(e, ServerToolResult)]


# --- Anthropic -------------------------------------------------------------------------


def _anthropic(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _anthropic_turn(call: dict[str, Any], result: dict[str, Any]) -> bytes:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    return _anthropic(
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "text_delta", "text": "It did not work."},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    )


# Each tool's error object, as its page writes it.
ANTHROPIC_ERRORS = [
    ("web_search", {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}),
    ("web_fetch", {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"}),
    ("code_execution", {"type": "code_execution_tool_result_error", "error_code": "unavailable"}),
    (
        "bash_code_execution",
        {"type": "bash_code_execution_tool_result_error", "error_code": "execution_time_exceeded"},
    ),
    (
        "text_editor_code_execution",
        {
            "type": "text_editor_code_execution_tool_result_error",
            "error_code": "file_not_found",
            "error_message": "File not found: /tmp/x.py",
        },
    ),
    ("tool_search", {"type": "tool_search_tool_result_error", "error_code": "unavailable"}),
]

# What the same tools give when they work.
ANTHROPIC_RESULTS = [
    (
        "web_search",
        [
            {
                "type": "web_search_result",
                "url": "https://a.example/",
                "title": "A",
                "encrypted_content": "Eq",
                "page_age": None,
            }
        ],
    ),
    (
        "web_fetch",
        {
            "type": "web_fetch_result",
            "url": "https://a.example/",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "hi"},
            },
        },
    ),
    (
        "code_execution",
        {
            "type": "code_execution_result",
            "stdout": "2\n",
            "stderr": "",
            "return_code": 0,
            "content": [],
        },
    ),
    (
        "bash_code_execution",
        {
            "type": "bash_code_execution_result",
            "stdout": "a.csv\n",
            "stderr": "",
            "return_code": 0,
            "content": [],
        },
    ),
    ("tool_search", {"type": "tool_search_tool_search_result", "tool_references": []}),
]


@pytest.mark.parametrize(
    ("name", "content"), ANTHROPIC_ERRORS, ids=[n for n, _ in ANTHROPIC_ERRORS]
)
def test_anthropic_server_tool_error_object_is_an_error(name: str, content: dict[str, Any]) -> None:
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": name, "input": {}}
    result = {"type": f"{name}_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    events = replay_every_way(_anthropic_turn(call, result), "anthropic")
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(e.call_id, e.name, e.content, e.is_error) for e in results] == [
        ("srvtoolu_1", name, content, True)
    ]
    assert results[0].raw == result  # still goes back as sent


@pytest.mark.parametrize(
    ("name", "content"), ANTHROPIC_RESULTS, ids=[n for n, _ in ANTHROPIC_RESULTS]
)
def test_anthropic_server_tool_result_that_worked_is_no_error(name: str, content: Any) -> None:
    """A guard: a result that worked (code that exited 0) is no error."""
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": name, "input": {}}
    result = {"type": f"{name}_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    assert _results(_anthropic_turn(call, result), "anthropic") == [("srvtoolu_1", False)]


# Code that ran and failed, as the SDKs type each result (`BetaCodeExecutionResultBlock`,
# `BetaBashCodeExecutionResultBlock`, `EncryptedCodeExecutionResultBlock`: content,
# stdout or encrypted_stdout, stderr, return_code).
ANTHROPIC_CODE_FAILED = [
    (
        "code_execution",
        {
            "type": "code_execution_result",
            "stdout": "",
            "stderr": "ZeroDivisionError: division by zero",
            "return_code": 1,
            "content": [],
        },
    ),
    (
        "bash_code_execution",
        {
            "type": "bash_code_execution_result",
            "stdout": "",
            "stderr": "bash: line 1: nosuch: command not found",
            "return_code": 127,
            "content": [],
        },
    ),
    (
        "code_execution",
        {
            "type": "encrypted_code_execution_result",
            "encrypted_stdout": "EuQB",
            "stderr": "Traceback (most recent call last): ...",
            "return_code": 1,
            "content": [],
        },
    ),
]


@pytest.mark.parametrize(
    ("name", "content"),
    ANTHROPIC_CODE_FAILED,
    ids=[c["type"] for _, c in ANTHROPIC_CODE_FAILED],
)
def test_anthropic_code_that_ran_and_failed_is_an_error(name: str, content: dict[str, Any]) -> None:
    """A program that ran and exited other than 0 failed, as Gemini's `OUTCOME_FAILED`
    (the code raised) is an error; what it said is the content as it came."""
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": name, "input": {}}
    result = {"type": f"{name}_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    events = replay_every_way(_anthropic_turn(call, result), "anthropic")
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(e.call_id, e.content, e.is_error) for e in results] == [("srvtoolu_1", content, True)]


@pytest.mark.parametrize("code", [0, None, True, "1"], ids=repr)
def test_only_an_exit_status_other_than_0_is_code_that_failed(code: Any) -> None:
    """A guard: 0, none, and what is no exit status (a bool, a string) say no failure."""
    content = {"type": "code_execution_result", "stdout": "", "stderr": "", "content": []}
    if code is not None:
        content["return_code"] = code
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {}}
    result = {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    assert _results(_anthropic_turn(call, result), "anthropic") == [("srvtoolu_1", False)]


@pytest.mark.parametrize("is_error", [True, False])
def test_anthropic_mcp_tool_result_says_its_error_beside_it(is_error: bool) -> None:
    call = {
        "type": "mcp_tool_use",
        "id": "mcptoolu_1",
        "name": "roll",
        "server_name": "dice",
        "input": {"sides": 6},
    }
    said = [{"type": "text", "text": "Error: the dice fell off the table" if is_error else "4"}]
    result = {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": is_error,
        "content": said,
    }
    events = replay_every_way(_anthropic_turn(call, result), "anthropic")
    (got,) = [e for e in events if isinstance(e, ServerToolResult)]
    assert got.is_error is is_error
    assert got.content == ({"is_error": True, "content": said} if is_error else said)


# --- the chat wire: LiteLLM's proxy serving Claude -------------------------------------


def _chat(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads) + b"data: [DONE]\n\n"


def _proxy(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "created": 1760000000,
        "model": "claude-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.mark.parametrize(
    ("key", "content", "is_error"),
    [
        ("web_search_results", ANTHROPIC_ERRORS[0][1], True),
        ("web_search_results", ANTHROPIC_RESULTS[0][1], False),
        ("tool_results", ANTHROPIC_ERRORS[2][1], True),
        ("tool_results", ANTHROPIC_CODE_FAILED[0][1], True),  # code that ran and failed
        ("tool_results", ANTHROPIC_RESULTS[2][1], False),
    ],
)
def test_litellm_server_tool_result_reads_the_error_as_the_anthropic_wire(
    key: str, content: Any, is_error: bool
) -> None:
    """LiteLLM passes Claude's result blocks on whole in `provider_specific_fields`
    (`web_search_results`, `tool_results`), the call a `tool_calls` entry under its
    `srvtoolu_` id."""
    name = "web_search" if key == "web_search_results" else "code_execution"
    entry = {
        "id": "srvtoolu_1",
        "type": "function",
        "index": 0,
        "function": {"name": name, "arguments": "{}"},
    }
    block = {"type": f"{name}_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    body = _chat(
        _proxy({"role": "assistant", "content": "", "tool_calls": [entry]}),
        _proxy({"content": "", "provider_specific_fields": {key: [block]}}),
        _proxy({"content": "Done."}),
        _proxy({}, "tool_calls"),
    )
    assert _results(body, "custom") == [("srvtoolu_1", is_error)]


# --- OpenAI Responses ------------------------------------------------------------------


def _responses(*items: dict[str, Any]) -> bytes:
    response = {"id": "resp_1", "object": "response", "model": "gpt-test", "output": []}
    payloads: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}}
    ]
    for index, item in enumerate(items):
        added = {**item, "status": "in_progress"}
        added.pop("error", None)
        payloads += [
            {"type": "response.output_item.added", "output_index": index, "item": added},
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ]
    payloads.append({"type": "response.completed", "response": {**response, "status": "completed"}})
    return "".join(
        f"event: {p['type']}\ndata: {json.dumps({'sequence_number': n, **p})}\n\n"
        for n, p in enumerate(payloads)
    ).encode()


RESPONSES_ITEMS = {
    "web_search_call": {"action": {"type": "search", "query": "q"}},
    "file_search_call": {"queries": ["q"], "results": None},
    "code_interpreter_call": {"code": "1/0", "container_id": "cntr_1", "outputs": None},
    "image_generation_call": {"result": None},
    "mcp_call": {
        "server_label": "dice",
        "name": "roll",
        "arguments": "{}",
        "output": None,
        "error": None,
    },
}


@pytest.mark.parametrize("kind", sorted(RESPONSES_ITEMS))
@pytest.mark.parametrize(
    ("status", "is_error"), [("failed", True), ("completed", False), ("incomplete", False)]
)
def test_responses_server_item_status_failed_is_an_error(
    kind: str, status: str, is_error: bool
) -> None:
    """`incomplete` (a file search's, code interpreter's, MCP call's) is the response
    cut off, not the tool failing: a guard, with `completed`."""
    item = {"type": kind, "id": "item_1", "status": status, **RESPONSES_ITEMS[kind]}
    (got,) = _results(_responses(item), "openai-responses")
    assert got[1] is is_error


def test_responses_mcp_errors_are_errors() -> None:
    """An MCP call's `error` (its status may still say `completed`) and a tool listing's
    `error` (mcp_list_tools has no status)."""
    call = {
        "type": "mcp_call",
        "id": "mcp_1",
        "status": "completed",
        "server_label": "dice",
        "name": "roll",
        "arguments": "{}",
        "output": None,
        "error": "Error calling tool: 500 Internal Server Error",
    }
    listing = {
        "type": "mcp_list_tools",
        "id": "mcpl_1",
        "server_label": "dice",
        "tools": [],
        "error": "Error retrieving tool list from MCP server: 'dice'. Http status code: "
        "424 (Failed Dependency)",
    }
    worked = {
        "type": "mcp_list_tools",
        "id": "mcpl_2",
        "server_label": "dice",
        "tools": [{"name": "roll", "input_schema": {}}],
        "error": None,
    }
    got = dict(_results(_responses(listing, worked, call), "openai-responses"))
    assert got == {"mcpl_1": True, "mcpl_2": False, "mcp_1": True}


def test_tinfoil_failed_web_search_frame_is_an_error() -> None:
    """Tinfoil's web search states, the Responses wire's item in a chat chunk's envelope
    (tinfoilsh/tinfoil-go websearch_test.go): `failed` is an error, `completed` is not."""
    envelope = {
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "m",
        "choices": [],
    }
    search = {"type": "search", "query": "q"}

    def ran(call_id: str, status: str) -> dict[str, Any]:
        return {
            "type": "web_search_call",
            "id": call_id,
            "status": status,
            "action": search,
            **envelope,
        }

    body = _chat(
        ran("call_1", "in_progress"),
        ran("call_1", "failed"),
        ran("call_2", "in_progress"),
        ran("call_2", "completed"),
        _proxy({"role": "assistant", "content": "Nothing found."}),
        _proxy({}, "stop"),
    )
    assert _results(body, "custom") == [("call_1", True), ("call_2", False)]


# --- Gemini ----------------------------------------------------------------------------


def _gemini(*parts: dict[str, Any]) -> bytes:
    chunks = [
        {
            "candidates": [{"content": {"parts": [part], "role": "model"}, "index": 0}],
            "modelVersion": "gemini-test",
            "responseId": "r1",
        }
        for part in parts
    ]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)


@pytest.mark.parametrize(
    ("outcome", "is_error"),
    [("OUTCOME_FAILED", True), ("OUTCOME_DEADLINE_EXCEEDED", True), ("OUTCOME_OK", False)],
)
def test_gemini_code_execution_outcome_other_than_ok_is_an_error(
    outcome: str, is_error: bool
) -> None:
    body = _gemini(
        {"executableCode": {"language": "PYTHON", "code": "1/0", "id": "c1"}},
        {"codeExecutionResult": {"outcome": outcome, "output": "ZeroDivisionError", "id": "c1"}},
        {"text": "Done."},
    )
    assert _results(body, "google") == [("c1", is_error)]


# --- the event's JSON ------------------------------------------------------------------


def test_is_error_is_left_out_of_the_json_unless_set() -> None:
    """A result that worked writes the JSON it wrote before the field (a reader of the
    old JSON reads it); a failed one says so, and reads back."""
    worked = ServerToolResult.make(provider="p", attempt=0, call_id="c", name="n", content=1)
    assert "is_error" not in json.loads(worked.model_dump_json())
    failed = ServerToolResult.make(
        provider="p", attempt=0, call_id="c", name="n", content={"error_code": "x"}, is_error=True
    )
    data = failed.model_dump_json()
    assert json.loads(data)["is_error"] is True
    back = EventAdapter.validate_json(data)
    assert isinstance(back, ServerToolResult) and back.is_error is True
    assert EventAdapter.validate_json(worked.model_dump_json()) == worked
