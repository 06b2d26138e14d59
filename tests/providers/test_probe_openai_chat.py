"""Chat-wire shapes a probe found mishandled: each written by hand from the provider's
documentation or from what servers and clients in the field send (named beside it),
replayed through the preset whole and cut at arbitrary byte boundaries, and once over
a loopback server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, Failed
from tests.support import Serve, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bytes = b"data: [DONE]\n\n") -> bytes:
    return "".join(f"data: {json.dumps(p)}\n\n" for p in payloads).encode() + done


def _chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"} | {
        "choices": [choice],
        **extra,
    }


# -------------------------------------------------- a padded `[DONE]` ends the turn


@pytest.mark.parametrize(
    "done",
    [
        # A FastAPI server's `yield "data: [DONE] \n\n"`, and the Go and Kotlin clients'
        # tests of "done_with_trailing_space" / "done_with_space": openai-python reads
        # any data that starts with `[DONE]` as the end (`sse.data.startswith("[DONE]")`).
        b"data: [DONE] \n\n",
        b"data:  [DONE]\n\n",
        b"data: [DONE]\t\r\n\r\n",
    ],
    ids=["trailing space", "two spaces", "trailing tab"],
)
def test_a_padded_done_ends_the_turn(done: bytes) -> None:
    # Before: `a data line is not JSON: '[DONE] '`, a protocol error after a whole turn.
    events = replay_every_way(
        _sse(_chunk({"content": "Hi"}), _chunk({}, "stop"), done=done), "vllm"
    )
    assert kinds(events) == ["text", "done"]
    # Without a finish reason (Snowflake sends none), the padded `[DONE]` is the end too.
    events = replay_every_way(_sse(_chunk({"content": "Hi"}), done=done), "snowflake")
    assert kinds(events) == ["text", "done"]


# ---------------------------------------------- an error chunk that is the error, flat


@pytest.mark.parametrize(
    ("provider", "error", "status", "code"),
    [
        # vLLM's ErrorResponse and Mistral's error bodies: `{"object": "error", "message",
        # "type", "param", "code"}`; clients of both (llama-index's OCI Data Science
        # client, ports of ChatMistralAI) read one sent in place of the next chunk as the
        # stream's failure.
        (
            "vllm",
            {
                "object": "error",
                "message": "Internal worker died",
                "type": "InternalServerError",
                "param": None,
                "code": 503,
            },
            503,
            "InternalServerError",
        ),
        ("mistral", {"object": "error", "message": "Internal worker died"}, None, None),
        # A gateway's `{"type": "error", "message"}`, as the same clients list it.
        ("custom", {"type": "error", "message": "Internal worker died"}, None, None),
    ],
)
def test_a_flat_error_object_fails_the_turn(
    provider: str, error: dict[str, Any], status: int | None, code: str | None
) -> None:
    # Before: the chunk had no choices and no `error` key, its fields were logged as
    # unread, and `[DONE]` made the turn a success.
    data = _sse(_chunk({"role": "assistant", "content": ""}), _chunk({"content": "par"}), error)
    events = replay_every_way(data, provider)
    assert kinds(events) == ["text", "error"]
    end = events[-1]
    assert isinstance(end, Failed)
    assert (end.error.kind, end.error.message) == ("stream_error", "Internal worker died")
    assert (end.error.status, end.error.code) == (status, code)
    assert end.error.raw is not None and json.loads(end.error.raw) == error


def test_a_flat_error_before_any_output_fails_the_turn() -> None:
    error = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    end = replay_every_way(_sse(error), "vllm")[-1]
    assert isinstance(end, Failed)
    assert (end.error.kind, end.error.status) == ("stream_error", 400)
    assert end.error.message == error["message"]


async def test_a_flat_error_over_http_ends_the_record_in_an_error(serve: Serve) -> None:
    from aiohttp import web

    body = _sse(
        _chunk({"content": "par"}),
        {"object": "error", "message": "Internal worker died", "code": 503},
    )

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body)
        return response

    base_url = await serve(handler)
    async with rxllm.provider("vllm", base_url=base_url, max_attempts=1) as p:
        rec = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    assert rec.text == "par"
    assert isinstance(rec.terminal, Failed)
    assert (rec.terminal.error.kind, rec.terminal.error.status) == ("stream_error", 503)


# ------------------------------------------- a whole `message` where deltas are usual


def _message_chunk(message: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [choice]}


def test_a_message_without_a_delta_is_the_answer() -> None:
    """Amm1rr/WebAI-to-API#55: with `stream: true` the server streamed `message`
    instead of `delta`. Before, its text was dropped without a trace and the turn was
    an empty success."""
    usage = {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
    data = _sse(
        _message_chunk({"role": "assistant", "content": "Whole answer", "refusal": None}, "stop")
        | {"usage": usage}
    )
    events = replay_every_way(data, "custom")
    assert kinds(events) == ["text", "usage", "done"]
    summary = summarize(events)
    assert (summary.text, summary.stop_reason) == ("Whole answer", "stop")


def test_a_message_without_a_delta_carries_its_calls_and_reasoning() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Look it up.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "g", "arguments": '{"q": "x"}'},
            },
        ],
    }
    events = replay_every_way(_sse(_message_chunk(message, "tool_calls")), "deepseek")
    summary = summarize(events)
    assert summary.reasoning == "Look it up."
    assert summary.tool_calls == [("call_1", "f", {}), ("call_2", "g", {"q": "x"})]
    assert summary.stop_reason == "tool_use"


def test_a_message_beside_a_delta_is_not_read_again() -> None:
    # Beside deltas, a message repeats their text: it comes out once.
    data = _sse(
        {
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hel"}, "message": {"content": "Hel"}}],
        },
        {
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": "lo"},
                    "message": {"content": "Hello"},
                    "finish_reason": "stop",
                }
            ],
        },
    )
    assert summarize(replay_every_way(data, "custom")).text == "Hello"


# ----------------------------------- Azure's asynchronous filter: a verdict after the end

_SAFE = {"hate": {"filtered": False, "severity": "safe"}}
_PROMPT_FILTER = {
    "id": "",
    "object": "",
    "created": 0,
    "model": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _SAFE}],
    "choices": [],
    "usage": None,
}


def _annotation(finish: str | None, results: dict[str, Any]) -> dict[str, Any]:
    """learn.microsoft.com, Azure OpenAI "Content streaming", Asynchronous Filter: an
    annotation chunk, with no delta, `id` and `model` empty."""
    choice = {
        "index": 0,
        "finish_reason": finish,
        "content_filter_results": results,
        "content_filter_offsets": {"check_offset": 65, "start_offset": 65, "end_offset": 1056},
    }
    return {"id": "", "object": "", "created": 0, "model": "", "choices": [choice], "usage": None}


def _azure(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return _chunk(delta, finish, usage=None) | {"model": "gpt-35-turbo"}


_BLOCKED = {"protected_material_text": {"detected": True, "filtered": True}}


def test_azure_async_filter_verdict_after_the_finish_is_content_filter() -> None:
    """The docs' samples: annotation chunks go on after the model's `finish_reason:
    "stop"` (the passing stream), and a blocking verdict is `content_filter` in one of
    them (the blocked stream). Before, the held `stop` stayed and the verdict was
    ignored as a duplicate finish: the user never learned the text was filtered."""
    data = _sse(
        _PROMPT_FILTER,
        _azure({"role": "assistant"}),
        _azure({"content": "Hey Jude"}),
        _azure({}, "stop"),
        _annotation(None, _SAFE),
        _annotation("content_filter", _BLOCKED),
    )
    done = replay_every_way(data, "azure-openai")[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "content_filter")


def test_azure_async_filter_samples_of_the_docs() -> None:
    blocked = _sse(
        _PROMPT_FILTER,
        _azure({"role": "assistant"}),
        _azure({"content": "Hey"}),
        _annotation(None, _SAFE),
        _annotation("content_filter", _BLOCKED),
    )
    done = replay_every_way(blocked, "azure-openai")[-1]
    assert isinstance(done, Done) and done.stop_reason == "content_filter"
    passes = _sse(
        _PROMPT_FILTER,
        _azure({"role": "assistant"}),
        _azure({"content": "Color"}),
        _annotation(None, _SAFE),
        _azure({}, "stop"),
        _annotation(None, _SAFE),
    )
    events = replay_every_way(passes, "azure-openai")
    assert kinds(events) == ["text", "done"]
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "stop"


# --------------------------------------------------- OpenAI's custom tools, streamed


def _custom(index: int, call_id: str | None, name: str | None, text: str) -> dict[str, Any]:
    """openai/openai-python#2530 (and openai/openai-openapi#576, its minimal shape): a
    custom tool's call streams as `{index, id, type: "custom", custom: {name, input}}`,
    its input free text, not JSON."""
    custom = {"input": text} | ({"name": name} if name else {})
    call = {"index": index, "type": "custom", "custom": custom}
    return {"tool_calls": [call | ({"id": call_id} if call_id else {})]}


def test_a_custom_tool_call_is_a_tool_request_with_its_input() -> None:
    """Before: no `function`, so no name: the call was dispatched nameless with `{}`,
    its input dropped. Now its arguments are `{"input": text}`, as the Responses wire
    dispatches a `custom_tool_call`."""
    text = 'print("héllo")\n\t# \\ 😀'
    data = _sse(
        _chunk({"role": "assistant", "content": None}),
        _chunk(_custom(0, "call_1", "code_exec", "")),
        _chunk(_custom(0, None, None, text[:9])),
        _chunk(_custom(0, None, None, text[9:])),
        _chunk(_custom(1, "call_2", "shell", "ls -la")),
        _chunk({}, "tool_calls"),
    )
    summary = summarize(replay_every_way(data, "openai"))
    assert summary.tool_calls == [
        ("call_1", "code_exec", {"input": text}),
        ("call_2", "shell", {"input": "ls -la"}),
    ]
    assert summary.stop_reason == "tool_use"


def test_a_custom_tool_call_without_a_finish_reason_still_closes() -> None:
    data = _sse(_chunk(_custom(0, "call_1", "grammar_tool", "SELECT 1")))
    assert summarize(replay_every_way(data, "snowflake")).tool_calls == [
        ("call_1", "grammar_tool", {"input": "SELECT 1"})
    ]


def test_an_empty_custom_object_beside_a_function_is_not_a_custom_call() -> None:
    # earendil-works/pi#8504: gateways echo `custom: {}` on ordinary function deltas.
    function = {"name": "f", "arguments": '{"a": 1}'}
    call = {"index": 0, "id": "call_1", "type": "function", "function": function, "custom": {}}
    data = _sse(_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls"))
    assert summarize(replay_every_way(data, "openai")).tool_calls == [("call_1", "f", {"a": 1})]


async def test_a_custom_tool_call_goes_back_as_a_custom_call(serve: Serve) -> None:
    """A loop over a loopback server: the turn's custom call is dispatched, and the next
    request's history carries it back as the custom call it was (`type: "custom"`,
    its `input` the text), not as a function call with JSON arguments."""
    from aiohttp import web

    bodies: list[dict[str, Any]] = []
    answer = _sse(_chunk(_custom(0, "call_1", "code_exec", "print(1)")), _chunk({}, "tool_calls"))

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(answer)
        return response

    tools = [{"type": "custom", "custom": {"name": "code_exec", "description": "Runs code"}}]
    history = [rxllm.Message.user("run it")]
    base_url = await serve(handler)
    async with rxllm.provider("openai", base_url=base_url, api_key="k", max_attempts=1) as p:
        rec = await p.complete(
            rxllm.ChatRequest(model="m", messages=history, params={"tools": tools})
        )
        assert [(c.name, c.arguments) for c in rec.tool_calls] == [
            ("code_exec", {"input": "print(1)"})
        ]
        history += [
            rxllm.Message.assistant(tool_calls=[call.to_call() for call in rec.tool_calls]),
            rxllm.Message.tool("call_1", "1"),
        ]
        await p.complete(rxllm.ChatRequest(model="m", messages=history, params={"tools": tools}))
    assert bodies[1]["messages"][1]["tool_calls"] == [
        {"id": "call_1", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}
    ]
    assert bodies[1]["tools"] == tools


def test_a_null_choice_index_is_choice_zero() -> None:
    """A server whose choice index is a nullable integer writes `"index": null` on every
    choice (a Java server's stream: `{"id": null, "choices": [{"index": null, "message":
    null, "delta": {...}}]}`). Before, each was "choice None ignored" and the turn an
    empty success."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": None, "message": None, "delta": delta, "finish_reason": finish}
        return {"id": None, "object": None, "model": "m", "choices": [choice], "usage": None}

    data = _sse(
        chunk({"role": "assistant", "content": "智能", "refusal": None, "function_call": None}),
        chunk({"content": "助手"}),
        chunk({}, "stop"),
    )
    summary = summarize(replay_every_way(data, "custom"))
    assert (summary.text, summary.stop_reason) == ("智能助手", "stop")
