"""Streams printed in the providers' own cookbooks and docs notebooks: raw SSE lines a
notebook shows (a `curl --no-buffer` cell's output), and SDK chunk objects a notebook
prints, written back as the wire JSON they were parsed from (each field under its wire
name, `None` as `null`; what the SDK adds and the wire never sends, such as the
`[DONE]` it consumes, is said beside it).

Each body is written by hand from the notebook named beside it (its essential events,
long text shortened), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what that notebook shows its reader.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import ReasoningDelta
from tests.support import Expect, check, replay_every_way, summarize


def _data(*payloads: dict[str, Any], crlf: bool = False, done: bool = False) -> bytes:
    """Unnamed SSE events, one JSON payload each (`[DONE]` after them if `done`)."""
    end = "\r\n\r\n" if crlf else "\n\n"
    lines = [f"data: {json.dumps(p, ensure_ascii=False)}{end}" for p in payloads]
    if done:
        lines.append(f"data: [DONE]{end}")
    return "".join(lines).encode()


# -- Gemini ---------------------------------------------------------------------------


_GEMINI_RATINGS = [
    {"category": f"HARM_CATEGORY_{name}", "probability": "NEGLIGIBLE"}
    for name in ("SEXUALLY_EXPLICIT", "HATE_SPEECH", "HARASSMENT", "DANGEROUS_CONTENT")
]


@pytest.mark.parametrize("printed", [False, True], ids=["crlf", "as-printed"])
def test_gemini_rest_streaming_every_chunk_says_stop_and_none_says_usage(printed: bool) -> None:
    """google-gemini/cookbook quickstarts/rest/Streaming_REST.ipynb: `curl
    ...gemini-pro:streamGenerateContent?alt=sse --no-buffer`, its output as printed: six
    `data:` events (CRLF as Gemini ends them), each a candidate with one text part,
    `finishReason: "STOP"`, `index: 0` and four safety ratings; the first carries
    `promptFeedback` too; no `usageMetadata` anywhere. gemini-pro said STOP on every
    chunk, not only the last: the story is the six texts in order, one `done` at the
    end of the body, and no usage. `printed`: the line ends as the cell's output shows
    them, the first event's data line ended by CRLF and the blank line after it by LF,
    every later line by LF."""
    texts = [
        "In the quaint, sunlit cottage nestled amidst a lush meadow, resided two feline",
        " companions named Mittens and Whiskers.",
        " on the other hand, was a playful and mischievous white tomcat.\n\n",
        ' a sweet fragrance.\n\n"My, what a lovely day it is," Mittens purred.',
        ' known as the "冒险伙伴" (Adventure Buddies) of the meadow, their love for each',
        " other and for adventure stronger than ever.",
    ]
    chunks: list[dict[str, Any]] = [
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                    "safetyRatings": _GEMINI_RATINGS,
                }
            ]
        }
        for text in texts
    ]
    chunks[0]["promptFeedback"] = {"safetyRatings": _GEMINI_RATINGS}
    body = _data(*chunks, crlf=True)
    if printed:
        events = [f"data: {json.dumps(chunk, ensure_ascii=False)}" for chunk in chunks]
        body = (events[0] + "\r\n\n" + "".join(e + "\n\n" for e in events[1:])).encode()
    check(
        summarize(replay_every_way(body, "google")),
        Expect(text="".join(texts), raw_stop_reason="STOP"),
    )


# -- OpenAI chat and its compatible servers ------------------------------------------------


def _chunk(
    chunk_id: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1716471247,
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


@pytest.mark.parametrize("include_usage", [True, False], ids=["include-usage", "no-usage"])
def test_openai_cookbook_include_usage_chunk_with_no_choices_after_the_stop(
    include_usage: bool,
) -> None:
    """openai/openai-cookbook examples/How_to_stream_completions.ipynb, section 4
    (`stream_options={"include_usage": True}`, gpt-3.5-turbo, "What's 1+1? Answer in one
    word."): the printed chunks are a role chunk with empty content, "2", a `stop`
    chunk with an empty delta, each with `usage: null`, then `choices: []` with usage
    1 completion + 19 prompt = 20. The SDK ends at `data: [DONE]`, which the wire sends
    after them. The answer "2", the usage of the last chunk, `stop`. Without
    `include_usage` (section 2 of the notebook) the same three chunks have no `usage`
    key and no usage chunk follows: no usage is said."""
    chunk_id, model = "chatcmpl-8ZB9m2Ubv8FJs3CIb84WvYwqZCHST", "gpt-3.5-turbo-0613"
    extra: dict[str, Any] = {"usage": None} if include_usage else {}
    chunks = [
        _chunk(chunk_id, model, {"role": "assistant", "content": ""}, **extra),
        _chunk(chunk_id, model, {"content": "2"}, **extra),
        _chunk(chunk_id, model, {}, "stop", **extra),
    ]
    if include_usage:
        chunks.append(
            {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": 1716471247,
                "model": model,
                "system_fingerprint": None,
                "choices": [],
                "usage": {"completion_tokens": 1, "prompt_tokens": 19, "total_tokens": 20},
            }
        )
    check(
        summarize(replay_every_way(_data(*chunks, done=True), "openai")),
        Expect(text="2", usage=(19, 1, 0, 0, 20) if include_usage else None, model=model),
    )


def test_groq_cookbook_three_whole_calls_and_usage_in_x_groq_of_the_finish() -> None:
    """groq/groq-api-cookbook streaming-tool-use/streaming-tool-use.ipynb
    (llama3-70b-8192, "What is the weather in Paris, Tokyo and Madrid?"), the printed
    `ChatCompletionChunk`s: a role chunk with empty content and `x_groq: {id}` (no usage
    yet), three chunks each holding one whole call (its index, id, name and arguments
    at once), then the `tool_calls` finish whose `x_groq.usage` holds the counts (934
    prompt, 121 completion, Groq's timings beside them) and no top-level `usage`. The
    SDK ends at `data: [DONE]`. Three calls dispatched with their arguments, the
    usage, `tool_use`."""
    chunk_id, model = "chatcmpl-14f9b8e2-0b43-4587-b3c5-9274cbd9c658", "llama3-70b-8192"
    request = "req_01hyjthc9rfz2t31hma8xwj8kj"

    def call(index: int, call_id: str, city: str) -> dict[str, Any]:
        function = {"arguments": json.dumps({"city": city}, separators=(",", ":"))}
        function["name"] = "get_weather"
        entry = {"index": index, "id": call_id, "function": function, "type": "function"}
        return {"content": None, "role": None, "function_call": None, "tool_calls": [entry]}

    usage = {
        "completion_time": 0.387109752,
        "completion_tokens": 121,
        "prompt_time": 0.213729859,
        "prompt_tokens": 934,
        "queue_time": 0.08143180000000003,
        "total_time": 0.6008396109999999,
        "total_tokens": 1055,
    }
    body = _data(
        _chunk(chunk_id, model, {"content": "", "role": "assistant"}, x_groq={"id": request}),
        _chunk(chunk_id, model, call(0, "call_h53x", "Paris")),
        _chunk(chunk_id, model, call(1, "call_2nr3", "Tokyo")),
        _chunk(chunk_id, model, call(2, "call_4py5", "Madrid")),
        _chunk(chunk_id, model, {}, "tool_calls", x_groq={"usage": usage, "id": request}),
        done=True,
    )
    check(
        summarize(replay_every_way(body, "groq")),
        Expect(
            text="",
            tools=(
                ("call_h53x", "get_weather", {"city": "Paris"}),
                ("call_2nr3", "get_weather", {"city": "Tokyo"}),
                ("call_4py5", "get_weather", {"city": "Madrid"}),
            ),
            usage=(934, 121, 0, 0, 1055),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )


# -- Anthropic Messages -------------------------------------------------------------------


def _messages(*payloads: dict[str, Any]) -> bytes:
    """Named SSE events, each under its own `type`, as the Messages API writes them."""
    return b"".join(
        f"event: {p['type']}\ndata: {json.dumps(p, ensure_ascii=False)}\n\n".encode()
        for p in payloads
    )


def _message_start(model: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
    return {"type": "message_start", "message": message}


def _block(index: int, block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    """One content block: its start, its deltas, its stop."""
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _text_deltas(*texts: str) -> list[dict[str, Any]]:
    return [{"type": "text_delta", "text": text} for text in texts]


def _message_end(
    stop_reason: str, output_tokens: int, stop_sequence: str | None = None
) -> list[dict[str, Any]]:
    delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
    return [
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


def test_claude_cookbook_raw_event_log_counts_input_at_start_output_at_the_end() -> None:
    """anthropics/claude-cookbooks misc/streaming_text_and_events.ipynb, "Accessing Raw
    Events" (claude-haiku-4-5, "Say 'hello world' and nothing else."), its event log:
    `message_start` with usage 14 input and 1 output, a text block's start, deltas
    'hello' and ' world', its stop, `message_delta` with usage 3 output, `message_stop`.
    The notebook reads the input count at the start and the final output count at the
    `message_delta`: "hello world", 14 + 3, `end_turn`."""
    model = "claude-haiku-4-5"
    body = _messages(
        _message_start(model, 14, 1),
        *_block(0, {"type": "text", "text": ""}, *_text_deltas("hello", " world")),
        *_message_end("end_turn", 3),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="hello world", usage=(14, 3, 0, 0, 17), raw_stop_reason="end_turn", model=model
        ),
    )


def test_claude_cookbook_stop_sequence_ends_the_turn_as_a_natural_stop() -> None:
    """anthropics/claude-cookbooks misc/streaming_text_and_events.ipynb, "Streaming with
    Stop Sequences" (`stop_sequences=["STOP"]`, count from 1 and write STOP after 5):
    the text "1" to "5" a line each, then the final message says `stop_reason:
    stop_sequence`, `stop_sequence: 'STOP'` (the sequence itself is not in the text).
    A stop sequence is the model's natural end: `stop`, the raw reason kept."""
    model = "claude-haiku-4-5"
    body = _messages(
        _message_start(model, 40, 1),
        *_block(0, {"type": "text", "text": ""}, *_text_deltas("1\n2\n", "3\n4\n", "5\n")),
        *_message_end("stop_sequence", 10, stop_sequence="STOP"),
    )
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="1\n2\n3\n4\n5\n",
            usage=(40, 10, 0, 0, 50),
            raw_stop_reason="stop_sequence",
            model=model,
        ),
    )


def test_anthropic_cookbook_streamed_thinking_then_text_keeps_the_signature() -> None:
    """anthropics/anthropic-cookbook extended_thinking/extended_thinking.ipynb,
    "Streaming with extended thinking" (claude-3-7-sonnet-20250219, budget 2000): the
    notebook prints "--- Starting thinking block ---", the thinking deltas, "[Completed
    thinking block, 1492 characters]", then a text block and "--- Message complete
    ---". The thinking block closes with its `signature_delta` before its stop, as the
    Messages stream sends it (the basic example of the same notebook prints the
    signature's first 50 characters, "EuYBCkQYAiJAGF6X7aWRuRByTdymAUdNOMC++3ZqSJv7jcY5Ly",
    used here as the whole). The thinking is reasoning, signed once; the answer is
    the text."""
    model = "claude-3-7-sonnet-20250219"
    signature = "EuYBCkQYAiJAGF6X7aWRuRByTdymAUdNOMC++3ZqSJv7jcY5Ly"
    thinking = [
        "This is a classic mathematical puzzle that contains a misdirection. ",
        "Let's break it down step by step:\n\n- Three people each pay $10.",
    ]
    body = _messages(
        _message_start(model, 125, 4),
        *_block(
            0,
            {"type": "thinking", "thinking": "", "signature": ""},
            *({"type": "thinking_delta", "thinking": piece} for piece in thinking),
            {"type": "signature_delta", "signature": signature},
        ),
        *_block(
            1,
            {"type": "text", "text": ""},
            *_text_deltas("# The Missing $1 Puzzle Solution\n\n", "There is no missing dollar."),
        ),
        *_message_end("end_turn", 614),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="# The Missing $1 Puzzle Solution\n\nThere is no missing dollar.",
            reasoning="".join(thinking),
            signatures=1,
            usage=(125, 614, 0, 0, 739),
            raw_stop_reason="end_turn",
            model=model,
        ),
    )
    assert summarize(events).signatures == [signature]


def test_anthropic_cookbook_redacted_thinking_block_comes_whole_before_the_text() -> None:
    """anthropics/anthropic-cookbook extended_thinking/extended_thinking.ipynb,
    "Understanding redacted thinking blocks" (the magic test string that triggers one):
    the printed content is a `redacted_thinking` block with only its encrypted `data`
    (shortened here), then a text block declining. Streamed, such a block comes whole in
    its `content_block_start` (the extended-thinking docs: no deltas for it). It is
    reasoning with no text, marked redacted, its data kept as the signature to send
    back; the text follows as the answer."""
    model = "claude-3-7-sonnet-20250219"
    data = "EvAFCoYBGAIiQL7asmglEdeKXw4EdihR2gBQ7O7+j/dGecLjsS2PMgW9av+NRwuIV2nFD4I61hUH"
    answer = "I notice you've sent what appears to be a prompt attempting to access internal"
    body = _messages(
        _message_start(model, 92, 3),
        *_block(0, {"type": "redacted_thinking", "data": data}),
        *_block(1, {"type": "text", "text": ""}, *_text_deltas(answer[:40], answer[40:])),
        *_message_end("end_turn", 71),
    )
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text=answer,
            signatures=1,
            usage=(92, 71, 0, 0, 163),
            raw_stop_reason="end_turn",
            model=model,
        ),
    )
    redacted = [ev for ev in events if isinstance(ev, ReasoningDelta)]
    assert [(ev.text, ev.signature, ev.redacted) for ev in redacted] == [("", data, True)]
