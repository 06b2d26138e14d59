"""StreamRecord.ok and raise_for_error(): each failure over real HTTP raises the
exception an openai-SDK user expects to catch, with its ErrorInfo attached."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

import rxllm
from rxllm.errors import ConflictError, UnprocessableEntityError
from rxllm.local import LocalServer


def ask(model: str) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[{"role": "user", "content": "hi"}])


async def complete(server: LocalServer, model: str, **options: Any) -> rxllm.StreamRecord:
    options.setdefault("max_attempts", 1)
    return await rxllm.provider("local", base_url=server.url, **options).complete(ask(model))


async def test_a_done_record_is_ok_and_returned(local_server: LocalServer) -> None:
    rec = await complete(local_server, "rxllm-local")
    assert rec.ok
    assert rec.raise_for_error() is rec


async def test_a_cancelled_record_is_not_ok_and_not_raised(local_server: LocalServer) -> None:
    cancel = asyncio.Event()
    cancel.set()
    p = rxllm.provider("local", base_url=local_server.url)
    rec = await p.complete(ask("fault/hang"), cancel=cancel)
    assert rec.terminal.type == "cancelled" and not rec.ok
    assert rec.raise_for_error() is rec


@pytest.mark.parametrize(
    ("model", "raised", "status"),
    [
        ("fault/bad_key", rxllm.AuthenticationError, 401),
        ("fault/context_length", rxllm.ContextLengthError, 400),
        ("fault/rate_limited", rxllm.RateLimitError, 429),
        ("fault/http_500", rxllm.InternalServerError, 500),
        ("fault/malformed_tool", rxllm.MalformedResponseError, None),
        ("fault/truncated", rxllm.MalformedResponseError, None),
    ],
)
async def test_each_failure_raises_its_exception(
    local_server: LocalServer, model: str, raised: type[rxllm.ProviderError], status: int | None
) -> None:
    rec = await complete(local_server, model)
    assert not rec.ok
    with pytest.raises(raised) as caught:
        rec.raise_for_error()
    error = caught.value
    assert isinstance(error, rxllm.ProviderError) and type(error) is raised
    assert rec.terminal.type == "error" and error.info == rec.terminal.error
    assert error.status == status and error.record is rec
    assert str(error) == f"local: {error.info.message}"


async def test_a_status_error_is_an_api_status_error(local_server: LocalServer) -> None:
    rec = await complete(local_server, "fault/context_length")
    with pytest.raises(rxllm.APIStatusError) as caught:
        rec.raise_for_error()
    assert isinstance(caught.value, rxllm.BadRequestError) and caught.value.status == 400


async def test_a_deadline_is_a_timeout_and_a_connection_error(local_server: LocalServer) -> None:
    rec = await complete(local_server, "fault/hang", first_event_timeout=None, idle_timeout=0.05)
    with pytest.raises(rxllm.APITimeoutError) as caught:
        rec.raise_for_error()
    assert isinstance(caught.value, rxllm.APIConnectionError)
    assert "idle_timeout" in str(caught.value)


async def test_nobody_listening_is_a_connection_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    p = rxllm.provider("local", base_url=f"http://127.0.0.1:{port}/v1", max_attempts=1)
    rec = await p.complete(ask("rxllm-local"))
    with pytest.raises(rxllm.APIConnectionError) as caught:
        rec.raise_for_error()
    assert type(caught.value) is rxllm.APIConnectionError and caught.value.info.kind == "transport"


async def test_a_limit_is_a_limit_error(local_server: LocalServer) -> None:
    rec = await complete(local_server, "fault/long_line", max_line_bytes=100_000)
    with pytest.raises(rxllm.LimitError, match=r"max_line_bytes \(100000\)"):
        rec.raise_for_error()


async def test_a_refused_address_is_a_policy_error(local_server: LocalServer) -> None:
    rec = await complete(local_server, "rxllm-local", ssrf_guard=True)
    with pytest.raises(rxllm.PolicyError):
        rec.raise_for_error()


@pytest.mark.parametrize(
    ("kind", "status", "raised"),
    [
        ("stream_error", None, rxllm.StreamError),
        ("stream_error", 529, rxllm.InternalServerError),  # Anthropic's overloaded_error
        ("stream_error", 429, rxllm.RateLimitError),
        ("rejected", 402, rxllm.PermissionDeniedError),
        ("rejected", 403, rxllm.PermissionDeniedError),
        ("rejected", 404, rxllm.NotFoundError),
        ("rejected", 409, ConflictError),  # the openai and anthropic SDKs' names
        ("rejected", 422, UnprocessableEntityError),
        ("rejected", 418, rxllm.APIStatusError),
        ("http", 503, rxllm.InternalServerError),
        ("protocol", None, rxllm.MalformedResponseError),
    ],
)
def test_the_class_follows_the_status_then_the_kind(
    kind: Any, status: int | None, raised: type[rxllm.ProviderError]
) -> None:
    info = rxllm.ErrorInfo(kind=kind, message="m", status=status, provider="p")
    record = rxllm.StreamRecord(provider="p", terminal=rxllm.Failed(provider="p", error=info))
    with pytest.raises(rxllm.ProviderError) as caught:
        record.raise_for_error()
    assert type(caught.value) is raised and caught.value.info is info


def test_a_422_is_still_a_bad_request() -> None:
    """`UnprocessableEntityError` came after `BadRequestError` stood for 422: code that
    catches the older name still catches it, and a 422 about the conversation's length
    is still a `ContextLengthError`."""
    refused = rxllm.ErrorInfo(kind="rejected", message="extra_forbidden", status=422, provider="p")
    too_long = refused.model_copy(update={"message": "maximum context length is 4096 tokens"})
    raised = [rxllm.errors.error_for(info) for info in (refused, too_long)]
    assert [type(error) for error in raised] == [UnprocessableEntityError, rxllm.ContextLengthError]
    assert all(isinstance(error, rxllm.BadRequestError) for error in raised)
    assert not issubclass(ConflictError, rxllm.BadRequestError)
