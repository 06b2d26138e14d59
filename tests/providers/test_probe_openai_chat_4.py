"""Chat-wire shapes a probe found mishandled, each written by hand from the server's source
or the provider's reference (named beside it), replayed whole and cut at arbitrary byte
boundaries, and once end to end over a loopback server.
"""

from __future__ import annotations

from typing import Any

import rxllm
from rxllm.events import Citation, Done
from tests.providers.test_probe_openai_chat import _chunk, _sse
from tests.providers.test_probe_openai_chat_3 import _record
from tests.support import ServeBody, kinds, log_messages, replay_every_way, summarize

# ------------------------- text-generation-inference: a stop sequence is `stop_sequence`

# TGI's router writes a chat chunk's finish with `FinishReason::format(use_stop = true)`,
# which turns only `eos_token` into "stop": a matched stop sequence stays
# "stop_sequence" (huggingface/text-generation-inference, router/src/lib.rs).
_TGI_STOP = _sse(
    _chunk({"role": "assistant", "content": "1, 2, 3"}, model="tgi"),
    _chunk({"role": "assistant", "content": ""}, "stop_sequence", model="tgi"),
)


def test_tgi_stop_sequence_is_a_natural_stop() -> None:
    # Before: `done(other, "stop_sequence")`, as if the turn ended for an unknown reason.
    summary = summarize(replay_every_way(_TGI_STOP, "custom"))
    assert summary.text == "1, 2, 3"
    assert (summary.stop_reason, summary.raw_stop_reason) == ("stop", "stop_sequence")


async def test_tgi_stop_sequence_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _TGI_STOP, "custom")
    assert isinstance(rec.terminal, Done)
    assert (rec.terminal.stop_reason, rec.terminal.raw_stop_reason) == ("stop", "stop_sequence")


# ------------------------------------- OpenAI audio output: the transcript is the text


# With `modalities: ["text", "audio"]` (gpt-4o-audio-preview), `delta.content` stays null
# and the answer streams as `delta.audio` pieces: an `id`, base64 `data` and `transcript`
# text, the last piece only `expires_at` (openai-python's `ChoiceDeltaAudio`).
def _audio(audio: dict[str, Any]) -> dict[str, Any]:
    return _chunk({"audio": audio}, model="gpt-4o-audio-preview")


_AUDIO = _sse(
    _chunk({"role": "assistant", "content": None, "refusal": None}, model="gpt-4o-audio-preview"),
    _audio({"id": "audio_1", "transcript": "Hello"}),
    _audio({"data": "UklGRg==", "transcript": " there!"}),
    _audio({"data": "AAAAAA=="}),
    _audio({"expires_at": 1729000000}),
    _chunk({}, "stop", model="gpt-4o-audio-preview"),
    {"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 30,
     "total_tokens": 39, "completion_tokens_details": {"audio_tokens": 25, "text_tokens": 5}}},
)  # fmt: skip


def test_openai_audio_transcript_is_the_text() -> None:
    # Before: `delta` field 'audio' was logged as having no event: a turn with no text.
    with log_messages() as messages:
        events = replay_every_way(_AUDIO, "openai")
    assert kinds(events) == ["text", "usage", "done"]
    summary = summarize(events)
    assert (summary.text, summary.stop_reason) == ("Hello there!", "stop")
    assert summary.usage is not None and summary.usage.total_tokens == 39
    assert any("audio data has no event" in message for message in messages)


async def test_openai_audio_transcript_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_AUDIO)
    async with rxllm.provider(
        "openai", api_key="sk-test", base_url=base_url, allow_private_network=True, max_attempts=1
    ) as p:
        rec = await p.complete(rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")]))
    assert rec.text == "Hello there!" and rec.attempts[0].committed
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "stop"


# ------------------------------- Perplexity concise stream mode: the reasoning steps


# `stream_mode: "concise"` (docs.perplexity.ai, "Stream Mode: Concise vs Full"): first
# `chat.reasoning` chunks whose delta holds `reasoning_steps` (`{thought, type,
# web_search: {search_keywords, search_results}}`) beside an empty `message`, then
# `chat.reasoning.done` with the `search_results`, the answer's `chat.completion.chunk`s,
# and `chat.completion.done` with the finish, the usage and the sources again.
def _pplx(kind: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Any:
    choice = {"index": 0, "finish_reason": finish, "delta": {"role": "assistant"} | delta}
    if kind != "chat.completion.chunk":
        choice["message"] = {"role": "assistant", "content": ""}
    return {"id": "cfa38f9d", "model": "sonar-pro", "created": 1759441590, "object": kind,
            "choices": [choice]} | extra  # fmt: skip


_SOURCE = {"title": "Seattle weather", "url": "https://weather.example/sea", "date": None}
_STEP = {
    "thought": "Searching the web for Seattle's current weather...",
    "type": "web_search",
    "web_search": {"search_keywords": ["Seattle weather"], "search_results": [_SOURCE]},
}
_PPLX = _sse(
    _pplx("chat.reasoning", {"content": "", "reasoning_steps": [_STEP]}),
    _pplx("chat.reasoning", {"content": "", "reasoning_steps": [
        {"thought": "Reading the forecast.", "type": "fetch_url_content"}]}),
    _pplx("chat.reasoning.done", {"content": ""}, search_results=[_SOURCE]),
    _pplx("chat.completion.chunk", {"content": "Sunny, 61°F."}),
    _pplx("chat.completion.done", {"content": ""}, "stop", search_results=[_SOURCE],
          usage={"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}),
)  # fmt: skip


def test_perplexity_concise_reasoning_steps_are_reasoning() -> None:
    # Before: `reasoning_steps` was logged as a field with no event: no reasoning at all.
    events = replay_every_way(_PPLX, "custom")
    # The first step's search is the tool Perplexity ran (the second step ran none).
    assert kinds(events) == [
        "reasoning", "server_tool_call", "server_tool_result", "reasoning", "citation", "text",
        "usage", "done",
    ]  # fmt: skip
    summary = summarize(events)
    assert summary.reasoning == (
        "Searching the web for Seattle's current weather...\nReading the forecast.\n"
    )
    assert summary.text == "Sunny, 61°F."
    assert [(e.url, e.title) for e in events if isinstance(e, Citation)] == [
        ("https://weather.example/sea", "Seattle weather")
    ]


async def test_perplexity_concise_reasoning_steps_over_http(serve_body: ServeBody) -> None:
    rec = await _record(serve_body, _PPLX, "custom")
    assert rec.reasoning.startswith("Searching the web") and rec.text == "Sunny, 61°F."
    assert rec.usage is not None and rec.usage.total_tokens == 20
    assert isinstance(rec.terminal, Done) and rec.terminal.stop_reason == "stop"
