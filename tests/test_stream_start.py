"""What a stream's start does that a provider could do once: structure the time to
first text at scale depends on (issue "Performance at scale": every stream's start is
paid before most first texts). No test here measures a time."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import sys
from types import CodeType, FrameType
from typing import Any

from aiohttp import web
from loguru import logger

import rxllm
from rxllm.operators.accumulate_tool_arguments import accumulate_tool_arguments
from rxllm.operators.deadlines import deadlines
from rxllm.operators.settle_once import settle_once
from rxllm.operators.track_commitment import track_commitment
from rxllm.pipeline.provider import ProviderOptions
from rxllm.sources import guard
from tests.support import Serve

_ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)

# Built from the provider's options, the same for every stream of it: each operator
# keeps its state per subscription. The JSON encoder: one, not one per body.
_ONCE_PER_PROVIDER = {
    deadlines.__code__: "deadlines()",
    settle_once.__code__: "settle_once()",
    accumulate_tool_arguments.__code__: "accumulate_tool_arguments()",
    track_commitment.__code__: "track_commitment()",
    ProviderOptions.silence_allowed.__code__: "ProviderOptions.silence_allowed()",
    ProviderOptions.text_guards.__code__: "ProviderOptions.text_guards()",
    json.JSONEncoder.__init__.__code__: "json.JSONEncoder()",
}


async def _called_in_a_turn(
    provider: rxllm.Provider,
    request: rxllm.ChatRequest,
    watched: dict[CodeType, str] = _ONCE_PER_PROVIDER,
) -> set[str]:
    """Which of `watched` a whole turn of `provider` calls."""
    called: set[CodeType] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in watched:
            called.add(frame.f_code)

    sys.setprofile(profile)
    try:
        events = [event async for event in provider.astream(request)]
    finally:
        sys.setprofile(None)
    assert isinstance(events[-1], rxllm.Done)
    return {watched[code] for code in called}


async def _answer(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(_ANSWER)
    return response


async def test_a_stream_builds_none_of_what_its_provider_shares(serve: Serve) -> None:
    base_url = await serve(_answer)
    provider = rxllm.provider(
        "openai", api_key="sk-test", base_url=base_url, dedupe_overlap=True, speaker_guard=True
    )
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with provider:
        await _called_in_a_turn(provider, request)  # the first builds what is shared
        assert await _called_in_a_turn(provider, request) == set()
        assert await _called_in_a_turn(provider, request) == set()


async def test_a_guarded_provider_judges_its_host_once(serve: Serve) -> None:
    """The SSRF guard's verdict on a host is the same for every turn to it: parsing
    an address (and the networks it is checked against) per turn cost a guarded
    stream's start a fifth of its instructions."""
    base_url = await serve(_answer)  # http://127.0.0.1:<port>/v1: an address, private
    provider = rxllm.provider(
        "openai", api_key="sk-test", base_url=base_url, ssrf_guard=True, allow_private_network=True
    )
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    judging = {
        guard._ip_literal.__code__: "_ip_literal()",
        guard.check_address.__code__: "check_address()",
        ipaddress.ip_address.__code__: "ipaddress.ip_address()",
    }
    async with provider:
        assert provider.guard is not None
        await _called_in_a_turn(provider, request, judging)
        assert await _called_in_a_turn(provider, request, judging) == set()
        assert await _called_in_a_turn(provider, request, judging) == set()


async def test_a_hang_up_is_logged_from_a_function_of_its_own(serve: Serve) -> None:
    """loguru reads the line number of the function that logs before it looks whether
    rxllm's logs are on: a hang-up's log is written from a short function, not from the
    source's long `_Transfer._run` (12,000 instructions a hang-up). It is still written,
    with the provider and attempt bound."""
    go = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_ANSWER.split(b"\n\n")[0] + b"\n\n")  # one text chunk
        await go.wait()  # hung up on before the rest
        return response

    base_url = await serve(handler)
    records: list[dict[str, Any]] = []
    sink = logger.add(lambda message: records.append(message.record), level="DEBUG")
    logger.enable("rxllm")
    try:
        provider = rxllm.provider("openai", api_key="sk-test", base_url=base_url)
        request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        async with provider:
            async with provider.astream(request) as events:
                assert isinstance(await anext(events), rxllm.TextDelta)
            for _ in range(100):  # the source unwinds in a task of its own
                if any(r["message"] == "http source cancelled" for r in records):
                    break
                await asyncio.sleep(0.01)
    finally:
        go.set()
        logger.disable("rxllm")
        logger.remove(sink)
    [record] = [r for r in records if r["message"] == "http source cancelled"]
    assert record["function"] == "_log_hang_up"
    assert record["extra"] == {"provider": "openai", "attempt": 1}
