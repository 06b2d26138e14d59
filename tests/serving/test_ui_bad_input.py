"""Bad input to the UI message stream's public surface (session 39's probe): each is a
clear error where it is given, and a response already begun still ends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import reactivex

from rxllm.events import Done, ErrorInfo, Failed, Retry, TextDelta
from rxllm.serving import UIMessageEncoder, ui_message_stream
from rxllm.serving.ui_message_stream import STREAM_FAILED

P = "openai"


async def _frames_then_error(events: Any, **options: Any) -> tuple[list[Any], BaseException]:
    """The frames' JSON ([DONE] as a str) written before the stream raised, and what it raised."""
    frames: list[Any] = []
    with pytest.raises(Exception) as raised:  # the caller checks its type
        async for data in ui_message_stream(events, keepalive=None, **options):
            for line in data.decode().split("\n\n"):
                if line.startswith("data: "):
                    body = line.removeprefix("data: ")
                    frames.append(body if body == "[DONE]" else json.loads(body))
    return frames, raised.value


@pytest.mark.parametrize("given", ["hi", {"type": "text", "text": "hi"}, None, 5])
def test_the_encoder_given_no_event_names_what_it_got(given: Any) -> None:
    # was AttributeError: 'str' object has no attribute 'provider', from the log line
    with pytest.raises(TypeError, match=rf"rxllm events .*got {type(given).__name__}: "):
        UIMessageEncoder().parts(given)


async def test_an_observable_of_strings_is_a_type_error_after_the_message_ends() -> None:
    source = reactivex.of(
        TextDelta(provider=P, text="a"), "b", Done(provider=P, stop_reason="stop")
    )
    frames, error = await _frames_then_error(source)
    assert isinstance(error, TypeError), repr(error)
    assert "rxllm events" in str(error) and "got str: 'b'" in str(error)
    # the response was begun: it ends as for a source that breaks, not cut
    assert {"type": "text-delta", "id": "t1", "delta": "a"} in frames
    assert frames[-3:] == [
        {"type": "error", "errorText": STREAM_FAILED},
        {"type": "finish", "finishReason": "error"},
        "[DONE]",
    ]


@pytest.mark.parametrize("entry", [(5, TextDelta(provider=P, text="a")), ("1-0",)])
async def test_a_log_entry_that_is_no_pair_of_id_and_event_says_so(entry: Any) -> None:
    async def entries() -> AsyncIterator[Any]:
        yield entry

    frames, error = await _frames_then_error(entries())
    assert isinstance(error, TypeError), repr(error)
    assert "a log entry is an (entry_id: str, event) pair, got (" in str(error)
    assert frames[-1] == "[DONE]"


def _failure() -> Failed:
    info = ErrorInfo(provider=P, kind="transport", message="connection reset", retryable=True)
    return Failed(provider=P, error=info)


def _retry() -> Retry:
    info = ErrorInfo(provider=P, kind="rejected", message="no temperature", status=400)
    return Retry(provider=P, reason=info, next_attempt=2, next_provider=P)


@pytest.mark.parametrize("returned", [5, None, b"busy", {"text": "busy"}])
@pytest.mark.parametrize("event", [_failure(), _retry()], ids=["error", "retry"])
def test_error_text_that_returns_no_str_is_a_type_error_naming_it(
    returned: Any, event: Failed | Retry
) -> None:
    # was sent: `"errorText": 5`, which the `ai` client's chunk schema refuses ("expected
    # string, received number"), and with it the stream
    encoder = UIMessageEncoder(error_text=lambda info: returned, retries=True)
    with pytest.raises(
        TypeError, match=rf"^error_text must return a str, got {type(returned).__name__}"
    ):
        encoder.parts(event)


async def test_error_text_that_returns_no_str_still_ends_the_message() -> None:
    source = reactivex.of(TextDelta(provider=P, text="a"), _failure())
    frames, error = await _frames_then_error(source, error_text=lambda info: info.status)
    assert isinstance(error, TypeError) and "error_text must return a str" in str(error)
    # `errorText: null` was sent; now the one errorText is the broken source's
    assert [frame for frame in frames if "errorText" in frame] == [frames[-3]]
    assert frames[-3:] == [
        {"type": "error", "errorText": STREAM_FAILED},
        {"type": "finish", "finishReason": "error"},
        "[DONE]",
    ]


def _turn() -> reactivex.Observable[Any]:
    return reactivex.of(TextDelta(provider=P, text="a"), Done(provider=P, stop_reason="stop"))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        # was AttributeError: 'int' object has no attribute 'partition' (entry_position)
        ({"after": 5}, "after must be a str, got int"),
        ({"after": b"1-0"}, "after must be a str, got bytes"),
        # was sent as `"messageId": 5`, which the `ai` client's chunk schema refuses
        ({"message_id": 5}, "message_id must be a str, got int"),
        # was taken, and failed as "'str' object is not callable" at the turn's first error
        ({"error_text": "Something went wrong."}, "error_text must be callable, got str"),
        # was AttributeError: 'dict' object has no attribute 'finished'
        ({"encoder": {}}, "encoder must be a UIMessageEncoder, got dict"),
    ],
)
async def test_an_option_of_the_wrong_type_is_a_type_error_before_the_first_frame(
    option: dict[str, Any], message: str
) -> None:
    stream = ui_message_stream(_turn(), **option)
    with pytest.raises(TypeError, match=f"^{message}$"):
        await anext(stream)


def test_the_encoder_refuses_a_message_id_or_error_text_of_the_wrong_type() -> None:
    with pytest.raises(TypeError, match=r"^message_id must be a str, got int$"):
        UIMessageEncoder(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^error_text must be callable, got NoneType$"):
        UIMessageEncoder(error_text=None)  # type: ignore[arg-type]


async def test_the_options_of_the_right_type_still_stream() -> None:
    frames = [
        frame
        async for frame in ui_message_stream(
            _turn(), message_id="m1", after=None, error_text=str, keepalive=None
        )
    ]
    assert frames[0].startswith(b'data: {"type":"start","messageId":"m1"}')
    assert frames[-1].endswith(b"data: [DONE]\n\n")
