"""Chat-completions stream shapes of the current references that no other test holds:
OpenAI's `ChatCompletionChunk` (openai/openai-python src/openai/types/chat/
chat_completion_chunk.py), OpenRouter's streamed chunk (OpenRouterTeam/typescript-sdk
src/models/chatstreamchunk.ts, chatstreamdelta.ts) and the fields the endpoints of the
family add, each checked against what a user of that endpoint should get.

Each body is written by hand from the reference or thread named beside it (ids and
opaque values made up), replayed whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked: every event once, in order, nothing the provider
said mixed into the text.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import ToolRequest
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    """`data:` frames of the payloads, then `[DONE]`."""
    body = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    model: str = "gpt-4o-2024-08-06",
    **top: Any,
) -> dict[str, Any]:
    """A `chat.completion.chunk` with one choice (or `choices: []` when `delta` is None
    and no finish)."""
    choices = []
    if delta is not None or finish is not None:
        choices = [{"index": 0, "delta": delta or {}, "finish_reason": finish, "logprobs": None}]
    return {
        "id": "chatcmpl-Bx7",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": model,
        "choices": choices,
        **top,
    }


def _call(index: int, **fields: Any) -> dict[str, Any]:
    """A delta holding one `tool_calls` entry: `id` and `type` where given, the rest
    under `function`."""
    entry: dict[str, Any] = {"index": index}
    for key in ("id", "type"):
        if key in fields:
            entry[key] = fields.pop(key)
    entry["function"] = fields
    return {"tool_calls": [entry]}


# -- a tool's name in pieces ------------------------------------------------------------


def test_a_tool_name_said_in_pieces_before_its_arguments_is_one_name() -> None:
    """continuedev/continue#5849: Gemini's OpenAI-compatible endpoint streams a call's
    `function.name` in pieces, "edit_ex" then "isting_file", as arguments are streamed,
    and openai-python's stream accumulator joins them (`accumulate_delta` adds strings);
    NVIDIA-NeMo/Switchyard#785 holds the pieces until the arguments begin. Here the
    first call's name comes in two pieces with empty arguments, then its arguments; a
    second call, named in pieces too, takes no arguments at all and ends at the finish.
    Each call is requested once under its whole name. Before: the call started at its
    first piece and kept it, a `tool_request` for a tool named "edit_ex" (and "get_").
    The thought signature on the first piece (`extra_content.google`) is the call's."""
    signed = _call(0, id="call_g1", type="function", name="edit_ex", arguments="")
    signed["tool_calls"][0]["extra_content"] = {"google": {"thought_signature": "CsQBAb4+9v"}}
    body = _sse(
        _chunk({"role": "assistant", "content": None}, model="gemini-2.5-flash"),
        _chunk(signed, model="gemini-2.5-flash"),
        _chunk(_call(0, name="isting_file", arguments=""), model="gemini-2.5-flash"),
        _chunk(_call(0, arguments='{"path": "a.py", '), model="gemini-2.5-flash"),
        _chunk(_call(0, arguments='"text": "x = 1"}'), model="gemini-2.5-flash"),
        _chunk(_call(1, id="call_g2", type="function", name="get_"), model="gemini-2.5-flash"),
        _chunk(_call(1, name="time"), model="gemini-2.5-flash"),
        _chunk({}, "tool_calls", model="gemini-2.5-flash"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                ("call_g1", "edit_existing_file", {"path": "a.py", "text": "x = 1"}),
                ("call_g2", "get_time", {}),
            ),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gemini-2.5-flash",
        ),
    )
    starts = [(e.call_id, e.name) for e in events if e.type == "tool_start"]
    assert starts == [("call_g1", "edit_existing_file"), ("call_g2", "get_time")]
    requests = [e for e in events if isinstance(e, ToolRequest)]
    assert [e.signature for e in requests] == ["CsQBAb4+9v", None]


def test_a_tool_name_said_again_on_every_fragment_is_said_once() -> None:
    """NousResearch/hermes-agent#8259 (#12230): MiniMax M2.7 served by NVIDIA NIM sends
    the call's whole name on every fragment ("read_fileread_file" where a client joins
    the pieces). The name said again is the same name, also before the arguments begin:
    one call named `read_file` with its arguments once."""
    model = "minimaxai/minimax-m2.7"

    def fragment(arguments: str, **first: Any) -> dict[str, Any]:
        return _chunk(_call(0, **first, name="read_file", arguments=arguments), model=model)

    body = _sse(
        _chunk({"role": "assistant", "content": ""}, model=model),
        fragment("", id="chatcmpl-tool-9f2", type="function"),
        fragment(""),
        fragment('{"path": '),
        fragment('"notes.md"}'),
        _chunk({}, "tool_calls", model=model),
        _chunk(
            model=model,
            usage={"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
        ),
    )
    events = replay_every_way(body, "nvidia")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("chatcmpl-tool-9f2", "read_file", {"path": "notes.md"}),),
            usage=(300, 20, 0, 0, 320),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "usage", "done"]


# -- OpenAI: a refusal and its logprobs ---------------------------------------------------


def test_openai_refusal_with_its_logprobs_is_the_refusal_alone() -> None:
    """openai-python chat_completion_chunk.py: `ChoiceLogprobs` has `content` and
    `refusal` (the refusal's tokens, when `logprobs: true`); every chunk carries
    `obfuscation` (padding, `stream_options.include_obfuscation`) and `service_tier`
    (`fast` asked for is written `priority`); the usage chunk details audio and
    prediction tokens, all 0 here. The refusal is a `refusal` event, once, never text;
    the logprobs and padding say nothing more."""

    def refused(piece: str) -> dict[str, Any]:
        token = {
            "token": piece,
            "logprob": -0.02,
            "bytes": list(piece.encode()),
            "top_logprobs": [],
        }
        chunk = _chunk({"refusal": piece}, service_tier="priority", obfuscation="q1Xz")
        chunk["choices"][0]["logprobs"] = {"content": None, "refusal": [token]}
        return chunk

    usage = {
        "prompt_tokens": 24,
        "completion_tokens": 9,
        "total_tokens": 33,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    body = _sse(
        _chunk(
            {"role": "assistant", "content": None, "refusal": ""},
            service_tier="priority",
            system_fingerprint="fp_7c9f1",
            obfuscation="Zk",
        ),
        refused("I'm sorry,"),
        refused(" I can't help with that."),
        _chunk({}, "stop", service_tier="priority", obfuscation="m3"),
        _chunk(usage=usage, service_tier="priority", obfuscation="p"),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="",
            refusal="I'm sorry, I can't help with that.",
            usage=(24, 9, 0, 0, 33),
            model="gpt-4o-2024-08-06",
        ),
    )
    assert kinds(events) == ["refusal", "refusal", "usage", "done"]


# -- OpenRouter ---------------------------------------------------------------------------


def _router(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    model: str = "openai/gpt-4o-audio-preview",
    **top: Any,
) -> Any:
    """A chunk as OpenRouter streams one (typescript-sdk chatstreamchunk.ts): its
    `provider`, and `native_finish_reason` beside the finish."""
    chunk = _chunk(delta, finish, model=model, provider=model.split("/")[0], **top)
    chunk["id"] = "gen-1760000000-aB3"
    for choice in chunk["choices"]:
        choice["native_finish_reason"] = finish
    return chunk


def test_openrouter_audio_output_is_its_transcript_and_the_audio_is_logged() -> None:
    """OpenRouterTeam/typescript-sdk src/models/chatstreamdelta.ts: OpenRouter's delta
    has `audio` (`ChatAudioOutput`: `id`, `data`, `transcript`, `expires_at`) as OpenAI's
    audio models stream it, and `service_tier` beside the chunk. The transcript is the
    answer's text, once; the audio bytes have no event (DESIGN: none for output audio):
    logged, never text."""
    body = _sse(
        _router({"role": "assistant", "content": None}, service_tier=None),
        _router({"audio": {"id": "audio_68f2", "transcript": "Bonjour"}}),
        _router({"audio": {"data": "UklGRiQAAABXQVZF"}}),
        _router({"audio": {"transcript": " à tous."}}),
        _router({"audio": {"data": "Zm10IBAAAAAB"}}),
        _router({"audio": {"expires_at": 1760003600}}),
        _router({}, "stop"),
        _router(
            usage={
                "prompt_tokens": 18,
                "completion_tokens": 70,
                "total_tokens": 88,
                "cost": 0.0041,
                "is_byok": False,
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 55},
            }
        ),
    )
    with log_messages() as logs:
        events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(
            text="Bonjour à tous.",
            usage=(18, 70, 0, 0, 88),
            cost=0.0041,
            model="openai/gpt-4o-audio-preview",
        ),
    )
    assert any("audio data has no event" in line for line in logs)


def test_openrouter_error_inside_a_call_dispatches_nothing() -> None:
    """OpenRouter API Reference, Streaming ("Handling errors during streaming") and
    typescript-sdk chatstreamchunk.ts (`error: {message, code: number}`): an upstream
    failing while a call's arguments stream ends the stream with the error at the top
    level and `finish_reason: "error"` in the choice. The text before stays, the call
    started is never requested (its arguments are cut), and the turn fails with the
    upstream's status."""
    failure = _router({"content": ""}, "error")
    failure["error"] = {"message": "Provider returned error", "code": 502}
    body = _sse(
        _router({"role": "assistant", "content": "Writing the file."}),
        _router(_call(0, id="call_w1", type="function", name="write_file", arguments="")),
        _router(_call(0, arguments='{"path": "a.txt", "text": "par')),
        failure,
    )
    events = replay_every_way(body, "openrouter")
    check(
        summarize(events),
        Expect(text="Writing the file.", terminal="error", error_kind="stream_error"),
    )
    assert kinds(events) == ["text", "tool_start", "error"]
    error = events[-1].error  # type: ignore[union-attr]
    assert (error.status, error.message) == (502, "Provider returned error")


# -- a call the token limit cut before its arguments ----------------------------------------


def test_a_call_cut_by_the_token_limit_before_its_arguments_is_not_dispatched() -> None:
    """openai-python chat_completion_chunk.py: `finish_reason: "length"` is "the maximum
    number of tokens specified in the request was reached". A call whose first delta
    (its id and name, `arguments: ""`) was the last thing written before the limit has
    no arguments because they were cut, not because it takes none: DESIGN ("never
    invent or truncate arguments"; "a call cut off before its completion signal is
    still an error"). The turn fails as a call cut short does when its arguments had
    begun: `malformed_tool_arguments` naming the limit, the usage after it kept, nothing
    dispatched. Before: a `tool_request` with `{}` and `done(length)`, a call the model
    never finished dispatched with invented arguments."""
    usage = {"prompt_tokens": 90, "completion_tokens": 16, "total_tokens": 106}
    body = _sse(
        _chunk({"role": "assistant", "content": "Saving it.", "refusal": None}),
        _chunk(_call(0, id="call_s1", type="function", name="write_file", arguments="")),
        _chunk({}, "length"),
        _chunk(usage=usage),
    )
    events = replay_every_way(body, "openai")
    check(
        summarize(events),
        Expect(
            text="Saving it.",
            usage=(90, 16, 0, 0, 106),
            terminal="error",
            error_kind="malformed_tool_arguments",
        ),
    )
    assert kinds(events) == ["text", "tool_start", "usage", "error"]
    error = events[-1].error  # type: ignore[union-attr]
    assert "write_file" in error.message and "(length)" in error.message


def test_a_custom_tool_input_cut_by_the_token_limit_is_not_dispatched() -> None:
    """openai-python chat_completion_chunk.py (`ChoiceDeltaToolCallCustom`: `name`,
    `input`): a custom tool's input is free text, so nothing in it says it is whole;
    only the finish does. `finish_reason: "length"` says the limit cut it: the code
    "print('hel" is not the call the model meant. The turn fails naming the limit,
    nothing dispatched; the same call ended by `tool_calls` is requested with its input.
    Before: `{"input": "print('hel"}` was requested, and the turn `done(length)`."""

    def custom(finish: str, *pieces: str) -> bytes:
        first = {"id": "call_c1", "type": "custom", "custom": {"name": "code_exec", "input": ""}}
        return _sse(
            _chunk({"role": "assistant", "content": None, "tool_calls": [{"index": 0, **first}]}),
            *(
                _chunk({"tool_calls": [{"index": 0, "type": "custom", "custom": {"input": p}}]})
                for p in pieces
            ),
            _chunk({}, finish),
        )

    events = replay_every_way(custom("length", "print(", "'hel"), "openai")
    check(
        summarize(events), Expect(text="", terminal="error", error_kind="malformed_tool_arguments")
    )
    assert kinds(events) == ["tool_start", "error"]
    assert "(length)" in events[-1].error.message  # type: ignore[union-attr]
    events = replay_every_way(custom("tool_calls", "print(", "'hello')"), "openai")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("call_c1", "code_exec", {"input": "print('hello')"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="gpt-4o-2024-08-06",
        ),
    )


# -- OpenRouter: the upstream's verdict behind a plain finish ---------------------------------


def test_openrouter_plain_stop_over_an_upstream_block_or_limit_says_the_upstreams_word() -> None:
    """OpenRouter passes the upstream's own word in `native_finish_reason`, and its
    normalized `finish_reason` can be a plain `stop` where the upstream declined: Claude's
    classifier (`stop_reason: "refusal"`, "a Claude routed via OpenRouter reports its own
    refusal here") or Gemini's safety block (`finishReason: "SAFETY"`, "OpenRouter can
    normalize finish_reason to 'stop' while the underlying provider blocked on safety"),
    as OpenRouter clients' tests pin both; gateways that translate Anthropic's wire write
    `stop` for a refusal too (router-for-me/CLIProxyAPI#4958). So can an upstream's token
    limit (`max_tokens`, `MAX_TOKENS`, a Responses upstream's `max_output_tokens`), which
    OpenRouter clients' tests also pin behind `stop`. The upstream's word says the answer
    was withheld or cut: `done(content_filter)` or `done(length)` with its raw word, the
    text before it kept, as a failed upstream behind `stop` already reads as a failure.
    An ordinary `stop` over `end_turn` or `STOP` stays `stop`. Before: `done(stop)`, a
    declined or cut turn read as a complete answer."""
    for native, text, stop, raw in (
        ("refusal", "I can help with part", "content_filter", "refusal"),
        ("SAFETY", "", "content_filter", "SAFETY"),
        ("max_tokens", "The first half", "length", "max_tokens"),
        ("MAX_TOKENS", "The first half", "length", "MAX_TOKENS"),
        ("max_output_tokens", "The first half", "length", "max_output_tokens"),
        ("end_turn", "Done.", "stop", "stop"),
        ("STOP", "Done.", "stop", "stop"),
    ):
        model = "google/gemini-2.5-pro" if native.isupper() else "anthropic/claude-opus-4.5"
        if native == "max_output_tokens":
            model = "openai/gpt-5"
        delta: dict[str, Any] = {"role": "assistant", "content": text}
        finish = _router({"content": ""}, "stop", model)
        finish["choices"][0]["native_finish_reason"] = native
        body = _sse(_router(delta, None, model), finish)
        events = replay_every_way(body, "openrouter")
        check(
            summarize(events),
            Expect(
                text=text,
                stop_reason=stop,
                raw_stop_reason=raw,
                model=model,
            ),
        )


# -- OpenAI's search models -----------------------------------------------------------------


def test_openai_search_model_url_citations_come_once_each_after_the_text() -> None:
    """platform.openai.com web search on Chat Completions (`gpt-5-search-api`,
    `web_search_options`): the answer cites its pages inline as markdown links, and the
    delta's `annotations` carry `url_citation` objects (`url`, `title`, `start_index`,
    `end_index` into the text). One page cited at two places is one source: a
    citation per page, in order, after the text; the text itself is unchanged."""
    text = (
        "Paris is sunny today ([meteo.example](https://meteo.example/paris?utm_source=openai)), "
        "with rain by Friday ([news.example](https://news.example/w?utm_source=openai); "
        "[meteo.example](https://meteo.example/paris?utm_source=openai))."
    )
    meteo = "https://meteo.example/paris?utm_source=openai"
    news = "https://news.example/w?utm_source=openai"

    def cite(url: str, title: str, start: int, end: int) -> dict[str, Any]:
        span = {"url": url, "title": title, "start_index": start, "end_index": end}
        return {"type": "url_citation", "url_citation": span}

    model = "gpt-5-search-api-2025-10-14"
    body = _sse(
        _chunk({"role": "assistant", "content": "", "refusal": None}, model=model),
        _chunk({"content": text[:60]}, model=model),
        _chunk({"content": text[60:]}, model=model),
        _chunk(
            {
                "annotations": [
                    cite(meteo, "Paris forecast", 21, 86),
                    cite(news, "Weekly weather", 106, 163),
                    cite(meteo, "Paris forecast", 165, 230),
                ]
            },
            model=model,
        ),
        _chunk({}, "stop", model=model),
        _chunk(
            model=model, usage={"prompt_tokens": 12, "completion_tokens": 60, "total_tokens": 72}
        ),
    )
    events = replay_every_way(body, "openai")
    check(summarize(events), Expect(text=text, usage=(12, 60, 0, 0, 72), model=model))
    cited = [(e.url, e.title) for e in events if e.type == "citation"]  # type: ignore[attr-defined]
    assert cited == [(meteo, "Paris forecast"), (news, "Weekly weather")]
    assert kinds(events) == ["text", "citation", "citation", "usage", "done"]
