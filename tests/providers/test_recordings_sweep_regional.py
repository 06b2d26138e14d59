"""Streams of providers outside the US whose OpenAI-compatible endpoints carry fields of
their own, read from their documentation, their SDKs and the relays and plugins that
adapt them (QuantumNous/new-api's and songquanpeng/one-api's channel adaptors,
langgenius/dify-official-plugins' model plugins, LobeChat's model runtime): MiniMax,
Zhipu and Z.ai, Volcano Engine Ark, NAVER CLOVA Studio, Moonshot and Alibaba Cloud's
Qwen-Omni, in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks, ids
and long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what a client of that endpoint should get.
"""

from __future__ import annotations

import json
from typing import Any

import rxllm
from rxllm.events import Citation, Failed, ServerToolCall, ServerToolResult
from tests.support import Expect, ServeBody, check, kinds, replay_every_way, summarize


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- MiniMax --------------------------------------------------------------------------------


def _minimax(status_code: int, status_msg: str, **fields: Any) -> dict[str, Any]:
    """A response of MiniMax's `/v1/text/chatcompletion_v2` as its API reference writes
    one: the OpenAI fields, its moderation flags and `base_resp`, the outcome
    (`status_code` 0 where all went well)."""
    return {
        "id": "04ecb5d9b1921ae0fb0e8da9017a5474",
        "created": 1755153113,
        "model": "MiniMax-M1",
        "object": "chat.completion.chunk",
        "input_sensitive": False,
        "output_sensitive": False,
        "input_sensitive_type": 0,
        "output_sensitive_type": 0,
        "output_sensitive_int": 0,
        "base_resp": {"status_code": status_code, "status_msg": status_msg},
        **fields,
    }


def test_minimax_base_resp_with_a_nonzero_status_code_is_the_error() -> None:
    """langgenius/dify-official-plugins models/minimax/models/llm/chat_completion_v2.py
    (`_handle_stream_chat_generate_response`): MiniMax says a failure in `base_resp`,
    `{"status_code": 1008, "status_msg": "insufficient balance"}` (its codes: 1002 rate
    limit, 1004 authentication, 1008 balance, 1027 output judged sensitive, 2013 invalid
    parameters), on a chunk of the 200 stream with no choices; Dify checks every chunk
    for a nonzero code. Whether [DONE] follows or not, the turn failed with those words,
    never an empty answer that stopped (before: done(stop), or truncated)."""
    refusal = _minimax(1008, "insufficient balance", choices=None, usage=None)
    for body in (_sse(refusal), _sse(refusal, done=False)):
        events = replay_every_way(body, "custom")
        check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
        error = events[-1]
        assert isinstance(error, Failed)
        assert error.error.message == "insufficient balance"
        assert error.error.code == "1008"


def test_minimax_text_then_base_resp_1027_for_sensitive_output() -> None:
    """MiniMax's API reference (platform.minimax.io, text-post): "If the output content
    is severely inappropriate, the API will return a content violation error"; the text
    streamed so far stays what it was, and the turn ends in that error
    (`output_sensitive` set, `base_resp` 1027), not in done(stop)."""
    first = _minimax(
        0,
        "",
        choices=[{"index": 0, "delta": {"role": "assistant", "content": "Once upon"}}],
    )
    blocked = _minimax(
        1027, "output new_sensitive", choices=None, output_sensitive=True, output_sensitive_type=1
    )
    events = replay_every_way(_sse(first, blocked), "custom")
    check(summarize(events), Expect(text="Once upon", terminal="error", error_kind="stream_error"))
    error = events[-1]
    assert isinstance(error, Failed)
    assert error.error.message == "output new_sensitive"
    assert error.error.code == "1027"


def test_minimax_status_0_on_every_chunk_is_no_error() -> None:
    """MiniMax's API reference (platform.minimax.io, text-post): every response carries
    `base_resp: {"status_code": 0, "status_msg": ""}` when all went well, beside its
    moderation flags, and the message its `name` ("MiniMax AI"), `audio_content` and
    `reasoning_content`; its stream says so on every chunk. Status 0 is success: the
    reasoning, the text, the usage and the stop, as a guard of the reading above."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _minimax(0, "", choices=[choice], **fields)

    usage = {
        "total_tokens": 249,
        "total_characters": 0,
        "prompt_tokens": 26,
        "completion_tokens": 223,
        "completion_tokens_details": {"reasoning_tokens": 214},
    }
    body = _sse(
        chunk({"role": "assistant", "name": "MiniMax AI", "reasoning_content": "Greet back."}),
        chunk({"name": "MiniMax AI", "audio_content": "", "content": "Hello!"}),
        chunk({"content": ""}, "stop", usage=usage),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="Hello!", reasoning="Greet back.", usage=(26, 223, 214, 0, 249), model="MiniMax-M1"
        ),
    )


async def test_minimax_base_resp_error_as_the_whole_200_body(serve_body: ServeBody) -> None:
    """langgenius/dify-official-plugins models/minimax/models/llm/chat_completion_v2.py
    (`_handle_chat_generate_response`, `_handle_error_by_code`): MiniMax says a failure
    in `base_resp`, `{"status_code": 1004, "status_msg": ...}` (its codes: 1002 rate
    limit, 1004 authentication, 1008 balance, 1027 output judged sensitive, 2013 invalid
    parameters), and can answer the request with its whole response object so, in
    place of the stream. That object is the error, with its words and code, never a
    stream cut short (before: a `protocol` error, "not an SSE stream")."""
    body = json.dumps(_minimax(1004, "login fail: Please carry the API secret key", choices=None))
    base_url = await serve_body(body.encode())
    async with rxllm.provider(
        "custom", base_url=base_url, allow_private_network=True, max_attempts=1
    ) as p:
        record = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    error = record.terminal
    assert isinstance(error, Failed)
    assert error.error.kind == "stream_error"
    assert error.error.message == "login fail: Please carry the API secret key"
    assert error.error.code == "1004"


# -- Zhipu (bigmodel.cn) and Z.ai ---------------------------------------------------------


def _glm(
    delta: dict[str, Any], finish: str | None = None, model: str = "glm-4-alltools", **fields: Any
) -> dict[str, Any]:
    return {
        "id": "2024080616285251e6b5e332a0467d",
        "created": 1722932937,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **fields,
    }


def test_glm_alltools_tools_it_ran_in_tool_calls_are_server_tools() -> None:
    """Zhipu's API reference (bigmodel.cn, its Assistant API's stream; GLM-4-AllTools on
    `/chat/completions`, the model LobeChat's zhipu runtime sends there, streams the
    same deltas): a tool the model ran is a `tool_calls` entry typed after it, its
    payload under that type, `{"type": "web_browser", "web_browser": {"input": ...}}`,
    then in a `role: "tool"` delta at the same index its `{"outputs": [...]}`; a
    `code_interpreter` the same way. Nothing there is for the client to run: each is a
    server tool call and its result, the answer its text and stop (before: a call with
    no name dispatched with `{}`, the turn ended in tool_use)."""
    pages = [{"title": "Beijing", "link": "http://weather.example/bj", "content": "33.7C"}]
    body = _sse(
        _glm(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "web_browser",
                        "web_browser": {"input": 'search("Beijing weather", recency_days=1)'},
                    }
                ],
            }
        ),
        _glm(
            {
                "role": "tool",
                "tool_calls": [
                    {"index": 0, "type": "web_browser", "web_browser": {"outputs": pages}}
                ],
            }
        ),
        _glm(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "type": "code_interpreter",
                        "code_interpreter": {"input": "print(33.7 - 25)"},
                    }
                ],
            }
        ),
        _glm(
            {
                "role": "tool",
                "tool_calls": [
                    {
                        "index": 0,
                        "type": "code_interpreter",
                        "code_interpreter": {"outputs": [{"type": "logs", "logs": "8.7"}]},
                    }
                ],
            }
        ),
        _glm({"role": "assistant", "content": "It is 8.7 degrees warmer."}),
        _glm(
            {"role": "assistant", "metadata": {}},
            "stop",
            usage={"prompt_tokens": 3574, "completion_tokens": 51, "total_tokens": 3625},
        ),
    )
    events = replay_every_way(body, "zai")
    check(
        summarize(events),
        Expect(
            text="It is 8.7 degrees warmer.",
            usage=(3574, 51, 0, 0, 3625),
            model="glm-4-alltools",
        ),
    )
    calls = [e for e in events if isinstance(e, ServerToolCall)]
    results = [e for e in events if isinstance(e, ServerToolResult)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("web_browser", {"input": 'search("Beijing weather", recency_days=1)'}),
        ("code_interpreter", {"input": "print(33.7 - 25)"}),
    ]
    assert calls[0].call_id == "call_1"
    assert [(r.call_id, r.name, r.content) for r in results] == [
        ("call_1", "web_browser", {"outputs": pages}),
        (calls[1].call_id, "code_interpreter", {"outputs": [{"type": "logs", "logs": "8.7"}]}),
    ]
    assert kinds(events) == [
        "server_tool_call",
        "server_tool_result",
        "server_tool_call",
        "server_tool_result",
        "text",
        "usage",
        "done",
    ]


def test_zhipu_web_search_entry_in_tool_calls_is_a_server_search() -> None:
    """Zhipu's web search tool (`tools: [{"type": "web_search", "web_search": {"enable":
    true, "search_result": true}}]`) as a client's recorded stream has it (the "legacy
    Zhipu search_result path" a Swift app's provider tests replay, beside the usual
    top-level `web_search` list): a first delta's `tool_calls` entry `{"type":
    "web_search", "web_search": {"search_intent": [...], "search_result": [...]}}`, then
    the answer. The search is the provider's: one server tool call with its intent and
    its result, the page cited once from the top-level list, the turn stopped (before:
    a nameless call dispatched, tool_use)."""
    found = [{"title": "Legacy", "link": "https://legacy.example/1", "content": "gamma"}]
    intent = [{"category": "search", "index": 0, "intent": "SEARCH_ALL", "keywords": "gamma"}]
    entry = {
        "index": 0,
        "id": "ws_1",
        "type": "web_search",
        "web_search": {"search_intent": intent, "search_result": found},
    }
    body = _sse(
        _glm({"role": "assistant", "tool_calls": [entry]}, model="glm-5"),
        _glm({"content": "ok"}, "stop", model="glm-5", web_search=found),
    )
    events = replay_every_way(body, "zai")
    check(summarize(events), Expect(text="ok", model="glm-5"))
    assert [(e.type, e.call_id) for e in events if isinstance(e, ServerToolCall)] == [
        ("server_tool_call", "ws_1")
    ]
    (result,) = [e for e in events if isinstance(e, ServerToolResult)]
    assert result.content == {"search_result": found}
    assert [e.url for e in events if isinstance(e, Citation)] == ["https://legacy.example/1"]


# -- Volcano Engine Ark (Doubao) ------------------------------------------------------------


def test_ark_bot_references_are_citations() -> None:
    """volcengine/volcengine-go-sdk service/arkruntime/model/bot.go
    (`BotChatCompletionStreamResponse`): Ark's bot API (`/api/v3/bots/chat/completions`,
    its web search and knowledge-base plugins) adds `references` beside the choices, each
    `{url, logo_url, site_name, title, summary, publish_time, ...}` for a page and
    `{doc_id, doc_name, chunk_id, ...}` for a knowledge-base chunk, and `bot_usage`
    (the plugins' counts). Each page is a citation, once; a chunk with no URL is none
    (before: the whole list dropped, only its key logged)."""
    refs = [
        {
            "url": "https://news.example/a",
            "logo_url": "https://news.example/logo.png",
            "site_name": "News",
            "title": "Beijing weather",
            "summary": "Sunny, 25°C",
            "publish_time": "2025-01-01 08:00:00",
        },
        {"doc_id": "_sys_auto_gen_doc_id-1", "doc_name": "handbook.pdf", "chunk_id": "3"},
    ]

    def chunk(delta: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
        return {
            "id": "021735000000000abcdef",
            "object": "chat.completion.chunk",
            "created": 1735000000,
            "model": "doubao-1-5-pro-32k-250115",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **fields,
        }

    usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
    body = _sse(
        chunk({"role": "assistant", "content": ""}, references=refs),
        chunk({"content": "Sunny."}, references=refs),
        chunk(
            {"content": ""},
            "stop",
            usage=usage,
            bot_usage={
                "model_usage": [{"name": "doubao-1-5-pro-32k-250115", **usage}],
                "action_usage": [{"name": "content_plugin", "count": 1}],
            },
        ),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="Sunny.", usage=(100, 5, 0, 0, 105), model="doubao-1-5-pro-32k-250115"),
    )
    assert [(e.url, e.title) for e in events if isinstance(e, Citation)] == [
        ("https://news.example/a", "Beijing weather")
    ]


# -- NAVER CLOVA Studio (HyperCLOVA X) ---------------------------------------------------


def test_clova_studio_hcx_007_reasoning_in_thinking_content() -> None:
    """NAVER Cloud's CLOVA Studio guide (guide.ncloud-docs.com, "Troubleshoot creation
    and output issues": HCX-007's "inference content (thought process, thinking/
    reasoning trace)" is "in the `choices[0].message.thinking_content` field of the
    OpenAI-compatible API (/chat/completions) response"), whose stream carries the same
    field in its deltas, as OpenAI-compatible streams mirror the message. That is the
    reasoning, before the answer, its tokens counted in the usage (before: dropped,
    only its key logged)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-2f1c",
            "object": "chat.completion.chunk",
            "created": 1753750000,
            "model": "HCX-007",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 20,
        "total_tokens": 30,
        "completion_tokens_details": {"reasoning_tokens": 12},
    }
    body = _sse(
        chunk({"role": "assistant", "thinking_content": "The user greets me."}),
        chunk({"thinking_content": " Reply kindly."}),
        chunk({"content": "안녕하세요!"}),
        chunk({}, "stop"),
        {**chunk({}), "choices": [], "usage": usage},
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="안녕하세요!",
            reasoning="The user greets me. Reply kindly.",
            usage=(10, 20, 12, 0, 30),
            model="HCX-007",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


def test_glm_4_5_calls_at_index_minus_one_are_calls_in_their_order() -> None:
    """lobehub/lobe-chat src/libs/model-runtime/zhipu/index.ts (`handleStream`): "GLM-4.5
    series models return -1 as the index in tool_calls", which LobeChat rewrites to the
    entry's place before its OpenAI stream reader drops negative indexes. Each entry is
    whole (id, name, arguments); two in one delta both at -1. Two calls, each once, in
    their order, with their own ids, after the reasoning, as a guard."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "20250801171534c8e0e8d2a4d04a5d",
            "created": 1754039734,
            "model": "glm-4.5",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def call(call_id: str, city: str) -> dict[str, Any]:
        arguments = json.dumps({"city": city}, ensure_ascii=False)
        return {
            "id": call_id,
            "index": -1,
            "type": "function",
            "function": {"name": "get_weather", "arguments": arguments},
        }

    body = _sse(
        chunk({"role": "assistant", "reasoning_content": "Two cities."}),
        chunk(
            {
                "role": "assistant",
                "tool_calls": [call("call_-8", "北京"), call("call_-7", "上海")],
            }
        ),
        chunk({"role": "assistant", "content": ""}, "tool_calls"),
    )
    events = replay_every_way(body, "zai")
    check(
        summarize(events),
        Expect(
            text="",
            reasoning="Two cities.",
            tools=(
                ("call_-8", "get_weather", {"city": "北京"}),
                ("call_-7", "get_weather", {"city": "上海"}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="glm-4.5",
        ),
    )


# -- Moonshot (Kimi) ------------------------------------------------------------------------


def test_kimi_builtin_web_search_is_a_call_the_client_echoes() -> None:
    """Moonshot's built-in `$web_search` (`tools: [{"type": "builtin_function",
    "function": {"name": "$web_search"}}]`, as the Kimi API guide and the clients that
    declare it write it): the model asks for it as a call typed `builtin_function`,
    `finish_reason: "tool_calls"`, and the client sends the arguments back as the tool's
    result for Moonshot to run the search. It is the client's to answer: a tool request
    named `$web_search` with those arguments, the usage from the choice, as a guard."""
    arguments = {"search_result": {"search_id": "d5a0f3"}, "usage": {"total_tokens": 3018}}

    def chunk(delta: dict[str, Any], finish: str | None = None, **choice: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-6810567267ee141b4630dccb",
            "object": "chat.completion.chunk",
            "created": 1745901159,
            "model": "kimi-k2-0905-preview",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **choice}],
        }

    body = _sse(
        chunk({"role": "assistant", "content": ""}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "$web_search:0",
                        "type": "builtin_function",
                        "function": {"name": "$web_search", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(arguments)}}]}),
        chunk(
            {},
            "tool_calls",
            usage={"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
        ),
    )
    events = replay_every_way(body, "moonshot")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("$web_search:0", "$web_search", arguments),),
            usage=(30, 12, 0, 0, 42),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="kimi-k2-0905-preview",
        ),
    )


# -- Alibaba Cloud Model Studio (DashScope compatible mode) -------------------------------


def test_qwen_omni_text_in_content_beside_audio_data_and_audio_token_details() -> None:
    """Alibaba Cloud Model Studio's Qwen-Omni guide (`modalities: ["text", "audio"]`,
    `stream_options.include_usage`; its client prints `delta.content` and joins
    `delta.audio["data"]`): the text streams in `content`, the speech in other deltas'
    `audio` (`{data, expires_at, id}`, `content` null), and the usage chunk with no
    choices splits its counts into `text_tokens` and `audio_tokens` details. The text
    once, the audio bytes no event, the counts as given (the audio tokens in the
    output, none of them reasoning), as a guard."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-8a1f",
            "object": "chat.completion.chunk",
            "created": 1757647000,
            "model": "qwen3-omni-flash",
            "system_fingerprint": None,
            "usage": None,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    usage = {
        "prompt_tokens": 18,
        "completion_tokens": 95,
        "total_tokens": 113,
        "prompt_tokens_details": {"text_tokens": 18},
        "completion_tokens_details": {"audio_tokens": 83, "text_tokens": 12},
    }
    audio = {"data": "UklGRiQAAABXQVZF", "expires_at": 1757647879, "id": "audio_8a1f"}
    body = _sse(
        chunk({"role": "assistant", "content": "我是"}),
        chunk({"content": None, "audio": audio}),
        chunk({"content": "通义千问。"}),
        chunk({"content": None, "audio": {"data": "AAAAAAAA"}}),
        chunk({"content": ""}, "stop"),
        {**chunk({}), "choices": [], "usage": usage},
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="我是通义千问。", usage=(18, 95, 0, 0, 113), model="qwen3-omni-flash"),
    )
    assert kinds(events) == ["text", "usage", "done"]
