"""Recovery before commitment, over real HTTP: the local provider plays rejections
(`fault/<name>`, each only while its trigger is in the body) and the client must
degrade, back off, fall back, or surface, as DESIGN.md's rules say."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from reactivex.scheduler.eventloop import AsyncIOScheduler

import rxllm
from rxllm.degradation import image_notice
from rxllm.events import Event
from rxllm.local import LocalServer

IMAGE = "data:image/png;base64,iVBORw0KGgo="
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def ask(model: str, images: list[str] | None = None, **params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model, messages=[rxllm.Message.user("hello", images=images)], params=params
    )


def local(server: LocalServer, name: str = "local", **options: Any) -> rxllm.Provider:
    return rxllm.provider(
        name, api_key="nvapi-test-0123456789abcdef", base_url=server.url, **options
    )


def one_terminal(events: list[Event]) -> Event:
    terminals = [e for e in events if e.type in ("done", "error", "cancelled")]
    assert len(terminals) == 1 and terminals[0] is events[-1]
    return terminals[0]


async def test_a_400_naming_one_parameter_drops_it(local_server: LocalServer) -> None:
    events = [
        e
        async for e in local(local_server).astream(
            ask("fault/reject_param", temperature=0.2, seed=7)
        )
    ]
    first, second = local_server.requests
    assert first["temperature"] == 0.2 and "temperature" not in second
    assert second == {k: v for k, v in first.items() if k != "temperature"}
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.dropped == ["temperature"] and retry.next_attempt == 2 and retry.attempt == 1
    assert retry.reason.status == 400 and retry.reason.param == "temperature"
    assert one_terminal(events).type == "done"
    assert {e.provider for e in events} == {"local"}
    assert {e.attempt for e in events if e.type == "text"} == {2}


async def test_the_record_lists_every_attempt(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/reject_param", temperature=0.2))
    assert rec.text.startswith("Hello") and rec.terminal.type == "done"
    one, two = rec.attempts
    assert (one.number, one.provider, one.status, one.committed) == (1, "local", 400, False)
    assert one.error is not None and "temperature" in one.error
    assert (two.number, two.dropped, two.status, two.committed) == (2, ["temperature"], None, True)
    assert one.duration >= 0 and two.duration > 0


async def test_two_parameters_named_together_go_in_one_retry(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(
        ask("fault/reject_two_params", top_p=0.5, seed=3, temperature=0.7)
    )
    assert rec.terminal.type == "done" and len(local_server.requests) == 2
    second = local_server.requests[1]
    assert "top_p" not in second and "seed" not in second and second["temperature"] == 0.7
    assert sorted(rec.attempts[1].dropped) == ["seed", "top_p"]


async def test_an_error_event_after_200_before_output_is_retried(
    local_server: LocalServer,
) -> None:
    rec = await local(local_server).complete(ask("fault/error_after_200", top_p=0.0, seed=1))
    assert rec.terminal.type == "done" and rec.text.startswith("Hello")
    first, second = local_server.requests
    assert "top_p" in first and "top_p" not in second and second["seed"] == 1
    assert rec.attempts[0].error is not None and "top_p" in rec.attempts[0].error


async def test_an_image_rejection_replaces_images_with_the_notice(
    local_server: LocalServer,
) -> None:
    rec = await local(local_server).complete(ask("fault/reject_images", images=[IMAGE, IMAGE]))
    assert rec.terminal.type == "done"
    content = local_server.requests[1]["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "hello"},
        {"type": "text", "text": image_notice(2)},
    ]
    assert rec.attempts[1].images_removed == 2 and rec.attempts[1].dropped == []


async def test_an_error_after_text_was_committed_surfaces(local_server: LocalServer) -> None:
    events = [e async for e in local(local_server).astream(ask("fault/error_event", seed=1))]
    assert len(local_server.requests) == 1
    assert not any(isinstance(e, rxllm.Retry) for e in events)
    terminal = one_terminal(events)
    assert terminal.type == "error" and "overloaded" in terminal.error.message
    # never retried once committed, yet the user learns the same request may succeed later
    assert terminal.error.retryable
    text = "".join(e.text for e in events if isinstance(e, rxllm.TextDelta))
    assert text.count("Hello from rxllm") == 1


@pytest.mark.parametrize("same_chunk", [False, True])
async def test_usage_commits_but_the_usage_a_rejection_carries_does_not(
    serve: Any, same_chunk: bool
) -> None:
    """DESIGN, Commitment: usage commits an attempt, so a rejection after a usage chunk
    surfaces. The usage in the rejecting chunk itself (OpenRouter's and vLLM's error
    chunks carry one) is what the refused request cost: the body is still degraded."""
    bodies: list[dict[str, Any]] = []
    usage = '"usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}'
    error = '"error": {"message": "Unsupported parameter: \'temperature\'", "code": 400}'

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if "temperature" not in body:
            chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
        elif same_chunk:
            await response.write(f"data: {{{error}, {usage}}}\n\n".encode())
        else:
            await response.write(
                f'data: {{"choices": [], {usage}}}\n\ndata: {{{error}}}\n\n'.encode()
            )
        return response

    provider = rxllm.provider("openrouter", api_key="sk-or-test", base_url=await serve(handler))
    events = [e async for e in provider.astream(ask("m", temperature=0.3))]
    await provider.aclose()
    if same_chunk:
        assert [e.type for e in events] == ["retry", "text", "done"]
        assert [("temperature" in b) for b in bodies] == [True, False]
    else:
        assert [e.type for e in events] == ["usage", "error"]
        assert len(bodies) == 1 and events[-1].error.kind == "stream_error"


async def test_the_static_list_never_sends_a_body_twice(local_server: LocalServer) -> None:
    # NVIDIA degrades on an opaque 500; this one answers every body with it.
    p = local(local_server, "nvidia", max_attempts=10)
    request = ask("fault/http_500", temperature=0.6, chat_template_kwargs={"thinking": True})
    rec = await p.complete(request)
    assert rec.terminal.type == "error" and rec.terminal.error.status == 500
    sent = [json.dumps(body, sort_keys=True) for body in local_server.requests]
    assert len(sent) == len(set(sent)) == len(rec.attempts) == 4
    for body in local_server.requests:  # the mandatory key survives every degradation
        assert body["chat_template_kwargs"] == {"thinking": True}
        assert {"model", "messages", "stream"} <= set(body)
    full, no_stream_options, no_temperature, mandatory = local_server.requests
    # Each static body is one guess away from the body that first failed.
    assert no_stream_options == {k: v for k, v in full.items() if k != "stream_options"}
    assert no_temperature == {k: v for k, v in full.items() if k != "temperature"}
    assert set(mandatory) == {"model", "messages", "stream", "chat_template_kwargs"}


async def test_a_static_degradation_succeeds(local_server: LocalServer) -> None:
    rec = await local(local_server, "nvidia").complete(ask("fault/nvidia_opaque_500", seed=1))
    assert rec.terminal.type == "done" and len(local_server.requests) == 2
    assert rec.attempts[1].dropped == ["stream_options"]


async def test_openrouter_degrades_on_502_and_openai_does_not(local_server: LocalServer) -> None:
    rec = await local(local_server, "openrouter").complete(ask("fault/openrouter_502"))
    assert rec.terminal.type == "done" and rec.attempts[1].dropped == ["stream_options"]
    direct = await local(local_server, "openai", max_attempts=2).complete(
        ask("fault/openrouter_502")
    )
    bodies = local_server.requests[2:]
    assert len(bodies) == 2 and bodies[0] == bodies[1], "a direct 502 is retried as it is"
    assert direct.terminal.type == "error" and direct.terminal.error.retryable


async def test_targeted_retries_are_capped(serve: Any) -> None:
    bodies: list[dict[str, Any]] = []

    async def name_the_first_extra_key(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        key = next(k for k in body if k.startswith("knob_"))
        error = {"message": f"Unsupported parameter: '{key}'", "param": key}
        return web.json_response({"error": error}, status=400)

    url = await serve(name_the_first_extra_key)
    knobs: dict[str, Any] = {f"knob_{i}": i for i in range(6)}
    rec = await rxllm.provider(
        "custom", base_url=url, allow_private_network=True, max_attempts=10
    ).complete(ask("m", **knobs))
    assert len(bodies) == 4, "three targeted retries, then the rejection surfaces"
    assert [sorted(set(knobs) - set(b)) for b in bodies] == [
        [],
        ["knob_0"],
        ["knob_0", "knob_1"],
        ["knob_0", "knob_1", "knob_2"],
    ]
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "rejected"
    assert rec.terminal.error.param == "knob_3" and rec.terminal.error.status == 400


async def test_what_no_body_can_fix_surfaces_at_once(local_server: LocalServer) -> None:
    for fault in ("context_length", "bad_key", "quota"):
        rec = await local(local_server).complete(ask(f"fault/{fault}", temperature=1))
        assert rec.terminal.type == "error" and not rec.terminal.error.retryable
        assert len(rec.attempts) == 1
    assert len(local_server.requests) == 3


async def test_an_overload_is_retried_after_retry_after(local_server: LocalServer) -> None:
    events = [e async for e in local(local_server).astream(ask("fault/overloaded", seed=2))]
    first, second = local_server.requests
    assert first == second, "a backoff retry sends the identical body"
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.delay == pytest.approx(0.05) and retry.dropped == []
    assert retry.reason.retry_after == pytest.approx(0.05)
    assert one_terminal(events).type == "done"


async def test_the_next_request_starts_from_the_full_body(local_server: LocalServer) -> None:
    stream = local(local_server).stream(ask("fault/reject_param", temperature=0.2))
    for _ in range(2):  # the same cold Observable, subscribed twice
        rec = await rxllm.pipeline.record_of(stream, "local")
        assert rec.terminal.type == "done"
    temperatures = ["temperature" in body for body in local_server.requests]
    assert temperatures == [True, False, True, False]


async def test_cancelling_during_a_backoff_wait_ends_at_once(serve: Any) -> None:
    requests = 0

    async def rate_limited(request: web.Request) -> web.StreamResponse:
        nonlocal requests
        requests += 1
        error = {"message": "Rate limit reached", "code": "rate_limit_exceeded"}
        return web.json_response({"error": error}, status=429, headers={"Retry-After": "30"})

    url = await serve(rate_limited)
    cancel = asyncio.Event()
    events: list[Event] = []
    async with asyncio.timeout(5):
        async for event in rxllm.provider(
            "custom", base_url=url, allow_private_network=True
        ).astream(ask("m"), cancel=cancel):
            events.append(event)
            if isinstance(event, rxllm.Retry):
                assert event.delay == 30
                cancel.set()
    assert [e.type for e in events] == ["retry", "cancelled"]
    await asyncio.sleep(0.05)
    assert requests == 1


async def test_a_consumer_exception_is_never_retried(local_server: LocalServer) -> None:
    loop = asyncio.get_running_loop()
    failed: asyncio.Future[Exception] = loop.create_future()
    seen: list[Event] = []

    def on_next(event: Event) -> None:
        seen.append(event)
        if event.type == "text":
            raise KeyError("the consumer's own bug")

    local(local_server).stream(ask("fault/reject_param", temperature=0.2)).subscribe(
        on_next,
        failed.set_result,
        scheduler=AsyncIOScheduler(loop),
    )
    error = await asyncio.wait_for(failed, timeout=5)
    assert isinstance(error, KeyError)
    await asyncio.sleep(0.05)
    assert len(local_server.requests) == 2  # the rejection's retry, none for the bug
    assert not any(e.type == "error" for e in seen)


async def test_fallback_before_commitment(local_server: LocalServer) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    first = rxllm.provider("custom", base_url=dead, allow_private_network=True, max_attempts=1)
    events = [e async for e in rxllm.fallback([first, local(local_server)]).astream(ask("m"))]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert (retry.provider, retry.attempt) == ("custom", 1)
    assert (retry.next_provider, retry.next_attempt) == ("local", 2)
    assert retry.reason.kind == "transport"
    assert {e.provider for e in events if e.type != "retry"} == {"local"}
    assert {e.attempt for e in events if e.type != "retry"} == {2}
    rec = await rxllm.fallback([first, local(local_server)]).complete(ask("m"))
    assert rec.provider == "local" and rec.terminal.type == "done"
    assert [(a.number, a.provider, a.committed) for a in rec.attempts] == [
        (1, "custom", False),
        (2, "local", True),
    ]


async def test_fallback_never_moves_after_commitment() -> None:
    async with LocalServer(pace=0) as one, LocalServer(pace=0) as two:
        both = rxllm.fallback([local(one), local(two)])
        rec = await both.complete(ask("fault/error_event"))
        assert rec.terminal.type == "error" and rec.provider == "local"
        assert rec.text.startswith("Hello") and len(one.requests) == 1
        assert two.requests == []
        await both.aclose()


async def test_fallback_numbers_attempts_across_providers_retries(
    local_server: LocalServer,
) -> None:
    async with LocalServer(pace=0) as other:
        first = local(local_server, max_attempts=2)
        rec = await rxllm.fallback([first, local(other)]).complete(ask("fault/bad_key"))
    assert [(a.number, a.status) for a in rec.attempts] == [(1, 401), (2, 401)]
    assert len(local_server.requests) == 1 and len(other.requests) == 1


def test_fallback_skips_a_provider_that_cannot_express_the_request() -> None:
    good = rxllm.provider("local", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(rxllm.ConfigError):
        rxllm.fallback([])
    with pytest.raises(TypeError):
        rxllm.fallback([good, "openai"])  # type: ignore[list-item]
    bad = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params={"stream": 0})
    with pytest.raises(rxllm.ConfigError, match="no provider can express"):
        rxllm.fallback([good]).stream(bad)


@pytest.mark.parametrize("held", ["\n", "\nUs"])
async def test_text_a_speaker_guard_holds_does_not_commit_a_rejected_attempt(
    serve: Any, held: str
) -> None:
    """DESIGN, Commitment: "Text held by a guard does not commit until released." The
    guard released what it held before the error frame, so the text committed the
    attempt and the rejection surfaced (a review of DESIGN's rules against the tests):
    the held text is dropped with the failed attempt, which is retried clean."""
    bodies: list[dict[str, Any]] = []
    error = '"error": {"message": "Unsupported parameter: \'temperature\'", "code": 400}'

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if "temperature" in body:
            chunk = {"choices": [{"index": 0, "delta": {"content": held}}]}
            await response.write(f"data: {json.dumps(chunk)}\n\ndata: {{{error}}}\n\n".encode())
        else:
            chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
        return response

    provider = rxllm.provider(
        "openai", api_key="sk-test-0123456789abcdef", base_url=await serve(handler),
        speaker_guard=True,
    )  # fmt: skip
    events = [e async for e in provider.astream(ask("m", temperature=0.3))]
    await provider.aclose()
    assert [e.type for e in events] == ["retry", "text", "done"]
    assert events[1].text == "ok" and [("temperature" in b) for b in bodies] == [True, False]
