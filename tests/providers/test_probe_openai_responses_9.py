"""OpenAI Responses streams of public recordings not replayed before (vercel/ai
`packages/openai/src/responses/__fixtures__`), each checked against its own content and
the turn after built from what the stream gave; and the requests OpenAI refused in a
second turn (the fixtures' error bodies), checked against the input rxllm writes for the
same history. Bodies are built by hand from the recordings' essential lines, each naming
its source; ids are the recordings' own, long values (encrypted content, search results,
tool lists) shortened."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ServerToolResult
from rxllm.providers.openai_responses import OpenAIResponses
from rxllm.request import ChatRequest, Message, ReasoningPart, ToolCall
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_7 import (
    next_input,
    record_of,
    server_tools,
)
from tests.providers.test_probe_openai_responses_8 import (
    answered,
    completed,
    created,
    message,
    streamed_message,
    usage_of,
)
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, summarize


def input_of(messages: list[Message], **params: Any) -> list[dict[str, Any]]:
    request = ChatRequest(model="gpt-5.4", messages=messages, params=params)
    items: list[dict[str, Any]] = OpenAIResponses().build_body(request)["input"]
    return items


# -- vercel/ai ...__fixtures__/openai-file-search-tool.2.chunks.txt -----------------------
# gpt-5-mini with `file_search`: a stored reasoning item, a `file_search_call` added with
# no queries and `results: null`, done with both; another reasoning item, then the answer,
# whose `file_citation` annotation (no url: no event) arrives before its last delta.
async def test_a_file_search_is_shown_with_its_results_and_its_file_citation_adds_nothing(
    serve_body: ServeBody,
) -> None:
    rid, model, fs, mid = "resp_06456cb9", "gpt-5-mini-2025-08-07", "fs_06456cb9", "msg_06456cb9"
    queries = ["What is an embedding model according to this document?"]
    results = [{"attributes": {}, "file_id": "file-Ebzhf8", "filename": "ai.pdf", "score": 0.93}]
    call = {"id": fs, "type": "file_search_call", "status": "completed", "queries": queries}
    call = {**call, "results": results}
    deltas = ["The document defines", " an embedding model", " .", "."]
    citation = {"type": "file_citation", "file_id": "file-Ebzhf8", "filename": "ai.pdf"}
    citation = {**citation, "index": 379}
    answer = message(mid, "".join(deltas))
    answer["content"][0]["annotations"] = [citation]
    streamed = streamed_message(3, mid, deltas)
    streamed[-2]["part"] = answer["content"][0]
    streamed[-1] = done(3, answer)
    first = {"id": "rs_06456cb9_1", "type": "reasoning", "summary": []}
    second = {"id": "rs_06456cb9_2", "type": "reasoning", "summary": []}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, first),
        done(0, first),
        added(1, {**call, "status": "in_progress", "queries": [], "results": None}),
        on("response.file_search_call.in_progress", 1, fs),
        on("response.file_search_call.searching", 1, fs),
        on("response.file_search_call.completed", 1, fs),
        done(1, call),
        added(2, second),
        done(2, second),
        *streamed[:4],
        on(
            "response.output_text.annotation.added",
            3,
            mid,
            content_index=0,
            annotation_index=0,
            annotation=citation,
        ),
        *streamed[4:],
        completed(rid, model, usage_of(3748, 2304, 543, 448), first, call, second, answer),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    assert [e.type for e in events if e.type == "citation"] == []
    assert server_tools(events) == [
        ("server_tool_call", fs, "file_search_call"),
        ("server_tool_result", fs, "file_search_call"),
    ]
    shown = next(e for e in events if e.type == "server_tool_call")
    assert shown.arguments == {"queries": queries}  # its done item's, as pydantic-ai maps it
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert (result.content["queries"], result.content["results"]) == (queries, results)
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.cache_read_tokens) == (1444, 2304)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    # the turn after: the answer alone (stored reasoning goes back only before a call)
    assert [item["type"] for item in next_input(record_of(events))] == ["message"]


# -- vercel/ai ...__fixtures__/openai-apply-patch-tool-delete.1.chunks.txt ----------------
# gpt-5.1 with `apply_patch`: a `delete_file` operation, whole at its added item (no
# diff to stream), no usage of output tokens.
async def test_a_delete_file_patch_is_requested_and_goes_back_completed(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_delete_001", "gpt-5.1-2025-11-13", "call_delete_1"
    operation = {"type": "delete_file", "path": "obsolete.txt"}
    item = {"id": "apc_delete_001", "type": "apply_patch_call", "status": "completed"}
    item = {**item, "call_id": call_id, "operation": operation}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**item, "status": "in_progress"}),
        done(0, item),
        completed(rid, model, usage_of(24, 0, 0, 0), item),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "apply_patch_call", {"operation": operation})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    call, output = answered(events, "Deleted obsolete.txt")
    assert call == {
        "type": "apply_patch_call",
        "call_id": call_id,
        "status": "completed",
        "operation": operation,
    }
    assert output["type"] == "apply_patch_call_output"
    assert (output["call_id"], output["status"]) == (call_id, "completed")


# -- vercel/ai ...__fixtures__/openai-shell-container.1.chunks.txt ------------------------
# gpt-5.2 with `shell` in a hosted container (`container_reference`): the `shell_call`
# carries that environment, so OpenAI runs it; its `shell_call_output` follows as an
# output item (output streamed as `shell_call_output_content.delta/.done`, no event of
# rxllm's); then the answer, whose done events say more than its deltas (the recording
# was edited: the deltas are what streamed).
CONTAINER = {"type": "container_reference", "container_id": "cntr_aabbccdd"}


def hosted_shell(index: int, sid: str, call_id: str, command: str, stdout: str) -> list[Any]:
    action = {"commands": [command], "max_output_length": None, "timeout_ms": None}
    call = {"id": sid, "type": "shell_call", "status": "completed", "action": action}
    call = {**call, "call_id": call_id, "environment": CONTAINER}
    outcome = {"outcome": {"type": "exit", "exit_code": 0}, "stderr": "", "stdout": stdout}
    output = {"id": f"sho{sid[2:]}", "type": "shell_call_output", "status": "completed"}
    output = {**output, "call_id": call_id, "max_output_length": None, "output": [outcome]}
    where = {"output_index": index, "command_index": 0}
    return [
        added(index, {**call, "status": "in_progress", "action": {**action, "commands": []}}),
        {"type": "response.shell_call_command.added", **where, "command": ""},
        {"type": "response.shell_call_command.delta", **where, "delta": command},
        {"type": "response.shell_call_command.done", **where, "command": command},
        done(index, call),
        added(index + 1, {**output, "output": []}),
        on(
            "response.shell_call_output_content.delta",
            index + 1,
            output["id"],
            command_index=0,
            delta={"stdout": stdout},
        ),
        on(
            "response.shell_call_output_content.done",
            index + 1,
            output["id"],
            command_index=0,
            output=[outcome],
        ),
        done(index + 1, output),
    ]


async def test_a_hosted_shell_call_and_its_output_are_shown_and_never_sent_apart(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_0f1a2b3c", "gpt-5.2-2025-12-11", "call_abc123def456ghi789jkl012"
    stdout = "Hello from container!\nLinux container-host 6.1.0 x86_64 GNU/Linux\n"
    shell = hosted_shell(
        0, "sh_0f1a2b3c", call_id, "echo 'Hello from container!' && uname -a", stdout
    )
    deltas = ["The", " command", " ran", " successfully."]
    streamed = streamed_message(2, "msg_0f1a2b3c", deltas)
    whole = "The command ran successfully in the container. Here's the output: ..."
    streamed[-3]["text"] = whole
    streamed[-2]["part"]["text"] = whole
    streamed[-1] = done(2, message("msg_0f1a2b3c", whole))
    events = await run(
        serve_body,
        created(rid, model),
        *shell,
        *streamed,
        completed(
            rid,
            model,
            usage_of(200, 0, 120, 0),
            shell[4]["item"],
            shell[-1]["item"],
            streamed[-1]["item"],
        ),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    assert summary.tool_calls == []
    # the call, its done item (what it ran) and its output, each a result of the call
    assert server_tools(events) == [
        ("server_tool_call", call_id, "shell_call"),
        ("server_tool_result", call_id, "shell_call"),
        ("server_tool_result", call_id, "shell_call"),
    ]
    ran, output = [e for e in events if isinstance(e, ServerToolResult)]
    assert ran.content["action"]["commands"] == ["echo 'Hello from container!' && uname -a"]
    assert output.content["output"][0]["stdout"] == stdout
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    # issue-18134-shell-store-false-error.json: OpenAI refuses a `shell_call_output` sent
    # without its `shell_call` ("No tool call found for shell call output with call_id
    # ..."): the turn after sends neither, with or without `store`
    for store in (True, False):
        items = next_input(record_of(events), store=store)
        assert [item["type"] for item in items] == ["message"]


# -- vercel/ai ...__fixtures__/openai-shell-skills.1.chunks.txt ---------------------------
# The same hosted shell with a skill mounted: two calls, each followed by its output, then
# the answer (shortened).
async def test_hosted_shell_calls_in_a_row_are_each_answered_by_their_own_output(
    serve_body: ServeBody,
) -> None:
    rid, model = "resp_04935008", "gpt-5.2-2025-12-11"
    skill = "/home/oai/skills/island-rescue-ab6238cd"
    first = hosted_shell(
        0, "sh_0493_1", "call_ckIythV1s1RcnbGV4F34THGN", f"ls -R {skill}", "SKILL.md\n"
    )
    second = hosted_shell(
        2,
        "sh_0493_2",
        "call_Ud8yNtRknjWh2OA6COEutgOK",
        f"sed -n '1,200p' {skill}/SKILL.md",
        "---\n",
    )
    deltas = ["Build a STOP large", " signal STOP on the", " beach."]
    events = await run(
        serve_body,
        created(rid, model),
        *first,
        *second,
        *streamed_message(4, "msg_04935008", deltas),
        completed(rid, model, usage_of(1501, 1024, 314, 100)),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    results = [
        (e.call_id, e.content["output"][0]["stdout"])
        for e in events
        if isinstance(e, ServerToolResult) and "output" in e.content
    ]
    assert results == [
        ("call_ckIythV1s1RcnbGV4F34THGN", "SKILL.md\n"),
        ("call_Ud8yNtRknjWh2OA6COEutgOK", "---\n"),
    ]
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.reasoning_tokens) == (477, 100)


# -- vercel/ai ...__fixtures__/openai-shell-local-multiturn.1.chunks.txt ------------------
# gpt-5.2 answering after a local shell ran (`environment: local`): a plain message.
async def test_the_answer_after_a_local_shell_is_its_text(serve_body: ServeBody) -> None:
    rid, model = "resp_0b0392bd", "gpt-5.2-2025-12-11"
    deltas = ["`", "arm", "64", "`", " (", "Apple", " Silicon", ")."]
    streamed = streamed_message(0, "msg_0b0392bd", deltas)
    events = await run(
        serve_body,
        created(rid, model),
        *streamed,
        completed(rid, model, usage_of(444, 0, 12, 0), streamed[-1]["item"]),
    )
    summary = summarize(events)
    assert summary.text == "`arm64` (Apple Silicon)."
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    assert next_input(record_of(events))[0]["content"][0]["text"] == summary.text


# -- vercel/ai ...__fixtures__/openai-issue-11239.1.chunks.txt and .2 ---------------------
# gpt-5.2, `store: false`: an encrypted reasoning item (one blob at added, another at
# done) and a call of a tool without parameters (`{}`); then, the answer after it.
async def test_a_parameterless_call_after_encrypted_reasoning_goes_back_by_content(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_0039ff4e", "gpt-5.2-2025-12-11", "call_LUBOONF2cY8HDQdBwiEQ9fk1"
    reasoning = {"id": "rs_0039ff4e", "type": "reasoning", "content": [], "summary": []}
    call = {"id": "fc_0039ff4e", "type": "function_call", "status": "completed"}
    call = {**call, "arguments": "{}", "call_id": call_id, "name": "lookupCode"}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**reasoning, "encrypted_content": "gAAAAABqyUi0-added"}),
        done(0, {**reasoning, "encrypted_content": "gAAAAABqyUi1-done"}),
        added(1, {**call, "status": "in_progress", "arguments": ""}),
        on("response.function_call_arguments.delta", 1, "fc_0039ff4e", delta="{}"),
        on("response.function_call_arguments.done", 1, "fc_0039ff4e", arguments="{}"),
        done(1, call),
        completed(rid, model, usage_of(55, 0, 25, 9), reasoning, call),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "lookupCode", {})]
    assert summary.signatures == ["gAAAAABqyUi1-done"]
    record = record_of(events)
    messages = [Message.user("code?"), record.to_message(), Message.tool(call_id, "blue-42")]
    assert input_of(messages, store=False)[1:] == [
        {
            "type": "reasoning",
            "summary": [],
            "content": [],
            "encrypted_content": "gAAAAABqyUi1-done",
        },
        {"type": "function_call", "call_id": call_id, "name": "lookupCode", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": "blue-42"},
    ]
    answer = streamed_message(0, "msg_0039ff4e", ["blue", "-42"])
    after = await run(
        serve_body,
        created("resp_0039ff4e_2", model),
        *answer,
        completed("resp_0039ff4e_2", model, usage_of(91, 0, 7, 0), answer[-1]["item"]),
    )
    assert summarize(after).text == "blue-42"


# -- vercel/ai ...__fixtures__/issue-19493-gpt-5.1-tool-call.chunks.txt -------------------
# gpt-5.1 with `tool_choice: required`: one call, its arguments in six deltas.
async def test_a_required_tool_call_is_requested_with_its_streamed_arguments(
    serve_body: ServeBody,
) -> None:
    rid, model, fid, call_id = (
        "resp_0775572d",
        "gpt-5.1-2025-11-13",
        "fc_0775572d",
        "call_2FQdm3Br7Qb35YUBSkDR7kue",
    )
    arguments = '{"city":"Beijing"}'
    call = {"id": fid, "type": "function_call", "status": "completed", "arguments": arguments}
    call = {**call, "call_id": call_id, "name": "get_weather"}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**call, "status": "in_progress", "arguments": ""}),
        *(
            on("response.function_call_arguments.delta", 0, fid, delta=d)
            for d in ['{"', "city", '":"', "Be", "ijing", '"}']
        ),
        on("response.function_call_arguments.done", 0, fid, arguments=arguments),
        done(0, call),
        completed(rid, model, usage_of(45, 0, 25, 0), call),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "get_weather", {"city": "Beijing"})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


# -- vercel/ai ...__fixtures__/issue-20047-openai-responses.chunks.txt --------------------
# gpt-4o-mini: "OK", and a usage whose details say a cache write of 0.
async def test_a_short_answer_keeps_its_usage(serve_body: ServeBody) -> None:
    rid, model = "resp_sanitized_streaming", "gpt-4o-mini-2024-07-18"
    streamed = streamed_message(0, "msg_sanitized_streaming", ["OK"])
    usage = {
        **usage_of(12, 0, 2, 0),
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
    }
    events = await run(
        serve_body,
        created(rid, model),
        *streamed,
        completed(rid, model, usage, streamed[-1]["item"]),
    )
    summary = summarize(events)
    assert summary.text == "OK"
    assert summary.usage is not None
    assert (
        summary.usage.input_tokens,
        summary.usage.output_tokens,
        summary.usage.total_tokens,
    ) == (12, 2, 14)


# -- vercel/ai ...__fixtures__/issue-18970-programmatic-approval.1.chunks.txt -------------
# gpt-5.6-terra with programmatic tool calling: the `program` arrives only done, at output
# index 1 (nothing at 0), then the function call it makes; the terminal response carries
# neither `output` nor `status`.
async def test_a_program_seen_only_done_is_shown_and_its_call_requested(
    serve_body: ServeBody,
) -> None:
    rid, model, program_call = "resp_09c51821", "gpt-5.6-terra", "call_6mAgBBQwycfi35K0D6DmLTrm"
    code = 'const r = await tools.getHours({member:"Ada"}); text(r.hours);'
    program = {"id": "cm_09c51821", "type": "program", "call_id": program_call, "code": code}
    program = {**program, "fingerprint": "gAAAAABqhM2L-fp"}
    caller = {"type": "program", "caller_id": program_call}
    call = {"id": "fc_09c51821", "type": "function_call", "status": "in_progress", "arguments": ""}
    call = {
        **call,
        "call_id": "call_8dgfKswBoIhLW7yM50f06CSf",
        "caller": caller,
        "name": "getHours",
    }
    arguments = '{"member":"Ada"}'
    usage = usage_of(571, 0, 45, 16)
    del usage["total_tokens"]
    events = await run(
        serve_body,
        {"type": "response.created", "response": {"id": rid, "model": model}},
        done(1, program),
        added(2, call),
        on("response.function_call_arguments.delta", 2, "fc_09c51821", delta=arguments),
        on("response.function_call_arguments.done", 2, "fc_09c51821", arguments=arguments),
        done(2, {**call, "arguments": arguments}),
        {"type": "response.completed", "response": {"incomplete_details": None, "usage": usage}},
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_8dgfKswBoIhLW7yM50f06CSf", "getHours", {"member": "Ada"})]
    assert server_tools(events) == [
        ("server_tool_call", program_call, "program"),
        ("server_tool_result", program_call, "program"),
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    assert summary.usage is not None
    assert (summary.usage.output_tokens, summary.usage.reasoning_tokens) == (45, 16)


# -- vercel/ai ...__fixtures__/programmatic-tool-calling.3.chunks.txt ---------------------
# The turn after the program's last client call was answered: a `program_output` item
# (added with an empty `result`, done with the program's text) for the program of the
# first turn, by its call id, then the final answer. The program's result was dropped
# (logged as an item with no event): it is the result of a tool OpenAI ran.
async def test_a_program_output_is_the_result_of_its_program(serve_body: ServeBody) -> None:
    rid, model, program_call = "resp_0bac52ec_3", "gpt-5.6-sol", "call_voPdoCqf8APY4DMpam3bdmxq"
    text = '{"inventory":{"availableUnits":42,"sku":"sku_123"},"demand":{"requestedUnits":31}}'
    output = {"id": "cmo_0bac52ec", "type": "program_output", "status": "completed"}
    output = {**output, "call_id": program_call, "result": text}
    deltas = ["Inventory is sufficient", " for `sku_123`."]
    streamed = streamed_message(1, "msg_0bac52ec", deltas, phase="final_answer")
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**output, "result": ""}),
        done(0, output),
        *streamed,
        completed(rid, model, usage_of(757, 0, 35, 0), output, streamed[-1]["item"]),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    assert server_tools(events) == [("server_tool_result", program_call, "program")]
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert result.content == {"status": "completed", "call_id": program_call, "result": text}
    # the turn after: the final answer with its phase
    assert next_input(record_of(events), store=False) == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "".join(deltas), "annotations": []}],
            "phase": "final_answer",
        }
    ]


# -- vercel/ai ...__fixtures__/azure-gpt5-reasoning-multi-summary-{with,no}-encryption ---
# Azure's gpt-5.4 (`store: false`, summary "detailed"): one reasoning item whose summary
# comes in several parts (six with encryption, three without; two kept here), then a
# `final_answer` message whose one delta ("X", anonymized) is not the text of its done
# events; with encryption, the done item's blob replaces the added one.
def azure_stream(blob: str | None) -> list[dict[str, Any]]:
    rid, model, rs, mid = "resp_anonymized", "gpt-5.4", "rs_anonymized", "msg_anonymized"
    parts = ["**Anonymized summary 0**\n\nPlaceholder.", "**Anonymized summary 1**\n\nPlaceholder."]
    item: dict[str, Any] = {"id": rs, "type": "reasoning", "summary": []}
    if blob is not None:
        item["encrypted_content"] = f"{blob}-partial"
    events = [created(rid, model), added(0, item)]
    for n, text in enumerate(parts):
        part = {"type": "summary_text", "text": text}
        events += [
            on(
                "response.reasoning_summary_part.added",
                0,
                rs,
                summary_index=n,
                part={**part, "text": ""},
            ),
            on("response.reasoning_summary_text.delta", 0, rs, summary_index=n, delta=text[:20]),
            on("response.reasoning_summary_text.delta", 0, rs, summary_index=n, delta=text[20:]),
            on("response.reasoning_summary_text.done", 0, rs, summary_index=n, text=text),
            on("response.reasoning_summary_part.done", 0, rs, summary_index=n, part=part),
        ]
    final = {**item, "summary": [{"type": "summary_text", "text": t} for t in parts]}
    if blob is not None:
        final["encrypted_content"] = blob
    whole = "Anonymized assistant response text."
    streamed = streamed_message(1, mid, ["X"], phase="final_answer")
    streamed[-3]["text"] = whole
    streamed[-2]["part"]["text"] = whole
    streamed[-1] = done(1, message(mid, whole))  # Azure's done item without its phase
    return [
        *events,
        done(0, final),
        *streamed,
        completed(rid, model, usage_of(100, 0, 500, 300), final),
    ]


async def test_azure_reasoning_in_parts_goes_back_by_its_encrypted_content(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *azure_stream("AZURE_FIXTURE_CANONICAL"))
    summary = summarize(events)
    assert summary.reasoning.count("**Anonymized summary") == 2
    assert "\n\n**Anonymized summary 1**" in summary.reasoning
    assert summary.text == "X"
    assert summary.signatures == ["AZURE_FIXTURE_CANONICAL"]
    reasoning, said = next_input(record_of(events), store=False)
    assert reasoning["encrypted_content"] == "AZURE_FIXTURE_CANONICAL"
    assert "id" not in reasoning and len(reasoning["summary"]) == 2
    assert (said["phase"], said["content"][0]["text"]) == ("final_answer", "X")


async def test_azure_reasoning_without_encrypted_content_is_left_out_when_nothing_is_stored(
    serve_body: ServeBody,
) -> None:
    events = await run(serve_body, *azure_stream(None))
    assert summarize(events).reasoning.count("**Anonymized summary") == 2
    (said,) = next_input(record_of(events), store=False)
    assert (said["type"], said["phase"]) == ("message", "final_answer")


# -- vercel/ai ...__fixtures__/openai-mcp-tool-approval.3.chunks.txt and .4 ---------------
# .3 repeats .1 (an `mcp_approval_request`, probe 8); .4 is the turn after the approval:
# the `mcp_call` OpenAI runs names the approval it ran under, then the answer.
APPROVAL = "mcpr_04a97b4f"
SHORT_URL = '{"alias":"","description":"Shortened link for ai-sdk.dev","url":"https://ai-sdk.dev/"}'


async def test_the_approved_mcp_call_is_shown_with_the_approval_it_ran_under(
    serve_body: ServeBody,
) -> None:
    rid, model, lid, cid = (
        "resp_04a97b4f_4",
        "gpt-5-mini-2025-08-07",
        "mcpl_04a97b4f",
        "mcp_04a97b4f",
    )
    listed = {"id": lid, "type": "mcp_list_tools", "server_label": "zip1"}
    tools = [{"name": "create_short_url", "input_schema": {"type": "object"}}]
    call = {"id": cid, "type": "mcp_call", "status": "completed", "approval_request_id": APPROVAL}
    call = {**call, "arguments": SHORT_URL, "error": None, "name": "create_short_url"}
    call = {**call, "output": "Short URL created: https://zip1.io/UDKvlw", "server_label": "zip1"}
    deltas = ["Done", " - here is your", " shortened link:\n\nhttps://zip1.io/UDKvlw"]
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**listed, "tools": []}),
        on("response.mcp_list_tools.in_progress", 0, lid),
        on("response.mcp_list_tools.completed", 0, lid),
        done(0, {**listed, "tools": tools}),
        added(1, {**call, "status": "in_progress", "arguments": "", "output": None}),
        on("response.mcp_call.in_progress", 1, cid),
        on("response.mcp_call_arguments.delta", 1, cid, delta=SHORT_URL),
        on("response.mcp_call.in_progress", 1, cid),
        on("response.mcp_call_arguments.done", 1, cid, arguments=SHORT_URL),
        on("response.mcp_call.completed", 1, cid),
        done(1, call),
        *streamed_message(2, "msg_04a97b4f", deltas),
        completed(rid, model, usage_of(1000, 0, 100, 0)),
    )
    summary = summarize(events)
    assert summary.text == "".join(deltas)
    assert summary.tool_calls == []
    assert server_tools(events)[2:] == [
        ("server_tool_call", cid, "mcp_call"),
        ("server_tool_result", cid, "mcp_call"),
    ]
    result = [e for e in events if isinstance(e, ServerToolResult)][1]
    assert result.content["approval_request_id"] == APPROVAL
    assert [item["type"] for item in next_input(record_of(events))] == ["message"]


# -- vercel/ai ...__fixtures__/openai-mcp-approval-previous-response-duplicate-error.json --
# Continuing a stored response by `previous_response_id`, OpenAI refuses an item of that
# response sent again: "Duplicate item found with id mcpr_... Remove duplicate items from
# your input and try again." The app keeps its whole history (as on every wire); the input
# must carry only what came after the response the API holds: the approval's answer.
def approval_history() -> list[Message]:
    arguments = {
        "arguments": json.loads(SHORT_URL),
        "name": "create_short_url",
        "server_label": "zip1",
    }
    call = ToolCall(id=APPROVAL, name="mcp_approval_request", arguments=arguments)
    stored = ReasoningPart(details={"type": "reasoning", "id": "rs_04a97b4f", "summary": []})
    return [
        Message.system("Be brief."),
        Message.user("Shorten https://ai-sdk.dev/"),
        Message(role="assistant", content=[stored], tool_calls=[call]),
        Message.tool(APPROVAL, json.dumps({"approve": True})),
    ]


def test_a_chained_request_sends_only_what_follows_the_response_it_continues() -> None:
    history = approval_history()
    answer = {"type": "mcp_approval_response", "approval_request_id": APPROVAL, "approve": True}
    chained = input_of(history, previous_response_id="resp_04a97b4f")
    assert chained == [answer]
    assert not [item for item in chained if item.get("id")]
    # the instructions still go: a chained response does not carry them over
    request = ChatRequest(model="gpt-5.4", messages=history, params={"previous_response_id": "r"})
    assert OpenAIResponses().build_body(request)["instructions"] == "Be brief."
    # a conversation holds the items alike; without either, the whole history goes
    assert input_of(history, conversation="conv_1") == [answer]
    whole = input_of(history)
    assert [item["type"] for item in whole] == [
        "message",
        "reasoning",
        "mcp_approval_request",
        "mcp_approval_response",
    ]
    # a chained request of new messages only (no assistant turn in it) sends them all
    assert input_of([Message.user("and another?")], previous_response_id="r")[0]["role"] == "user"


# -- vercel/ai ...__fixtures__/openai-missing-function-call-namespace-error.1.json --------
# A function of a `namespace` tool (tool search's grouping) is called by an item that
# names its namespace; sent back without it, OpenAI refuses the turn: "Missing namespace
# for function_call 'create_widget'. It does not exist in the default namespace.
# Round-trip the model's function_call item with its namespace field included."
CRM = {
    "type": "namespace",
    "name": "crm",
    "description": "CRM tools",
    "tools": [
        {"type": "function", "name": "create_widget", "defer_loading": True, "parameters": {}},
        {"type": "function", "name": "list_widgets", "defer_loading": True, "parameters": {}},
    ],
}


async def test_a_namespaced_function_call_goes_back_with_its_namespace(
    serve_body: ServeBody,
) -> None:
    rid, model, call_id = "resp_ns", "gpt-5.4", "call_widget_1"
    arguments = '{"name":"gear"}'
    call = {"id": "fc_ns", "type": "function_call", "status": "completed", "arguments": arguments}
    call = {**call, "call_id": call_id, "name": "create_widget", "namespace": "crm"}
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**call, "status": "in_progress", "arguments": ""}),
        on("response.function_call_arguments.done", 0, "fc_ns", arguments=arguments),
        done(0, call),
        completed(rid, model, usage_of(50, 0, 10, 0), call),
    )
    assert summarize(events).tool_calls == [(call_id, "create_widget", {"name": "gear"})]
    record = record_of(events)
    messages = [Message.user("make a gear"), record.to_message(), Message.tool(call_id, "made")]
    sent = input_of(messages, tools=[{"type": "tool_search"}, CRM])[1]
    assert sent == {
        "type": "function_call",
        "call_id": call_id,
        "name": "create_widget",
        "namespace": "crm",
        "arguments": json.dumps({"name": "gear"}),
    }
    # a function also offered at the top level, or of no namespace, goes back without one
    own = {"type": "function", "name": "create_widget", "parameters": {}}
    assert "namespace" not in input_of(messages, tools=[CRM, own])[1]
    assert "namespace" not in input_of(messages)[1]


def test_a_function_that_a_client_tool_search_loaded_goes_back_with_its_namespace() -> None:
    search = ToolCall(id="call_search", name="tool_search_call", arguments={"execution": "client"})
    widget = ToolCall(id="call_widget", name="create_widget", arguments={"name": "gear"})
    messages = [
        Message.user("make a gear"),
        Message.assistant(tool_calls=[search]),
        Message.tool("call_search", json.dumps({"tools": [CRM]})),
        Message.assistant(tool_calls=[widget]),
        Message.tool("call_widget", "made"),
    ]
    items = input_of(messages)
    assert items[2]["type"] == "tool_search_output"
    assert items[3]["namespace"] == "crm"


# -- vercel/ai ...__fixtures__/issue-22343-{live-web-search,web-search-replay}-store-false
# and openai-tool-search-duplicate-item-error.1.json: OpenAI took a `web_search_call`
# sent back by its content under `store: false`, and refused an input holding one item
# id twice ("Duplicate item found with id tsc_..."). A provider-run item (a search, a
# server tool search and its output) goes back neither by reference nor twice: rxllm
# leaves it out, so no id repeats and no result goes without its call.
async def test_provider_run_items_go_back_neither_twice_nor_without_their_call(
    serve_body: ServeBody,
) -> None:
    rid, model, ws, tsc = "resp_0a76c91b", "gpt-5.4", "ws_0a76c91b", "tsc_077457e6"
    action = {"type": "search", "query": "Le maire de Paris", "queries": ["Mayor of Paris"]}
    search = {"id": ws, "type": "web_search_call", "status": "completed", "action": action}
    lookup = {"id": tsc, "type": "tool_search_call", "status": "completed", "execution": "server"}
    lookup = {**lookup, "call_id": None, "arguments": {"query": "widgets"}}
    found = {"id": "tso_077457e6", "type": "tool_search_output", "status": "completed"}
    found = {**found, "execution": "server", "call_id": None, "tools": [CRM]}
    reasoning = {"id": "rs_0a76c91b", "type": "reasoning", "summary": []}
    streamed = streamed_message(4, "msg_0a76c91b", ["I have noted", " the prior search."])
    events = await run(
        serve_body,
        created(rid, model),
        added(0, {**search, "status": "in_progress"}),
        done(0, search),
        added(1, lookup),
        done(1, lookup),
        done(2, found),
        added(3, {**reasoning, "encrypted_content": "gAAAA-r"}),
        done(3, {**reasoning, "encrypted_content": "gAAAA-r"}),
        *streamed,
        completed(rid, model, usage_of(36, 0, 13, 0)),
    )
    assert [(kind, name) for kind, _, name in server_tools(events)] == [
        ("server_tool_call", "web_search_call"),
        ("server_tool_result", "web_search_call"),
        ("server_tool_call", "tool_search_call"),
        ("server_tool_result", "tool_search_call"),  # the search, done
        ("server_tool_result", "tool_search_call"),  # the tools it found
    ]
    for store in (True, False):
        items = next_input(record_of(events), store=store)
        assert [item["type"] for item in items] == ["reasoning", "message"]
        ids = [item["id"] for item in items if "id" in item]
        assert len(ids) == len(set(ids))
