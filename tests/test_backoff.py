"""Waits and request ids over real HTTP: what each provider says about when to try again
and which request this was, read by the source and honoured (or surfaced) by the retry
layer. Each shape is written by hand from the provider's documentation; the local
provider plays the scripted ones (`rxllm.local.rejections`), a loopback server the rest."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.local import LocalServer
from tests.support import Serve

KEY = "sk-test-" + "k" * 40


def ask(model: str = "m", **params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")], params=params)


def custom(url: str, **options: Any) -> rxllm.Provider:
    return rxllm.provider("custom", base_url=url, allow_private_network=True, **options)


# -- a rate limit in quota words is still a rate limit -------------------------------------


async def test_azure_rate_limit_linking_its_quota_page_is_retried(
    local_server: LocalServer,
) -> None:
    """Azure's per-minute 429 says "Please go here: https://aka.ms/oai/quotaincrease":
    rxllm read "quota" as an account refusal and surfaced it, not retryable."""
    rec = await rxllm.provider("local", base_url=local_server.url).complete(
        ask("fault/quota_worded_429", seed=1)
    )
    assert rec.terminal.type == "done" and len(local_server.requests) == 2
    first, second = local_server.requests
    assert first == second  # a backoff sends the identical body
    refused = rec.attempts[0]
    assert refused.status == 429 and refused.dropped == []


async def test_gemini_free_tier_limit_is_retried_after_its_retry_info() -> None:
    """Gemini's per-minute free-tier 429 says "You exceeded your current quota" with a
    `RetryInfo`: a rate limit with a wait, not an account refusal."""
    async with LocalServer(pace=0, turns=["quota_worded_429"]) as server:
        p = rxllm.provider("google", api_key=KEY, base_url=f"{server.root}/v1beta")
        events = [e async for e in p.astream(ask("rxllm-local"))]
        await p.aclose()
    retry = next((e for e in events if isinstance(e, rxllm.Retry)), None)
    assert retry is not None, events[-1]
    assert retry.reason.status == 429 and retry.reason.code == "RESOURCE_EXHAUSTED"
    assert retry.delay == pytest.approx(0.05) and retry.reason.retry_after == pytest.approx(0.05)
    assert events[-1].type == "done" and len(server.requests) == 2


# -- the reset of a spent limit is the wait ------------------------------------------------


async def short_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},'
        b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    return response


def _rate_limited(headers: dict[str, str]) -> Any:
    requests: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        requests.append(1)
        if len(requests) > 1:  # the retry: a short valid stream
            return await short_stream(request)
        error = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}
        return web.json_response({"error": error}, status=429, headers=headers)

    return handler, requests


async def test_the_reset_of_a_spent_limit_is_waited_for(serve: Serve) -> None:
    """No Retry-After, no wait in the words: OpenAI's `x-ratelimit-reset-requests` of the
    limit that is at 0 says when to come back (rxllm guessed 0.5 s)."""
    handler, requests = _rate_limited(
        {
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "20ms",
            "x-ratelimit-remaining-tokens": "149000",
            "x-ratelimit-reset-tokens": "6m0s",  # a limit that is not spent: not the wait
        }
    )
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.delay == pytest.approx(0.02) and retry.reason.retry_after == pytest.approx(0.02)
    assert events[-1].type == "done" and len(requests) == 2


async def test_a_reset_beyond_the_patience_surfaces_at_once(serve: Serve) -> None:
    """Six minutes until the token limit refills: two backoffs of 0.5 and 1 s would be
    refused too. The 429 surfaces at once, retryable, with its wait and its id."""
    handler, requests = _rate_limited(
        {
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": "6m0s",
            "apim-request-id": "9da39506-6c13-4646-91eb-5e0f5cf0cc50",
        }
    )
    rec = await custom(await serve(handler)).complete(ask())
    assert len(requests) == 1
    error = rec.terminal.error  # type: ignore[union-attr]
    assert (error.status, error.retryable, error.retry_after) == (429, True, 360.0)
    assert error.request_id == "9da39506-6c13-4646-91eb-5e0f5cf0cc50"


def _openrouter_limited(reset_in: float, in_body: bool) -> Any:
    """OpenRouter's 429: `X-RateLimit-Reset` is the moment, in epoch milliseconds, the
    window refills, in the response headers and again in `error.metadata.headers`."""
    requests: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        requests.append(1)
        if len(requests) > 1:
            return await short_stream(request)
        limit = {
            "X-RateLimit-Limit": "20",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int((time.time() + reset_in) * 1000)),
        }
        error = {"message": "Rate limit exceeded: free-models-per-min. ", "code": 429}
        if in_body:
            error["metadata"] = {"headers": limit}
        return web.json_response({"error": error}, status=429, headers={} if in_body else limit)

    return handler, requests


@pytest.mark.parametrize("in_body", [False, True], ids=["headers", "body"])
async def test_openrouter_reset_moment_is_the_wait(serve: Serve, in_body: bool) -> None:
    """A day's free limit spent: the window refills in hours, so the 429 surfaces at once
    with that wait (rxllm backed off twice, blind, then surfaced with none)."""
    handler, requests = _openrouter_limited(5 * 3600, in_body)
    p = rxllm.provider("openrouter", api_key=KEY, base_url=await serve(handler))
    rec = await p.complete(ask())
    await p.aclose()
    error = rec.terminal.error  # type: ignore[union-attr]
    assert len(requests) == 1 and error.status == 429
    assert error.retry_after == pytest.approx(5 * 3600, abs=5)


async def test_openrouter_reset_moment_soon_is_waited_for(serve: Serve) -> None:
    handler, requests = _openrouter_limited(0.05, in_body=True)
    p = rxllm.provider("openrouter", api_key=KEY, base_url=await serve(handler))
    events = [e async for e in p.astream(ask())]
    await p.aclose()
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert 0 <= retry.delay <= 0.05 and events[-1].type == "done" and len(requests) == 2


async def test_a_wait_longer_than_the_turn_surfaces_the_rejection(serve: Serve) -> None:
    """`Retry-After: 30` with `total_timeout=1`: the retry can never happen in time, so
    the 429 surfaces now (retryable, with its wait), not a "stalled" a second later."""
    handler, requests = _rate_limited({"Retry-After": "30", "x-request-id": "req_1"})
    rec = await custom(await serve(handler), total_timeout=1).complete(ask())
    error = rec.terminal.error  # type: ignore[union-attr]
    assert (error.kind, error.status, error.retryable, error.retry_after) == (
        "rejected",
        429,
        True,
        30.0,
    )
    assert error.request_id == "req_1" and len(requests) == 1


# -- request ids ---------------------------------------------------------------------------


async def test_anthropic_request_id_from_the_body_when_no_header(serve: Serve) -> None:
    """docs.claude.com/en/api/errors: every error body carries `request_id`; a proxy that
    drops the `request-id` header still leaves it there."""

    async def overloaded(request: web.Request) -> web.StreamResponse:
        body = {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_011CSLsW7mFqvHHnzrKdKjAE",
        }
        return web.json_response(body, status=529)

    p = rxllm.provider("anthropic", api_key=KEY, base_url=await serve(overloaded), max_attempts=1)
    rec = await p.complete(ask())
    error = rec.terminal.error  # type: ignore[union-attr]
    assert (error.status, error.code, error.retryable) == (529, "overloaded_error", True)
    assert error.request_id == "req_011CSLsW7mFqvHHnzrKdKjAE"
    await p.aclose()


def _streaming_200(body: bytes, pause: float = 0.0) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": "req_200"}
        )
        await response.prepare(request)
        await response.write(body)
        await asyncio.sleep(pause)
        return response

    return handler


TEXT = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'


@pytest.mark.parametrize(
    ("body", "pause", "options", "kind"),
    [
        (json.dumps({"choices": []}).encode(), 0.0, {}, "protocol"),  # not an event stream
        (TEXT * 50, 0.0, {"max_response_bytes": 100}, "limit"),
        (TEXT, 2.0, {"read_timeout": 0.2}, "stalled"),
    ],
    ids=["not-sse", "too-big", "read-timeout"],
)
async def test_a_failure_after_200_keeps_the_response_request_id(
    serve: Serve, body: bytes, pause: float, options: dict[str, Any], kind: str
) -> None:
    """The source ends a 200 response itself (not SSE, too big, silent): the response's
    request id is what a support ticket about it needs."""
    url = await serve(_streaming_200(body, pause))
    rec = await custom(url, max_attempts=1, **options).complete(ask())
    error = rec.terminal.error  # type: ignore[union-attr]
    assert error.kind == kind and error.request_id == "req_200"


_OVERLOADED = {"error": {"message": "Overloaded", "code": 529}}
_RESPONSE_FAILED = {
    "type": "response.failed",
    "response": {"id": "resp_1", "status": "failed", "error": {"code": "server_error",
                 "message": "The model failed mid-answer."}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openrouter", TEXT + f"data: {json.dumps(_OVERLOADED)}\n\n".encode()),
        (
            "openai-responses",
            b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta",'
            b' "output_index": 0, "content_index": 0, "delta": "Hi"}\n\n'
            + f"event: response.failed\ndata: {json.dumps(_RESPONSE_FAILED)}\n\n".encode(),
        ),
    ],
)
async def test_an_error_inside_the_body_names_the_responses_request_id(
    serve: Serve, provider: str, body: bytes
) -> None:
    """The provider's words after some output (OpenRouter's error chunk, Responses'
    `response.failed`): the wire's error, with the id of the response it came in."""
    url = await serve(_streaming_200(body))
    p = rxllm.provider(provider, api_key=KEY, base_url=url, max_attempts=1)
    rec = await p.complete(ask())
    await p.aclose()
    error = rec.terminal.error  # type: ignore[union-attr]
    assert rec.text == "Hi" and error.kind == "stream_error", error
    assert error.request_id == "req_200"


async def test_a_failed_finish_before_any_output_is_sent_again_unchanged(serve: Serve) -> None:
    """vLLM's `abort` (or Z.ai's `network_error`) before a word was said: the server's
    trouble, so the same body again, not a degraded one (the static list)."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        finish = "abort" if len(bodies) == 1 else "stop"
        content = "" if len(bodies) == 1 else "ok"
        chunk = {"id": "c", "model": "m", "choices": [
            {"index": 0, "delta": {"content": content}, "finish_reason": finish}
        ]}  # fmt: skip
        await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
        return response

    rec = await custom(await serve(handler)).complete(ask())
    assert rec.terminal.type == "done" and rec.text == "ok"
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    assert rec.attempts[0].error is not None and "'abort'" in rec.attempts[0].error


async def test_the_retry_event_reports_the_jittered_wait(serve: Serve) -> None:
    """A 429 that names no wait (no header, no words, no spent limit): the retry waits the
    computed first backoff less its jitter, and the `retry` event says so (it said 0.5 s,
    the wait every stream refused at that instant took)."""
    handler, requests = _rate_limited({})
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.reason.retry_after is None
    assert 0.375 <= retry.delay < 0.5  # 0.5 * (1 - 0.25 * random()); exactly 0.5 one in 2**53
    assert events[-1].type == "done" and len(requests) == 2


# -- a retry event says what the policy concluded ---------------------------------------


@pytest.mark.parametrize(
    ("provider", "turn", "retryable"),
    [
        ("anthropic", "overloaded", True),  # 529: the same request later (a backoff)
        ("local", "fault/reject_param", False),  # 400: only a degraded body succeeds
    ],
)
async def test_a_retry_reason_is_retryable_as_the_policy_concluded(
    provider: str, turn: str, retryable: bool
) -> None:
    """A `retry` event's reason read `retryable` off the wire error before the policy
    saw it: an Anthropic 529, backed off and retried, said `False`, while the same
    error surfaced (attempts spent) said `True`."""
    async with LocalServer(pace=0, turns=[turn.removeprefix("fault/")]) as server:
        p = server.provider(provider if provider == "anthropic" else "openai")
        request = ask("rxllm-local" if provider == "anthropic" else turn, temperature=0.2)
        events = [e async for e in p.astream(request)]
        await p.aclose()
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.reason.retryable is retryable, retry.reason
    assert events[-1].type == "done"
