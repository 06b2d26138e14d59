"""Streamed pydantic/pydantic-ai OpenAI Responses cassettes of a second sweep
(`tests/models/cassettes/test_openai_responses/`), replayed whole and cut at arbitrary
byte boundaries and over a loopback server, and checked against what the cassette's own
terminal response says. Bodies are built by hand from the cassettes' essential events
(ids shortened, long values cut); each test names its source."""

from __future__ import annotations

from typing import Any

from rxllm.events import ServerToolCall, ServerToolResult
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, log_messages, summarize

MODEL = "gpt-5.2-2025-12-11"
CONTAINER = {"type": "container_reference", "container_id": "cntr_69ad9b7be7b8"}


def shell_call(sid: str, call_id: str, commands: list[str], status: str) -> dict[str, Any]:
    action = {"commands": commands, "max_output_length": None, "timeout_ms": None}
    item = {"id": sid, "type": "shell_call", "status": status, "action": action}
    return {**item, "call_id": call_id, "environment": CONTAINER}


def command(event: str, index: int, number: int, **fields: Any) -> dict[str, Any]:
    where = {"command_index": number, "output_index": index}
    return {"type": f"response.shell_call_command.{event}", **where, **fields}


def streamed_commands(index: int, commands: list[str]) -> list[dict[str, Any]]:
    """Each command as OpenAI streams it: added empty, its text in two deltas, done whole."""
    events = []
    for number, text in enumerate(commands):
        half = len(text) // 2
        events += [
            command("added", index, number, command=""),
            command("delta", index, number, delta=text[:half], obfuscation="J7Rs"),
            command("delta", index, number, delta=text[half:], obfuscation="jEJV"),
            command("done", index, number, command=text),
        ]
    return events


async def test_hosted_shell_commands_and_output_stream_without_unknown_events(
    serve_body: ServeBody,
) -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_openai_responses/
    test_openai_responses_hosted_shell_with_uploaded_file_stream.yaml (gpt-5.2, `shell`
    in a `container_auto` environment), first response: a hosted `shell_call` streams two
    commands (`response.shell_call_command.added/.delta/.done`, command_index 0 and 1)
    and has no `shell_call_output` at all; the next call's output streams as
    `response.shell_call_output_content.delta/.done` before its `shell_call_output`
    item; then the answer "2". Each call is shown once with every command its done item
    holds, and answered; those command and output events are documented streaming events
    that the done items repeat, not events of an unknown type (they were logged as such)."""
    first = shell_call("sh_7d85", "call_6uky", [], "in_progress")
    ran = ["ls -l /mnt/data", "python3 - <<'PY'\nimport csv\nprint(2)\nPY"]
    counted = ["wc -l /mnt/data/file-M7oF-report.csv"]
    outcome = {"outcome": {"type": "exit", "exit_code": 0}, "stderr": ""}
    outcome = {**outcome, "stdout": "3 /mnt/data/file-M7oF-report.csv\n"}
    output = {"id": "sho_8888", "type": "shell_call_output", "status": "completed"}
    output = {**output, "call_id": "call_gjfS", "max_output_length": None, "output": [outcome]}
    text = {"type": "output_text", "annotations": [], "logprobs": [], "text": "2"}
    message = {"id": "msg_8a5e", "type": "message", "status": "completed", "role": "assistant"}
    response = {"id": "resp_0e41", "object": "response", "model": MODEL}
    usage = {
        "input_tokens": 1337,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 268,
        "output_tokens_details": {"reasoning_tokens": 263},
        "total_tokens": 1605,
    }
    calls = [
        shell_call("sh_7d85", "call_6uky", ran, "completed"),
        shell_call("sh_8755", "call_gjfS", counted, "completed"),
    ]
    with log_messages() as logged:
        events = await run(
            serve_body,
            {"type": "response.created", "response": {**response, "status": "in_progress"}},
            added(0, first),
            *streamed_commands(0, ran),
            done(0, calls[0]),
            added(1, shell_call("sh_8755", "call_gjfS", [], "in_progress")),
            *streamed_commands(1, counted),
            done(1, calls[1]),
            added(2, {**output, "status": "in_progress", "output": []}),
            on(
                "response.shell_call_output_content.delta",
                2,
                "sho_8888",
                command_index=0,
                delta={"stdout": outcome["stdout"]},
            ),
            on(
                "response.shell_call_output_content.done",
                2,
                "sho_8888",
                command_index=0,
                output=[outcome],
            ),
            done(2, output),
            added(3, {**message, "status": "in_progress", "content": []}),
            on("response.content_part.added", 3, "msg_8a5e", content_index=0, part=text),
            on("response.output_text.delta", 3, "msg_8a5e", content_index=0, delta="2"),
            on("response.output_text.done", 3, "msg_8a5e", content_index=0, text="2"),
            on("response.content_part.done", 3, "msg_8a5e", content_index=0, part=text),
            done(3, {**message, "content": [text]}),
            {
                "type": "response.completed",
                "response": {
                    **response,
                    "status": "completed",
                    "output": [*calls, output, {**message, "content": [text]}],
                    "usage": usage,
                },
            },
        )
    shown = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert shown == [
        ("call_6uky", "shell_call", {"action": calls[0]["action"]}),
        ("call_gjfS", "shell_call", {"action": calls[1]["action"]}),
    ]
    results = [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)]
    # each call's done item (what it ran), and the one output OpenAI gave
    assert [call_id for call_id, _ in results] == ["call_6uky", "call_gjfS", "call_gjfS"]
    assert results[-1][1]["output"] == [outcome]
    summary = summarize(events)
    assert (summary.text, summary.tool_calls) == ("2", [])
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.reasoning_tokens) == (1337, 263)
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
    assert not [m for m in logged if "unknown type" in m]
