"""Two follow-ups of rounds eighteen and nineteen: an image word beside another key's limit,
and a validator's error about the server's own response over HTTP.

- A limit said in a sentence that has an image word in it removed the images, whatever the
  limit was on (round eighteen's near misses): "Images are resized to 768px; max_tokens must
  be at most 4096" read `images` (the image reading took any "at most N", "up to N", "only
  one", "more than N" in a sentence that says "image" or "vision"), and so did round 29's
  "max_tokens too large for vision models: at most 4096" (left there as debatable). The
  images are not at fault, and the degraded retry removed them and sent `max_tokens` again:
  the same refusal. A limit now reads as the images' only where it is about them: what it
  counts is images ("At most 1 image(s) may be provided in one request", "Only one image is
  allowed per request", "more than 10 images"), or pixels or bytes beside an image word
  ("Image dimensions must be at most 8000 pixels", "each image may be up to 5 MB"), or an
  image's count or size is its subject ("Image count must be at most 4", "the number of
  images must be no more than 5", "Image size must be at most 20MB": this one walked the
  static list before, "20MB" no whole number to the old rule). A key named beside the limit
  reads as that key's, as it does without the image word: `max_tokens` dropped, the images
  kept. "Too many images" and the Chinese "最多" (at most) read as before.

- vLLM's pydantic error about its own stream chunk, "2 validation errors for
  ChatCompletionStreamResponse\\nmodel\\n  Field required ..." (its engine's error chunk
  that would not validate as a stream chunk: vllm#42363), was read over HTTP at 500 under
  a policy that degrades (vLLM's, the chat presets') as a refusal of `model`, the field
  the validator's location line names: surfaced, with no wait and no retry
  (vllm__500_validation_errors_for_chat_completion_stream_response, new in
  tests/rejections_extra: the words of the round-nineteen case in vLLM's error envelope at
  500). The same words in an Anthropic `internal_error` frame
  (vllm__messages_sse_error_internal_error_engine_dead_validation) already backed off, by
  the frame's type. A validation error naming a response class (`...Response`,
  `...StreamResponse`, `...Chunk`, `...ResponseStreamChoice`) is now the server's trouble
  at a 5xx, at 424 and where no status speaks: a wait, the same body. At a 4xx other than
  424 the words keep their reading, and a request class (`ChatCompletionRequest`,
  `ResponsesRequest`) or a request's part (`ResponseFormat`) keeps its reading at any
  status. In round nineteen's every-envelope pass, the Anthropic frame's words in TGI's
  and Ollama's frames (no status, no type) read `static` and were marked different; they
  now read as the case (test_probe_rejections_46 no longer marks them).

Against the previous degradation.py 35 of these tests failed: the new case as its file
says, the HTTP reading against the Anthropic frame, the 21 response-class readings at 500,
502 and 424 and the 2 in a frame, the 6 keys' limits beside an image word and the limit on
tokens beside one, "Image size must be at most 20MB", and both loopback turns (the 500 sent
nothing again; the 400 removed the image and sent `max_tokens` again). The case's 20
combinations in every envelope read as the case did then too (all surfaced): they are
guards that its envelopes keep reading alike.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Retry
from tests.rejection_rounds import (
    assert_reads_as_its_file_says,
    both_ways,
    in_band,
    openai_error,
    over_http,
)
from tests.test_probe_rejections_7 import body, frame, response
from tests.test_probe_rejections_9 import EXTRA, in_its_wire, original, policy, sent
from tests.test_probe_rejections_16 import combinations, reading
from tests.test_probe_rejections_19 import assert_reads_the_same

PLAIN = body(temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)
IMAGES_AND_LIMIT = body(True, max_tokens=99999, temperature=0.2)
IMAGES = ("images", ())

STREAM_RESPONSE = "vllm__500_validation_errors_for_chat_completion_stream_response"
MESSAGES_FRAME = "vllm__messages_sse_error_internal_error_engine_dead_validation"


def case(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXTRA / f"{name}.json").read_text())
    return loaded


# == a limit beside an image word =========================================================


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("Images are resized to 768px; max_tokens must be at most 4096", "max_tokens"),
        ("max_tokens too large for vision models: at most 4096.", "max_tokens"),
        ("Images: the output limit max_tokens is at most 4096", "max_tokens"),
        ("Vision requests: temperature must be at most 1", "temperature"),
        ("For image inputs, max_tokens may be up to 8192 only", "max_tokens"),
        ("Images are accepted; max_tokens should be no more than 2048.", "max_tokens"),
    ],
)
def test_a_keys_limit_beside_an_image_word_is_that_keys(message: str, key: str) -> None:
    assert both_ways(message, IMAGES_AND_LIMIT) == [("drop", (key,))] * 2


@pytest.mark.parametrize(
    "message",
    [
        # the limit counts the images
        "At most 1 image(s) may be provided in one request.",
        "At most 0 image(s) may be provided in one request.",
        "This model supports at most 1 image per prompt.",
        "Only one image is allowed per request.",
        "You may not include more than 10 images in your request.",
        "Vision models accept at most 2 images",
        "up to 5 input images per message",
        # too many of them, in English and Chinese
        "Too many images: the model accepts at most one.",
        "Too many images",
        "最多只能上传1张图片",
        # pixels or bytes beside an image word
        "Image dimensions must be at most 8000 pixels",
        "each image may be up to 5 MB",
        # an image's count or size the subject
        "Image count must be at most 4",
        "The number of images must be no more than 5",
        "Image size must be at most 20MB",
    ],
)
def test_a_limit_on_the_images_removes_them(message: str) -> None:
    # (with `max_tokens` in the body too: the limit is not its)
    assert both_ways(message, IMAGES_AND_LIMIT) == [IMAGES] * 2


def test_a_limit_on_tokens_beside_an_image_word_is_not_the_images() -> None:
    # (no key named: the static list, whose bodies keep the images first)
    message = "Images are resized to 768px; the output must be at most 4096 tokens"
    assert both_ways(message, IMAGES_AND_LIMIT) == [("static", ())] * 2


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # no image word: another medium's limit
        ("video too large: at most 50 MB", ("static", ())),
        # a key with an image word in its name is that key
        ("vl_high_resolution_images: at most 1 allowed", ("drop", ("vl_high_resolution_images",))),
    ],
)
def test_limits_near_the_rule(message: str, expected: tuple[str, tuple[str, ...]]) -> None:
    sent_body = body(True, max_tokens=99999, vl_high_resolution_images=True, temperature=0.2)
    assert both_ways(message, sent_body) == [expected] * 2


# == the server's own response refused by its validator ====================================

_PYDANTIC = (
    "{count} validation error{s} for {cls}\n{field}\n  Field required [type=missing, "
    "input_value={{'error': {{'message': 'En...am': None, 'code': 500}}}}, input_type=dict]\n"
    "    For further information visit https://errors.pydantic.dev/2.13/v/missing"
)


def pydantic(cls: str, field: str = "model", count: int = 1) -> str:
    return _PYDANTIC.format(count=count, s="" if count == 1 else "s", cls=cls, field=field)


def test_the_case_reads_as_its_file_says() -> None:
    assert_reads_as_its_file_says(STREAM_RESPONSE)
    assert reading(original(case(STREAM_RESPONSE)))[0] == "backoff"


def test_the_http_reading_agrees_with_the_anthropic_frame() -> None:
    """The round-nineteen frame (vLLM's /v1/messages) and the same words over HTTP at 500
    under vLLM's policy, which degrades: both a wait."""
    framed = case(MESSAGES_FRAME)
    words = in_its_wire(framed).error.message
    assert "validation errors for ChatCompletionStreamResponse" in words
    over_vllm = response(
        500,
        {"error": {"message": words, "type": "Internal Server Error", "param": None, "code": 500}},
        sent(framed),
        policy(case(STREAM_RESPONSE)),
    )
    assert policy(case(STREAM_RESPONSE)).degrade
    assert reading(original(framed)) == reading(over_vllm) == ("backoff", set(), {})


@pytest.mark.parametrize(
    "cls",
    [
        "ChatCompletionStreamResponse",
        "ChatCompletionResponse",
        "ChatCompletionChunk",
        "CompletionResponse",
        "ChatCompletionResponseStreamChoice",
        "ResponsesResponse",
        "openai.types.chat.ChatCompletionChunk",
    ],
)
@pytest.mark.parametrize("status", [500, 502, 424])
def test_a_response_class_refused_at_5xx_is_the_servers_trouble(cls: str, status: int) -> None:
    for field in ("model", "choices", "temperature"):
        assert over_http(pydantic(cls, field), body(temperature=0.2), status) == ("backoff", ())


@pytest.mark.parametrize("cls", ["ChatCompletionStreamResponse", "ChatCompletionChunk"])
def test_a_response_class_refused_in_a_frame_is_the_servers_trouble(cls: str) -> None:
    assert in_band({"message": pydantic(cls, "choices", 2)}, PLAIN) == ("backoff", ())


@pytest.mark.parametrize(
    ("message", "status", "expected"),
    [
        # a request class: the body's, at any status
        (pydantic("ChatCompletionRequest"), 500, ("surface", ())),
        (pydantic("ChatCompletionRequest", "temperature"), 500, ("drop", ("temperature",))),
        (pydantic("ResponsesRequest", "temperature"), 500, ("drop", ("temperature",))),
        (pydantic("ChatCompletionRequest", "temperature"), None, ("drop", ("temperature",))),
        # a request's part whose name begins with "Response"
        (
            "1 validation error for ResponseFormat\ntype\n  Input should be 'text'",
            400,
            ("static", ()),
        ),
        # a response class at a 4xx keeps the words' reading
        (pydantic("ChatCompletionStreamResponse"), 400, ("surface", ())),
        (pydantic("ChatCompletionResponse", "temperature"), 422, ("drop", ("temperature",))),
        # not a validator's words
        ("The streaming response was cut: model field missing", 400, ("static", ())),
    ],
)
def test_validation_errors_near_the_rule(
    message: str, status: int | None, expected: tuple[str, tuple[str, ...]]
) -> None:
    got = (
        in_band({"message": message}, PLAIN)
        if status is None
        else over_http(message, PLAIN, status)
    )
    assert got == expected


# == the case in every envelope ===========================================================
# As round nineteen's are (test_probe_rejections_46): 20 combinations, over HTTP at 500 and,
# where the envelope has one, in a chat-wire frame.


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations([STREAM_RESPONSE]))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band)


# == over a loopback server ===============================================================


async def _turn(
    serve: Callable[[Any], Awaitable[str]], status: int, rejection: dict[str, Any], images: bool
) -> tuple[rxllm.StreamRecord, list[dict[str, Any]], list[Any]]:
    """A vLLM turn whose first request is rejected with `rejection` at `status` and whose
    later ones are answered; the record, the bodies sent, and the events."""
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(rejection, status=status)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    url = await serve(handler)
    pictures = ["data:image/png;base64,iVBORw0KGgo="] if images else None
    request = rxllm.ChatRequest(
        model="m",
        messages=[rxllm.Message.user("hi", images=pictures)],
        params={"temperature": 0.2, "max_tokens": 99999},
    )
    async with rxllm.provider(
        "vllm", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    return events[-1], bodies, events


async def test_the_500_is_retried_with_the_same_body(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    rejection = json.loads(case(STREAM_RESPONSE)["body"])
    _, bodies, events = await _turn(serve, 500, rejection, images=False)
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and not retries[0].dropped and not retries[0].images_removed


async def test_the_keys_limit_drops_the_key_and_keeps_the_images(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    rejection = openai_error("Images are resized to 768px; max_tokens must be at most 4096")
    _, bodies, events = await _turn(serve, 400, rejection, images=True)
    assert len(bodies) == 2 and "max_tokens" in bodies[0] and "max_tokens" not in bodies[1]
    assert bodies[0]["messages"] == bodies[1]["messages"]  # the image sent again
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["max_tokens"]
    assert retries[0].images_removed == 0


# == the new readings take linear time ====================================================

_HOSTILE = {
    "limits": "at most 1 " * 6_000 + "images",
    "image counts": "image count " * 6_000 + "at most 4",
    "number of": "number of images " * 5_000,
    "units": "image at most 5" + " " * 60_000 + "MB",
    "validation": "validation errors for " * 4_000 + "Response",
    "class": "validation error for " + "A" * 60_000 + "Request",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, IMAGES_AND_LIMIT))
        verdicts.append(response(500, openai_error(text), IMAGES_AND_LIMIT))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
