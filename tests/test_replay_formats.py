"""`rxllm.replay` and `rxllm replay` on recordings shaped unlike the captures: other
line ends, a BOM, junk, HTTP response dumps, Gemini's JSON array, NDJSON, gzip, cuts,
and files that are no recording at all. Each replays, or ends in an error that says
what the file is; none hangs or raises a traceback."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import rxllm.sources.replay
from rxllm.events import (
    Done,
    ErrorInfo,
    Event,
    Failed,
    ReasoningDelta,
    Retry,
    Usage,
    UsageUpdate,
)
from rxllm.pipeline.record import RecordBuilder
from rxllm.pipeline.sniff import sniff_not_a_stream, sniff_provider
from rxllm.sources.replay import retry_marker
from tests.support import CAPTURES, captures_of, needs_captures, rechunk, replay, summarize

ALL = sorted(CAPTURES.glob("*/*.sse")) if CAPTURES.is_dir() else []
GEMINI = captures_of("gemini") if CAPTURES.is_dir() else []
WIRE_OF = {"anthropic": "anthropic", "gemini": "google", "openai-responses": "openai-responses"}
RESPONSES_API = {"responses_api_reasoning_function_call.sse", "responses_api_reasoning_text.sse"}


def wire_of(path: Path) -> str:
    if path.name in RESPONSES_API:
        return "openai-responses"
    return WIRE_OF.get(path.parent.name, "openai")


def payloads(sse: bytes) -> list[str]:
    """The data of each event of an SSE body (`[DONE]` left out)."""
    text = sse.decode().replace("\r\n", "\n")
    data = [line[5:].strip() for line in text.split("\n") if line.startswith("data:")]
    return [d for d in data if d and d != "[DONE]"]


def end_of(events: list[Event]) -> Failed:
    assert isinstance(events[-1], Failed), events[-1]
    return events[-1]


def lf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


OPENAI = CAPTURES / "openai" / "chat_text_usage.sse"
ANTHROPIC = CAPTURES / "anthropic" / "tool_use_input_json_delta.sse"


# -- line ends, BOM, junk ------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_line_ends_and_a_bom_change_nothing(path: Path) -> None:
    body = lf(path.read_bytes())
    wire = wire_of(path)
    expected = replay(body, wire)
    for variant in (
        body.replace(b"\n", b"\r\n"),
        body.replace(b"\n", b"\r"),
        b"\xef\xbb\xbf" + body,
        b"\xef\xbb\xbf" + body.replace(b"\n", b"\r"),
    ):
        assert replay(variant, wire) == expected
        assert sniff_provider(variant) == wire


@needs_captures
def test_junk_after_the_end_is_ignored() -> None:
    body = OPENAI.read_bytes()
    expected = replay(body, "openai")
    for junk in (b"garbage\x00\x01", b"\n<html>502 Bad Gateway</html>\n", b"data: {cut"):
        assert replay(body + junk, "openai") == expected


# -- HTTP response dumps -------------------------------------------------------------

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nx-request-id: req_1\r\n\r\n"


def chunked(body: bytes, size: int = 100) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


@needs_captures
def test_an_http_response_dump_replays_its_body() -> None:
    body = ANTHROPIC.read_bytes()
    expected = replay(body, "anthropic")
    chunked_head = HEAD.replace(b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    for dump in (
        HEAD + body,  # curl -i
        b"HTTP/1.1 100 Continue\r\n\r\n" + HEAD + body,
        b"HTTP/2 200\r\ncontent-type: text/event-stream\r\n\r\n" + body,
        chunked_head + chunked(body),  # the bytes on the wire: chunk sizes between
        HEAD.replace(b"\r\n", b"\n") + body,
    ):
        assert replay(dump, "anthropic") == expected
        assert replay(rechunk(dump, 1, 64), "anthropic") == expected
        assert sniff_provider(dump) == "anthropic"


def test_an_http_error_dump_is_that_error() -> None:
    dump = (
        b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
        b"retry-after: 7\r\nx-request-id: req_42\r\n\r\n"
        b'{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}'
    )
    error = end_of(replay(dump, "openai")).error
    assert error.status == 429 and error.kind == "rejected"
    assert error.message == "HTTP 429: Rate limit reached"
    assert error.retry_after == 7 and error.request_id == "req_42" and error.retryable
    assert error.raw is not None and "rate_limit_error" in error.raw


# -- JSON bodies: Gemini's array, NDJSON, a whole response ------------------------------


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.name)
def test_gemini_json_array_replays_as_its_sse_does(path: Path) -> None:
    """`streamGenerateContent` without `alt=sse` answers one JSON array of the chunks."""
    sse = path.read_bytes()
    chunks = [json.loads(p) for p in payloads(sse)]
    expected = replay(sse, "google")
    for array in (json.dumps(chunks, indent=2).encode(), json.dumps(chunks).encode()):
        assert replay(array, "google") == expected
        assert replay(rechunk(array, 2, 17), "google") == expected
        assert sniff_provider(array) == "google"
        assert (
            replay(HEAD.replace(b"text/event-stream", b"application/json") + array, "google")[-1]
            == (expected[-1])
        )


@needs_captures
def test_a_cut_json_array_is_truncated() -> None:
    chunks = [json.loads(p) for p in payloads((CAPTURES / "gemini" / "text.sse").read_bytes())]
    array = json.dumps(chunks, indent=2).encode()
    events = replay(array[: len(array) // 2], "google")
    error = end_of(events).error
    assert error.kind == "truncated" and "JSON array" in error.message
    assert any(e.type == "text" for e in events)  # what came before the cut is kept


@needs_captures
def test_a_json_array_with_the_wrong_provider_names_the_right_one() -> None:
    chunks = [json.loads(p) for p in payloads((CAPTURES / "gemini" / "text.sse").read_bytes())]
    error = end_of(replay(json.dumps(chunks).encode(), "openai")).error
    assert "look like the google wire" in error.message


@needs_captures
def test_ndjson_of_the_data_payloads_replays() -> None:
    """One JSON payload a line: how recorders such as vercel/ai's `*.chunks.txt` keep a
    stream (the captures marked RECON were rebuilt from such files)."""
    sse = OPENAI.read_bytes()
    ndjson = "\n".join(payloads(sse)).encode() + b"\n"
    expected = summarize(replay(sse, "openai"))
    assert summarize(replay(ndjson, "openai")) == expected
    assert sniff_provider(ndjson) == "openai"


OLLAMA_NATIVE = (
    b'{"model":"llama3.2","created_at":"2024-07-01T00:00:00Z","message":{"role":"assistant",'
    b'"content":"Hel"},"done":false}\n'
    b'{"model":"llama3.2","created_at":"2024-07-01T00:00:01Z","message":{"role":"assistant",'
    b'"content":"lo"},"done":true,"done_reason":"stop","eval_count":2}\n'
)


def test_ollama_native_ndjson_is_a_clear_error() -> None:
    assert sniff_provider(OLLAMA_NATIVE) is None
    for provider in ("openai", "ollama"):
        error = end_of(replay(OLLAMA_NATIVE, provider)).error
        assert error.kind == "protocol"
        assert "Ollama's native API" in error.message and "/v1" in error.message


def test_a_whole_response_that_was_not_streamed_is_a_clear_error() -> None:
    whole = {
        "openai": {"object": "chat.completion", "choices": [{"message": {"content": "hi"}}]},
        "anthropic": {"type": "message", "role": "assistant", "content": []},
        "openai-responses": {"object": "response", "status": "completed", "output": []},
    }
    for provider, body in whole.items():
        error = end_of(replay(json.dumps(body).encode(), provider)).error
        assert error.kind == "protocol" and "not streamed" in error.message, error.message


def own_files() -> dict[str, bytes]:
    """What rxllm itself writes of a turn: `--record`'s StreamRecord, `--json`'s lines."""
    usage = Usage(output_tokens=15, reasoning_tokens=15, total_tokens=15)
    events: list[Event] = [
        ReasoningDelta(provider="local", text="The user"),
        UsageUpdate(provider="local", usage=usage),
        Done(provider="local", stop_reason="stop"),
    ]
    builder = RecordBuilder("local", "rxllm-local")
    for event in events:
        builder.add(event)
    return {
        "turn.json": builder.build().model_dump_json(indent=2).encode() + b"\n",
        "events.jsonl": b"".join(e.model_dump_json().encode() + b"\n" for e in events),
    }


def test_rxllm_s_own_record_and_events_say_what_they_are() -> None:
    """They replayed as chat chunks, with a usage event made up from the record's
    `usage` (input 0, output 15), then `truncated`."""
    says = {"turn.json": "rxllm's record of a turn", "events.jsonl": "rxllm's own events"}
    for name, data in own_files().items():
        assert sniff_provider(data) is None
        assert says[name] in (sniff_not_a_stream(data) or "")
        for provider in ("openai", "anthropic", "google", "openai-responses"):
            events = replay(data, provider)
            assert len(events) == 1, events  # the error alone: nothing read as events
            error = end_of(events).error
            assert error.kind == "protocol" and says[name] in error.message
            assert "--raw" in error.message


# -- cut, empty, compressed, not a recording -------------------------------------------


@needs_captures
def test_a_recording_cut_mid_line_is_truncated_not_bad_json() -> None:
    body = OPENAI.read_bytes()
    middle = body.index(b'"content":"', len(body) // 2) + 14  # inside a data line
    events = replay(body[:middle], "openai")
    error = end_of(events).error
    assert error.kind == "truncated" and "cut" in error.message, error.message
    assert any(e.type == "text" for e in events)


def test_empty_and_blank_recordings_say_so() -> None:
    for blank in (b"", b"\n\n\r\n  \n", b"\xef\xbb\xbf"):
        error = end_of(replay(blank, "openai")).error
        assert "recording is empty" in error.message, (blank, error.message)


def test_binary_bytes_and_comments_only() -> None:
    error = end_of(replay(bytes(range(256)) * 4, "openai")).error
    assert error.kind == "protocol" and "not an SSE stream" in error.message
    error = end_of(replay(b": ping\n\n: ping\n\n", "anthropic")).error
    assert error.kind == "truncated"


@needs_captures
def test_a_gzip_recording_is_read_decompressed() -> None:
    body = ANTHROPIC.read_bytes()
    packed = gzip.compress(body)
    assert replay(packed, "anthropic") == replay(body, "anthropic")
    assert replay(rechunk(packed, 3, 64), "anthropic") == replay(body, "anthropic")
    assert sniff_provider(packed) == "anthropic"
    assert sniff_provider(packed[: len(packed) // 2]) == "anthropic"  # the head says it
    # and a dump of a response sent with Content-Encoding: gzip
    dump = HEAD.replace(b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n") + packed
    assert replay(dump, "anthropic") == replay(body, "anthropic")


def test_a_broken_or_enormous_gzip_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    error = end_of(replay(b"\x1f\x8b\x08\x00" + b"\xff" * 64, "openai")).error
    assert error.kind == "protocol" and "gzip" in error.message
    monkeypatch.setattr(rxllm.sources.replay, "MAX_DECOMPRESSED_BYTES", 1000)
    error = end_of(replay(gzip.compress(b"data: {}\n\n" * 1000), "openai")).error
    assert error.kind == "limit" and "gzip" in error.message


# -- a retried turn, as `rxllm stream --raw` keeps it -------------------------------------

RESPONSES = CAPTURES / "openai-responses" / "reasoning_summary.sse"
GEMINI_TEXT = CAPTURES / "gemini" / "text.sse"
CHAT_TURN = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def a_retry(wire: str, attempt: int = 1) -> Retry:
    reason = ErrorInfo(kind="stream_error", message="`top_p` must be < 1.0", provider=wire)
    return Retry(
        provider=wire, attempt=attempt, reason=reason, next_attempt=attempt + 1,
        next_provider=wire, dropped=["top_p"],
    )  # fmt: skip


def as_attempt(events: list[Event], attempt: int) -> list[Event]:
    return [e.model_copy(update={"attempt": attempt}) for e in events]


@needs_captures
@pytest.mark.parametrize("path", [OPENAI, ANTHROPIC, RESPONSES, GEMINI_TEXT], ids=wire_of)
def test_a_retried_turn_replays_each_attempt_as_the_turn_did(path: Path) -> None:
    """The first attempt's body ended in an error (here: cut inside its first event),
    the turn retried, the second body ended it: the replay says so in that order, where
    it used to end at the first body's error."""
    wire = wire_of(path)
    body = lf(path.read_bytes())
    first = body[: body.index(b"data:") + 20]
    retry = a_retry(wire)
    recording = first + retry_marker(retry) + body
    expected = [retry, *as_attempt(replay(body, wire), 2)]
    assert isinstance(expected[-1], Done)
    assert replay(recording, wire) == expected
    for seed in range(3):  # the network's cuts fall anywhere, inside the marker too
        assert replay(rechunk(recording, seed, 7), wire) == expected
    assert replay(recording.replace(b"\n", b"\r\n"), wire) == expected
    assert replay(gzip.compress(recording), wire) == expected
    assert sniff_provider(recording) == wire


def test_retries_with_no_body_kept_are_replayed_where_they_came() -> None:
    r1, r2 = a_retry("openai", 1), a_retry("openai", 2)
    # attempt 1 was an HTTP error (no body kept): the file begins with its retry
    events = replay(retry_marker(r1) + CHAT_TURN, "openai")
    assert events == [r1, *as_attempt(replay(CHAT_TURN, "openai"), 2)]
    # a retry after the last body: the turn ended before another body came
    events = replay(CHAT_TURN[:30] + retry_marker(r1) + retry_marker(r2), "openai")
    assert events[:2] == [r1, r2]
    error = end_of(events)
    assert error.attempt == 3 and error.error.kind == "truncated"
    assert "the recording ends where attempt 3 began" in error.error.message


async def test_a_retried_turn_replays_at_once_in_async_code_too() -> None:
    events = replay(CHAT_TURN[:30] + retry_marker(a_retry("openai")) + CHAT_TURN, "openai")
    assert [e.type for e in events] == ["retry", "text", "done"]


def test_a_marker_that_is_no_retry_of_a_later_attempt_stays_a_comment() -> None:
    expected = replay(CHAT_TURN, "openai")
    back = a_retry("openai", 1).model_copy(update={"attempt": 3, "next_attempt": 1})
    for marker in (b"\n: rxllm: retry {not json}\n\n", b"\n" + retry_marker(back)):
        assert replay(CHAT_TURN + marker, "openai") == expected


# -- the command line ------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rxllm", "replay", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_captures
def test_the_command_line_reads_arrays_gzip_and_dumps(tmp_path: Path) -> None:
    chunks = [json.loads(p) for p in payloads((CAPTURES / "gemini" / "text.sse").read_bytes())]
    files = {
        "turn.json": (json.dumps(chunks, indent=2).encode(), "google"),
        "turn.sse.gz": (gzip.compress(ANTHROPIC.read_bytes()), "anthropic"),
        "turn.http": (HEAD + OPENAI.read_bytes(), "openai"),
    }
    for name, (data, wire) in files.items():
        (tmp_path / name).write_bytes(data)
        result = cli(str(tmp_path / name), "--json")
        assert result.returncode == 0, result.stderr
        assert f"replaying as {wire}" in result.stderr
        assert isinstance(replay_last(result.stdout), Done)


def replay_last(stdout: str) -> Event:
    from rxllm.events import EventAdapter

    return EventAdapter.validate_json(stdout.splitlines()[-1])


def test_the_command_line_on_no_recording_at_all(tmp_path: Path) -> None:
    own = own_files()
    cases = {  # name: (bytes, what the replay says, whether that is known without one)
        "ollama.ndjson": (OLLAMA_NATIVE, "Ollama's native API", True),
        "turn.json": (own["turn.json"], "rxllm's record of a turn", True),
        "events.jsonl": (own["events.jsonl"], "rxllm's own events", True),
        "noise.bin": (bytes(range(256)), "not an SSE stream", False),
    }
    for name, (data, says, known) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        sniffed = cli(str(path))  # no wire to replay it as: what it is, or ask for one
        assert sniffed.returncode == 2 and sniffed.stdout == "", sniffed.stderr
        assert (says if known else "pass --provider") in sniffed.stderr
        result = cli(str(path), "--provider", "openai")
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert says in result.stdout and result.stdout.startswith("[error] ")
        assert result.stdout.count("\n") == 1  # no event made up from it
