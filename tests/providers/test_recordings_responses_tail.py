"""Streamed pydantic/pydantic-ai OpenAI Responses cassettes from the part of
`tests/models/cassettes/test_openai_responses/` past the first hundred files, replayed
whole, cut at arbitrary byte boundaries and over a loopback server. Bodies are built by
hand from the cassettes' essential events (ids shortened, long values cut); each test
names its source."""

from __future__ import annotations

from typing import Any

from rxllm.events import ReasoningDelta, ServerToolCall, ServerToolResult
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, summarize

CONTAINER = "cntr_68c3509a"


def interpreter(cid: str, code: str, status: str) -> dict[str, Any]:
    """A `code_interpreter_call` as the cassette has it: no `include`, so `outputs: null`."""
    item = {"id": cid, "type": "code_interpreter_call", "status": status, "code": code}
    return {**item, "container_id": CONTAINER, "outputs": None}


def interpreted(index: int, cid: str, code: str) -> list[dict[str, Any]]:
    """One call as it streams: added with no code, its code in two deltas and whole at its
    `.done`, the progress events, then its done item."""
    return [
        added(index, interpreter(cid, "", "in_progress")),
        on("response.code_interpreter_call.in_progress", index, cid),
        on("response.code_interpreter_call_code.delta", index, cid, delta=code[:1]),
        on("response.code_interpreter_call_code.delta", index, cid, delta=code[1:]),
        on("response.code_interpreter_call_code.done", index, cid, code=code),
        on("response.code_interpreter_call.interpreting", index, cid),
        on("response.code_interpreter_call.completed", index, cid),
        done(index, interpreter(cid, code, "completed")),
    ]


async def test_three_code_interpreter_calls_in_a_row_each_shown_with_its_own_code(
    serve_body: ServeBody,
) -> None:
    """pydantic/pydantic-ai tests/models/cassettes/test_openai_responses/
    test_openai_responses_thinking_with_code_execution_tool_stream.yaml (gpt-5, reasoning
    summary `detailed`, `code_interpreter` in an auto container): a streamed summary
    part, then three `code_interpreter_call` items back to back (output_index 1-3), each
    added with empty code and `outputs: null`, then the answer. Each call is shown once
    with its own code and container (pydantic-ai's test: three `code_execution` calls,
    each with `{container_id, code}`), each answered by its done item; the reasoning
    ends with the done item's encrypted content; the cached input is apart."""
    summary = "**Calculating a large integer**\n\nI need to compute 123456 raised to 123."
    reasoning = {"id": "rs_6834", "type": "reasoning", "summary": []}
    reasoned = {**reasoning, "summary": [{"type": "summary_text", "text": summary}]}
    codes = ["n = pow(123456, 123)\nlen(str(n))", "str(n)[:100], str(n)[-100:]", "n"]
    calls = [interpreter(f"ci_{k}", code, "completed") for k, code in enumerate(codes)]
    answer = "123456^123 equals:\n180302106304044807508140927865938572807342688638559680"
    text = {"type": "output_text", "annotations": [], "logprobs": [], "text": answer}
    message = {"id": "msg_6834", "type": "message", "status": "completed", "role": "assistant"}
    response = {"id": "resp_6834", "object": "response", "model": "gpt-5-2025-08-07"}
    usage = {
        "input_tokens": 3727,
        "input_tokens_details": {"cached_tokens": 3200},
        "output_tokens": 347,
        "output_tokens_details": {"reasoning_tokens": 128},
        "total_tokens": 4074,
    }
    part = {"summary_index": 0, "part": {"type": "summary_text", "text": ""}}
    whole = {"summary_index": 0, "part": {"type": "summary_text", "text": summary}}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.in_progress", "response": {**response, "status": "in_progress"}},
        added(0, {**reasoning, "encrypted_content": "gAAAAABow1Cb"}),
        on("response.reasoning_summary_part.added", 0, "rs_6834", **part),
        on("response.reasoning_summary_text.delta", 0, "rs_6834", summary_index=0, delta=summary),
        on("response.reasoning_summary_text.done", 0, "rs_6834", summary_index=0, text=summary),
        on("response.reasoning_summary_part.done", 0, "rs_6834", **whole),
        done(0, {**reasoned, "encrypted_content": "gAAAAABow1Cf"}),
        *(step for k, code in enumerate(codes) for step in interpreted(k + 1, f"ci_{k}", code)),
        added(4, {**message, "status": "in_progress", "content": []}),
        on("response.output_text.delta", 4, "msg_6834", content_index=0, delta=answer[:18]),
        on("response.output_text.delta", 4, "msg_6834", content_index=0, delta=answer[18:]),
        on("response.output_text.done", 4, "msg_6834", content_index=0, text=answer),
        done(4, {**message, "content": [text]}),
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "output": [{**reasoned, "encrypted_content": "gAAAAABow1Cp"}, *calls],
                "usage": usage,
            },
        },
    )
    tools = [
        (e.type, e.call_id, e.arguments if isinstance(e, ServerToolCall) else e.content)
        for e in events
        if isinstance(e, ServerToolCall | ServerToolResult)
    ]
    assert tools == [
        step
        for cid, code, call in zip(("ci_0", "ci_1", "ci_2"), codes, calls, strict=True)
        for step in (
            ("server_tool_call", cid, {"container_id": CONTAINER, "code": code}),
            ("server_tool_result", cid, {k: v for k, v in call.items() if k not in ("id", "type")}),
        )
    ]
    signed = [e for e in events if isinstance(e, ReasoningDelta) and e.signature]
    assert [e.signature for e in signed] == ["gAAAAABow1Cf"]
    got = summarize(events)
    assert (got.reasoning, got.text, got.tool_calls) == (summary, answer, [])
    assert got.usage is not None
    assert (got.usage.input_tokens, got.usage.cache_read_tokens) == (527, 3200)
    assert (got.usage.output_tokens, got.usage.reasoning_tokens) == (347, 128)
    assert (got.terminal, got.stop_reason) == ("done", "stop")
