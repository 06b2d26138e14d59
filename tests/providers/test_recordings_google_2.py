"""Shapes from public recordings of Gemini's `streamGenerateContent?alt=sse` that are not
among the captures (pydantic-ai's VCR cassettes), each body built by hand from the
recording's essential lines (ids shortened, long values cut), checked whatever the
chunking."""

from __future__ import annotations

from rxllm.events import Done, ServerToolCall, ServerToolResult
from tests.providers.test_google import chunk, gid, run
from tests.support import kinds, summarize

CODE = "print(65465 - 6544 * 65464 - 6 + 1.02255)\n"
OUTPUT = {"outcome": "OUTCOME_OK", "output": "-428330955.97745\n"}


def test_code_run_while_thinking_is_a_server_tool_step() -> None:
    """pydantic-ai `test_google_model_builtin_code_execution_stream.yaml` (gemini-2.5-pro,
    `codeExecution`): the model first runs code while it thinks (`executableCode` and
    `codeExecutionResult` parts with `"thought": true`), then explains, then runs it
    again as a step of the answer (STOP on that chunk), then answers. Both runs are
    provider-executed tools: pydantic-ai's own test expects two code_execution calls
    and two results; a thought flag makes neither reasoning text nor nothing."""
    usage = {
        "promptTokenCount": 46,
        "candidatesTokenCount": 235,
        "totalTokenCount": 2112,
        "toolUsePromptTokenCount": 1268,
        "thoughtsTokenCount": 563,
    }
    events = run(
        chunk(
            {
                "executableCode": {"language": "PYTHON", "code": "    " + CODE + "    "},
                "thought": True,
            }
        ),
        chunk({"codeExecutionResult": OUTPUT, "thought": True}),
        chunk({"text": "Here is the calculation performed using Python:\n"}),
        chunk({"executableCode": {"language": "PYTHON", "code": CODE}}, finish="STOP"),
        chunk({"codeExecutionResult": OUTPUT}),
        chunk({"text": "The result is **-428,330,955.97745**."}, finish="STOP", usage=usage),
    )
    calls = [(e.call_id, e.arguments["code"]) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [
        (gid("code_execution", 0), "    " + CODE + "    "),
        (gid("code_execution", 1), CODE),
    ]
    results = [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [(gid("code_execution", 0), OUTPUT), (gid("code_execution", 1), OUTPUT)]
    assert kinds(events) == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "server_tool_call",
        "server_tool_result",
        "text",
        "usage",
        "done",
    ]
    got = summarize(events)
    assert got.reasoning == ""
    assert got.text == (
        "Here is the calculation performed using Python:\nThe result is **-428,330,955.97745**."
    )
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.output_tokens, got.usage.total_tokens) == (
        46 + 1268,
        235 + 563,
        2112,
    )
    done = events[-1]
    assert isinstance(done, Done) and (done.stop_reason, done.raw_stop_reason) == ("stop", "STOP")


def test_thought_text_is_still_reasoning_and_a_thought_image_is_not_text() -> None:
    """The other thought parts keep their reading: thought text (with its signature) is
    reasoning; a thought image (Gemini's interim images, which pydantic-ai skips) has
    no event and never turns into text or a tool step."""
    image = {"inlineData": {"mimeType": "image/png", "data": "AA=="}, "thought": True}
    events = run(
        chunk({"text": "**Planning**", "thought": True, "thoughtSignature": "sig-1"}),
        chunk(image),
        chunk({"text": "Done."}, finish="STOP"),
    )
    got = summarize(events)
    assert (got.reasoning, got.signatures, got.text) == ("**Planning**", ["sig-1"], "Done.")
    assert kinds(events) == ["reasoning", "text", "done"]
