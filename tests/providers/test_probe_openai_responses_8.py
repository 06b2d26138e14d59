"""OpenAI Responses streams of public recordings not replayed before (vercel/ai
`packages/openai/src/responses/__fixtures__`), each checked against its own content, and
the turn after each built from what the stream gave. Bodies are built by hand from the
recordings' essential lines, each naming its source; ids are the recordings' own, long
values (encrypted content, images, tool outputs) shortened."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ServerToolResult
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ChatRequest, Message
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_7 import (
    next_input,
    record_of,
    response,
    server_tools,
)
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, summarize


def usage_of(input_tokens: int, cached: int, output: int, reasoning: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output,
    }


def created(rid: str, model: str) -> dict[str, Any]:
    return {"type": "response.created", "response": response(rid, model, "in_progress")}


def completed(rid: str, model: str, usage: dict[str, Any], *output: Any) -> dict[str, Any]:
    body = response(rid, model, "completed", output=list(output), usage=usage)
    return {"type": "response.completed", "response": body}


def message(mid: str, text: str, **fields: Any) -> dict[str, Any]:
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    item = {"id": mid, "type": "message", "status": "completed", "role": "assistant"}
    return {**item, "content": [part], **fields}


def streamed_message(index: int, mid: str, deltas: list[str], **fields: Any) -> list[Any]:
    """A message as OpenAI streams it: added, its part, the deltas, every done event."""
    whole = message(mid, "".join(deltas), **fields)
    part = whole["content"][0]
    return [
        added(index, {**whole, "status": "in_progress", "content": []}),
        on("response.content_part.added", index, mid, content_index=0, part={**part, "text": ""}),
        *(on("response.output_text.delta", index, mid, content_index=0, delta=d) for d in deltas),
        on("response.output_text.done", index, mid, content_index=0, text=part["text"]),
        on("response.content_part.done", index, mid, content_index=0, part=part),
        done(index, whole),
    ]


def answered(record_events: list[Any], answer: str, tools: list[Any] | None = None) -> Any:
    """The input of the turn after a tool call, the app's `answer` to it included."""
    record = record_of(record_events)
    (call,) = record.tool_calls
    messages = [Message.user("hi"), record.to_message(), Message.tool(call.call_id, answer)]
    params = {"tools": tools} if tools else {}
    request = ChatRequest(model="gpt-5.1", messages=messages, params=params)
    return OpenAIResponses().request_body(request)["input"][1:]


# -- vercel/ai ...__fixtures__/openai-apply-patch-tool.1.chunks.txt -----------------------
# gpt-5.1 with the `apply_patch` tool: an `apply_patch_call` added with an empty diff, the
# diff streamed as `apply_patch_call_operation_diff.delta` (no event of rxllm's: the done
# item holds it whole), then the done item, authoritative. The turn after must send the
# call back as the item it was and the app's answer as its `apply_patch_call_output`; the
# API requires `status` on both (openai-python `ApplyPatchCall`: "in_progress" or
# "completed"; `ApplyPatchCallOutput`: "completed" or "failed").
PATCH_CALL = "call_kA46f91ZwocQyMCKyyZqRyC5"
DIFF = "+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n"
OPERATION = {"type": "create_file", "diff": DIFF, "path": "shopping-checklist.md"}


def apply_patch_stream() -> list[dict[str, Any]]:
    rid, model, aid = "resp_0372d86d", "gpt-5.1-2025-11-13", "apc_0372d86d"
    item = {"id": aid, "type": "apply_patch_call", "status": "completed", "call_id": PATCH_CALL}
    pieces = ["+", "##", " Shopping", " Checklist", "\n", "+\n", DIFF[25:]]
    assert "".join(pieces) == DIFF
    return [
        created(rid, model),
        added(0, {**item, "status": "in_progress", "operation": {**OPERATION, "diff": ""}}),
        *(
            on("response.apply_patch_call_operation_diff.delta", 0, aid, delta=piece)
            for piece in pieces
        ),
        on("response.apply_patch_call_operation_diff.done", 0, aid, diff=DIFF),
        done(0, {**item, "operation": OPERATION}),
        completed(rid, model, usage_of(642, 0, 67, 0), {**item, "operation": OPERATION}),
    ]


async def test_an_apply_patch_call_is_requested_once_with_its_whole_diff(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *apply_patch_stream())
    summary = summarize(events)
    assert summary.tool_calls == [(PATCH_CALL, "apply_patch_call", {"operation": OPERATION})]
    assert [(e.call_id, e.name) for e in events if e.type == "tool_start"] == [
        (PATCH_CALL, "apply_patch_call")
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (642, 67)


async def test_the_turn_after_an_apply_patch_call_says_the_status_the_api_requires(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *apply_patch_stream())
    call, output = answered(events, "Created shopping-checklist.md")
    assert call == {
        "type": "apply_patch_call",
        "call_id": PATCH_CALL,
        "status": "completed",
        "operation": OPERATION,
    }
    assert output == {
        "type": "apply_patch_call_output",
        "call_id": PATCH_CALL,
        "status": "completed",
        "output": "Created shopping-checklist.md",
    }


async def test_a_failed_patch_is_answered_as_failed(serve_body: ServeBody) -> None:
    # the app's failure (`Message.tool(..., is_error=True)`) is the output's own status
    events = await run(serve_body, *apply_patch_stream())
    record = record_of(events)
    failed = Message.tool(PATCH_CALL, "shopping-checklist.md exists", is_error=True)
    messages = [Message.user("hi"), record.to_message(), failed]
    items = OpenAIResponses().request_body(ChatRequest(model="gpt-5.1", messages=messages))
    assert items["input"][-1]["status"] == "failed"
    # an answer that says its status itself keeps it
    said = Message.tool(PATCH_CALL, {"status": "failed", "output": "conflict"})
    messages[-1] = said
    items = OpenAIResponses().request_body(ChatRequest(model="gpt-5.1", messages=messages))
    assert items["input"][-1] == {
        "type": "apply_patch_call_output",
        "call_id": PATCH_CALL,
        "status": "failed",
        "output": "conflict",
    }


# -- vercel/ai ...__fixtures__/openai-local-shell-tool.1.chunks.txt -----------------------
# gpt-5-codex with `local_shell`: a reasoning item (stored: an id, no encrypted content,
# no summary), then a `local_shell_call` added with an empty command and done with it.
async def test_a_local_shell_call_is_requested_with_the_command_of_its_done_item(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_68da7fd5", "gpt-5-codex", "call_h3nm8hUG0KO9tVNuRACkL1ri"
    reasoning = {"id": "rs_68da7fd6", "type": "reasoning", "summary": []}
    shell = {"id": "lsh_68da7fd9", "type": "local_shell_call", "status": "completed"}
    action = {"type": "exec", "command": ["ls", "-a", "~"], "env": {}}
    shell = {**shell, "action": action, "call_id": call_id}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, reasoning),
        done(0, reasoning),
        added(1, {**shell, "status": "in_progress", "action": {**action, "command": []}}),
        done(1, shell),
        completed(rid, model, usage_of(407, 0, 151, 128), reasoning, shell),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "local_shell_call", {"action": action})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    assert summary.usage is not None
    assert (summary.usage.output_tokens, summary.usage.reasoning_tokens) == (151, 128)
    # the turn after: the stored reasoning by its id right before the call, the call as
    # the item it was (with the status its input form requires), the answer by call id
    reasoning_item, call, output = answered(events, "Desktop\nDocuments")
    assert reasoning_item == {"type": "reasoning", "id": "rs_68da7fd6", "summary": []}
    assert call == {
        "type": "local_shell_call",
        "call_id": call_id,
        "status": "completed",
        "action": action,
    }
    assert output == {
        "type": "local_shell_call_output",
        "call_id": call_id,
        "output": "Desktop\nDocuments",
    }


# -- vercel/ai ...__fixtures__/openai-custom-tool.1.chunks.txt ----------------------------
# gpt-5.2-codex with a grammar-constrained custom tool: no `sequence_number`, input deltas
# and no `custom_tool_call_input.done`; the done item holds the input whole.
SQL = "SELECT * FROM users WHERE age > 25"
WRITE_SQL = {"type": "custom", "name": "write_sql", "format": {"type": "grammar"}}


async def test_a_custom_tool_call_without_an_input_done_is_requested_once(
    serve_body: ServeBody,
) -> None:
    rid, model = "resp_custom_tool_test_001", "gpt-5.2-codex"
    call = {"type": "custom_tool_call", "id": "ct_abc123def456", "call_id": "call_custom_sql_001"}
    call = {**call, "name": "write_sql"}
    pieces = ["SELECT * ", "FROM users ", "WHERE age > 25"]
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**call, "input": ""}),
        *(
            on("response.custom_tool_call_input.delta", 0, "ct_abc123def456", delta=d)
            for d in pieces
        ),
        done(0, {**call, "input": SQL, "status": "completed"}),
        completed(rid, model, usage_of(50, 0, 20, 0), {**call, "input": SQL}),
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_custom_sql_001", "write_sql", {"input": SQL})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    # the turn after: a custom tool call and its custom output, by call id
    call_item, output = answered(events, "42 rows", tools=[WRITE_SQL])
    assert call_item == {
        "type": "custom_tool_call",
        "call_id": "call_custom_sql_001",
        "name": "write_sql",
        "input": SQL,
    }
    assert output == {
        "type": "custom_tool_call_output",
        "call_id": "call_custom_sql_001",
        "output": "42 rows",
    }


# -- vercel/ai ...__fixtures__/openai-custom-text-tool.1.chunks.txt -----------------------
# A free-text custom tool (`setHtml`) at output index 1 (the events before it left out of
# the recording: sequence numbers 1-3 and 29 missing), its input in 24 deltas.
async def test_a_free_text_custom_tool_input_is_the_joined_deltas_once(
    serve_body: ServeBody,
) -> None:
    rid, model, cid = "resp_0bbd8ccb", "gpt-5.2-codex", "ctc_0bbd8ccb"
    html = "<main><h1>Streaming custom tool input</h1><p>This must arrive progressively.</p></main>"
    call = {"id": cid, "type": "custom_tool_call", "status": "completed"}
    call = {**call, "call_id": "call_g8yRNFvYwhYY5Eb3rGIAxf8l", "name": "setHtml"}
    pieces = ["<", "main", "><", "h", "1", ">", "Streaming", " custom", " tool", " input"]
    pieces += ["</", "h", "1", "><", "p", ">This", " must", " arrive", " progressively"]
    pieces += [".</", "p", "></", "main", ">"]
    assert "".join(pieces) == html
    events = await run(
        serve_body,
        created(rid, model),
        added(1, {**call, "status": "in_progress", "input": ""}),
        *(on("response.custom_tool_call_input.delta", 1, cid, delta=d) for d in pieces),
        done(1, {**call, "input": html}),
        completed(rid, model, usage_of(93, 0, 51, 0), {**call, "input": html}),
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_g8yRNFvYwhYY5Eb3rGIAxf8l", "setHtml", {"input": html})]
    assert summary.text == ""
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


# -- vercel/ai ...__fixtures__/openai-shell-tool.1.chunks.txt -----------------------------
# gpt-5.1 with the `shell` tool run by the client: a `shell_call` with no `environment`,
# its command streamed as `shell_call_command.added/delta/done` (no event of rxllm's),
# the done item authoritative (with the `max_output_length` OpenAI fills in there).
async def test_a_client_shell_call_is_requested_with_its_done_action(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_0434d6d6", "gpt-5.1-2025-11-13", "call_pbxjNs1tMJUahLZKAS9qLtvw"
    shell = {"id": "sh_0434d6d6", "type": "shell_call", "status": "completed", "call_id": call_id}
    action = {"commands": ["ls -a ~/Desktop"], "max_output_length": 8912, "timeout_ms": None}
    command = {"output_index": 0, "command_index": 0}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**shell, "status": "in_progress", "action": {**action, "commands": []}}),
        {"type": "response.shell_call_command.added", **command, "command": ""},
        *(
            {"type": "response.shell_call_command.delta", **command, "delta": d}
            for d in ["ls", " -", "a", " ~/", "Desktop"]
        ),
        {"type": "response.shell_call_command.done", **command, "command": "ls -a ~/Desktop"},
        done(0, {**shell, "action": action}),
        completed(rid, model, usage_of(145, 0, 41, 0), {**shell, "action": action}),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "shell_call", {"action": action})]
    assert server_tools(events) == []
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    stdout = {"stdout": ".\n..\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
    call, output = answered(events, json.dumps({"output": [stdout]}))
    assert call == {"type": "shell_call", "call_id": call_id, "action": action}
    assert output == {"type": "shell_call_output", "call_id": call_id, "output": [stdout]}


# -- vercel/ai ...__fixtures__/openai-mcp-tool.1.chunks.txt -------------------------------
# gpt-5-mini with a hosted MCP server (`require_approval: never`): `mcp_list_tools` (added
# with no tools, done with two), a stored reasoning item, an `mcp_call` added with empty
# `arguments` whose arguments stream as `mcp_call_arguments.delta/.done` and whose done
# item holds them and the server's `output`, then the answer. Both MCP items are run by
# OpenAI: shown as server tool calls with their results, never requested.
MCP_ARGUMENTS = '{"query":"2025 New York City mayoral election results", "numResults": 5}'
MCP_OUTPUT = '{"requestId": "d9c62fa7", "results": [{"title": "NYC Mayor Election 2025"}]}'


async def test_a_hosted_mcp_call_and_its_tool_list_are_shown_never_requested(
    serve_body: ServeBody,
) -> None:
    rid, model, lid, cid = "resp_0c72b103", "gpt-5-mini-2025-08-07", "mcpl_0c72b103", "mcp_0c72b103"
    tool = {"name": "web_search_exa", "input_schema": {"type": "object"}, "annotations": None}
    listed = {"id": lid, "type": "mcp_list_tools", "server_label": "dmcp"}
    reasoning = {"id": "rs_0c72b103", "type": "reasoning", "summary": []}
    call = {"id": cid, "type": "mcp_call", "status": "completed", "approval_request_id": None}
    call = {**call, "arguments": MCP_ARGUMENTS, "error": None, "name": "web_search_exa"}
    call = {**call, "output": MCP_OUTPUT, "server_label": "dmcp"}
    deltas = ["Yes — I searched the web.", " Zohran Mamdani", " is projected the winner."]
    answer = message("msg_0c72b103", "".join(deltas))
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**listed, "tools": []}),
        on("response.mcp_list_tools.in_progress", 0, lid),
        on("response.mcp_list_tools.completed", 0, lid),
        done(0, {**listed, "tools": [tool]}),
        added(1, reasoning),
        done(1, reasoning),
        added(2, {**call, "status": "in_progress", "arguments": "", "output": None}),
        on("response.mcp_call.in_progress", 2, cid),
        on("response.mcp_call_arguments.delta", 2, cid, delta=MCP_ARGUMENTS),
        on("response.mcp_call_arguments.done", 2, cid, arguments=MCP_ARGUMENTS),
        on("response.mcp_call.completed", 2, cid),
        done(2, call),
        *streamed_message(3, "msg_0c72b103", deltas),
        completed(
            rid,
            model,
            usage_of(11791, 0, 963, 512),
            {**listed, "tools": [tool]},
            reasoning,
            call,
            answer,
        ),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    assert summary.tool_calls == []
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    assert server_tools(events) == [
        ("server_tool_call", lid, "mcp_list_tools"),
        ("server_tool_result", lid, "mcp_list_tools"),
        ("server_tool_call", cid, "mcp_call"),
        ("server_tool_result", cid, "mcp_call"),
    ]
    shown = [e for e in events if e.type == "server_tool_call"]
    mcp_input = {"server_label": "dmcp", "name": "web_search_exa"}
    assert shown[1].arguments == {**mcp_input, "arguments": json.loads(MCP_ARGUMENTS)}
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert results[0].content["tools"] == [tool]
    assert json.loads(results[1].content["arguments"])["numResults"] == 5
    assert results[1].content["output"] == MCP_OUTPUT
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.total_tokens) == (11791, 12754)
    # the turn after: the answer alone (stored reasoning goes back only before a call)
    assert next_input(record_of(events)) == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "".join(deltas), "annotations": []}],
        }
    ]


# -- vercel/ai ...__fixtures__/openai-code-interpreter-tool.1.chunks.txt ------------------
# gpt-5-nano with `code_interpreter`: each call added with empty `code` and its container
# id, the code streamed (`code_interpreter_call_code.delta/.done`, no event of rxllm's),
# then the done item with code and `outputs` (logs); the answer cites the file the code
# wrote with a `container_file_citation` (an annotation with no event: not a url).
CODE = "import random\nN=10000\nsums=[random.randint(1,6)+random.randint(1,6) for _ in range(N)]\n"


async def test_a_code_interpreter_call_is_shown_with_its_code_and_logs_once(
    serve_body: ServeBody,
) -> None:
    rid, model, ci = "resp_68c2e6ef", "gpt-5-nano-2025-08-07", "ci_68c2e6f7"
    container = "cntr_68c2e6f3"
    call = {"id": ci, "type": "code_interpreter_call", "status": "completed", "code": CODE}
    call = {**call, "container_id": container, "outputs": [{"type": "logs", "logs": "(2, 12)"}]}
    reasoning = {"id": "rs_68c2e6f4", "type": "reasoning", "summary": []}
    deltas = [
        "Here",
        "\u2019s",
        " a simulation.",
        " Download: [the CSV]",
        "(sandbox:/mnt/data/s.csv)",
    ]
    whole = "".join(deltas)
    citation = {"type": "container_file_citation", "container_id": container, "file_id": "cfile_1"}
    citation = {**citation, "filename": "s.csv", "start_index": 34, "end_index": len(whole)}
    mid = "msg_68c2e705"
    answer = message(mid, whole)
    answer["content"][0]["annotations"] = [citation]
    streamed = streamed_message(2, mid, deltas)
    streamed[-1] = done(2, answer)
    streamed[-2]["part"] = answer["content"][0]
    events = await run(
        serve_body,
        created(rid, model),
        added(0, reasoning),
        done(0, reasoning),
        added(1, {**call, "status": "in_progress", "code": "", "outputs": []}),
        on("response.code_interpreter_call.in_progress", 1, ci),
        *(
            on("response.code_interpreter_call_code.delta", 1, ci, delta=CODE[n : n + 9])
            for n in range(0, len(CODE), 9)
        ),
        on("response.code_interpreter_call_code.done", 1, ci, code=CODE),
        on("response.code_interpreter_call.interpreting", 1, ci),
        on("response.code_interpreter_call.completed", 1, ci),
        done(1, call),
        *streamed[:-3],
        on(
            "response.output_text.annotation.added",
            2,
            mid,
            content_index=0,
            annotation_index=0,
            annotation=citation,
        ),
        *streamed[-3:],
        completed(rid, model, usage_of(4126, 0, 1760, 1216), reasoning, call, answer),
    )
    summary = summarize(events)
    assert summary.text == whole
    assert [e.text for e in events if e.type == "text"] == deltas
    assert [e for e in events if e.type == "citation"] == []
    assert server_tools(events) == [
        ("server_tool_call", ci, "code_interpreter_call"),
        ("server_tool_result", ci, "code_interpreter_call"),
    ]
    shown = next(e for e in events if e.type == "server_tool_call")
    # shown with its code (at `code_interpreter_call_code.done`), as pydantic-ai maps it
    assert shown.arguments == {"container_id": container, "code": CODE}
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert (result.content["code"], result.content["outputs"]) == (CODE, call["outputs"])
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


# -- vercel/ai ...__fixtures__/openai-image-generation-tool.1.chunks.txt ------------------
# gpt-5 with `image_generation`: the call added with nothing but its status, progress and
# a `partial_image` event (no event of rxllm's), the done item with the image as base64
# `result` and the `revised_prompt`; then a message whose only part is empty text.
async def test_an_image_generation_call_is_shown_and_its_empty_message_adds_nothing(
    serve_body: ServeBody,
) -> None:
    rid, model, ig = "resp_0df93c0b", "gpt-5-2025-08-07", "ig_0df93c0b"
    image = {"id": ig, "type": "image_generation_call", "status": "completed"}
    image = {**image, "background": "opaque", "output_format": "webp", "quality": "low"}
    image = {**image, "result": "UklGRuIWGQBXRUJQ", "revised_prompt": "An echidna swimming"}
    image = {**image, "size": "1536x1024"}
    reasoning = {"id": "rs_0df93c0b", "type": "reasoning", "summary": []}
    empty = message("msg_0df93c0b", "")
    part = empty["content"][0]
    events = await run(
        serve_body,
        created(rid, model),
        added(0, reasoning),
        done(0, reasoning),
        added(1, {"id": ig, "type": "image_generation_call", "status": "in_progress"}),
        on("response.image_generation_call.in_progress", 1, ig),
        on("response.image_generation_call.generating", 1, ig),
        on(
            "response.image_generation_call.partial_image",
            1,
            ig,
            partial_image_index=0,
            partial_image_b64="UklGRuIWGQBXRUJQ",
        ),
        on("response.image_generation_call.completed", 1, ig),
        done(1, image),
        added(2, {**empty, "status": "in_progress", "content": []}),
        on("response.content_part.added", 2, "msg_0df93c0b", content_index=0, part=part),
        on("response.output_text.done", 2, "msg_0df93c0b", content_index=0, text=""),
        on("response.content_part.done", 2, "msg_0df93c0b", content_index=0, part=part),
        done(2, empty),
        completed(rid, model, usage_of(2941, 1920, 1249, 1024), reasoning, image, empty),
    )
    summary = summarize(events)
    assert (summary.text, summary.tool_calls) == ("", [])
    assert [e.type for e in events if e.type in ("text", "refusal", "citation")] == []
    assert server_tools(events) == [
        ("server_tool_call", ig, "image_generation_call"),
        ("server_tool_result", ig, "image_generation_call"),
    ]
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert result.content["result"] == "UklGRuIWGQBXRUJQ"
    assert result.content["revised_prompt"] == "An echidna swimming"
    assert summary.usage is not None
    # the cache apart from the input: 2941 - 1920
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (1021, 1920)
    assert (summary.usage.output_tokens, summary.usage.total_tokens) == (1249, 4190)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


# -- vercel/ai ...__fixtures__/openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt
# gpt-5.4 (`store: false`, summary "detailed"): one reasoning item whose summary comes in
# twelve parts (three kept here), its `encrypted_content` one blob at added and another
# at done (vercel/ai#13210: "encrypted metadata changes across the stream"), then a
# message with `phase: "final_answer"`. Each part is shown once, apart from the one
# before; the done blob alone is kept and goes back with the item in the turn after.
async def test_a_reasoning_item_whose_blob_changes_keeps_the_done_one_once(
    serve_body: ServeBody,
) -> None:
    rid, model, rs, mid = "resp_0842a5a1", "gpt-5.4-2026-03-05", "rs_0842a5a1", "msg_0842a5a1"
    parts = [
        ["**Summ", "arizing the burrito debate**", "\n\nThe user wants two sentences."],
        ["**Exploring burrito origins**", "\n\nEl Faro opened in 1961."],
        ["The modern Mission burrito", " is claimed by La Cumbre."],
    ]
    summary_parts = [{"type": "summary_text", "text": "".join(p)} for p in parts]
    item = {"id": rs, "type": "reasoning", "summary": []}
    final = {**item, "encrypted_content": "gAAAAABprV-done", "summary": summary_parts}
    events_in: list[dict[str, Any]] = [
        created(rid, model),
        added(0, {**item, "encrypted_content": "gAAAAABprV9u-added"}),
    ]
    for n, pieces in enumerate(parts):
        part = summary_parts[n]
        events_in.append(
            on(
                "response.reasoning_summary_part.added",
                0,
                rs,
                summary_index=n,
                part={**part, "text": ""},
            )
        )
        events_in += [
            on("response.reasoning_summary_text.delta", 0, rs, summary_index=n, delta=d)
            for d in pieces
        ]
        events_in.append(
            on("response.reasoning_summary_text.done", 0, rs, summary_index=n, text=part["text"])
        )
        events_in.append(
            on("response.reasoning_summary_part.done", 0, rs, summary_index=n, part=part)
        )
    answer = ["La Cumbre claims", " the late 1960s;", " El Faro says 1961."]
    events_in += [done(0, final), *streamed_message(1, mid, answer, phase="final_answer")]
    usage = usage_of(42, 0, 2655, 2539)
    events_in.append(
        completed(rid, model, usage, final, message(mid, "".join(answer), phase="final_answer"))
    )
    events = await run(serve_body, *events_in)
    summary = summarize(events)
    assert summary.reasoning == "\n\n".join(p["text"] for p in summary_parts)
    assert summary.text == "".join(answer)
    assert summary.signatures == ["gAAAAABprV-done"]
    assert summary.usage is not None
    assert (summary.usage.output_tokens, summary.usage.reasoning_tokens) == (2655, 2539)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    # the turn after (`store: false`): the item by its content, every part of its summary
    items = next_input(record_of(events), store=False)
    assert [entry["type"] for entry in items] == ["reasoning", "message"]
    assert items[0] == {
        "type": "reasoning",
        "summary": summary_parts,
        "encrypted_content": "gAAAAABprV-done",
    }


# -- vercel/ai ...__fixtures__/openai-web-search-tool.1.chunks.txt ------------------------
# gpt-5-nano with `web_search`: each search added with nothing but its status, progress
# events, the done item with its `action` (query and sources); reasoning items between;
# then the answer, whose `url_citation` annotations arrive while it streams, each after the
# text it covers (one url cited twice, at two ranges), all repeated by the part's and the
# item's done events. Shortened: three searches, three citations.
WALLPAPER = "https://www.wallpaper.com/art/exhibitions-shows/berlin-art-week-2025"
VISIT = "https://www.visitberlin.de/en/berlin-2025-the-main-events"
SEARCH_DELTAS = [
    "Here\u2019s what\u2019s notable in Berlin today:\n\n- Berlin Art Week 2025 kicks off today. "
    f"([wallpaper.com]({WALLPAPER}))\n\n- Museum Island turns 200. ([visitberlin.de]({VISIT}))",
    "\n\n- Open Monument Day is on September 13\u201314.",
    f" ([visitberlin.de]({VISIT}))\n\nWould you like live updates?",
]


def cite(text: str, link: str, url: str, title: str, after: int = 0) -> dict[str, Any]:
    start = text.index(f"([{link}]({url}))", after)
    end = start + len(f"([{link}]({url}))")
    return {
        "type": "url_citation",
        "start_index": start,
        "end_index": end,
        "title": title,
        "url": url,
    }


async def test_web_searches_are_shown_with_their_action_and_each_citation_comes_once(
    serve_body: ServeBody,
) -> None:
    rid, model, mid = "resp_68c187cc", "gpt-5-nano-2025-08-07", "msg_68c187e2"
    whole = "".join(SEARCH_DELTAS)
    art = cite(whole, "wallpaper.com", WALLPAPER, "What to see at Berlin Art Week 2025")
    first = cite(whole, "visitberlin.de", VISIT, "Berlin 2025 \u2013 the main events")
    second = cite(whole, "visitberlin.de", VISIT, first["title"], after=first["end_index"])
    annotations = [art, first, second]
    answer = message(mid, whole)
    answer["content"][0]["annotations"] = annotations
    searches = [
        ("ws_68c187d0", {"type": "search", "query": "Berlin news today", "sources": []}),
        ("ws_68c187d3", {"type": "search", "sources": [{"type": "url", "url": WALLPAPER}]}),
        ("ws_68c187d4", {"type": "search", "sources": [{"type": "url", "url": VISIT}]}),
    ]
    items: list[dict[str, Any]] = []
    searched: list[dict[str, Any]] = []
    for n, (ws, action) in enumerate(searches):
        reasoning = {"id": f"rs_{n}", "type": "reasoning", "summary": []}
        search = {"id": ws, "type": "web_search_call", "status": "completed", "action": action}
        items += [reasoning, search]
        searched += [
            added(2 * n, reasoning),
            done(2 * n, reasoning),
            added(2 * n + 1, {"id": ws, "type": "web_search_call", "status": "in_progress"}),
            *(
                on(f"response.web_search_call.{stage}", 2 * n + 1, ws)
                for stage in ("in_progress", "searching", "completed")
            ),
            done(2 * n + 1, search),
        ]
    streamed = streamed_message(6, mid, SEARCH_DELTAS)
    note = "response.output_text.annotation.added"
    streamed[2:5] = [
        streamed[2],
        on(note, 6, mid, content_index=0, annotation_index=0, annotation=art),
        on(note, 6, mid, content_index=0, annotation_index=1, annotation=first),
        streamed[3],
        streamed[4],
        on(note, 6, mid, content_index=0, annotation_index=2, annotation=second),
    ]
    streamed[-2]["part"] = answer["content"][0]
    streamed[-1] = done(6, answer)
    events = await run(
        serve_body,
        created(rid, model),
        *searched,
        *streamed,
        completed(rid, model, usage_of(8623, 0, 1540, 1216), *items, answer),
    )
    summary = summarize(events)
    assert summary.text == whole
    assert [e.text for e in events if e.type == "text"] == SEARCH_DELTAS
    assert server_tools(events) == [
        (kind, ws, "web_search_call")
        for ws, _ in searches
        for kind in ("server_tool_call", "server_tool_result")
    ]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert results[0].content["action"]["query"] == "Berlin news today"
    # each call shows its done item's action, less the sources it found (its result's)
    assert [e.arguments for e in events if e.type == "server_tool_call"] == [
        {"action": {"type": "search", "query": "Berlin news today"}},
        {"action": {"type": "search"}},
        {"action": {"type": "search"}},
    ]
    # no cited_text: each range is the answer's own link, `([wallpaper.com](...))`
    citations = [(e.url, e.title, e.cited_text) for e in events if e.type == "citation"]
    assert citations == [
        (WALLPAPER, art["title"], None),
        (VISIT, first["title"], None),
        (VISIT, first["title"], None),
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")


# -- vercel/ai ...__fixtures__/openai-mcp-tool-approval.1.chunks.txt ----------------------
# gpt-5-mini with an MCP server whose tools need approval: `mcp_list_tools`, a stored
# reasoning item, then an `mcp_approval_request` (its arguments a JSON string): the client
# must answer it, so it is a tool request named by its type, called by the item's id.
async def test_an_mcp_approval_request_is_requested_and_answered_by_its_id(
    serve_body: ServeBody,
) -> None:
    rid, model, lid, aid = (
        "resp_04a97b4f",
        "gpt-5-mini-2025-08-07",
        "mcpl_04a97b4f",
        "mcpr_04a97b4f",
    )
    arguments = {"alias": "", "description": "Shortened link for ai-sdk.dev", "max_clicks": 100}
    arguments = {**arguments, "password": "", "url": "https://ai-sdk.dev/"}
    request = {"id": aid, "type": "mcp_approval_request", "name": "create_short_url"}
    request = {**request, "arguments": json.dumps(arguments), "server_label": "zip1"}
    listed = {"id": lid, "type": "mcp_list_tools", "server_label": "zip1"}
    tools = [{"name": "create_short_url", "input_schema": {"type": "object"}}]
    reasoning = {"id": "rs_04a97b4f", "type": "reasoning", "summary": []}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**listed, "tools": []}),
        on("response.mcp_list_tools.in_progress", 0, lid),
        on("response.mcp_list_tools.completed", 0, lid),
        done(0, {**listed, "tools": tools}),
        added(1, reasoning),
        done(1, reasoning),
        added(2, request),
        done(2, request),
        completed(
            rid, model, usage_of(422, 0, 48, 0), {**listed, "tools": tools}, reasoning, request
        ),
    )
    summary = summarize(events)
    wanted = {"arguments": arguments, "name": "create_short_url", "server_label": "zip1"}
    assert summary.tool_calls == [(aid, "mcp_approval_request", wanted)]
    assert server_tools(events) == [
        ("server_tool_call", lid, "mcp_list_tools"),
        ("server_tool_result", lid, "mcp_list_tools"),
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    # the turn after: the stored reasoning, the request as it came, the answer by its id
    reasoning_item, sent, answer = answered(events, json.dumps({"approve": True}))
    assert reasoning_item == {"type": "reasoning", "id": "rs_04a97b4f", "summary": []}
    assert sent == request
    assert answer == {"type": "mcp_approval_response", "approval_request_id": aid, "approve": True}


# -- vercel/ai ...__fixtures__/openai-response-failed-only.1.chunks.txt -------------------
# A response that fails at once: `response.failed` whose error is a rate limit no retry
# can meet (a request larger than the per-minute limit), with no usage.
async def test_a_response_failed_at_once_is_its_error_once(serve_body: ServeBody) -> None:
    rid, model = "resp_test_failed_001", "gpt-4o-mini"
    message_text = (
        "Request too large for gpt-4o-mini in organization on tokens per min (TPM): "
        "Limit 30000, Requested 35364."
    )
    error = {"code": "rate_limit_exceeded", "message": message_text}
    failed = response(rid, model, "failed", error=error, output=[], usage=None)
    events = await run(
        serve_body, created(rid, model), {"type": "response.failed", "response": failed}
    )
    assert [e.type for e in events] == ["error"]
    (failure,) = events
    assert failure.type == "error"
    assert (failure.error.kind, failure.error.code) == ("stream_error", "rate_limit_exceeded")
    assert failure.error.message == message_text
    assert summarize(events).usage is None
