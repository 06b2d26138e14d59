"""What the user keeps after a turn: no credential in an error, a raw body, a repr or a
log line, wherever the wire or the URL wrote it (after a JSON or URL escape, in the base
URL's userinfo or query, as the Basic header the userinfo becomes); the exception
`raise_for_error()` raises survives pickle and copy; a status no rule names is still an
`APIStatusError`."""

from __future__ import annotations

import copy
import json
import pickle
from urllib.parse import quote

import pytest
from aiohttp import web

import rxllm
from rxllm.local import LocalServer
from tests.support import Serve

KEY = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0" * 2  # 48 characters, as real keys are


def ask() -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])


def shown(provider: rxllm.Provider, record: rxllm.StreamRecord) -> str:
    """Everything a user could print of a failed turn."""
    texts = [repr(provider), record.model_dump_json(), repr(record)]
    with pytest.raises(rxllm.ProviderError) as raised:
        record.raise_for_error()
    texts += [str(raised.value), repr(raised.value)]
    return "\n".join(texts)


async def test_a_key_echoed_after_an_escape_is_redacted_in_the_raw_body(
    serve: Serve, logs: list[str]
) -> None:
    """The raw body is JSON text: a message with a newline before the key writes `\\n`
    there, and a URL-encoded echo writes `Bearer%20<key>`: neither `n` nor `0` may glue
    the key to a word and keep it from being redacted."""

    async def echo(request: web.Request) -> web.Response:
        auth = request.headers["Authorization"]
        error = {
            "message": f"Incorrect API key provided:\n{auth.removeprefix('Bearer ')}",
            "detail": f"https://example.com/why?auth={quote(auth, safe='')}",
            "type": "invalid_request_error",
        }
        return web.json_response({"error": error}, status=401)

    url = await serve(echo)
    async with rxllm.provider("openai", api_key=KEY, base_url=url) as provider:
        record = await provider.complete(ask())
    error = record.terminal.error  # type: ignore[union-attr]
    assert error.status == 401 and error.raw is not None
    assert "\\n[redacted]" in error.raw and "Bearer%20[redacted]" in error.raw
    assert KEY not in shown(provider, record)
    assert not [line for line in logs if KEY in line]


async def test_a_credential_written_into_the_base_url_never_shows(
    serve: Serve, logs: list[str]
) -> None:
    """No `api_key`: the endpoint takes its key in the query (`?key=`, as Gemini's
    OpenAI-compatible endpoint does), or a user and password (Basic auth). The server
    redirects, then echoes the URL and the Authorization header it got."""

    async def echo(request: web.Request) -> web.Response:
        if request.path.startswith("/v1/old"):
            target = "/v1/chat/completions?" + request.query_string
            return web.Response(status=307, headers={"Location": target})
        auth = request.headers.get("Authorization", "")
        message = f"no model at {request.url} (authorization: {auth})"
        return web.json_response({"error": {"message": message}}, status=404)

    url = await serve(echo)
    host = url.removeprefix("http://")
    for base_url, redirected in (
        (f"{url}/old?key={KEY}", True),
        (f"http://me:{KEY}@{host}", False),
    ):
        logs.clear()
        provider = rxllm.provider("custom", base_url=base_url, allow_private_network=True)
        async with provider:
            record = await provider.complete(ask())
        error = record.terminal.error  # type: ignore[union-attr]
        assert error.status == 404 and "no model at" in error.message
        assert KEY not in shown(provider, record), base_url
        assert not [line for line in logs if KEY in line], base_url
        assert any("following a 307 redirect" in line for line in logs) is redirected


async def test_a_short_password_in_the_userinfo_is_a_credential_too(serve: Serve) -> None:
    async def echo(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        return web.json_response({"error": {"message": f"denied {auth}"}}, status=401)

    url = await serve(echo)
    base_url = url.replace("http://", "http://me:hunter2@")
    async with rxllm.provider("custom", base_url=base_url, allow_private_network=True) as p:
        record = await p.complete(ask())
    error = record.terminal.error  # type: ignore[union-attr]
    assert error.message == "HTTP 401: denied Basic [redacted]"
    assert "hunter2" not in shown(p, record)
    assert "bWU6aHVudGVyMg==" not in shown(p, record)  # base64 of me:hunter2


@pytest.mark.parametrize(
    "advice",
    [
        "pass your key as ?key=YOUR_API_KEY, or try: ollama pull llama3",
        "Basic plan: upgrade at https://example.com/billing?plan=pro",
    ],
)
async def test_what_only_looks_like_a_credential_stays_whole(serve: Serve, advice: str) -> None:
    async def answer(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": advice}}, status=403)

    url = await serve(answer)
    async with rxllm.provider("ollama", api_key="ollama", base_url=url) as provider:
        record = await provider.complete(ask())
    error = record.terminal.error  # type: ignore[union-attr]
    assert advice in error.message and "[redacted]" not in (error.raw or "")


async def test_the_raised_error_survives_pickle_and_copy(local_server: LocalServer) -> None:
    """A process pool, or loguru with `enqueue=True`, pickles what was raised."""
    p = rxllm.provider("local", base_url=local_server.url, max_attempts=1)
    record = await p.complete(
        rxllm.ChatRequest(model="fault/rate_limited", messages=[rxllm.Message.user("hi")])
    )
    with pytest.raises(rxllm.RateLimitError) as raised:
        record.raise_for_error()
    error = raised.value
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is rxllm.RateLimitError and str(clone) == str(error)
        assert clone.info == error.info and clone.record == record
        assert clone.status == 429 and clone.info.retry_after == error.info.retry_after


@pytest.mark.parametrize("status", [300, 304])
async def test_a_redirect_status_not_followed_is_an_api_status_error(
    serve: Serve, status: int
) -> None:
    """A 3xx without a `Location` (or a 304) is an error with a status, as a 4xx is."""

    async def answer(request: web.Request) -> web.Response:
        return web.Response(status=status)

    url = await serve(answer)
    async with rxllm.provider("openai", api_key=KEY, base_url=url, max_attempts=1) as p:
        record = await p.complete(ask())
    with pytest.raises(rxllm.APIStatusError) as raised:
        record.raise_for_error()
    assert raised.value.status == status and raised.value.record is record


def _stream_quoting_the_key(wire: str, auth: str) -> bytes:
    """A 200 stream whose error, sent inside the body, quotes the credential sent."""
    key = auth.removeprefix("Bearer ")
    said = f"Incorrect API key provided: {key}"
    if wire == "anthropic":
        error = {"type": "error", "error": {"type": "authentication_error", "message": said}}
        return f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    if wire == "openai-not-json":
        return f"data: not json at all, key={key}\n\n".encode()
    return (
        f"data: {json.dumps({'error': {'message': said, 'code': 'invalid_api_key'}})}\n\n".encode()
    )


@pytest.mark.parametrize("wire", ["openai", "anthropic", "openai-not-json"])
async def test_an_error_inside_the_stream_never_quotes_the_key(
    serve: Serve, logs: list[str], wire: str
) -> None:
    """Redaction ran only on the HTTP source's own errors: an error the provider sent
    inside a 200 stream kept the key in its message, raw body, record, exception and
    (for a chunk that is not JSON) a debug log line with its traceback."""

    async def stream(request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization") or request.headers["x-api-key"]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(_stream_quoting_the_key(wire, auth))
        return response

    name = "anthropic" if wire == "anthropic" else "openai"
    url = await serve(stream)
    async with rxllm.provider(name, api_key=KEY, base_url=url, max_attempts=1) as provider:
        record = await provider.complete(ask())
    assert record.terminal.type == "error"
    assert KEY not in shown(provider, record)
    assert "[redacted]" in record.terminal.error.message  # type: ignore[union-attr]
    assert not [line for line in logs if KEY in line]


async def test_a_hint_never_quotes_a_key_written_into_the_base_url(serve: Serve) -> None:
    """Anthropic's 404 hint quotes the base URL, which may carry the key in its query."""

    async def not_found(request: web.Request) -> web.Response:
        return web.json_response(
            {"type": "error", "error": {"type": "not_found_error"}}, status=404
        )

    url = (await serve(not_found)).removesuffix("/v1") + f"/?key={KEY}"
    async with rxllm.provider("anthropic", api_key=KEY, base_url=url) as provider:
        record = await provider.complete(ask())
    assert "missing it?" in record.terminal.error.message  # type: ignore[union-attr]
    assert KEY not in shown(provider, record)
