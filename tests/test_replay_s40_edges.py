"""Cut gzip recordings (session 40, helper E): a gzip stream that stops before its end
says it is cut, by `rxllm.replay` and `rxllm replay`, where it read as an empty file, or
as a stream that ended without its terminal, or as a file no wire wrote."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

import rxllm
from rxllm.events import ErrorInfo, Failed, Retry
from rxllm.pipeline.record import RecordBuilder
from rxllm.sources.replay import retry_marker
from tests.support import CAPTURES, needs_captures, replay
from tests.test_replay_formats import cli as replay_cli

TURNS = {
    "openai": CAPTURES / "openai" / "chat_text_usage.sse",
    "anthropic": CAPTURES / "anthropic" / "tool_use_input_json_delta.sse",
    "google": CAPTURES / "gemini" / "text.sse",
    "openai-responses": CAPTURES / "openai-responses" / "reasoning_summary.sse",
}
CUT = "the gzip-compressed recording is cut short"


def cut_after(body: bytes) -> bytes:
    """A gzip stream of `body` cut where a server flushed it: it decompresses to all
    of `body`, and never ends (as a stream gzipped event by event, cut between two)."""
    packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    return packer.compress(body) + packer.flush(zlib.Z_SYNC_FLUSH)


def error_of(data: bytes, wire: str) -> ErrorInfo:
    last = replay(data, wire)[-1]
    assert isinstance(last, Failed), last
    return last.error


@needs_captures
@pytest.mark.parametrize("wire", TURNS)
def test_a_gzip_recording_cut_before_any_body_says_it_is_cut(wire: str) -> None:
    # was "the recording is empty: nothing to replay", of a file that is not
    packed = gzip.compress(TURNS[wire].read_bytes())
    for cut in (packed[:2], packed[:10], packed[:16]):
        error = error_of(cut, wire)
        assert error.kind == "truncated"
        assert error.message == f"{CUT}, before any of its body", error.message


@needs_captures
@pytest.mark.parametrize("wire", TURNS)
def test_a_gzip_recording_cut_between_events_says_it_is_cut(wire: str) -> None:
    # was "the stream from ... ended without its terminal marker": the bytes hold whole
    # events, and only the gzip stream knows that more was to come
    body = TURNS[wire].read_bytes().replace(b"\r\n", b"\n")
    second = body.index(b"\n\n", body.index(b"data:")) + 2  # after the first event
    events = replay(cut_after(body[:second]), wire)
    error = events[-1]
    assert isinstance(error, Failed) and error.error.kind == "truncated", error
    assert error.error.message.startswith(f"{CUT}, "), error.error.message
    assert "bytes into its body" in error.error.message


@needs_captures
@pytest.mark.parametrize("wire", TURNS)
def test_a_whole_gzip_recording_still_replays_as_its_body(wire: str) -> None:
    body = TURNS[wire].read_bytes()
    assert replay(gzip.compress(body), wire) == replay(body, wire)
    assert replay(gzip.compress(body) + gzip.compress(b""), wire) == replay(body, wire)


CHAT_TURN = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def test_a_cut_gzip_of_a_retried_turn_says_so_in_its_last_attempt() -> None:
    reason = ErrorInfo(kind="stream_error", message="`top_p` must be < 1.0", provider="openai")
    retry = Retry(
        provider="openai", attempt=1, reason=reason, next_attempt=2, next_provider="openai"
    )
    recording = CHAT_TURN[:30] + retry_marker(retry) + CHAT_TURN
    end_of_text = len(recording) - len(CHAT_TURN) + CHAT_TURN.index(b"\n\n") + 2
    events = replay(cut_after(recording[:end_of_text]), "openai")
    assert [e.type for e in events] == ["retry", "text", "error"]
    error = events[-1]
    assert isinstance(error, Failed) and error.attempt == 2
    assert error.error.kind == "truncated" and error.error.message.startswith(CUT)


@needs_captures
def test_the_command_line_says_a_gzip_file_is_cut(tmp_path: Path) -> None:
    # was "cannot tell which provider wrote ...; pass --provider", and with --provider
    # "[error] truncated: the recording is empty: nothing to replay"
    path = tmp_path / "turn.sse.gz"
    path.write_bytes(gzip.compress(TURNS["openai"].read_bytes())[:12])
    result = replay_cli(str(path))
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.strip() == f"rxllm: {path}: {CUT}, before any of its body"
    result = replay_cli(str(path), "--provider", "openai")
    assert result.returncode == 1, result.stderr
    assert result.stdout == f"[error] truncated: {CUT}, before any of its body\n"
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 64)
    result = replay_cli(str(broken))
    assert result.returncode == 2 and "does not decompress" in result.stderr, result.stderr


def test_replay_of_a_dict_or_a_record_says_what_it_takes() -> None:
    # was "replay chunks must be bytes, got str" (a dict iterates as its keys) and "got
    # tuple" (a StreamRecord, a pydantic model, iterates as its fields)
    builder = RecordBuilder("openai")
    for event in replay(CHAT_TURN, "openai"):
        builder.add(event)
    record = builder.build()
    for given in ({"data": CHAT_TURN.decode()}, record):
        name = type(given).__name__
        with pytest.raises(TypeError, match=f"^replay data must be bytes, .* got {name}$"):
            rxllm.replay(given, "openai")
