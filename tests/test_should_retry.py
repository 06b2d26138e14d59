"""`x-should-retry`: the server's own word on sending the same request again, which the
openai and anthropic SDKs obey before the status (`BaseClient._should_retry`). Read
from the rejection's headers by the source, honoured by the recovery policy; a
degraded body is another request, which the header does not govern."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import RecoveryPolicy, classify
from rxllm.error_body import should_retry_of
from rxllm.errors import ConflictError
from tests.support import Serve
from tests.test_backoff import short_stream

KEY = "sk-test-" + "k" * 40
# A wait the server names, so that no test sleeps the computed backoff (0.5 s).
SHORT_WAIT = {"retry-after-ms": "1"}


def ask(**params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params=params)


def custom(url: str, **options: Any) -> rxllm.Provider:
    """An OpenAI-compatible endpoint: the family that degrades bodies too."""
    return rxllm.provider("custom", base_url=url, allow_private_network=True, **options)


# -- reading the header --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"x-should-retry": "true"}, True),
        ({"X-Should-Retry": "false"}, False),
        ({}, None),
        # the SDKs compare the value with "true" and "false" exactly: anything else is
        # no statement, and the status decides
        ({"x-should-retry": "True"}, None),
        ({"x-should-retry": "1"}, None),
        ({"x-should-retry": ""}, None),
    ],
)
def test_the_header_is_read_as_the_sdks_read_it(headers: dict[str, str], says: bool | None) -> None:
    assert should_retry_of(headers) is says


# -- the policy ----------------------------------------------------------------------------

DEGRADES = RecoveryPolicy(degrade=True)
BODY = {"model": "m", "messages": [], "stream": True, "top_p": 0.5}


def refused(status: int, message: str, should_retry: bool | None) -> rxllm.ErrorInfo:
    return rxllm.ErrorInfo(
        kind="rejected" if status < 500 else "http",
        message=message,
        status=status,
        provider="p",
        should_retry=should_retry,
    )


@pytest.mark.parametrize(
    ("status", "message", "should_retry", "action"),
    [
        # the server's "true" outranks a status no policy would retry
        (400, "Bad request", True, "backoff"),
        (400, "Bad request", None, "static"),
        (404, "Not Found", True, "backoff"),
        (404, "Not Found", None, "surface"),
        # its "false" outranks a status every policy retries
        (429, "Rate limit reached for requests", False, "surface"),
        (429, "Rate limit reached for requests", None, "backoff"),
        (503, "Service Unavailable", False, "surface"),
        (409, "Conflict", None, "backoff"),
        # a degraded body is another request: "false" leaves degradation alone
        (400, "Unsupported parameter: 'top_p'", False, "drop"),
        (400, "Bad request", False, "static"),
    ],
)
def test_the_server_word_decides_an_identical_retry_only(
    status: int, message: str, should_retry: bool | None, action: str
) -> None:
    verdict = classify(refused(status, message, should_retry), BODY, DEGRADES)
    assert verdict.action == action


def test_true_keeps_the_wait_the_server_named() -> None:
    error = refused(409, "lock timeout", True).model_copy(update={"retry_after": 2.0})
    assert classify(error, BODY, RecoveryPolicy()).delay == 2.0


# -- over HTTP -----------------------------------------------------------------------------


def _refuses_once(status: int, error: dict[str, Any], headers: dict[str, str]) -> Any:
    """A handler that answers `status` with `error` and `headers` once, then streams;
    and the bodies it was sent."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(json.loads(await request.read()))
        if len(bodies) > 1:
            return await short_stream(request)
        return web.json_response({"error": error}, status=status, headers=headers)

    return handler, bodies


LOCK_TIMEOUT = {"message": "Request timed out waiting for a lock", "type": "conflict"}


@pytest.mark.parametrize("header", [{"x-should-retry": "true"}, {}], ids=["true", "no header"])
async def test_a_lock_timeout_is_sent_again(serve: Serve, header: dict[str, str]) -> None:
    """A 409 is what the SDKs call a lock timeout, retried with or without the header."""
    handler, bodies = _refuses_once(409, LOCK_TIMEOUT, {**header, **SHORT_WAIT})
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    retries = [e for e in events if isinstance(e, rxllm.Retry)]
    assert [r.reason.status for r in retries] == [409] and retries[0].reason.retryable
    assert retries[0].dropped == [] and bodies[0] == bodies[1]
    assert events[-1].type == "done"


async def test_true_sends_the_same_body_again_where_the_status_would_not(serve: Serve) -> None:
    """A 400 that names nothing is the body's fault to the policy: without the header,
    the next attempt drops `stream_options`. The server said the same request may
    succeed, so the same body goes again."""
    handler, bodies = _refuses_once(
        400, {"message": "Bad request"}, {"x-should-retry": "true", **SHORT_WAIT}
    )
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.dropped == [] and retry.reason.retryable and retry.reason.should_retry is True
    assert retry.delay == pytest.approx(0.001)
    assert bodies[0] == bodies[1] and events[-1].type == "done"


RATE_LIMITED = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}


async def test_false_surfaces_a_rate_limit_at_once(serve: Serve) -> None:
    handler, bodies = _refuses_once(429, RATE_LIMITED, {"x-should-retry": "false", **SHORT_WAIT})
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    assert not any(isinstance(e, rxllm.Retry) for e in events) and len(bodies) == 1
    failed = events[-1]
    assert isinstance(failed, rxllm.Failed)
    error = failed.error
    assert (error.status, error.retryable, error.should_retry) == (429, False, False)
    assert error.retry_after == pytest.approx(0.001)  # what the server said is still reported


async def test_without_the_header_a_rate_limit_is_retried(serve: Serve) -> None:
    handler, bodies = _refuses_once(429, RATE_LIMITED, SHORT_WAIT)
    events = [e async for e in custom(await serve(handler)).astream(ask())]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.reason.retryable and retry.reason.should_retry is None
    assert events[-1].type == "done" and len(bodies) == 2


async def test_false_still_lets_a_refused_parameter_be_dropped(serve: Serve) -> None:
    """`false` says this request will fail again; the body without `top_p` is another
    request, and the only way the turn can succeed."""
    refusal = {"message": "Unsupported parameter: 'top_p'", "param": "top_p"}
    handler, bodies = _refuses_once(400, refusal, {"x-should-retry": "false"})
    events = [e async for e in custom(await serve(handler)).astream(ask(top_p=0.5))]
    retry = next(e for e in events if isinstance(e, rxllm.Retry))
    assert retry.dropped == ["top_p"] and "top_p" not in bodies[1]
    assert events[-1].type == "done"


async def test_a_conflict_that_stays_surfaces_as_a_conflict_error(serve: Serve) -> None:
    """The server says not to retry a 409: it surfaces at once, as `ConflictError`."""
    handler, bodies = _refuses_once(409, LOCK_TIMEOUT, {"x-should-retry": "false"})
    rec = await custom(await serve(handler)).complete(ask())
    with pytest.raises(ConflictError) as caught:
        rec.raise_for_error()
    assert caught.value.status == 409 and not caught.value.retryable and len(bodies) == 1


def test_a_replayed_rejection_keeps_the_servers_word() -> None:
    """A recorded HTTP response (its head kept) reads as the live turn read it."""
    dump = (
        b"HTTP/1.1 429 Too Many Requests\r\nx-should-retry: false\r\n"
        b"content-type: application/json\r\n\r\n"
        b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    )
    events: list[Any] = []
    rxllm.replay(dump, provider="openai").subscribe(events.append)
    error = events[-1].error
    assert (error.status, error.should_retry) == (429, False)
