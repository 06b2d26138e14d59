"""OpenRouter relaying each upstream, end to end: what each one leaves in the stream.

Each stream below is written by hand from OpenRouter's documents (openrouter.ai/docs:
API Reference "Streaming" with its `: OPENROUTER PROCESSING` comments and errors
mid-stream, "Reasoning Tokens" with `reasoning_details` and "Preserving reasoning
blocks", "Usage Accounting", "Web Search", "Image Generation", "Tool Calling") and
from the shapes its SDK and clients parse (OpenRouterTeam/ai-sdk-provider's chat
model; pydantic-ai's OpenRouter cassettes of web search, image generation and cached
streams), never copied from a recording. Each one is served by a loopback server to the
`openrouter` preset: every event of turn 1 is checked (and found the same however the
bytes are cut), then the turn goes back in the history of turn 2, whose request body
is checked as the server received it: the reasoning details back unmodified and in
order, each call with its id and exact arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Citation, Event, ToolRequest
from rxllm.request import ChatRequest, Message
from tests.support import CHAT_ANSWER, Serve, replay_every_way, summarize
from tests.test_reasoning_history import record_of

WEATHER = rxllm.Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
QUESTION = Message.user("Weather in Paris and Rome?")
PROCESSING = ": OPENROUTER PROCESSING\n\n"

CLAUDE = {"format": "anthropic-claude-v1"}
GEMINI = {"format": "google-gemini-v1"}
GPT = {"format": "openai-responses-v1"}
GROK = {"format": "xai-responses-v1"}


def chunk(
    delta: dict[str, Any] | None,
    finish: str | None = None,
    native: str | None = None,
    *,
    model: str,
    upstream: str,
    **extra: Any,
) -> dict[str, Any]:
    """One chunk as OpenRouter relays it: its generation id, the upstream that served
    (`provider`), the upstream's own finish beside the normalized one."""
    choice = {
        "index": 0,
        "delta": {"role": "assistant", "content": ""} if delta is None else delta,
        "finish_reason": finish,
        "native_finish_reason": native,
        "logprobs": None,
    }
    return {
        "id": "gen-1764000000-abc",
        "provider": upstream,
        "model": model,
        "object": "chat.completion.chunk",
        "created": 1764000000,
        "choices": [choice],
        **extra,
    }


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """Data frames with OpenRouter's processing comments before and between them."""
    frames = [PROCESSING]
    for n, payload in enumerate(chunks):
        frames.append(f"data: {json.dumps(payload)}\n\n")
        if n % 3 == 0:
            frames.append(PROCESSING)
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def detail(kind: str, fmt: dict[str, Any], index: int, **fields: Any) -> dict[str, Any]:
    """A delta of one reasoning detail (`reasoning.<kind>`), with the plain `reasoning`
    field that repeats its text or summary beside it, as OpenRouter sends both."""
    item = {"type": f"reasoning.{kind}", **fields, **fmt, "index": index}
    shown = fields.get("text") or fields.get("summary") or None
    return {"role": "assistant", "content": "", "reasoning": shown, "reasoning_details": [item]}


def sent(kind: str, fmt: dict[str, Any], index: int, **fields: Any) -> dict[str, Any]:
    """A reasoning detail as turn 2 must send it back: whole, as it came."""
    return {"type": f"reasoning.{kind}", **fmt, "index": index, **fields}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    """A delta of one call: its id, type and name on its first fragment only."""
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        entry |= {"id": call_id, "type": "function"}
        entry["function"]["name"] = name
    return {"role": "assistant", "content": None, "tool_calls": [entry]}


def usage(prompt: int, completion: int, cost: float, **more: Any) -> dict[str, Any]:
    """A usage object as OpenRouter reports it (Usage Accounting); `reasoning` and
    `cached` fill its details."""
    details = {
        "completion_tokens_details": {
            "reasoning_tokens": more.pop("reasoning", 0),
            "image_tokens": more.pop("images", 0),
        },
        "prompt_tokens_details": {
            "cached_tokens": more.pop("cached", 0),
            "cache_write_tokens": more.pop("written", 0),
            "audio_tokens": 0,
        },
    }
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cost": cost,
        "is_byok": False,
        "cost_details": {"upstream_inference_cost": None},
        **details,
    } | more


@dataclass(frozen=True)
class Turn:
    """What one relayed stream must come out as."""

    data: bytes
    model: str
    text: str = ""
    reasoning: str = ""
    signatures: tuple[str, ...] = ()
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    citations: tuple[tuple[str, str | None, str | None], ...] = ()
    usage: tuple[int, int, int, int, int, float] | None = None
    """(input, output incl. reasoning, reasoning, cache read, cache write, cost)."""
    terminal: str = "done"
    stop: str | None = "stop"
    error_code: str | None = None
    sent_details: list[dict[str, Any]] | None = field(default=None)
    """The `reasoning_details` turn 2 sends back (None: the key is absent)."""


def _m(model: str, upstream: str) -> dict[str, str]:
    return {"model": model, "upstream": upstream}


SONNET = _m("anthropic/claude-sonnet-4.5", "Amazon Bedrock")
GEMINI_3 = _m("google/gemini-3-pro-preview", "Google AI Studio")
GEMINI_25 = _m("google/gemini-2.5-pro", "Google")
GPT_5 = _m("openai/gpt-5", "OpenAI")
O3 = _m("openai/o3", "OpenAI")
R1 = _m("deepseek/deepseek-r1-0528", "Chutes")
KIMI = _m("moonshotai/kimi-k2-thinking", "Moonshot AI")
GLM = _m("z-ai/glm-4.6", "Z.AI")
GROK_4 = _m("x-ai/grok-4-fast", "xAI")
IMAGE = _m("google/gemini-2.5-flash-image", "Google AI Studio")
SEARCH = _m("openai/gpt-4.1-mini", "OpenAI")
PARIS, ROME = {"city": "Paris"}, {"city": "Rome"}


def _cite(url: str, title: str, content: str) -> dict[str, Any]:
    cited = {"url": url, "title": title, "start_index": 0, "end_index": 0, "content": content}
    return {"type": "url_citation", "url_citation": cited}


TURNS: dict[str, Turn] = {
    # Claude with thinking: an empty opening fragment, text fragments, the signature
    # alone last; a redacted block as `reasoning.encrypted`; text; two calls streamed
    # by index; the finish, then usage with cache reads and writes inside the prompt.
    "claude thinking, redacted block, two calls, cache": Turn(
        sse(
            chunk(None, **SONNET),
            chunk(detail("text", CLAUDE, 0, text="", signature=""), **SONNET),
            chunk(detail("text", CLAUDE, 0, text="Two "), **SONNET),
            chunk(detail("text", CLAUDE, 0, text="cities."), **SONNET),
            chunk(detail("text", CLAUDE, 0, signature="EqQBCkYIBxgC"), **SONNET),
            chunk(detail("encrypted", CLAUDE, 1, data="EmwKAhgBEgy3"), **SONNET),
            chunk(say("Checking both."), **SONNET),
            chunk(call(0, "toolu_01A", "get_weather", ""), **SONNET),
            chunk(call(0, None, None, '{"city": "Pa'), **SONNET),
            chunk(call(0, None, None, 'ris"}'), **SONNET),
            chunk(call(1, "toolu_01B", "get_weather", ""), **SONNET),
            chunk(call(1, None, None, '{"city":"Rome"}'), **SONNET),
            chunk(None, "tool_calls", "tool_use", **SONNET),
            chunk(
                None,
                **SONNET,
                usage=usage(2150, 320, 0.00912, reasoning=140, cached=1800, written=200),
            ),
        ),
        SONNET["model"],
        text="Checking both.",
        reasoning="Two cities.",
        signatures=("EqQBCkYIBxgC", "EmwKAhgBEgy3"),
        calls=(("toolu_01A", "get_weather", PARIS), ("toolu_01B", "get_weather", ROME)),
        usage=(150, 320, 140, 1800, 200, 0.00912),
        stop="tool_use",
        sent_details=[
            sent("text", CLAUDE, 0, text="Two cities.", signature="EqQBCkYIBxgC"),
            sent("encrypted", CLAUDE, 1, data="EmwKAhgBEgy3"),
        ],
    ),
    # Gemini 3: thought text, then the thought signature as an encrypted detail whose
    # id is the call it signs, beside that call; the second call reuses index 0 with a
    # new id; Gemini's finish is STOP, OpenRouter's `tool_calls`.
    "gemini thought signature, two calls on index 0": Turn(
        sse(
            chunk(detail("text", GEMINI, 0, text="**Planning**\n"), **GEMINI_3),
            chunk(detail("text", GEMINI, 0, text="Both at once."), **GEMINI_3),
            chunk(
                detail("encrypted", GEMINI, 0, data="CiQBjz1rX", id="tool_get_weather_Q1")
                | call(0, "tool_get_weather_Q1", "get_weather", '{"city":"Paris"}'),
                **GEMINI_3,
            ),
            chunk(call(0, "tool_get_weather_R2", "get_weather", '{"city":"Rome"}'), **GEMINI_3),
            chunk(None, "tool_calls", "STOP", **GEMINI_3),
            chunk(None, **GEMINI_3, usage=usage(90, 250, 0.00264, reasoning=210)),
        ),
        GEMINI_3["model"],
        reasoning="**Planning**\nBoth at once.",
        signatures=("CiQBjz1rX",),
        calls=(
            ("tool_get_weather_Q1", "get_weather", PARIS),
            ("tool_get_weather_R2", "get_weather", ROME),
        ),
        usage=(90, 250, 210, 0, 0, 0.00264),
        stop="tool_use",
        sent_details=[
            sent("text", GEMINI, 0, text="**Planning**\nBoth at once."),
            sent("encrypted", GEMINI, 0, id="tool_get_weather_Q1", data="CiQBjz1rX"),
        ],
    ),
    # Gemini 2.5 with both calls in one delta, each on index 0 with its own id.
    "gemini two calls in one delta": Turn(
        sse(
            chunk(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        call(0, "tool_0_get_weather", "get_weather", '{"city":"Paris"}')[
                            "tool_calls"
                        ][0],
                        call(0, "tool_1_get_weather", "get_weather", '{"city":"Rome"}')[
                            "tool_calls"
                        ][0],
                    ],
                },
                **GEMINI_25,
            ),
            chunk(None, "tool_calls", "STOP", **GEMINI_25),
        ),
        GEMINI_25["model"],
        calls=(
            ("tool_0_get_weather", "get_weather", PARIS),
            ("tool_1_get_weather", "get_weather", ROME),
        ),
        stop="tool_use",
    ),
    # GPT-5 routed through the Responses API: summary parts by index, the reasoning
    # item's encrypted content with its `rs_` id; a call; usage of a BYOK request,
    # whose cost is OpenRouter's fee plus what the upstream billed the user's key.
    "gpt-5 summaries, encrypted item, BYOK cost": Turn(
        sse(
            chunk(detail("summary", GPT, 0, summary="**Weather"), **GPT_5),
            chunk(detail("summary", GPT, 0, summary="**\n\nTwo lookups."), **GPT_5),
            chunk(detail("summary", GPT, 1, summary="**Call**"), **GPT_5),
            chunk(detail("encrypted", GPT, 2, data="gAAAAABo1", id="rs_08a1"), **GPT_5),
            chunk(call(0, "call_Kx1", "get_weather", ""), **GPT_5),
            chunk(call(0, None, None, '{"city":"Paris"}'), **GPT_5),
            chunk(None, "tool_calls", "completed", **GPT_5),
            chunk(
                None,
                **GPT_5,
                usage=usage(
                    700,
                    410,
                    0.0001,
                    reasoning=384,
                    cached=512,
                    is_byok=True,
                    cost_details={"upstream_inference_cost": 0.00497},
                ),
            ),
        ),
        GPT_5["model"],
        reasoning="**Weather**\n\nTwo lookups.**Call**",
        signatures=("gAAAAABo1",),
        calls=(("call_Kx1", "get_weather", PARIS),),
        usage=(188, 410, 384, 512, 0, 0.00507),
        stop="tool_use",
        sent_details=[
            sent("summary", GPT, 0, summary="**Weather**\n\nTwo lookups."),
            sent("summary", GPT, 1, summary="**Call**"),
            sent("encrypted", GPT, 2, id="rs_08a1", data="gAAAAABo1"),
        ],
    ),
    # o3: the answer, the finish, then the reasoning item's encrypted content beside
    # the usage: it still goes back with the turn.
    "o3 encrypted reasoning after the finish": Turn(
        sse(
            chunk(say("4"), **O3),
            chunk(None, "stop", "completed", **O3),
            chunk(
                detail("encrypted", GPT, 0, data="gAAAAABpC", id="rs_0aa4"),
                **O3,
                usage=usage(14, 75, 0.000628, reasoning=64),
            ),
        ),
        O3["model"],
        text="4",
        signatures=("gAAAAABpC",),
        usage=(14, 75, 64, 0, 0, 0.000628),
        sent_details=[sent("encrypted", GPT, 0, id="rs_0aa4", data="gAAAAABpC")],
    ),
    # DeepSeek R1: the reasoning as text details of no known format, then the answer.
    "deepseek r1 reasoning then text": Turn(
        sse(
            chunk(detail("text", {"format": "unknown"}, 0, text="Greet"), **R1),
            chunk(detail("text", {"format": "unknown"}, 0, text=" back."), **R1),
            chunk(say("Hello!") | {"reasoning": None, "reasoning_details": []}, **R1),
            chunk(None, "stop", "stop", **R1),
            chunk(None, **R1, usage=usage(12, 40, 0.0000913, reasoning=35)),
        ),
        R1["model"],
        text="Hello!",
        reasoning="Greet back.",
        usage=(12, 40, 35, 0, 0, 0.0000913),
        sent_details=[sent("text", {"format": "unknown"}, 0, text="Greet back.")],
    ),
    # Kimi K2 thinking: plain `reasoning`, then a call whose id (Moonshot's
    # `functions.<name>:<n>`) comes again on a later fragment; usage on a chunk with no
    # choices.
    "kimi reasoning then a call": Turn(
        sse(
            chunk({"role": "assistant", "content": "", "reasoning": "Paris first."}, **KIMI),
            chunk(call(0, "functions.get_weather:0", "get_weather", ""), **KIMI),
            chunk(call(0, "functions.get_weather:0", None, '{"city":'), **KIMI),
            chunk(call(0, None, None, ' "Paris"}'), **KIMI),
            chunk(None, "tool_calls", "tool_calls", **KIMI),
            {**chunk(None, **KIMI), "choices": [], "usage": usage(310, 60, 0.000276)},
        ),
        KIMI["model"],
        reasoning="Paris first.",
        calls=(("functions.get_weather:0", "get_weather", PARIS),),
        usage=(310, 60, 0, 0, 0, 0.000276),
        stop="tool_use",
    ),
    # GLM: reasoning details of format null, then a call whose arguments come whole,
    # usage on the finish chunk.
    "glm reasoning then a whole call": Turn(
        sse(
            chunk(detail("text", {"format": None}, 0, text="Look it up."), **GLM),
            chunk(call(0, "call_glm_1", "get_weather", '{"city": "Rome"}'), **GLM),
            chunk(
                None, "tool_calls", "tool_calls", **GLM, usage=usage(150, 30, 0.00012, reasoning=9)
            ),
        ),
        GLM["model"],
        reasoning="Look it up.",
        calls=(("call_glm_1", "get_weather", ROME),),
        usage=(150, 30, 9, 0, 0, 0.00012),
        stop="tool_use",
        sent_details=[sent("text", {"format": None}, 0, text="Look it up.")],
    ),
    # Grok: reasoning text, then its encrypted reasoning with an `rs_` id, then text.
    "grok reasoning with encrypted content": Turn(
        sse(
            chunk(detail("text", GROK, 0, text="Simple."), **GROK_4),
            chunk(detail("encrypted", GROK, 0, data="B7oH6rUO", id="rs_619f"), **GROK_4),
            chunk(say("Sunny."), **GROK_4),
            chunk(None, "stop", "completed", **GROK_4),
            chunk(None, **GROK_4, usage=usage(687, 187, 0.00333825, reasoning=118, cached=679)),
        ),
        GROK_4["model"],
        text="Sunny.",
        reasoning="Simple.",
        signatures=("B7oH6rUO",),
        usage=(8, 187, 118, 679, 0, 0.00333825),
        sent_details=[
            sent("text", GROK, 0, text="Simple."),
            sent("encrypted", GROK, 0, id="rs_619f", data="B7oH6rUO"),
        ],
    ),
    # The web plugin: url_citation annotations on the first delta (content empty), the
    # answer, the finish twice, the second with usage whose cost includes the search.
    "web search citations": Turn(
        sse(
            chunk(
                say("")
                | {
                    "annotations": [
                        _cite(
                            "https://github.com/pydantic/pydantic-ai",
                            "pydantic/pydantic-ai",
                            "Agents.",
                        ),
                        _cite("https://ai.pydantic.dev", "", "Docs."),
                    ]
                },
                **SEARCH,
            ),
            chunk(say("https://github.com/pydantic/pydantic-ai"), **SEARCH),
            chunk(None, "stop", "stop", **SEARCH),
            chunk(None, "stop", "stop", **SEARCH, usage=usage(1854, 13, 0.0077585)),
        ),
        SEARCH["model"],
        text="https://github.com/pydantic/pydantic-ai",
        citations=(
            ("https://github.com/pydantic/pydantic-ai", "pydantic/pydantic-ai", "Agents."),
            ("https://ai.pydantic.dev", None, "Docs."),
        ),
        usage=(1854, 13, 0, 0, 0, 0.0077585),
    ),
    # Image output: text, then `delta.images` (no event: logged), usage with image tokens.
    "gemini image output": Turn(
        sse(
            chunk(say("Here is a cat."), **IMAGE),
            chunk(
                say("")
                | {
                    "images": [
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}
                    ]
                },
                **IMAGE,
            ),
            chunk(None, "stop", "STOP", **IMAGE),
            chunk(None, **IMAGE, usage=usage(10, 1300, 0.039, images=1290)),
        ),
        IMAGE["model"],
        text="Here is a cat.",
        usage=(10, 1300, 0, 0, 0, 0.039),
    ),
    # An upstream error after partial output (API Reference, Streaming: "Handling errors
    # during streaming"): the error beside `finish_reason: "error"`; the text stays.
    "upstream error after partial output": Turn(
        sse(
            chunk(say("It is 2"), **SONNET),
            chunk(
                say(""),
                "error",
                "error",
                **SONNET,
                error={"code": "server_error", "message": "Provider disconnected unexpectedly"},
            ),
        ),
        SONNET["model"],
        text="It is 2",
        terminal="error",
        error_code="server_error",
    ),
}


async def _serve_in_turn(serve: Serve, *answers: bytes) -> tuple[str, list[dict[str, Any]]]:
    """A loopback endpoint that answers each request with the next of `answers` (the
    last one again after them); returns its base URL and the bodies it received."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(answers[min(len(bodies), len(answers)) - 1])
        return response

    return await serve(handler), bodies


async def _two_turns(serve: Serve, data: bytes) -> tuple[list[Event], dict[str, Any]]:
    """Turn 1 streamed from `data`; turn 2 with turn 1 and one result per call in its
    history. Returns turn 1's events and turn 2's assistant message as received."""
    base_url, bodies = await _serve_in_turn(serve, data, CHAT_ANSWER)
    ask = ChatRequest(
        model="openrouter/auto",
        messages=[QUESTION],
        tools=[WEATHER],
        params={"reasoning": {"effort": "medium"}},
    )
    async with rxllm.provider(
        "openrouter", api_key="sk-or-test", base_url=base_url, max_attempts=1
    ) as p:
        events = [event async for event in p.astream(ask)]
        turn = record_of(events, "openrouter").to_message()
        results = [Message.tool(c.call_id, "21C") for c in events if isinstance(c, ToolRequest)]
        history = [QUESTION, turn, *results, *([] if results else [Message.user("Thanks.")])]
        second = await p.complete(ask.model_copy(update={"messages": history}))
    assert second.ok and len(bodies) == 2
    return events, bodies[1]["messages"][1]


@pytest.mark.parametrize("name", TURNS)
async def test_openrouter_relays_each_upstream(serve: Serve, name: str) -> None:
    turn = TURNS[name]
    events, sent = await _two_turns(serve, turn.data)
    # The same events however the network cut the bytes (and over HTTP as replayed).
    assert events == replay_every_way(turn.data, "openrouter")

    summary = summarize(events)
    assert summary.text == turn.text
    assert summary.reasoning == turn.reasoning
    assert tuple(summary.signatures) == turn.signatures
    assert tuple(summary.tool_calls) == turn.calls
    # Each call started once, and requested once (above), with its exact arguments.
    starts = [e.call_id for e in events if e.type == "tool_start"]
    assert starts == [call_id for call_id, _, _ in turn.calls]
    cited = tuple((e.url, e.title, e.cited_text) for e in events if isinstance(e, Citation))
    assert cited == turn.citations
    if turn.usage is None:
        assert summary.usage is None
    else:
        got = summary.usage
        assert got is not None
        counts = (
            got.input_tokens,
            got.output_tokens,
            got.reasoning_tokens,
            got.cache_read_tokens,
            got.cache_write_tokens,
        )
        assert counts == turn.usage[:5]
        assert got.cost_usd == pytest.approx(turn.usage[5])
        assert got.total_tokens == sum(counts) - got.reasoning_tokens  # reasoning once
    assert summary.terminal == turn.terminal
    if turn.terminal == "done":
        assert (summary.stop_reason, summary.model) == (turn.stop, turn.model)
    else:
        failed = events[-1]
        assert failed.type == "error" and failed.error.code == turn.error_code
        assert failed.error.kind == "stream_error"

    # Turn 2: the reasoning details back as they came, in order; each call as made.
    assert sent.get("reasoning_details") == turn.sent_details
    sent_calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in sent.get("tool_calls") or ()
    ]
    assert tuple(sent_calls) == turn.calls
    assert sent.get("content") == (turn.text or None)


async def test_openrouter_error_before_any_output_is_retried_unchanged(serve: Serve) -> None:
    """An upstream that fails before the first token: OpenRouter answers 200 and one
    chunk with the error (`code` the upstream's status, `metadata.raw` its body) beside
    `finish_reason: "error"`. Nothing is committed, the upstream was overloaded: the
    same body goes again, and its answer is the turn."""
    overloaded = sse(
        chunk(
            {"role": "assistant", "content": ""},
            "error",
            "error",
            **SONNET,
            error={
                "code": 502,
                "message": "Provider returned error",
                "metadata": {
                    "raw": json.dumps({"type": "error", "error": {"type": "overloaded_error"}}),
                    "provider_name": "Anthropic",
                },
            },
        ),
    )
    base_url, bodies = await _serve_in_turn(serve, overloaded, CHAT_ANSWER)
    async with rxllm.provider("openrouter", api_key="sk-or-test", base_url=base_url) as p:
        events = [e async for e in p.astream(ChatRequest(model="m", messages=[QUESTION]))]
    assert [e.type for e in events] == ["retry", "text", "done"]
    assert events[0].reason.kind == "stream_error" and events[0].reason.status == 502
    assert bodies[0] == bodies[1]
