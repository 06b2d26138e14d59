"""OpenAI Responses streaming events of the current reference (openai-python
`types/responses/response_stream_event.py` and the types it unions: `response_error.py`,
`response_computer_tool_call.py` with `computer_action_list.py`, `mcp_tool_call_error.py`,
`response_function_web_search.py`, ...) replayed as a client of `/v1/responses` would
receive them, each checked against what the contract says it must produce. Bodies are
built by hand from the reference's types; ids and opaque values are made up. Each is read
whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm import ChatRequest, Message
from rxllm.events import Event, Failed, ServerToolCall, ServerToolResult
from rxllm.providers.openai_responses import OpenAIResponses, responses_input
from rxllm.request import ToolCall
from tests.support import Expect, check, replay_every_way, summarize
from tests.test_reasoning_history import record_of

P = "openai-responses"


def wire(*payloads: dict[str, Any]) -> bytes:
    """Events as OpenAI frames them: `event:` naming the type, each numbered from 0."""
    out = []
    for number, payload in enumerate(payloads):
        payload = {**payload, "sequence_number": number}
        out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def run(*payloads: dict[str, Any]) -> list[Event]:
    return replay_every_way(wire(*payloads), P)


RESPONSE = {"id": "resp_1", "object": "response", "model": "gpt-5.2", "output": []}
CREATED = {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}
IN_PROGRESS = {"type": "response.in_progress", "response": {**RESPONSE, "status": "in_progress"}}
USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 100},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 16},
    "total_tokens": 160,
}
# (input without the cache, output with the reasoning, reasoning, cache read, total)
COUNTED = (20, 40, 16, 100, 160)


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    response = {**RESPONSE, "status": "completed", "output": list(output), "usage": USAGE}
    return {"type": "response.completed", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def on(kind: str, index: int, item_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "output_index": index, "item_id": item_id, **fields}


# -- response.failed: every code of `ResponseError` -----------------------------------------

# `response_error.py`'s `code` literals (and `data_residency_mismatch`, `bio_policy`, which
# later versions of the reference add): OpenAI's own trouble (its server, its rate limit,
# its file search's vector store timing out) may be over when the same request is sent
# again; a prompt or an image it refuses is refused again.
_SERVERS_TROUBLE = ("server_error", "rate_limit_exceeded", "vector_store_timeout")
_REQUESTS_FAULT = (
    "invalid_prompt",
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "image_content_policy_violation",
    "invalid_image_mode",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
    "failed_to_download_image",
    "image_file_not_found",
    "data_residency_mismatch",
    "bio_policy",
)


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(code, True) for code in _SERVERS_TROUBLE] + [(code, False) for code in _REQUESTS_FAULT],
)
def test_each_failure_code_of_the_reference_says_whether_sending_again_may_help(
    code: str, retryable: bool
) -> None:
    """A background response's lifecycle (`response.queued`, `response.in_progress`)
    ended by `response.failed` whose `error` is a `ResponseError`: `code` and `message`
    only, no `type` and no status. Each is a stream error with its code and message; a
    vector store that timed out ("vector_store_timeout") is OpenAI's trouble as a
    `server_error` is, and was read as a fault of the request, never to be sent again."""
    message = f"The response failed ({code})."
    failed = {
        "type": "response.failed",
        "response": {**RESPONSE, "status": "failed", "error": {"code": code, "message": message}},
    }
    queued = {"type": "response.queued", "response": {**RESPONSE, "status": "queued"}}
    events = run(
        {**CREATED, "response": {**RESPONSE, "status": "queued"}}, queued, IN_PROGRESS, failed
    )
    check(summarize(events), Expect(terminal="error", error_kind="stream_error"))
    [end] = [ev for ev in events if isinstance(ev, Failed)]
    assert (end.error.code, end.error.message) == (code, message)
    assert end.error.retryable is retryable


# -- items of the current reference --------------------------------------------------------


def test_a_batched_computer_call_is_requested_with_its_actions_and_goes_back_whole() -> None:
    """`response_computer_tool_call.py` now: `action` optional, `actions` a
    `ComputerActionList` ("Flattened batched actions for `computer_use`"), with its
    `pending_safety_checks`. The client is asked to act: one `tool_request` named
    `computer_call` whose arguments are the batch and the checks, and the next turn sends
    the call back with its batch (status `completed`, which the API requires of a computer
    call it is given) and the client's `computer_call_output` with the checks it
    acknowledged."""
    actions = [
        {"type": "click", "button": "left", "x": 412, "y": 88},
        {"type": "type", "text": "rxllm"},
        {"type": "keypress", "keys": ["ENTER"]},
    ]
    checks = [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check the page."}]
    call = {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_cu_1",
        "status": "in_progress",
        "actions": [],
        "pending_safety_checks": [],
    }
    whole = {**call, "status": "completed", "actions": actions, "pending_safety_checks": checks}
    events = run(CREATED, added(0, call), done(0, whole), completed(whole))
    arguments = {"actions": actions, "pending_safety_checks": checks}
    check(
        summarize(events),
        Expect(
            tools=(("call_cu_1", "computer_call", arguments),),
            usage=COUNTED,
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-5.2",
        ),
    )
    turn = record_of(events, P).to_message()
    screenshot = {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBO"}
    answer = {"output": screenshot, "acknowledged_safety_checks": checks}
    _, items = responses_input(
        [Message.user("search rxllm"), turn, Message.tool("call_cu_1", json.dumps(answer))],
        frozenset(),
        True,
        {},
        False,
    )
    assert items[1:] == [
        {"type": "computer_call", "call_id": "call_cu_1", "status": "completed", **arguments},
        {"type": "computer_call_output", "call_id": "call_cu_1", **answer},
    ]


@pytest.mark.parametrize(
    "error",
    [
        {"type": "mcp_protocol_error", "code": -32602, "message": "Invalid params"},
        {"type": "mcp_tool_execution_error", "content": [{"type": "text", "text": "no repo"}]},
        {"type": "http_error", "code": 502, "message": "Bad Gateway"},
    ],
)
def test_a_failed_mcp_call_is_shown_with_its_structured_error(error: dict[str, Any]) -> None:
    """`mcp_tool_call_error.py`: an `mcp_call`'s `error` is now an object of one of three
    types (the server's JSON-RPC error, the tool's own failure with its content, the
    transport's HTTP error), its status `failed`, after `response.mcp_call.in_progress`,
    the arguments streamed (`mcp_call_arguments.delta` / `.done`) and
    `response.mcp_call.failed`. OpenAI ran it: a `server_tool_call` with the parsed
    arguments once they are done, a `server_tool_result` that keeps the error as sent;
    nothing for the client to run, and the answer after it is the text."""
    call = {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "deepwiki",
        "name": "ask_question",
        "arguments": "",
        "status": "in_progress",
    }
    arguments = '{"repoName":"rxllm/rxllm","question":"What is settle_once?"}'
    failed = {**call, "arguments": arguments, "status": "failed", "error": error, "output": None}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    part = {"type": "output_text", "text": "The lookup failed.", "annotations": []}
    said = {**message, "status": "completed", "content": [part]}
    events = run(
        CREATED,
        added(0, call),
        on("response.mcp_call.in_progress", 0, "mcp_1"),
        on("response.mcp_call_arguments.delta", 0, "mcp_1", delta=arguments[:20]),
        on("response.mcp_call_arguments.delta", 0, "mcp_1", delta=arguments[20:]),
        on("response.mcp_call_arguments.done", 0, "mcp_1", arguments=arguments),
        on("response.mcp_call.failed", 0, "mcp_1"),
        done(0, failed),
        added(1, {**message, "content": []}),
        on("response.output_text.delta", 1, "msg_1", content_index=0, delta=part["text"]),
        done(1, said),
        completed(failed, said),
    )
    check(
        summarize(events),
        Expect(
            text="The lookup failed.", usage=COUNTED, raw_stop_reason="completed", model="gpt-5.2"
        ),
    )
    [shown] = [ev for ev in events if isinstance(ev, ServerToolCall)]
    assert (shown.call_id, shown.name) == ("mcp_1", "mcp_call")
    assert shown.arguments == {
        "server_label": "deepwiki",
        "name": "ask_question",
        "arguments": json.loads(arguments),
    }
    [result] = [ev for ev in events if isinstance(ev, ServerToolResult)]
    assert result.call_id == "mcp_1"
    assert result.content["status"] == "failed" and result.content["error"] == error
    assert [ev.type for ev in events][:3] == ["server_tool_call", "server_tool_result", "text"]


_PATCH = {
    "type": "apply_patch_call",
    "call_id": "call_ap_1",
    "operation": {"type": "update_file", "path": "src/app.py", "diff": "@@\n-a\n+b\n"},
}
_SHELL = {
    "type": "shell_call",
    "call_id": "call_sh_1",
    "action": {"commands": ["pytest -q"], "max_output_length": 4096, "timeout_ms": None},
}


@pytest.mark.parametrize("item", [_PATCH, _SHELL], ids=["apply_patch_call", "shell_call"])
def test_who_created_a_client_call_is_neither_its_arguments_nor_sent_back(
    item: dict[str, Any],
) -> None:
    """`response_apply_patch_tool_call.py` and `response_function_shell_tool_call.py`: an
    item the client runs carries `created_by` ("The ID of the entity that created this
    tool call"), output-only as its `id` and `status` are: the input items
    (`ResponseInputItemParam.ApplyPatchCall`, `.ShellCall`) have no such field, and the
    API refuses a field an input item does not take ("Unknown parameter:
    'input[3].status'", 1jehuang/jcode#1028). It was read as one of the call's arguments,
    given to the client as something to act on and sent back in the next turn."""
    whole = {**item, "id": "it_1", "status": "completed", "created_by": "resp_0372d86d"}
    events = run(
        CREATED, added(0, {**whole, "status": "in_progress"}), done(0, whole), completed(whole)
    )
    arguments = {k: v for k, v in item.items() if k not in ("type", "call_id")}
    call_id, kind = item["call_id"], item["type"]
    check(
        summarize(events),
        Expect(
            tools=((call_id, kind, arguments),),
            usage=COUNTED,
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-5.2",
        ),
    )
    turn = record_of(events, P).to_message()
    _, items = responses_input(
        [Message.user("fix it"), turn, Message.tool(call_id, "done")], frozenset(), True, {}, False
    )
    assert "created_by" not in items[1]
    assert items[1]["type"] == kind and items[1]["call_id"] == call_id


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "stateless"])
def test_a_reasoning_items_status_is_not_sent_back(stored: bool) -> None:
    """`response_reasoning_item.py`: a reasoning item's `status` ("Populated when items
    are returned via API") is the response's, not the model's context. Sent back, the API
    refuses the whole request: "Unknown parameter: 'input[1].status'" for gpt-5's reasoning
    item replayed as it came (BerriAI/litellm#13420), the same for gpt-5.6 in a live A/B,
    the item passing once the status is left out (digitallyinduced/haskell-agent#689,
    can1357/oh-my-pi#6513). The item goes back by its id (stored, without encrypted
    content) or by its encrypted content (`store: false`), with its summary, and without
    the status it came with."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "status": "in_progress"}
    summary = [{"type": "summary_text", "text": "Look it up."}]
    whole = {**reasoning, "summary": summary, "status": "completed"}
    if not stored:
        whole["encrypted_content"] = "gAAAA1"
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": '{"q":"rxllm"}',
        "status": "completed",
    }
    events = run(
        CREATED,
        added(0, reasoning),
        on(
            "response.reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="Look it up."
        ),
        done(0, whole),
        added(1, call),
        done(1, call),
        completed(whole, call),
    )
    check(
        summarize(events),
        Expect(
            reasoning="Look it up.",
            signatures=0 if stored else 1,
            tools=(("call_1", "lookup", {"q": "rxllm"}),),
            usage=COUNTED,
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="gpt-5.2",
        ),
    )
    turn = record_of(events, P).to_message()
    _, items = responses_input(
        [Message.user("q"), turn, Message.tool("call_1", "found")], frozenset(), stored, {}, False
    )
    [sent] = [item for item in items if item["type"] == "reasoning"]
    if stored:
        assert sent == {"type": "reasoning", "id": "rs_1", "summary": summary}
    else:
        assert sent == {"type": "reasoning", "summary": summary, "encrypted_content": "gAAAA1"}


_TERMINAL = {
    "type": "namespace",
    "name": "terminal",
    "description": "The user's shell.",
    "tools": [{"type": "custom", "name": "exec", "description": "Run a command."}],
}


@pytest.mark.parametrize("loaded", [False, True], ids=["offered", "loaded by a tool search"])
def test_a_custom_tool_grouped_in_a_namespace_goes_back_as_a_custom_tool_call(
    loaded: bool,
) -> None:
    """`namespace_tool.py`: a namespace "Groups function/custom tools under a shared
    namespace", and `response_custom_tool_call.py` names the namespace of the custom tool
    called (`namespace`: codex's `terminal` namespace with its `exec` custom tool),
    offered in the request or loaded by a client tool search's answer. The call is the
    client's, its input the free text; the next turn sends it back as the
    `custom_tool_call` it was, with its namespace, answered by a `custom_tool_call_output`.
    Only custom tools offered at the top level were known as custom: one inside a
    namespace went back as a `function_call` whose arguments were a JSON object wrapping
    its input, a call of a tool the model was never given."""
    call = {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_exec_1",
        "namespace": "terminal",
        "name": "exec",
        "input": "",
    }
    whole = {**call, "input": "ls -la", "status": "completed"}
    events = run(
        CREATED,
        added(0, call),
        on("response.custom_tool_call_input.delta", 0, "ctc_1", delta="ls "),
        on("response.custom_tool_call_input.delta", 0, "ctc_1", delta="-la"),
        on("response.custom_tool_call_input.done", 0, "ctc_1", input="ls -la"),
        done(0, whole),
        completed(whole),
    )
    [(call_id, name, arguments)] = summarize(events).tool_calls
    assert (call_id, name, arguments["input"]) == ("call_exec_1", "exec", "ls -la")
    turn = record_of(events, P).to_message()
    messages = [Message.user("list the files"), turn, Message.tool("call_exec_1", "a.txt")]
    tools: list[dict[str, Any]] = [_TERMINAL]
    if loaded:  # the client's tool search found the namespace before the call
        search = ToolCall(id="call_ts", name="tool_search_call", arguments={"execution": "client"})
        messages[1:1] = [
            Message.assistant(tool_calls=[search]),
            Message.tool("call_ts", json.dumps({"tools": [_TERMINAL]})),
        ]
        tools = [{"type": "tool_search", "execution": "client"}]
    request = ChatRequest(model="gpt-5.2", messages=messages, params={"tools": tools})
    body = OpenAIResponses().request_body(request)
    assert body["input"][-2:] == [
        {
            "type": "custom_tool_call",
            "call_id": "call_exec_1",
            "name": "exec",
            "namespace": "terminal",
            "input": "ls -la",
        },
        {"type": "custom_tool_call_output", "call_id": "call_exec_1", "output": "a.txt"},
    ]
