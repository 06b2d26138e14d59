"""Bad input at the public edges (session 39's probe): each gets a clear error at the
call, not a default the user never chose or a silent wrong result."""

from __future__ import annotations

import asyncio
import math
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pydantic
import pytest
import reactivex

from rxllm import ChatRequest, ImagePart, Message
from rxllm.events import Done, Event, TextDelta
from rxllm.serving import ui_message_stream
from tests.test_cli import RXLLM, run


@pytest.mark.parametrize("model", ["", "  "])
def test_an_empty_model_on_the_command_line_is_refused_not_replaced(model: str) -> None:
    # `--model "$MODEL"` with MODEL unset: was read as no --model, and the turn went to
    # the default model (gpt-4.1-mini with --provider openai), one nobody chose
    result = run("stream", "hi", "--no-tools", "--model", model)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"argument --model: expected a model name, got {model!r}" in result.stderr
    assert result.stdout == ""  # the turn never ran


@pytest.mark.parametrize("host", ["", " "])
def test_serve_on_an_empty_host_is_refused_not_opened_to_every_interface(host: str) -> None:
    # `--host "$HOST"` with HOST unset: aiohttp bound 0.0.0.0 and [::] (the local
    # server, its faults and redirects, open to the network) and printed http://:8765/v1
    try:
        result = subprocess.run(
            [*RXLLM, "serve", "--host", host, "--port", "0"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired as served:  # it listened instead of refusing
        pytest.fail(f"serve --host {host!r} listened: {served.stdout!r}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "argument --host: expected a host to listen on" in result.stderr
    assert result.stdout == ""


def _turn() -> list[Event]:
    return [
        TextDelta(provider="p", attempt=1, text="hi"),
        Done(provider="p", attempt=1, stop_reason="stop"),
    ]


async def _frames(events: Any, **options: Any) -> bytes:
    return b"".join([frame async for frame in ui_message_stream(events, **options)])


@pytest.mark.parametrize(
    ("events", "hint"),
    [
        (_turn(), " (reactivex.from_iterable(events) makes one)"),
        (iter(_turn()), " (reactivex.from_iterable(events) makes one)"),
        (None, ""),
    ],
)
async def test_a_ui_message_stream_of_what_is_not_a_stream_is_a_type_error(
    events: Any, hint: str
) -> None:
    # was a response that never ended: the pump died on aiter() alone ("Task exception
    # was never retrieved") while the response waited for its first event for ever
    says = f"takes an Observable of events or an async iterable of .*got {type(events).__name__}"
    with pytest.raises(TypeError, match=says) as raised:
        await asyncio.wait_for(_frames(events), 30)  # a guard: the fault was a hang
    assert str(raised.value).endswith(hint)
    # what the hint says works
    assert (await _frames(reactivex.from_iterable(_turn()))).endswith(b"data: [DONE]\n\n")


async def test_a_source_that_fails_to_begin_ends_the_message_and_raises() -> None:
    class Broken:
        def __aiter__(self) -> AsyncIterator[Event]:
            raise RuntimeError("no stream today")

    frames: list[bytes] = []
    with pytest.raises(RuntimeError, match="no stream today"):
        async for frame in ui_message_stream(Broken()):  # a guard: the fault was a hang
            frames.append(frame)
            assert len(frames) < 10
    sent = b"".join(frames)
    assert b'"errorText":"The stream failed."' in sent and sent.endswith(b"data: [DONE]\n\n")


@pytest.mark.parametrize(
    ("keepalive", "error"),
    [("15", TypeError), (-1, ValueError), (0, ValueError), (math.nan, ValueError)],
)
async def test_a_keepalive_that_is_not_seconds_is_refused(keepalive: Any, error: type) -> None:
    # '15' was a TypeError from inside the wait ("'>' not supported"); -1, 0 and NaN
    # silently meant "never", the opposite of asking for keep-alives
    with pytest.raises(error, match="keepalive must be a"):
        await _frames(_turn_source(), keepalive=keepalive)


async def _turn_source() -> AsyncIterator[Event]:
    for event in _turn():
        yield event


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("data:image/png;base64,", "it holds no data"),
        ("data:image/png;base64", "no ',' between its media type and its data"),
        # a second header, as a relay that prefixes every URL writes it
        ("data:image/png;base64,data:image/png;base64,iVBORw0KGgo=", "marked base64, is not"),
        ("data:image/png;base64,b'\\x89PNG\\r\\n'", "marked base64, is not base64"),  # str(bytes)
        ("data:image/jpeg;base64,/home/me/cat.jpg", "marked base64, is not base64"),
    ],
)
def test_a_data_url_no_provider_can_read_is_refused_where_it_is_written(
    url: str, problem: str
) -> None:
    # was sent: every provider refuses it ("Invalid base64 image_url.", "Base64 decoding
    # failed"), and recovery read that as an endpoint without image input, so the turn
    # went on without the image (or dropped keys one by one first)
    for build in (
        lambda: ImagePart(url=url),
        lambda: Message.user("what is this?", images=[url]),
        lambda: ChatRequest(
            model="m",
            messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
            ],
        ),
    ):
        with pytest.raises(
            pydantic.ValidationError, match="is not a data URL a provider can read"
        ) as raised:
            build()
        assert problem in str(raised.value)


@pytest.mark.parametrize(
    "url",
    [
        "data:image/png;base64,iVBORw0KGgo=",
        "DATA:image/png;BASE64,iVBORw0KGgo=",
        "data:image/png;base64,iVBORw0K\nGgo=",  # wrapped at 76, as base64.encodebytes does
        "data:image/png;base64,aGk-_w==",  # the URL-safe alphabet
        "data:image/svg+xml,%3Csvg%2F%3E",  # RFC 2397 percent-encoding, encoded when sent
        "data:application/pdf;base64,JVBERi0xLjQK",
    ],
)
def test_a_data_url_a_provider_reads_is_kept(url: str) -> None:
    assert ImagePart(url=url).url == url


@pytest.mark.parametrize(
    ("option", "error", "says"),
    [
        # a NaN lease: start() failed with Redis's "value is not an integer or out of
        # range" from a Lua script; a NaN or fractional max_events: start() returned and
        # the turn's log never ended (a reader waited for ever)
        ({"lease_ms": math.nan}, TypeError, "lease_ms must be an int, got float"),
        ({"lease_ms": 1500.5}, TypeError, "lease_ms must be an int, got float"),
        ({"max_events": math.nan}, TypeError, "max_events must be an int, got float"),
        ({"max_events": 2.5}, TypeError, "max_events must be an int, got float"),
        ({"ttl_s": math.nan}, ValueError, "ttl_s must be a finite number of seconds"),
        ({"retention_s": "3600"}, TypeError, "retention_s must be a number of seconds"),
        ({"max_connections": "8"}, TypeError, "max_connections must be an int, got str"),
        ({"lease_ms": 5}, ValueError, "lease_ms must be at least 10, got 5"),  # names it
    ],
)
def test_a_redis_log_option_redis_cannot_take_is_refused_by_name(
    option: dict[str, Any], error: type, says: str
) -> None:
    pytest.importorskip("redis")
    from rxllm.serving.redis_log import RedisLog

    with pytest.raises(error, match=says):
        RedisLog("redis://127.0.0.1:9/0", **option)  # nothing connects at construction


def test_a_redis_log_keeps_the_options_redis_takes() -> None:
    pytest.importorskip("redis")
    from rxllm.serving.redis_log import RedisLog

    log = RedisLog("redis://127.0.0.1:9/0", ttl_s=1.5, retention_s=2.5, lease_ms=1000)
    assert (log.ttl_ms, log.retention_ms, log.lease_ms) == (1500, 2500, 1000)
