"""An API key never shows: not in a log line at DEBUG, an event, a record, or the repr
of a provider, a request or an error, through degraded retries and an error that
echoes the key back."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from rxllm.pipeline.record import RecordBuilder
from rxllm.secrets import RedactedLines, redact, redact_head
from rxllm.sources.sse import SseDecoder, SseEvent
from tests.support import Serve

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2  # 48 characters, as real keys are


@pytest.fixture
async def echo_url() -> AsyncIterator[str]:
    """An endpoint that rejects with 401 and quotes the Authorization header back."""

    async def echo(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        message = f"Incorrect API key provided: {auth}. Your key: {auth.removeprefix('Bearer ')}"
        body = {"error": {"message": message, "type": "invalid_request_error", "key": auth}}
        return web.json_response(body, status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    await runner.cleanup()


def request(model: str, **params: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")], params=params)


async def turn(provider: rxllm.Provider, req: rxllm.ChatRequest) -> tuple[list[Event], str]:
    events = [event async for event in provider.astream(req)]
    builder = RecordBuilder(provider.name, req.model)
    for event in events:
        builder.add(event)
    shown = [event.model_dump_json() for event in events]
    shown += [repr(event) for event in events] + [str(event) for event in events]
    shown.append(builder.build().model_dump_json())
    shown.append(repr(builder.build()))
    return events, "\n".join(shown)


async def test_the_key_never_shows(logs: list[str], echo_url: str) -> None:
    async with LocalServer(pace=0) as server:
        local = rxllm.provider("local", api_key=KEY, base_url=server.url)
        events, shown = await turn(local, request("fault/reject_param", temperature=0.2))
        assert [e.type for e in events].count("retry") == 1 and events[-1].type == "done"
        assert "temperature" not in server.requests[-1]
        overloaded, more = await turn(local, request("fault/overloaded"))
        assert "retry" in [e.type for e in overloaded] and overloaded[-1].type == "done"
        shown += more
    custom = rxllm.provider("custom", api_key=KEY, base_url=echo_url, allow_private_network=True)
    rejected, more = await turn(custom, request("m"))
    shown += more
    error = rejected[-1]
    assert error.type == "error" and error.error.status == 401
    assert "[redacted]" in error.error.message  # the echo arrived, and was redacted
    shown += repr(error.error) + str(error.error) + (error.error.raw or "")
    for provider in (local, custom):
        shown += repr(provider) + str(provider)
    assert logs, "logging at DEBUG produced nothing: the sink is not wired"
    assert KEY not in shown
    leaked = [line for line in logs if KEY in line]
    assert not leaked, leaked[:3]


def test_the_repr_of_the_http_request_hides_the_key() -> None:
    local = rxllm.provider("local", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    sent = local.http_request(request("m"))
    assert KEY not in repr(sent) and KEY not in str(sent)


@pytest.mark.parametrize("status", [301, 307])
async def test_a_location_that_quotes_the_key_shows_it_nowhere(
    logs: list[str], status: int
) -> None:
    """An endpoint that echoes the key into a redirect: in the path, the query and
    the userinfo. Each is refused or followed; the key shows in no error and no log."""
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(str(request.rel_url))
        if request.path == "/v1/chat/completions":
            key = request.headers["Authorization"].removeprefix("Bearer ")
            target = f"/moved/{key}/chat?key={key}"
            return web.Response(status=status, headers={"Location": target})
        return web.json_response({"error": {"message": f"no such key {KEY}"}}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        async with rxllm.provider("openai", api_key=KEY, base_url=url) as provider:
            events, shown = await turn(provider, request("m"))
    finally:
        await runner.cleanup()
    assert events[-1].type == "error"
    assert len(seen) == (2 if status == 307 else 1)  # the 307 was followed, same origin
    assert "[redacted]" in events[-1].error.message
    assert KEY not in shown
    if status == 307:
        assert any("following a 307 redirect" in line for line in logs)
    assert not [line for line in logs if KEY in line]


@pytest.mark.parametrize(("name", "key"), [("ollama", "ollama"), ("vllm", "EMPTY")])
async def test_a_placeholder_key_leaves_the_providers_advice_whole(name: str, key: str) -> None:
    advice = f"model 'llama3' not found, try pulling it first with: ollama pull llama3 ({key})"

    async def handler(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": advice}}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        async with rxllm.provider(name, api_key=key, base_url=url) as provider:
            rec = await provider.complete(request("llama3"))
    finally:
        await runner.cleanup()
    assert rec.terminal.type == "error"
    assert advice in rec.terminal.error.message and "[redacted]" not in (
        rec.terminal.error.raw or ""
    )


def test_the_request_a_caller_gets_is_its_own_to_change_copy_and_pickle() -> None:
    import copy
    import pickle

    provider = rxllm.provider("openai", api_key="sk-" + "k" * 40, base_url="http://127.0.0.1:9")
    sent = provider.http_request(request("m"))
    assert pickle.loads(pickle.dumps(sent)) == sent
    assert copy.deepcopy(sent) == sent
    sent.headers["X-Mine"] = "1"  # type: ignore[index]
    assert "X-Mine" not in provider.http_request(request("m")).headers


@pytest.mark.parametrize(
    ("key", "redacted"),
    [
        ("sk-test-secret-key", True),  # a test's fake key: 18 characters
        ("test-api-key", True),
        ("lm-studio", False),
        ("not-needed", False),
        ("sk-1234", False),  # LiteLLM's placeholder master key
    ],
)
def test_a_key_is_a_secret_from_twelve_characters_on(key: str, redacted: bool) -> None:
    message = f"Incorrect API key provided: {key}. See https://example.com?key=YOUR_API_KEY"
    shown = redact(message, (key,))
    assert (key not in shown) is redacted
    assert "?key=YOUR_API_KEY" in shown  # a provider's advice in a URL stays whole


SLASHED = "AbC/dEf+GhI=jKlMnOpQrStUvWxYz0123456789"  # a key with `/`, `+` and `=`
LOWER_HEX = re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(SLASHED, safe=""))


@pytest.mark.parametrize(
    "written",
    [
        pytest.param(LOWER_HEX, id="percent-encoded-lower-hex"),  # .NET's UrlEncode: `%2f`
        pytest.param(SLASHED.replace("/", "\\/"), id="json-escaped-slash"),  # PHP json_encode
    ],
)
async def test_a_key_written_as_other_servers_write_it_is_redacted(
    logs: list[str], serve: Serve, written: str
) -> None:
    assert written != SLASHED

    async def handler(request: web.Request) -> web.Response:
        body = '{"error": {"message": "Incorrect API key provided: ' + written + '"}}'
        return web.Response(text=body, status=401, content_type="application/json")

    url = await serve(handler)
    async with rxllm.provider(
        "custom", api_key=SLASHED, base_url=url, allow_private_network=True, max_attempts=1
    ) as provider:
        events, shown = await turn(provider, request("m"))
    error = events[-1]
    assert error.type == "error" and error.error.status == 401
    assert error.error.raw is not None and "[redacted]" in error.error.raw
    shown += error.error.message + error.error.raw
    assert written not in shown and SLASHED not in shown
    assert not [line for line in logs if written in line or SLASHED in line]


async def test_an_ignored_sse_line_that_echoes_the_key_is_logged_redacted(
    logs: list[str], serve: Serve
) -> None:
    """A server that writes the request's Authorization header back as an SSE line: the
    decoder ignores the field and logs it at debug, the value redacted."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"authorization: {request.headers['Authorization']}\n\n".encode())
        await response.write(_chunk("Hi", "stop") + b"data: [DONE]\n\n")
        return response

    url = await serve(handler)
    async with rxllm.provider(
        "custom", api_key=KEY, base_url=url, allow_private_network=True
    ) as provider:
        events, _ = await turn(provider, request("m"))
    assert events[-1].type == "done"
    ignored = [line for line in logs if "ignored an SSE line of field 'authorization'" in line]
    assert ignored and "'Bearer [redacted]'" in ignored[0], logs
    assert not [line for line in logs if KEY in line]


# Each body quotes the key where the quote of it is cut, 15 characters into the key.
_STRADDLING = {
    "a data line that is not JSON": b"data: " + b"x" * 180 + b" key=%s\n\n",  # 200 chars
    "a body that is not SSE": b"y" * 280 + b" key=%s",  # 300 chars
    "a last line cut short": b'data: {"a": "' + b"z" * 52 + b" %s",  # 80 chars
}


@pytest.mark.parametrize("body", list(_STRADDLING.values()), ids=list(_STRADDLING))
async def test_a_quote_cut_to_its_length_shows_no_start_of_a_key(
    logs: list[str], serve: Serve, body: bytes
) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body % KEY.encode())
        return response

    url = await serve(handler)
    async with rxllm.provider(
        "custom", api_key=KEY, base_url=url, allow_private_network=True, max_attempts=1
    ) as provider:
        events, shown = await turn(provider, request("m"))
    error = events[-1]
    assert error.type == "error" and error.error.kind in ("protocol", "truncated")
    assert error.error.message.endswith(("[redacted]'", "[redacted]'...")), error.error.message
    assert KEY[:10] not in shown + error.error.message
    assert not [line for line in logs if KEY[:10] in line]


def test_the_log_of_an_ignored_line_shows_no_start_of_a_key(logs: list[str]) -> None:
    decoder = SseDecoder(provider="custom", secrets=(KEY,))
    line = "x-echo: " + "w" * 184 + " " + KEY  # the log quotes 200 characters of the value
    assert decoder.feed(f"{line}\n\ndata: {{}}\n\n".encode()) == [SseEvent("{}")]
    ignored = [line for line in logs if "ignored an SSE line of field 'x-echo'" in line]
    assert ignored and "w [redacted]'" in ignored[0], logs
    assert not [line for line in logs if KEY[:10] in line]


def _chunk(text: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def test_a_key_cut_between_two_reads_is_redacted_whole_in_the_lines_written() -> None:
    """`RedactedLines`, which `rxllm stream --raw` writes through: wherever the reads cut
    the body, the bytes written are the body's with the key, and only it, replaced."""
    body = b"data: x\xff\n" + _chunk(f"Incorrect API key provided: {KEY}", "stop").replace(
        b"\n\n", b"\r\n\r\n"
    )
    expected = body.replace(KEY.encode(), b"[redacted]")
    assert KEY.encode() in body and expected != body
    for first in range(len(body) + 1):
        for second in (first, first + 17, len(body)):
            lines = RedactedLines((KEY,))
            written = [lines.feed(body[:first]), lines.feed(body[first:second])]
            written += [lines.feed(body[second:]), lines.flush()]
            assert b"".join(written) == expected, (first, second)


@pytest.mark.parametrize("chars", [200, 2000, 65536])
def test_a_quote_of_echoed_keys_shows_no_start_of_one(chars: int) -> None:
    """Redacting shortens a text of echoed keys to under half: the key that the
    redacted window's end cuts must not fall inside the quote."""
    text = (KEY + " ") * 42_000
    quote = redact_head(text, (KEY,), chars)
    assert len(quote) == chars
    assert "sk-" not in quote and KEY[:12] not in quote
