"""The OpenAI Chat Completions core: request bodies, and every OpenAI chat capture.

Each capture is replayed whole, cut at random byte boundaries (down to one byte, so
cuts land inside multi-byte UTF-8 characters) and with its line ends turned into
CRLF (so cuts land inside `\\r\\n`): the events must be the same every time. The
expected values were read from the captures themselves, not from the code's output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from loguru import logger

import rxllm
from rxllm.events import (
    Citation,
    Done,
    ServerToolCall,
    ServerToolResult,
    ToolRequest,
    UsageUpdate,
)
from rxllm.providers import wire_for
from rxllm.providers.call_ids import response_tag
from rxllm.providers.openai_chat import OPENAI_TOOL_NAMES, ChatOptions, OpenAIChat, openai_usage
from rxllm.request import ChatRequest, ImagePart, Message, TextPart, Tool, ToolCall
from tests.support import (
    Expect,
    capture,
    captures_of,
    check,
    kinds,
    needs_captures,
    replay,
    replay_every_way,
    summarize,
)

# ---------------------------------------------------------------------------- captures

GPT4O = "gpt-4o-2024-08-06"

OPENAI: dict[str, Expect] = {
    # max_tokens=1: one token of a JSON answer, then finish_reason=length.
    "chat_finish_length.sse": Expect(
        text='{"',
        usage=(79, 1, 0, 0, 80),
        stop_reason="length",
        raw_stop_reason="length",
        model=GPT4O,
    ),
    # logprobs on every choice are not events; the first chunk's content is "".
    "chat_logprobs.sse": Expect(text="Foo!", usage=(9, 2, 0, 0, 11), model=GPT4O),
    # n=3: only choice 0 is the stream's text (choices 1 and 2 say 61 and 59 degrees);
    # the usage is the request's, so it counts the completion tokens of all three.
    "chat_n3_multiple_choices.sse": Expect(
        text='{"city":"San Francisco","temperature":65,"units":"f"}',
        usage=(79, 42, 0, 0, 121),
        model=GPT4O,
    ),
    "chat_parallel_tool_calls.sse": Expect(
        text="",
        tools=(
            (
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                {"city": "Edinburgh", "country": "GB", "units": "c"},
            ),
            (
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                {"ticker": "AAPL", "exchange": "NASDAQ"},
            ),
        ),
        usage=(149, 60, 0, 0, 209),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model=GPT4O,
    ),
    "chat_parallel_tool_calls_no_args.sse": Expect(
        text="",
        tools=(
            ("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", {}),
            ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", {}),
        ),
        usage=(364, 40, 0, 0, 404),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model=GPT4O,
    ),
    # The refusal arrives in delta.refusal, not delta.content: a refusal, not text.
    "chat_refusal.sse": Expect(
        text="",
        refusal="I'm sorry, I can't assist with that request.",
        usage=(79, 11, 0, 0, 90),
        model=GPT4O,
    ),
    "chat_single_tool_call.sse": Expect(
        text="",
        tools=(
            (
                "call_c91SqDXlYFuETYv8mUHzz6pp",
                "GetWeatherArgs",
                {"city": "Edinburgh", "country": "UK", "units": "c"},
            ),
        ),
        usage=(76, 24, 0, 0, 100),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model=GPT4O,
    ),
    "chat_text_obfuscation_usage_null.sse": Expect(
        text_has=(
            "**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually on the first "
            "Saturday of May",
            "we are all connected through shared human experiences and mutual respect.",
        ),
        text_len=1724,
        usage=(16, 300, 0, 0, 316),
        model="gpt-4.1-nano-2025-04-14",
    ),
    "chat_text_usage.sse": Expect(
        text="I'm unable to provide real-time weather updates. To get the current weather in "
        "San Francisco, I recommend checking a reliable weather website or a weather app.",
        usage=(14, 30, 0, 0, 44),
        model=GPT4O,
    ),
}


@needs_captures
def test_every_openai_chat_capture_is_checked() -> None:
    assert {path.name for path in captures_of("openai")} == set(OPENAI)


@pytest.mark.parametrize("name", sorted(OPENAI))
def test_openai_capture(name: str) -> None:
    events = replay_every_way(capture(f"openai/{name}"), "openai")
    check(summarize(events), OPENAI[name])
    assert {event.provider for event in events} == {"openai"}


def test_tool_requests_carry_the_usage_that_follows_the_finish() -> None:
    # finish_reason=tool_calls comes before the usage chunk: the finish is held, so the
    # calls are dispatched at the finish and the turn ends only after its usage.
    events = replay(capture("openai/chat_parallel_tool_calls.sse"), "openai")
    assert kinds(events) == [
        "tool_start",
        "tool_start",
        "tool_request",
        "tool_request",
        "usage",
        "done",
    ]


def test_text_stream_order() -> None:
    events = replay(capture("openai/chat_text_usage.sse"), "openai")
    assert kinds(events) == ["text", "usage", "done"]


# ------------------------------------------------------------------- request building


def _request(**overrides: Any) -> ChatRequest:
    values: dict[str, Any] = {
        "model": "gpt-4.1-mini",
        "messages": [
            Message.system("Be brief."),
            Message.user(
                "What is in these pictures?",
                images=["https://example.com/cat.png", "data:image/png;base64,iVBORw0KGgo="],
            ),
            Message.assistant(
                "Let me look.",
                tool_calls=[ToolCall(id="call_1", name="zoom", arguments={"factor": 2})],
            ),
            Message.tool("call_1", '{"ok": true}'),
            Message.assistant("A cat."),
            Message.user("Thanks"),
        ],
        "tools": [
            Tool(
                name="zoom",
                description="Zoom in",
                parameters={"type": "object", "properties": {"factor": {"type": "number"}}},
            )
        ],
        "params": {"temperature": 0.2, "max_tokens": 100},
    }
    values.update(overrides)
    return ChatRequest(**values)


def test_body_messages_tools_params_and_stream_usage() -> None:
    body = OpenAIChat().build_body(_request())
    assert body == {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in these pictures?"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "zoom", "arguments": '{"factor": 2}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
            {"role": "assistant", "content": "A cat."},
            {"role": "user", "content": "Thanks"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "zoom",
                    "description": "Zoom in",
                    "parameters": {
                        "type": "object",
                        "properties": {"factor": {"type": "number"}},
                    },
                },
            }
        ],
        "temperature": 0.2,
        "max_tokens": 100,
    }
    json.dumps(body)  # the body is plain JSON


def test_body_text_only_user_message_is_a_string_and_no_tools_key() -> None:
    body = OpenAIChat().build_body(ChatRequest(model="m", messages=[Message.user("hi")], params={}))
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_body_image_before_text_keeps_part_order() -> None:
    message = Message(
        role="user",
        content=[ImagePart(url="https://example.com/a.png"), TextPart(text="this one")],
    )
    body = OpenAIChat().build_body(ChatRequest(model="m", messages=[message]))
    assert body["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "this one"},
    ]


def test_body_assistant_with_only_tool_calls_has_null_content() -> None:
    message = Message.assistant(tool_calls=[ToolCall(id="c", name="f")])
    body = OpenAIChat().build_body(ChatRequest(model="m", messages=[message]))
    assert body["messages"][0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }


def test_body_leaves_out_an_empty_assistant_turn() -> None:
    # openai-python chat_completion_assistant_message_param.py: content "Required unless
    # `tool_calls` or `function_call` is specified"; `null` alone is rejected.
    messages = [Message.user("hi"), Message.assistant(""), Message.user("still there?")]
    body = OpenAIChat().build_body(ChatRequest(model="m", messages=messages))
    assert body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "still there?"},
    ]


def test_body_an_image_with_empty_text_sends_no_empty_text_part() -> None:
    # chat_completion_content_part_text_param.py: a text part carries text; empty ones
    # are rejected by Anthropic-routed endpoints ("text content blocks must be non-empty").
    message = Message.user("", images=["https://example.com/a.png"])
    body = OpenAIChat().build_body(ChatRequest(model="m", messages=[message]))
    assert body["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    ]


def test_params_override_the_defaults() -> None:
    body = OpenAIChat().build_body(
        _request(params={"stream_options": {"include_usage": False}, "n": 1})
    )
    assert body["stream_options"] == {"include_usage": False}
    assert body["n"] == 1


def test_stream_usage_off_sends_no_stream_options() -> None:
    wire = OpenAIChat(options=ChatOptions(stream_usage=False))
    assert "stream_options" not in wire.build_body(_request())


def test_url_and_headers() -> None:
    wire = OpenAIChat()
    request = _request()
    assert wire.url("https://api.openai.com/v1/", request) == (
        "https://api.openai.com/v1/chat/completions"
    )
    assert wire.url("https://x.example/openai/deployments/d?api-version=2024-10-21", request) == (
        "https://x.example/openai/deployments/d/chat/completions?api-version=2024-10-21"
    )
    assert wire.headers("sk-1") == {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Authorization": "Bearer sk-1",
    }
    assert "Authorization" not in wire.headers(None)
    keyed = OpenAIChat(options=ChatOptions(api_key_header="api-key", extra_headers={"X-A": "1"}))
    assert keyed.headers("k") == {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "api-key": "k",
        "X-A": "1",
    }


def test_openai_is_the_registered_core() -> None:
    wire = wire_for("openai")
    assert isinstance(wire, OpenAIChat)
    assert wire.options == ChatOptions(
        sampling_renames={"max_tokens": "max_completion_tokens"},
        tool_names=OPENAI_TOOL_NAMES,
        max_tool_call_id=40,
    )
    provider = rxllm.provider("openai", api_key="sk-test")
    assert provider.base_url == "https://api.openai.com/v1"
    assert "sk-test" not in repr(provider)


# ----------------------------------------------------------------------------- usage


def test_usage_counts_cached_input_apart_and_reasoning_once() -> None:
    usage = openai_usage(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 300,
            "total_tokens": 1300,
            "prompt_tokens_details": {"cached_tokens": 800},
            "completion_tokens_details": {"reasoning_tokens": 200},
        }
    )
    assert (usage.input_tokens, usage.cache_read_tokens) == (200, 800)
    assert (usage.output_tokens, usage.reasoning_tokens) == (300, 200)
    assert usage.total_tokens == 1300
    assert usage.cost_usd is None


def test_usage_when_completion_excludes_reasoning() -> None:
    usage = openai_usage(
        {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "completion_tokens_details": {"reasoning_tokens": 20},
        },
        reasoning_in_completion=False,
    )
    assert (usage.output_tokens, usage.reasoning_tokens, usage.total_tokens) == (25, 20, 35)


def test_usage_of_an_empty_object() -> None:
    usage = openai_usage({"prompt_tokens": None, "completion_tokens": None})
    assert usage.total_tokens == 0


# ------------------------------------------------------------------ synthetic streams


def _sse(*payloads: Any, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(p) if not isinstance(p, str) else p}\n\n" for p in payloads]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "model": "m-1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def test_unknown_finish_reason_is_other_with_the_raw_value_kept() -> None:
    events = replay(_sse(_chunk({"content": "hi"}), _chunk({}, "brand_new_reason")), "openai")
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason, done.model) == (
        "other",
        "brand_new_reason",
        "m-1",
    )


def test_finish_without_usage_or_done_ends_at_the_end_of_the_body() -> None:
    events = replay(_sse(_chunk({"content": "hi"}), _chunk({}, "stop"), done=False), "openai")
    assert kinds(events) == ["text", "done"]


def test_body_that_ends_without_finish_or_done_is_truncated() -> None:
    events = replay(_sse(_chunk({"content": "hi"}), done=False), "openai")
    summary = summarize(events)
    assert (summary.terminal, summary.error_kind, summary.text) == ("error", "truncated", "hi")


def test_later_usage_wins_and_late_chunks_after_the_terminal_are_ignored() -> None:
    data = _sse(
        _chunk({"content": "a"}, "stop"),
        {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        _chunk({"content": "late"}),
    )
    events = replay(data, "openai")
    assert kinds(events) == ["text", "usage", "done"]
    usage = [e for e in events if isinstance(e, UsageUpdate)]
    assert usage[-1].usage.total_tokens == 2


def test_a_reused_index_with_a_new_id_and_name_is_a_new_call() -> None:
    # Ollama has sent each of several parallel calls as index 0.
    data = _sse(
        _chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}
        ),
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "b", "function": {"name": "g", "arguments": '{"x":1}'}}
                ]
            }
        ),
        _chunk({}, "tool_calls"),
    )
    requests = [e for e in replay(data, "openai") if isinstance(e, ToolRequest)]
    calls = [(r.call_id, r.name, r.arguments) for r in requests]
    assert calls == [("a", "f", {}), ("b", "g", {"x": 1})]


def test_a_new_id_without_a_name_continues_the_call() -> None:
    # Some servers send a fresh id on every fragment of one call.
    data = _sse(
        _chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f"}}]}),
        _chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"arguments": '{"x"'}}]}),
        _chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": ": 2}"}}]}),
        _chunk({}, "tool_calls"),
    )
    requests = [e for e in replay(data, "openai") if isinstance(e, ToolRequest)]
    assert [(r.call_id, r.name, r.arguments) for r in requests] == [("a", "f", {"x": 2})]


def test_not_json_is_a_protocol_error() -> None:
    events = replay(b'data: {"choices": [\n\n', "openai")
    assert summarize(events).error_kind == "protocol"


def test_an_error_event_after_200_keeps_its_structured_fields() -> None:
    """TGI's validation string and llama.cpp's error object, read by the same parser
    as HTTP error bodies (shapes as in ../shared/rejections)."""
    tgi = b'data:{"error":"Input validation error: `top_p` must be > 0.0 and < 1.0",'
    tgi += b'"error_type":"validation"}\n\n'
    error = replay(tgi, "openai")[-1].error
    # as its HTTP body reads: the envelope's `error_type` is the code
    assert (error.kind, error.code, error.param) == ("stream_error", "validation", None)
    assert error.message == "Input validation error: `top_p` must be > 0.0 and < 1.0"
    llama = json.dumps(
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size",
                "type": "exceed_context_size_error",
                "n_ctx": 8192,
            }
        }
    )
    error = replay(f"data: {llama}\n\n".encode(), "llamacpp")[-1].error
    assert (error.kind, error.status, error.code) == (
        "stream_error",
        400,
        "exceed_context_size_error",
    )
    assert error.message == "the request exceeds the available context size"
    limited = b'data: {"error": {"message": "Please try again in 1.5s", "param": "n",'
    limited += b' "code": "rate_limit_exceeded", "status_code": 429}}\n\n'
    error = replay(limited, "groq")[-1].error
    assert (error.param, error.code, error.retry_after, error.retryable) == (
        "n",
        "rate_limit_exceeded",
        1.5,
        True,
    )


def test_a_call_whose_arguments_stayed_empty_at_the_finish_has_no_parameters() -> None:
    """Made by hand from the Chat Completions reference: a tool without parameters
    streams its id and name, an empty argument string, then the finish."""
    call = {"index": 0, "id": "call_now", "type": "function"}
    body = (
        b"".join(
            b"data: " + json.dumps(chunk).encode() + b"\n\n"
            for chunk in (
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "tool_calls": [
                                    {**call, "function": {"name": "now", "arguments": ""}}
                                ]
                            },
                        }
                    ]
                },
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            )
        )
        + b"data: [DONE]\n\n"
    )
    events: list[Any] = []
    rxllm.replay(body, provider="openai").subscribe(events.append)
    requests = [e for e in events if e.type == "tool_request"]
    assert [(r.call_id, r.name, r.arguments) for r in requests] == [("call_now", "now", {})]
    assert events[-1].type == "done" and events[-1].stop_reason == "tool_use"


def test_a_call_whose_name_comes_in_a_later_delta_starts_with_its_name() -> None:
    """Made by hand from vercel/ai#14722 (id and arguments first, the name in a later
    delta) and vmlx#244 (an opener with `name: ""`, the name on the next delta)."""
    later = _sse(
        _chunk({"role": "assistant", "content": ""}),
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_123", "function": {"arguments": '{"command": '}}
                ]
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"name": "bash"}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"ls -la"}'}}]}),
        _chunk({}, "tool_calls"),
    )
    events = replay_every_way(later, "openai")
    assert kinds(events) == ["tool_start", "tool_request", "done"]
    assert summarize(events).tool_calls == [("call_123", "bash", {"command": "ls -la"})]
    opener = {"index": 0, "id": "call_x", "type": "function"}
    empty_name = _sse(
        _chunk({"tool_calls": [{**opener, "function": {"name": "", "arguments": ""}}]}),
        _chunk({"tool_calls": [{**opener, "function": {"name": "bash", "arguments": "{}"}}]}),
        _chunk({}, "tool_calls"),
    )
    assert summarize(replay(empty_name, "openai")).tool_calls == [("call_x", "bash", {})]


def test_arguments_sent_as_an_object_are_that_object() -> None:
    """Made by hand from llama.cpp#20198 and text-generation-inference#2136: servers
    that send `function.arguments` as a JSON object, not its text. Anything else there
    is a protocol error, never an exception."""
    call = {"index": 0, "id": "call_1", "type": "function"}
    data = _sse(
        _chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": {"x": "é"}}}]}),
        _chunk({}, "tool_calls"),
    )
    assert summarize(replay(data, "llamacpp")).tool_calls == [("call_1", "f", {"x": "é"})]
    broken = _sse(
        _chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": [1]}}]}),
        _chunk({}, "tool_calls"),
    )
    assert summarize(replay(broken, "llamacpp")).error_kind == "protocol"


# ------------------------------------------------- citations and provider-run tools
# Made by hand from the docs: OpenRouter's web search annotations
# (openrouter.ai/docs/features/web-search: `annotations` of type `url_citation` with
# `url_citation: {url, title, content, start_index, end_index}`), and Groq's compound
# `executed_tools` (console.groq.com/docs/compound: `{index, type, arguments, output}`).

_CITE_A = {"url": "https://a.example/x", "title": "A", "content": "quoted a", "start_index": 0}
_CITE_B = {"url": "https://b.example/y", "title": "B"}


def _url_citation(cited: dict[str, Any]) -> dict[str, Any]:
    return {"type": "url_citation", "url_citation": cited}


def test_url_citation_annotations_are_citations_each_once() -> None:
    data = _sse(
        _chunk({"content": "Answer [a]."}),
        _chunk({"annotations": [_url_citation(_CITE_A)]}),
        _chunk({"annotations": [_url_citation(_CITE_A), _url_citation(_CITE_B)]}),
        _chunk({"annotations": [{"type": "file_citation", "file_id": "f"}]}, "stop"),
        {
            "model": "m-1",
            "choices": [
                {"index": 0, "message": {"annotations": [_url_citation(_CITE_B)]}, "delta": {}}
            ],
        },
    )
    events = replay_every_way(data, "openrouter")
    cites = [(ev.url, ev.title, ev.cited_text) for ev in events if isinstance(ev, Citation)]
    assert cites == [
        ("https://a.example/x", "A", "quoted a"),
        ("https://b.example/y", "B", None),
    ]
    assert kinds(events) == ["text", "citation", "citation", "done"]


def test_groq_executed_tools_are_server_tool_calls_and_results() -> None:
    search = {"index": 0, "type": "search", "arguments": '{"query": "rxllm"}'}
    found = {**search, "output": "Title: rxllm ...", "search_results": {"results": []}}
    python = {"type": "python", "arguments": "print(1)", "output": "1\n"}
    data = _sse(
        _chunk({"executed_tools": [search]}, id="chatcmpl-g"),
        _chunk({"executed_tools": [found]}, id="chatcmpl-g"),
        _chunk({"content": "Found it."}, id="chatcmpl-g"),
        {
            "id": "chatcmpl-g",
            "model": "m-1",
            "choices": [
                {
                    "index": 0,
                    "delta": {},
                    "message": {"executed_tools": [found]},
                    "finish_reason": None,
                }
            ],
        },
        _chunk({"executed_tools": [python, python]}, "stop", id="chatcmpl-g"),
    )
    events = replay_every_way(data, "groq")
    # Groq names none: each is named like a call without an id, after its response.
    tag = response_tag("chatcmpl-g", "")
    tools = [
        (ev.type, ev.call_id, ev.name, getattr(ev, "arguments", None), getattr(ev, "content", None))
        for ev in events
        if isinstance(ev, ServerToolCall | ServerToolResult)
    ]
    assert tools == [
        ("server_tool_call", f"search_{tag}_0", "search", {"query": "rxllm"}, None),
        ("server_tool_result", f"search_{tag}_0", "search", None,
         {"output": "Title: rxllm ...", "search_results": {"results": []}}),
        # no index: each entry known by its position in the list
        ("server_tool_call", f"python_{tag}_1", "python", {"arguments": "print(1)"}, None),
        ("server_tool_result", f"python_{tag}_1", "python", None, {"output": "1\n"}),
        ("server_tool_call", f"python_{tag}_2", "python", {"arguments": "print(1)"}, None),
        ("server_tool_result", f"python_{tag}_2", "python", None, {"output": "1\n"}),
    ]  # fmt: skip
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "stop"


def test_groq_executed_tools_of_two_turns_have_two_ids() -> None:
    """Two responses' searches are two calls: an app that keeps results by call id (the
    AI SDK's chat) would give the second the first one's result under one id."""
    search = {"index": 0, "type": "search", "arguments": "{}", "output": "found"}

    def ids(response_id: str) -> list[str]:
        data = _sse(_chunk({"executed_tools": [search]}, "stop", id=response_id))
        events = replay_every_way(data, "groq")
        return [ev.call_id for ev in events if isinstance(ev, ServerToolCall)]

    assert ids("chatcmpl-1") != ids("chatcmpl-2")


def test_choices_other_than_zero_are_ignored_with_one_warning() -> None:
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="WARNING")
    logger.enable("rxllm")
    try:
        events = replay(capture("openai/chat_n3_multiple_choices.sse"), "openai")
    finally:
        logger.disable("rxllm")
        logger.remove(sink)
    assert summarize(events).terminal == "done"
    assert len(messages) == 1 and "only choice 0 is read" in messages[0]


def test_openrouter_web_search_capture_has_no_annotations_to_cite() -> None:
    """The capture's bytes carry no `annotations` key (the web plugin's sources are
    inline in its text), so it has no citations and no server tool events."""
    data = capture("openrouter/usage_after_finish_web_search.sse")
    assert b"annotations" not in data and b"url_citation" not in data
    events = replay(data, "openrouter")
    assert not [ev for ev in events if isinstance(ev, Citation | ServerToolCall)]


@pytest.mark.parametrize("raw", ["eos", "eos_token", "end_turn", "stop"])
def test_every_natural_end_is_stop(raw: str) -> None:
    """Made by hand: Together's `eos` and TGI's `eos_token` are natural ends too."""
    chunk = {"choices": [{"index": 0, "delta": {}, "finish_reason": raw}]}
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    events: list[Any] = []
    rxllm.replay(body, provider="openai").subscribe(events.append)
    assert events[-1].type == "done" and events[-1].stop_reason == "stop"
    assert events[-1].raw_stop_reason == raw
