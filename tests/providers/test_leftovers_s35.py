"""Stream readings earlier sessions saw and left, each decided from the provider's own
reference (its SDK's types, its docs) and from the servers that really write the shape:
fixed where rxllm misread, pinned where the reading is right. Bodies are written by hand,
replayed whole and cut at arbitrary byte boundaries, and over a loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.events import Done, Failed, ReasoningDelta, ServerToolResult
from rxllm.providers.anthropic import anthropic_messages
from tests.support import ServeBody, log_messages, replay_every_way, summarize

# ------------------------------------------------------------------ the Anthropic wire


def _sse(*payloads: dict[str, Any]) -> bytes:
    return "".join(
        f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n" for payload in payloads
    ).encode()


_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "relay-model",
        "content": [],
        "usage": {"input_tokens": 5, "output_tokens": 0},
    },
}
_STOP = {"type": "message_stop"}


def _text(index: int, text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def _call(index: int, call_id: str, name: str, *pieces: str, **block: Any) -> list[dict[str, Any]]:
    start = {"type": "tool_use", "id": call_id, "name": name, **block}
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in pieces
        ),
        {"type": "content_block_stop", "index": index},
    ]


def _delta(stop: str | None, **usage: int) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 3, **usage},
    }


# OpenAI's finish reasons written as an Anthropic `stop_reason` by relays that translate
# a chat or Responses upstream into this wire: router-for-me/CLIProxyAPI's Codex-to-Claude
# translator (internal/translator/codex/claude) passes the upstream's `stop` through
# as it is, and gpt4free-style adapters write `{"stop_reason": choice.finish_reason}`.
# Each means what it says on the chat wire; before, all but `content_filter` read
# `other`, and `tool_calls` made an agent loop that reads the stop reason skip its calls.
@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_use"),
        ("content_filter", "content_filter"),
    ],
)
def test_anthropic_openai_stop_words_are_the_stops_they_name(raw: str, stop: str) -> None:
    events = replay_every_way(_sse(_START, *_text(0, "Hi"), _delta(raw), _STOP), "anthropic")
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == (stop, raw)


def test_anthropic_openai_stop_after_calls_is_tool_use_and_ends_open_blocks() -> None:
    """`stop` is the model's own end, as `end_turn` is: after a client call the turn is
    `tool_use` (the raw word kept), and a call block the relay left without its
    `content_block_stop` ends at the `message_delta` with its arguments complete."""
    call = _call(1, "call_1", "get_weather", '{"city": ', '"Paris"}')[:-1]  # no block stop
    body = _sse(_START, *_text(0, "Checking."), *call, _delta("stop"), _STOP)
    summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.tool_calls == [("call_1", "get_weather", {"city": "Paris"})]
    assert (summary.terminal, summary.stop_reason, summary.raw_stop_reason) == (
        "done",
        "tool_use",
        "stop",
    )


async def test_anthropic_openai_stop_word_over_http(serve_body: ServeBody) -> None:
    body = _sse(_START, *_call(0, "call_1", "f", "{}"), _delta("tool_calls"), _STOP)
    base_url = await serve_body(body)
    async with rxllm.provider("anthropic", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )
    assert [(c.call_id, c.arguments) for c in record.tool_calls] == [("call_1", {})]
    assert isinstance(record.terminal, Done)
    assert (record.terminal.stop_reason, record.terminal.raw_stop_reason) == (
        "tool_use",
        "tool_calls",
    )


# A `tool_use` block's `input` written as JSON null is no input at all: Go relays write a
# nil map so (`Input map[string]interface{} \`json:"input"\``, no omitempty, is common to
# relays' Anthropic types), and the anthropic SDK's accumulator keeps what the start said
# until an `input_json_delta` replaces it. With no delta, the block ends as one without
# `input` does: the protocol marked the call complete with nothing to pass, `{}` (DESIGN,
# no-argument calls). Before, null went on as the arguments "null", a malformed call.
def test_anthropic_tool_use_with_null_input_and_no_deltas_is_a_call_without_arguments() -> None:
    body = _sse(_START, *_call(0, "toolu_1", "now", input=None), _delta("tool_use"), _STOP)
    summary = summarize(replay_every_way(body, "anthropic"))
    assert summary.tool_calls == [("toolu_1", "now", {})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def test_anthropic_tool_use_with_null_input_takes_its_deltas() -> None:
    body = _sse(
        _START,
        *_call(0, "toolu_1", "get_weather", '{"city"', ': "Oslo"}', input=None),
        _delta("tool_use"),
        _STOP,
    )
    assert summarize(replay_every_way(body, "anthropic")).tool_calls == [
        ("toolu_1", "get_weather", {"city": "Oslo"})
    ]


def test_anthropic_whole_tool_use_with_null_input_in_message_start() -> None:
    """A `message_start` already holding the block (a resumed turn) reads it the same."""
    start = json.loads(json.dumps(_START))
    start["message"]["content"] = [
        {"type": "tool_use", "id": "toolu_1", "name": "now", "input": None}
    ]
    body = _sse(start, _delta("tool_use"), _STOP)
    assert summarize(replay_every_way(body, "anthropic")).tool_calls == [("toolu_1", "now", {})]


def test_anthropic_server_tool_use_with_null_input_is_a_call_without_arguments() -> None:
    """The same for a server tool call: `{}`, where null was skipped as no object."""
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": None}
    body = _sse(
        _START,
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_stop", "index": 0},
        _delta("end_turn"),
        _STOP,
    )
    calls = [e for e in replay_every_way(body, "anthropic") if e.type == "server_tool_call"]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [("srvtoolu_1", "web_search", {})]


def test_anthropic_tool_use_with_a_non_object_input_stays_malformed() -> None:
    """Guard: an input that is a value but no object (a string) is not invented into
    `{}`: the call fails as malformed, naming it."""
    body = _sse(_START, *_call(0, "toolu_1", "now", input="soon"), _delta("tool_use"), _STOP)
    summary = summarize(replay_every_way(body, "anthropic"))
    assert (summary.terminal, summary.error_kind) == ("error", "malformed_tool_arguments")


def test_anthropic_error_event_of_an_unknown_type_keeps_no_status() -> None:
    """Guard: an `error` event whose `error.type` is none of Anthropic's (its SDK's
    `ErrorType`: invalid_request, authentication, billing, permission, not_found,
    rate_limit, timeout, api, overloaded; and the errors page's `request_too_large`)
    gets no status rxllm would have to guess. The anthropic SDK raises such an event as
    an `APIStatusError` built from the `200 OK` response, mapping no type to a status
    (`_make_status_error` reads only the HTTP status), so no SDK reading says which
    status the new type stands for. rxllm keeps what was sent, as DESIGN's `ErrorInfo`
    asks: `stream_error`, the message with the type beside it, the type as `code`, the
    whole payload as `raw`, its `request_id`; whether it is worth retrying is the
    recovery policy's reading of its words, as for any error without a status. A status
    the error object names itself is still read (a proxy's 5xx)."""
    unknown = {
        "type": "error",
        "error": {"type": "capacity_shortage_error", "message": "Try again soon."},
        "request_id": "req_011CUnknown",
    }
    events = replay_every_way(_sse(_START, *_text(0, "Hi"), unknown), "anthropic")
    failed = events[-1]
    assert isinstance(failed, Failed)
    error = failed.error
    assert (error.kind, error.status, error.code) == (
        "stream_error",
        None,
        "capacity_shortage_error",
    )
    assert error.message == "Try again soon. (capacity_shortage_error)"
    assert error.raw is not None and json.loads(error.raw) == unknown
    assert error.request_id == "req_011CUnknown"

    named = {"type": "error", "error": {"type": "upstream_error", "message": "down", "status": 503}}
    failed = replay_every_way(_sse(_START, named), "anthropic")[-1]
    assert isinstance(failed, Failed)
    error = failed.error
    assert (error.status, error.code, error.retryable) == (503, "upstream_error", True)


def _thinking(index: int, *pieces: str) -> list[dict[str, Any]]:
    """A thinking block as Anthropic starts it (`signature: ""`) and its deltas, open:
    no `signature_delta`, no `content_block_stop`."""
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
            for piece in pieces
        ),
    ]


_REFUSAL = {
    "type": "message_delta",
    "delta": {
        "stop_reason": "refusal",
        "stop_sequence": None,
        "stop_details": {
            "type": "refusal",
            "category": "cyber",
            "explanation": "This request was declined because it could enable cyber harm.",
        },
    },
    "usage": {"output_tokens": 9},
}


async def _record(serve_body: ServeBody, body: bytes) -> rxllm.StreamRecord:
    base_url = await serve_body(body)
    async with rxllm.provider("anthropic", api_key="k", base_url=base_url) as provider:
        return await provider.complete(
            rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        )


def _sent_back(record: rxllm.StreamRecord) -> list[dict[str, Any]]:
    """The turn's content blocks as the next Anthropic request writes them (none where
    nothing of it can be sent: the message is left out)."""
    _, messages = anthropic_messages(
        [rxllm.Message.user("hi"), record.to_message(), rxllm.Message.user("and?")]
    )
    return [
        block
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
    ]


# Anthropic signs a thinking block at its end, a `signature_delta` just before its
# `content_block_stop` (the extended-thinking docs; the SDKs accumulate it there). A
# block a refusal or a limit cut (the streaming classifier stepped in, `max_tokens` ran
# out) never ended, so it was never signed: it keeps its text as reasoning, and no empty
# signature makes it look like a block the server ended unsigned (DeepSeek's, which goes
# back as it came). Before, it got `signature: ""` and went back as a thinking block
# the API refuses ("Invalid `signature` in `thinking` block"); and after a refusal the
# docs ask for the turn to be removed or rephrased, not sent back as it is.
@pytest.mark.parametrize("stop", [_REFUSAL, _delta("max_tokens")], ids=["refusal", "max_tokens"])
async def test_anthropic_thinking_cut_open_gets_no_signature(
    serve_body: ServeBody, stop: dict[str, Any]
) -> None:
    body = _sse(_START, *_thinking(0, "Let me think", " about it"), stop, _STOP)
    events = replay_every_way(body, "anthropic")
    reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(e.text for e in reasoning) == "Let me think about it"
    assert [e.signature for e in reasoning] == [None, None]
    record = await _record(serve_body, body)
    assert record.reasoning == "Let me think about it"
    assert [p.signature for p in record.reasoning_parts] == [None]
    assert _sent_back(record) == []


def test_anthropic_thinking_cut_after_its_signature_keeps_it() -> None:
    """A block whose `signature_delta` came before the cut keeps that signature."""
    signature = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"},
    }
    body = _sse(_START, *_thinking(0, "Hmm"), signature, _REFUSAL, _STOP)
    assert summarize(replay_every_way(body, "anthropic")).signatures == ["EqQBCgIYAhIM"]


async def test_anthropic_unsigned_thinking_that_ended_goes_back_as_it_came(
    serve_body: ServeBody,
) -> None:
    """Guard: a block the server ended without a signature (DeepSeek's `/anthropic`),
    by its `content_block_stop` or by a natural end of the turn with the stop left out,
    still gets the empty signature it came with and goes back as it came."""
    ended = [*_thinking(0, "Plan."), {"type": "content_block_stop", "index": 0}]
    for blocks in (ended, _thinking(0, "Plan.")):
        body = _sse(_START, *blocks, *_text(1, "Done."), _delta("end_turn"), _STOP)
        record = await _record(serve_body, body)
        assert _sent_back(record)[0] == {"type": "thinking", "thinking": "Plan.", "signature": ""}


def test_anthropic_web_fetch_document_citation_gives_no_citation() -> None:
    """Guard: a citation of a fetched page is a document location (`char_location`, or
    `page_location` for a PDF) with a `document_index`, `document_title` and
    `cited_text`, no URL (the web fetch tool's docs). The index counts "all document
    content blocks in the request (spanning across all messages)" (the citations docs):
    the user's documents and every earlier turn's fetches too, which one stream does not
    see, so matching it to this turn's fetch would be a guess; and a `citation` event
    stands for a source by its `url` (DESIGN), which this one has none of. It stays
    without a citation, logged at debug with its title, as before; the fetched page's
    URL reaches the user in the `server_tool_result` of the fetch."""
    call = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_fetch",
        "input": {"url": "https://example.com/article"},
    }
    result = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {
            "type": "web_fetch_result",
            "url": "https://example.com/article",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "Full text..."},
                "title": "Article Title",
                "citations": {"enabled": True},
            },
            "retrieved_at": "2025-08-25T10:30:00Z",
        },
    }
    cited = {
        "type": "text",
        "text": "AI will transform healthcare",
        "citations": [
            {
                "type": "char_location",
                "document_index": 0,
                "document_title": "Article Title",
                "start_char_index": 1234,
                "end_char_index": 1456,
                "cited_text": "Artificial intelligence is poised to revolutionize healthcare",
            },
            {
                "type": "page_location",
                "document_index": 1,
                "document_title": "Report.pdf",
                "start_page_number": 2,
                "end_page_number": 3,
                "cited_text": "Page two says so.",
            },
        ],
    }
    body = _sse(
        _START,
        {"type": "content_block_start", "index": 0, "content_block": call},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": cited},
        {"type": "content_block_stop", "index": 2},
        _delta("end_turn"),
        _STOP,
    )
    with log_messages() as logged:
        events = replay_every_way(body, "anthropic")
    assert [e.type for e in events] == [
        "server_tool_call",
        "server_tool_result",
        "text",
        "usage",
        "done",
    ]
    fetched = events[1]
    assert isinstance(fetched, ServerToolResult)
    assert fetched.content["url"] == "https://example.com/article"
    assert any("char_location citation without a url: Article Title" in m for m in logged)
    assert any("page_location citation without a url: Report.pdf" in m for m in logged)


# ------------------------------------------------------------------------ the Gemini wire


def _gemini(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)


def _said(text: str, finish: Any = None, **candidate: Any) -> dict[str, Any]:
    """A chunk of candidate 0 saying `text`, with `finish` where given."""
    body: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, **candidate}
    if finish is not None:
        body["finishReason"] = finish
    return {
        "candidates": [body],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5},
        "modelVersion": "gemini-2.5-flash",
    }


# `finishReason` as its proto enum number: Google's REST endpoints write enums so when
# asked (`$alt=json;enum-encoding=int`, which Google's generated REST clients send) and
# proto-plus writes them so by default (`Candidate.to_json`: `use_integers_for_enums`),
# which cassettes and relays built on google.ai.generativelanguage pass on. Both of
# Google's numberings are read where they agree: the Gemini API's
# (google.ai.generativelanguage `Candidate.FinishReason`: STOP 1, MAX_TOKENS 2, SAFETY 3,
# RECITATION 4, OTHER 5, LANGUAGE 6, BLOCKLIST 7, PROHIBITED_CONTENT 8, ... IMAGE_SAFETY
# 11) and Vertex AI's, which this wire reads too (google.cloud.aiplatform: OTHER 5,
# BLOCKLIST 6, PROHIBITED_CONTENT 7, SPII 8, ... IMAGE_SAFETY 11). Before, every number
# read `other`, a finished answer and a safety stop alike.
@pytest.mark.parametrize(
    ("number", "stop"),
    [
        (1, "stop"),
        (2, "length"),
        (3, "content_filter"),
        (4, "content_filter"),
        (5, "other"),
        (6, "content_filter"),
        (7, "content_filter"),
        (8, "content_filter"),
        (11, "content_filter"),
    ],
)
def test_gemini_finish_reason_as_its_proto_number(number: int, stop: str) -> None:
    body = _gemini(_said("Hel"), _said("lo", number))
    summary = summarize(replay_every_way(body, "google"))
    assert (summary.text, summary.terminal, summary.stop_reason) == ("Hello", "done", stop)
    assert summary.raw_stop_reason == str(number)


def test_gemini_numbered_stop_after_a_call_is_tool_use() -> None:
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
    chunk = _said("", 1)
    chunk["candidates"][0]["content"]["parts"] = [call]
    summary = summarize(replay_every_way(_gemini(chunk), "google"))
    assert [name for _, name, _ in summary.tool_calls] == ["get_weather"]
    assert (summary.stop_reason, summary.raw_stop_reason) == ("tool_use", "1")


def test_gemini_finish_numbers_the_two_numberings_disagree_on_stay_other() -> None:
    """Guard: 9 is SPII to the Gemini API and MALFORMED_FUNCTION_CALL to Vertex AI, 10
    MALFORMED_FUNCTION_CALL and MODEL_ARMOR, 12 UNEXPECTED_TOOL_CALL and
    IMAGE_PROHIBITED_CONTENT: nothing in the stream says which API wrote the number, so
    it is read as no known word is, `other` with the number kept, never a guess."""
    for number in (9, 10, 12, 99):
        summary = summarize(replay_every_way(_gemini(_said("Hi", number)), "google"))
        assert (summary.stop_reason, summary.raw_stop_reason) == ("other", str(number))


async def test_gemini_finish_number_over_http(serve_body: ServeBody) -> None:
    base_url = await serve_body(_gemini(_said("Hel"), _said("lo", 2)))
    async with rxllm.provider("google", api_key="k", base_url=base_url) as provider:
        record = await provider.complete(
            rxllm.ChatRequest(model="gemini-2.5-flash", messages=[rxllm.Message.user("hi")])
        )
    assert record.text == "Hello"
    assert isinstance(record.terminal, Done)
    assert (record.terminal.stop_reason, record.terminal.raw_stop_reason) == ("length", "2")


def test_gemini_snake_case_chunks_are_not_read_as_a_finished_turn() -> None:
    """Guard: `finish_reason`, `usage_metadata`, `model_version` are the Python SDKs'
    field names (google-genai's `to_json_dict`, proto-plus `to_dict`), which apps write
    into their own caches, mocks and logs; no server was found sending them on the wire
    (Gemini's REST API, Vertex AI's and the relays that pass their streams on write
    the JSON names, camelCase). So they are not read: a chunk in them gives its text
    (`content.parts` is spelled alike), and with no `finishReason` the stream ends
    truncated, never a `done` that invents an end; the unread fields are logged at
    debug with their names, nothing dropped unsaid."""
    chunk = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Hi"}]},
                "finish_reason": "STOP",
                "index": 0,
            }
        ],
        "usage_metadata": {
            "prompt_token_count": 3,
            "candidates_token_count": 1,
            "total_token_count": 4,
        },
        "model_version": "gemini-2.5-flash",
    }
    with log_messages() as logged:
        events = replay_every_way(_gemini(chunk), "google")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.error_kind) == ("Hi", "error", "truncated")
    assert summary.usage is None
    assert any("['model_version', 'usage_metadata']" in message for message in logged)
    assert any("candidate fields ['finish_reason']" in message for message in logged)


# ------------------------------------------------------------------------- the chat wire


def _chat(*chunks: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def _delta_chunk(delta: dict[str, Any], finish: str | None = None, **beside: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
        **beside,
    }


def test_chat_chunk_with_choices_and_a_nonzero_error_code_ends_in_error() -> None:
    """Guard: a top-level `error_code` is a status envelope, 0 where all went well:
    FastChat's openai_api_server passes its worker's failure on as it came
    (`{"text": "**NETWORK ERROR DUE TO HIGH TRAFFIC...**", "error_code": 50002}`, then
    `[DONE]`), Baidu Qianfan's v1 API answers `{"error_code": 18, "error_msg": ...}`.
    Neither writes `choices` beside it, and no server was found that does; a nonzero
    code means the request failed in every envelope that has the key, and nothing on
    the wire says it means otherwise beside choices. So the chunk's choice is read
    first (its text is output already streamed), then the turn ends in
    `error(stream_error)` with the code and the words, never `done`; a chunk whose
    `error_code` is 0 goes on."""
    fine = _delta_chunk({"role": "assistant", "content": "Hel"}, error_code=0)
    failed = _delta_chunk(
        {"content": "lo"},
        error_code=50002,
        text="**NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE.**",
    )
    events = replay_every_way(_chat(fine, failed), "custom")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.error_kind) == (
        "Hello",
        "error",
        "stream_error",
    )
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.code, error.error.message) == (
        "50002",
        "**NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE.**",
    )
    ok = summarize(replay_every_way(_chat(fine, _delta_chunk({}, "stop", error_code=0)), "custom"))
    assert (ok.text, ok.terminal, ok.stop_reason) == ("Hel", "done", "stop")


def _named(*names: str) -> bytes:
    """A call whose name comes in `names` (the first with its id), its arguments after."""
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": names[0]}}
    return _chat(
        _delta_chunk({"role": "assistant", "tool_calls": [first]}),
        *(_delta_chunk({"tool_calls": [{"index": 0, "function": {"name": n}}]}) for n in names[1:]),
        _delta_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": 1}'}}]}),
        _delta_chunk({}, "tool_calls"),
    )


@pytest.mark.parametrize(
    ("names", "name"),
    [
        (("edit_ex", "isting_file"), "edit_existing_file"),  # Gemini's endpoint splits it
        (("get_weather", "get_weather", "get_weather"), "get_weather"),  # MiniMax on NIM
        (("edit_ex", "isting_file", "edit_existing_file"), "edit_existing_file"),
        (("get", "get"), "get"),  # the one reading a split name could lose
    ],
)
def test_chat_name_piece_equal_to_the_name_so_far_is_the_name_said_again(
    names: tuple[str, ...], name: str
) -> None:
    """Guard: a name said in pieces before the arguments is joined (Gemini's
    OpenAI-compatible endpoint: "edit_ex", "isting_file", continuedev/continue#5849),
    and a piece equal to the whole name so far is that name said again (MiniMax on
    NVIDIA NIM names the call on every fragment, hermes-agent#8259). The two readings
    meet only where a name is one word twice cut at its half ("getget" as "get",
    "get"): no server was found splitting a name so, while the repeat is real, so the
    repeat is read and "getget" would be named "get"."""
    summary = summarize(replay_every_way(_named(*names), "custom"))
    assert summary.tool_calls == [("call_1", name, {"q": 1})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
