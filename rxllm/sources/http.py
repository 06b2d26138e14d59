"""The aiohttp source: one POST per subscription, its SSE body as raw chunks.

Each subscription runs one coroutine on the running loop: stepped by the consumer
when it subscribed with a `Driver` (`astream`: one task per stream), else in a task of
its own (`rxllm.sources.job`). Disposing the subscription closes the response and
cancels the coroutine at once, so the server sees the disconnect. Failures of the
transport become one `Failed` item, never `on_error`. Redirects are followed here, by
hand (`rxllm.sources.redirects`), and a guarded source (`rxllm.sources.guard`) checks
every hop before connecting.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from contextvars import Context, ContextVar
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import aiohttp
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_exceptions import (
    ContentEncodingError,
    HttpProcessingError,
    PayloadEncodingError,
)
from aiohttp.payload import BytesPayload
from loguru import logger
from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler
from yarl import URL

from rxllm.error_body import MAX_ERROR_BODY_BYTES, parse_error_body, request_id_of
from rxllm.errors import ConfigError
from rxllm.events import Cancelled, ErrorKind, Failed, failed
from rxllm.fragments import ResponseHeaders, SourceItem, closing, hanging_up
from rxllm.operators._link import Operator
from rxllm.secrets import redact, redact_said
from rxllm.sources.guard import AddressRefused, SsrfGuard
from rxllm.sources.job import TASK_CANCELLED, Job, running_loop, start
from rxllm.sources.pool import SessionPool
from rxllm.sources.proxy import environment_proxy
from rxllm.sources.raw import ChunkReader
from rxllm.sources.redirects import REDIRECTS, next_hop
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "ERROR_BODY_SECONDS",
    "PIECE",
    "HttpRequest",
    "LaterBody",
    "RawTap",
    "http_source",
    "json_body",
    "raw_tap",
    "read_error_body",
    "redact",
    "status_message",
    "unusable_session",
]

# The longest a rejection's body is waited for once its status and headers have come
# (or `read_timeout`, if shorter). They are the verdict, as the SDKs raise a
# `RateLimitError` on a 429 whatever its body does; the body adds words and fields, and
# real ones (a few KB) come with the headers. A body that trickles (a byte every
# half-second) would otherwise hold the rejection for `read_timeout`, ten minutes.
ERROR_BODY_SECONDS = 10.0
# How a rejection's message says that its body was cut off before its end (before the
# end of its words: a whole JSON object whose stream did not close says nothing more).
_CUT_BODY = "(the rest of the body did not arrive)"
_NO_BODY = "(the body did not arrive)"

# What a read raises for a body whose framing broke: aiohttp wraps the parser's error
# in `ClientPayloadError`, except its pure-Python parser (no C extension, or
# AIOHTTP_NO_EXTENSIONS=1), which hands a bad chunk's `TransferEncodingError` as is.
BROKEN_BODY = (aiohttp.ClientPayloadError, PayloadEncodingError)
# How aiohttp's parser errors begin as text: the status its server would answer with.
_PARSER_STATUS = re.compile(r"^\d{3}, message:")
_OS_ERROR_REPR = re.compile(r"(?<=\.)\.? (\w+Error)\((?:\d+, )?'([^']*)'\)$")
_CUT_QUOTE = re.compile(r"[^\s'\"]*\.\.\.(['\"])")


def _not_http(problem: BaseException | str) -> str:
    """aiohttp's words for bytes that are not HTTP, on one line: without the pointer
    under the bytes it quotes, nor the `400, message:` its server would answer with,
    which reads as the provider's status (`ClientPayloadError` carries them as text),
    nor the parser's error quoted whole by its repr, `<TransferEncodingError: 400,
    message='Not enough data to satisfy transfer length header.'>`: its words only."""
    if isinstance(problem, HttpProcessingError):
        text = problem.message
    else:
        text = str(problem)
        cause = problem.__cause__ if isinstance(problem, BaseException) else None
        if isinstance(cause, HttpProcessingError):  # aiohttp sets it where it quotes one
            text = text.replace(repr(cause), cause.message)
    text = _PARSER_STATUS.sub("", text, count=1)
    # ". ConnectionResetError(104, 'Connection reset by peer')", after a sentence's end.
    text = _OS_ERROR_REPR.sub(r" (\1: \2)", text)
    # A quote aiohttp cut (a line too long: its first 100 bytes and "...") loses its last
    # word, which the cut may fall in: an echoed key's start, which `redact` cannot know.
    text = _CUT_QUOTE.sub(r"...\1", text)
    return " ".join(word for word in text.split() if word != "^")


class _Body(BytesPayload):
    """A request's body that knows the connection writing it. A turn ended while its
    request is still being sent stops sending it: aiohttp closes the connection, and
    asyncio's `close()` first sends whatever the transport buffered, which for a body
    larger than the socket's buffers (a prompt with images) is most of it; the server
    then gets a whole request, which it answers (and bills) with nobody listening."""

    _transport: asyncio.BaseTransport | None = None

    async def write(self, writer: AbstractStreamWriter) -> None:  # aiohttp before 3.12
        self._transport = getattr(writer, "transport", None)
        await super().write(writer)

    async def write_with_length(
        self, writer: AbstractStreamWriter, content_length: int | None
    ) -> None:
        self._transport = getattr(writer, "transport", None)
        await super().write_with_length(writer, content_length)

    def unsend(self) -> None:
        """Drop what is left of the body unsent, with its connection (aiohttp has
        closed it already, never to reuse it, and left the close to send the rest); a
        body sent whole is left to that close."""
        transport = self._transport
        if isinstance(transport, asyncio.WriteTransport) and transport.get_write_buffer_size():
            transport.abort()


# One encoder for every body: `json.dumps` with options of its own builds one per call.
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def json_body(body: Mapping[str, Any]) -> bytes:
    """A request's JSON body as sent: UTF-8, no NaN (the caller checked it can be)."""
    return _JSON.encode(body).encode("utf-8")


# A string longer than this is written in pieces of this many characters, the event loop
# free between them: `json.dumps` holds the GIL while it writes one string, so a thread
# would free nothing (a MB takes it 3 to 10 ms; 30 MB of base64 image, 0.15 to 1.3 s).
PIECE = 1 << 20


class LaterBody:
    """A large request body (a prompt with images), encoded when its request is first
    sent, inside the turn: its deadlines count the encoding, and a turn that ends
    meanwhile sends nothing. Its long strings are written a piece at a time, with the
    loop free between pieces for every other stream on it. The bytes are those
    `json_body` writes, kept once written."""

    __slots__ = ("_body", "_encoded")

    def __init__(self, body: Mapping[str, Any]) -> None:
        self._body = body
        self._encoded: bytes | None = None

    def now(self) -> bytes:
        """The bytes, written here at once if they were not yet."""
        if self._encoded is None:
            self._encoded = json_body(self._body)
        return self._encoded

    async def encoded(self) -> bytes:
        """The bytes, written a piece at a time if they were not yet."""
        if self._encoded is None:
            parts: list[bytes] = []
            for part in _json_pieces(self._body):
                parts.append(part)
                await asyncio.sleep(0)
            self._encoded = b"".join(parts)
        return self._encoded


def _json_pieces(body: Mapping[str, Any]) -> Iterator[bytes]:
    """`json_body(body)` in pieces: the body without its long strings (each in its
    place a token of its own) written whole, then each long string spliced in where
    its token is, written `PIECE` characters at a time. JSON escapes each character
    alone, so the pieces of a string join into the string written whole."""
    token = uuid.uuid4().hex
    long: list[str] = []

    def shortened(value: Any) -> Any:
        if isinstance(value, str):
            if len(value) <= PIECE:
                return value
            long.append(value)
            return f"{token}:{len(long) - 1}"
        if isinstance(value, dict):
            return {key: shortened(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [shortened(item) for item in value]
        return value

    skeleton = json.dumps(shortened(body), ensure_ascii=False, allow_nan=False)
    at = 0
    for found in re.finditer(f'"{token}:(\\d+)"', skeleton):
        yield skeleton[at : found.start()].encode("utf-8")
        text = long[int(found.group(1))]
        yield b'"'
        for begin in range(0, len(text), PIECE):
            piece = json.dumps(text[begin : begin + PIECE], ensure_ascii=False)
            yield piece[1:-1].encode("utf-8")
        yield b'"'
        at = found.end()
    yield skeleton[at:].encode("utf-8")


@dataclass(frozen=True)
class HttpRequest:
    """What to send: built by a provider, sent by the source. `body` is JSON, encoded
    once: at once, or when the request is first sent (`LaterBody`)."""

    url: str
    body: bytes | LaterBody
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Never in the repr: they carry the key."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Strings (API keys) that must never appear in an error, a log or a record."""
    calls_offered: bool = True
    """Whether the body offers the model tools it may call (`WireProtocol.calls_offered`),
    for the normalizer that reads the response (`Normalizer.calls_offered`)."""


# Successes that carry no body (or switch the connection to another protocol): never a
# stream, whatever follows.
_NO_STREAM_STATUSES = frozenset({101, 204, 205})
# Statuses that mean "nothing here": the URL is what is wrong, so the message shows it.
WRONG_PATH_STATUSES = frozenset({404, 405})


def status_message(status: int, message: str, url: URL, secrets: tuple[str, ...]) -> str:
    """`HTTP 404 from http://host/v1/chat/completions: Not Found`: the URL (without
    its query, where a key could ride) only for a wrong path, since elsewhere the
    provider's words say what is wrong (and the recovery layer reads them)."""
    # aiohttp's and many servers' plain 404 page repeats the status: "404: Not Found".
    message = message.removeprefix(f"{status}: ")
    if status not in WRONG_PATH_STATUSES:
        return f"HTTP {status}: {message}"
    return f"HTTP {status} from {redact(str(url.with_query(None)), secrets)}: {message}"


async def read_error_body(
    response: aiohttp.ClientResponse,
    parts: list[bytes],
    *,
    timeout: float,
    limit: int = MAX_ERROR_BODY_BYTES,
) -> bool:
    """An error response's body into `parts`, to its end or its first `limit` bytes;
    False when it was cut off before either (time ran out, the connection broke).

    One `read()` returns only what has arrived, so a body sent in two writes would lose
    its tail (and OpenAI's `param` with it): read until the end. The whole read gets
    `timeout` seconds (a trickling body would renew a per-read timeout forever) and
    ends with what came so far, which `parts` holds at every moment (for whoever cuts
    the read short); a body longer than `limit` is cut and its connection closed rather
    than drained.
    """
    size = 0
    whole = True
    try:
        async with asyncio.timeout(timeout):
            while size < limit:
                part = await response.content.read(limit - size)
                if not part:
                    return True
                parts.append(part)
                size += len(part)
    except (aiohttp.ServerTimeoutError, TimeoutError, *BROKEN_BODY):
        whole = False  # what arrived still names the rejection better than "stalled" would
    response.close()
    return whole


def _one_json_value(text: str) -> bool:
    """Whether `text` begins with a whole JSON value: an error body whose end did not
    come, but whose words did (a server that never closed its chunked body)."""
    try:
        json.JSONDecoder().raw_decode(text.strip())
    except (ValueError, RecursionError):
        return False
    return True


# What aiohttp's parser decodes: one of these alone (its rule, `HttpParser`), and what
# else names a compression, whose body it hands on as it came.
_DECODED = frozenset({"gzip", "deflate", "br", "zstd"})
_COMPRESSIONS = frozenset({*_DECODED, "x-gzip", "compress", "x-compress", "identity"})


def _undecoded(headers: Mapping[str, str]) -> str | None:
    """Why a body cannot be read: compressed in a way aiohttp does not decode (two
    codings stacked, `gzip, gzip`; `x-gzip`), which it hands on compressed; None when
    it decodes the body or the body is not compressed (`identity`, or a header misused
    for a charset, `Content-Encoding: utf-8`, over a plain body, read as before)."""
    coding = headers.get(aiohttp.hdrs.CONTENT_ENCODING)
    if not coding or (coding.isascii() and coding.lower() in _DECODED):
        return None
    codings = {part.strip().lower() for part in coding.split(",")} - {""}
    if not codings <= _COMPRESSIONS or codings <= {"identity"}:
        return None
    return (
        f"the body is encoded as {coding!r} (Content-Encoding), which aiohttp does not "
        "decode: it decodes one of gzip, deflate, br or zstd alone"
    )


def _undecodable(resp: aiohttp.ClientResponse) -> str | None:
    """aiohttp's words when `resp`'s body failed to decode (a `Content-Encoding: gzip`
    over a plain body), or None when it broke otherwise or not at all."""
    problem = resp.content.exception()
    if not isinstance(problem, ContentEncodingError):
        problem = problem.__cause__ if problem is not None else None
    return problem.message if isinstance(problem, ContentEncodingError) else None


def _decoder_missing(exc: aiohttp.ClientResponseError) -> str | None:
    """Why a response's head could not be read when its Content-Encoding is one aiohttp
    decodes only with an optional package that is not installed (Brotli for `br`,
    backports.zstd for `zstd` before Python 3.14): aiohttp's words naming it, what
    brings it, and whether the request offered it: aiohttp's own Accept-Encoding lists
    only what this install decodes, but a caller's own header replaces it and may. None
    for any other failure. aiohttp refuses it while reading the head, as if the response
    were no HTTP, and gives no status."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ContentEncodingError):
        cause = cause.__cause__
    if cause is None or "install" not in cause.message:
        return None
    said = (
        f"the response is compressed in an encoding this install cannot decode: "
        f"{cause.message.rstrip('.')} (aiohttp[speedups] brings it); "
    )
    offered = exc.request_info.headers.get(aiohttp.hdrs.ACCEPT_ENCODING, "")
    # (aiohttp's words name the coding in parentheses: "brotli (br)", "zstandard (zstd)")
    codings = _offered(offered)
    if "*" in codings or any(f"({coding})" in cause.message for coding in codings):
        return said + (
            f"the request offered that encoding in its own Accept-Encoding header "
            f"({offered!r}): install the package, or leave the encoding out of that header"
        )
    return said + (
        "the request did not offer that encoding (Accept-Encoding), so the server or a "
        "proxy on the way ignored it"
    )


def _offered(accept_encoding: str) -> set[str]:
    """The codings an Accept-Encoding header offers: each listed without `q=0`
    (RFC 9110 12.5.3), lowercase; `*` offers any."""
    codings: set[str] = set()
    for item in accept_encoding.split(","):
        coding, _, params = item.partition(";")
        refused = re.fullmatch(r"\s*q\s*=\s*0(?:\.0*)?\s*", params, re.IGNORECASE)
        if coding.strip() and refused is None:
            codings.add(coding.strip().lower())
    return codings


# OpenSSL's reasons for a handshake answered in clear text (an HTTP server's 400).
_PLAIN_TEXT_TLS = frozenset({"WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG"})


def _no_connection(exc: aiohttp.ClientConnectorError) -> str:
    """aiohttp's words for a connection not made, with what they lack: a handshake
    answered in plain text (an http:// server at an https:// URL) says so, and a peer
    that hangs up mid-handshake is named, not aiohttp's `[None]` (a reset has no
    strerror)."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.os_error
    if getattr(cause, "reason", None) in _PLAIN_TEXT_TLS:
        return f"{text}: the server does not speak TLS (an http:// server at an https:// URL?)"
    if cause.strerror is None and text.endswith(" [None]"):
        why = str(cause) or (
            "the server closed the connection during the TLS handshake"
            if getattr(exc._conn_key, "is_ssl", False) and isinstance(cause, ConnectionResetError)
            else "no reason given"
        )
        text = f"{text.removesuffix(' [None]')} [{type(cause).__name__}: {why}]"
    return text + _through_proxy(exc)


def _through_proxy(exc: aiohttp.ClientConnectorError) -> str:
    """` (through the proxy host:port)` when the connection went through one (what
    failed may be the proxy's doing: a tunnel it dropped, a certificate of its own),
    its credentials left out; else nothing."""
    proxy = getattr(getattr(exc, "_conn_key", None), "proxy", None)
    if not isinstance(proxy, URL) or proxy.host is None:
        return ""
    return f" (through the proxy {proxy.host}:{proxy.port})"


def _untrusted(exc: aiohttp.ClientConnectorCertificateError) -> str:
    """A certificate that failed its check, named with OpenSSL's reason (a self-signed
    certificate, another host's name), and the way to trust a private CA (never to
    turn the check off)."""
    problem = exc.certificate_error
    reason = getattr(problem, "verify_message", None) or str(problem)
    return (
        f"the TLS certificate of {exc.host}:{exc.port} failed its check: {reason} (for a "
        "server whose certificate a private CA signed, pass a session=... whose connector "
        "trusts that CA: ssl=ssl.create_default_context(cafile=...))" + _through_proxy(exc)
    )


def _pool_wait(session: aiohttp.ClientSession | SessionPool | None, url: URL) -> str:
    """What a connect timeout was instead, when a session passed in has all the
    connections its connector allows out (rxllm's own pool has no cap: `SessionPool`):
    the wait for one of them to be free, which aiohttp counts in the connect timeout.
    The cap per host counts the connections to `url`'s host alone: another host's held
    ones leave this one's free, and its timeout is the server's."""
    connector = session.connector if isinstance(session, aiohttp.ClientSession) else None
    if connector is None:
        return ""
    per_host = getattr(connector, "_acquired_per_host", {})  # no public word for it
    if connector.limit_per_host and any(
        len(held) >= connector.limit_per_host
        for key, held in per_host.items()
        if getattr(key, "host", None) == url.host and getattr(key, "port", None) == url.port
    ):
        cap, where = connector.limit_per_host, "per host"
    elif connector.limit and len(getattr(connector, "_acquired", ())) >= connector.limit:
        cap, where = connector.limit, "in all"
    else:
        return ""
    return (
        f" (the session passed in allows {cap} connection{'' if cap == 1 else 's'} {where}, "
        "and connect_timeout counts the wait for one of them to be free)"
    )


# The connection's close callbacks (`_Transfer._watch_connection`) read no context
# variable and call no caller's code (`_lost` only ends the body, which wakes whoever
# reads it in that one's own context): they share this empty context instead of each
# holding a copy of the caller's, made per response.
_NO_CONTEXT = Context()


def _retrieve(closed: asyncio.Future[None]) -> None:
    """A connection's `closed` future, consumed: aiohttp sets a lost connection's error
    on it only for whoever asked for it (`_Transfer._watch_connection`), and asyncio
    would log an error nobody retrieved."""
    if not closed.cancelled():
        closed.exception()


def unusable_session(
    session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop | None
) -> str | None:
    """Why a session passed in cannot send a request on `loop` (None: whichever runs
    it), or None: aiohttp would fail deep inside asyncio ("Event loop is closed")
    rather than say so."""
    if session.closed:
        return "the session passed in (session=...) is closed"
    if loop is not None and getattr(session, "_loop", loop) is not loop:  # `.loop` is deprecated
        return (
            "the session passed in (session=...) belongs to another event loop (one made "
            "under an earlier asyncio.run?): make it on the loop that runs the turn"
        )
    return None


RawTap = Callable[[str, int, bytes], None]
raw_tap: ContextVar[RawTap | None] = ContextVar("rxllm_raw_tap", default=None)
"""Set to `tap(provider, attempt, data)` to see each piece of a streamed (2xx) body as
it arrived, before decoding (`rxllm stream --raw` keeps them for a bug report). A
context variable, so the hot path pays one lookup per response and no option exists
that every layer would have to pass down."""


def _loop_of(scheduler: abc.SchedulerBase | None) -> asyncio.AbstractEventLoop:
    if isinstance(scheduler, AsyncIOScheduler):
        return scheduler._loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "an rxllm HTTP stream must be subscribed inside a running asyncio event loop "
            "(or with scheduler=AsyncIOThreadSafeScheduler(loop) from another thread); use "
            "astream() or complete() from async code"
        ) from None


@asynccontextmanager
async def _own_session(guard: SsrfGuard | None) -> AsyncIterator[aiohttp.ClientSession]:
    """A session of the subscription's own (guarded if asked; else through the proxy the
    environment names, as a pooled one), closed after."""
    if guard is not None:
        async with guard.session() as guarded:
            yield guarded
    else:
        async with aiohttp.ClientSession(request_class=environment_proxy()) as own:
            yield own


@functools.lru_cache(maxsize=64)
def _client_timeout(connect: float) -> aiohttp.ClientTimeout:
    """One (immutable) timeout per provider setting, not one per stream. No `sock_read`:
    aiohttp would re-arm a timer on every read; the source's watchdog does its job."""
    # `connect` covers the wait for a pooled connection, DNS, TCP and TLS alike.
    return aiohttp.ClientTimeout(total=None, connect=connect)


# Seconds without a byte before the transport gives up on a connection, when nothing
# longer was asked for (`ProviderOptions.read_timeout`).
DEFAULT_READ_TIMEOUT = 300.0


class _Settings(NamedTuple):
    """What every subscription of one `http_source` shares."""

    request: HttpRequest
    provider: str
    attempt: int
    session: aiohttp.ClientSession | SessionPool | None
    guard: SsrfGuard | None
    timeout: aiohttp.ClientTimeout
    connect_timeout: float
    read_timeout: float | None
    max_line_bytes: int
    max_response_bytes: int | None


def http_source(
    request: HttpRequest,
    *,
    provider: str,
    attempt: int = 1,
    session: aiohttp.ClientSession | SessionPool | None = None,
    guard: SsrfGuard | None = None,
    connect_timeout: float = 10.0,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_response_bytes: int | None = None,
) -> Observable[SourceItem]:
    """A cold Observable of the raw chunks of one streamed POST.

    With no `session`, each subscription opens and closes its own; a given session is
    used and left open. With a `guard`, every destination (the URL and each redirect
    hop, their IP literals and every address their names resolve to) is checked before
    connecting; a refusal is `error(kind="policy")`. A given session has its own
    connector, which the guard cannot reach, so the two together are a `ConfigError`.

    `read_timeout`: seconds without a byte before the transfer ends with
    `error(kind="stalled")`, checked once per period; None keeps no such guard, for a
    caller that watches silences itself (a provider's deadlines).
    """
    if guard is not None and isinstance(session, aiohttp.ClientSession):
        raise ConfigError(
            "a session passed in cannot be SSRF-guarded (its connector resolves names "
            "unchecked): drop session=..., or pass ssrf_guard=False to trust the URL"
        )
    settings = _Settings(
        request,
        provider,
        attempt,
        session,
        guard,
        _client_timeout(connect_timeout),
        connect_timeout,
        read_timeout,
        max_line_bytes,
        max_response_bytes,
    )

    def subscribe(
        observer: abc.ObserverBase[SourceItem], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Transfer(settings, observer, _loop_of(scheduler), scheduler)

    return Operator(subscribe)


def _read_timed_out(provider: str, read_timeout: float | None) -> str:
    """What a read that waited too long for a byte says: the watchdog's `read_timeout`,
    or, without one, a timeout of aiohttp's own."""
    if read_timeout is None:
        return f"the read timed out: no bytes from {provider}"
    return f"read_timeout expired: no bytes from {provider} for {read_timeout:g} s"


def _log_hang_up(provider: str, attempt: int) -> None:
    # A function of its own, not a line of `_Transfer._run`: loguru reads its caller's
    # line number before it looks whether rxllm's logs are on, and finding it in
    # `_run`'s long line table cost every hang-up 12,000 instructions.
    logger.bind(provider=provider, attempt=attempt).debug("http source cancelled")


class _Transfer(abc.DisposableBase):
    """One subscription: its job, its response and the read watchdog. One object with
    slots rather than closures over a dozen variables, since a server keeps one per
    stream in flight and the garbage collector walks every one of them."""

    __slots__ = (
        "_broken",
        "_closed",
        "_cut",
        "_disposed",
        "_headers",
        "_job",
        "_loop",
        "_observer",
        "_progress",
        "_rejecting",
        "_response",
        "_settings",
        "_watchdog",
    )

    def __init__(
        self,
        settings: _Settings,
        observer: abc.ObserverBase[SourceItem],
        loop: asyncio.AbstractEventLoop,
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self._settings = settings
        self._observer = observer
        self._loop = loop
        self._response: aiohttp.ClientResponse | None = None
        self._headers: Mapping[str, str] | None = None
        """The last response's headers: its request id is read only if a failure
        needs it, so a stream that succeeds pays nothing for it."""
        self._disposed = False
        self._progress = 0  # the response's headers, then each read: what the watchdog sees
        self._cut: tuple[ErrorKind | None, str] | None = None
        """Why the source itself ended its job: a failure's kind and message (the
        read watchdog), or None and a reason (its provider closed: `cancelled`)."""
        self._watchdog: asyncio.TimerHandle | None = None
        self._closed: asyncio.Future[None] | None = None  # the connection's, watched
        self._broken: str | None = None  # why the body ended, when `_lost` ended it
        self._rejecting: tuple[aiohttp.ClientResponse, list[bytes]] | None = None
        """A rejection whose body is being read, and what of it came so far."""
        self._job: Job | None = None
        # asyncio objects belong to their loop's thread: from another thread, the job
        # is started and stopped through the loop's thread-safe door.
        if running_loop() is loop:
            self._start(scheduler)
        else:
            loop.call_soon_threadsafe(self._start, scheduler)

    def _fail(
        self,
        kind: ErrorKind,
        message: str,
        status: int | None = None,
        raw: str | None = None,
        **fields: Any,
    ) -> None:
        self._observer.on_next(self._failure(kind, message, status, raw, **fields))

    def _failure(
        self,
        kind: ErrorKind,
        message: str,
        status: int | None = None,
        raw: str | None = None,
        **fields: Any,
    ) -> Failed:
        settings = self._settings
        secrets = settings.request.secrets
        if fields.get("request_id") is None and self._headers is not None:
            fields["request_id"] = request_id_of(self._headers)
        redact_said(fields, secrets)
        return failed(
            settings.provider,
            kind,
            redact(message, secrets),
            attempt=settings.attempt,
            status=status,
            raw=redact(raw, secrets) if raw is not None else None,
            **fields,
        )

    def _relay(self, problem: Failed) -> None:
        """A failure the body's reader found, with every field it read (the words and
        fields of an error body sent in place of the stream) and the request id."""
        error = problem.error
        self._fail(
            error.kind,
            error.message,
            status=error.status,
            raw=error.raw,
            param=error.param,
            code=error.code,
            retry_after=error.retry_after,
            request_id=error.request_id,
        )

    async def _respond(self, client: aiohttp.ClientSession) -> aiohttp.ClientResponse | None:
        """The response to the request, its redirects followed (and each hop checked by
        the guard); None once a hop was refused, which is reported."""
        settings = self._settings
        request = settings.request
        url = URL(request.url)
        headers = request.headers  # never changed here: a hop gets headers of its own
        hops = 0
        sent = request.body
        payload = sent if isinstance(sent, bytes) else await sent.encoded()
        while True:
            self._headers = None  # a hop that fails says nothing of the previous one's id
            if settings.guard is not None:
                settings.guard.check(url)
            # Awaited here, entered by the caller: `async with client.post(...)` would
            # keep the request's finished coroutine (~1 KB) while the body streams.
            body = _Body(payload)
            try:
                resp = await client.post(
                    url,
                    data=body,
                    headers=headers,
                    timeout=settings.timeout,
                    allow_redirects=False,
                    # A rejection's body is read here, for its words and fields, whatever
                    # a session passed in says (`ClientSession(raise_for_status=True)`).
                    raise_for_status=False,
                )
            except asyncio.CancelledError:
                body.unsend()  # hung up, or a deadline, while the request was being sent
                raise
            self._response = resp
            self._headers = resp.headers
            self._progress += 1
            location = resp.headers.get(aiohttp.hdrs.LOCATION)
            if resp.status not in REDIRECTS or location is None:
                return resp
            async with resp:  # released: the next hop is another request
                hop = next_hop(url, resp.status, location, headers, request.secrets, hops)
            if isinstance(hop, str):
                self._fail("policy", hop, status=resp.status)
                return None
            logger.bind(provider=settings.provider, attempt=settings.attempt).info(
                "following a {} redirect to {}{}",
                resp.status,
                redact(str(hop.url), request.secrets),
                " (another origin: credentials dropped)" if hop.cross_origin else "",
            )
            url, headers = hop.url, hop.headers
            hops += 1

    async def _transfer(self, client: aiohttp.ClientSession) -> None:
        """Send the request, then read its body: a rejection's to its end, a stream's
        as it arrives. The redirects are followed in `_respond`, whose frame (the URL,
        the headers) is gone before the body streams."""
        resp = await self._respond(client)
        if resp is None:
            return
        async with resp:
            self._watch_connection(resp)
            # First, a rejection's too: a deadline that cuts its body off still names
            # the response's request id (`fragments.hang_up`).
            self._observer.on_next(ResponseHeaders(resp.headers))
            if resp.status >= 300:
                await self._reject(resp)
                return
            if resp.status in _NO_STREAM_STATUSES:
                # No body by definition (204, 205), or another protocol (101): the next
                # answer would be the same, not a stream cut short (`truncated`).
                status = f"HTTP {resp.status} {resp.reason or ''}".rstrip()
                self._fail(
                    "protocol",
                    f"{status}: the endpoint answered with no stream where one was asked for",
                    status=resp.status,
                )
                return
            undecoded = _undecoded(resp.headers)
            if undecoded is not None:  # its bytes would be quoted as "not an SSE stream"
                self._fail("protocol", undecoded)
                return
            settings = self._settings
            provider, attempt = settings.provider, settings.attempt
            reader = ChunkReader(
                self._observer,
                provider,
                attempt,
                settings.max_line_bytes,
                settings.request.secrets,
            )
            limit = settings.max_response_bytes
            received = 0
            tap = raw_tap.get()
            content = resp.content
            while True:  # iter_any's loop, without its coroutine per read
                data = await content.readany()
                if not data:
                    break
                if tap is not None:
                    tap(provider, attempt, data)
                received += len(data)
                self._progress += 1
                if limit is not None and received > limit:
                    self._fail("limit", f"the response exceeds max_response_bytes ({limit})")
                    return
                problem = reader.feed(data)
                del data  # not held while waiting: a read behind a busy loop joins a backlog
                if self._disposed:
                    return
                if problem is not None:
                    self._relay(problem)
                    return
            if self._broken is not None:
                self._fail("truncated", self._broken)
                return
            problem = reader.close()
            if problem is not None:
                self._relay(problem)

    async def _reject(self, resp: aiohttp.ClientResponse) -> None:
        """A rejection (a status of 300 or more that is not a redirect followed): its
        body read to its end, for the message and the structured fields, for
        `ERROR_BODY_SECONDS` at most. Cut off sooner (a deadline hangs up while it
        trickles), it is still the rejection, said to whoever hangs up (`_hang_up`)."""
        settings = self._settings
        parts: list[bytes] = []
        self._rejecting = (resp, parts)
        read_timeout = settings.read_timeout
        timeout = (
            ERROR_BODY_SECONDS if read_timeout is None else min(read_timeout, ERROR_BODY_SECONDS)
        )
        whole = await read_error_body(resp, parts, timeout=timeout)
        self._rejecting = None
        self._observer.on_next(self._rejection(resp, parts, whole))

    def _rejection(self, resp: aiohttp.ClientResponse, parts: list[bytes], whole: bool) -> Failed:
        """The rejection `resp` is, from what of its body came (`parts`): its status, its
        headers' wait and request id, the body's words and fields; a message that says
        so when the body was cut off before its end."""
        text = b"".join(parts).decode("utf-8", "replace")
        undecoded = _undecoded(resp.headers)
        if undecoded is not None:  # compressed bytes, no words: the status speaks alone
            text, whole = "", True
        body = parse_error_body(text)
        message = body.message if undecoded is None else f"({undecoded})"
        if not whole and not _one_json_value(text):
            undecodable = _undecodable(resp)
            if undecodable is not None:  # it came, not in the encoding its header names
                rest = "the rest of the body" if text.strip() else "the body"
                cut = f"({rest} could not be decoded: {undecodable})"
            else:
                cut = _CUT_BODY if text.strip() else _NO_BODY
            message = f"{message} {cut}" if text.strip() else cut
        return self._failure(
            "rejected" if 400 <= resp.status < 500 else "http",
            status_message(resp.status, message, resp.url, self._settings.request.secrets),
            status=resp.status,
            raw=text if undecoded is None else None,
            **body.fields(resp.headers),
        )

    def _watch_connection(self, resp: aiohttp.ClientResponse) -> None:
        """Call `_lost` when the response's connection closes: one callback per
        response, nothing per read."""
        connection = resp.connection
        if connection is None or connection.protocol is None:
            return  # the body has ended and the connection gone back to the pool
        closed = connection.protocol.closed
        if closed is None:  # lost already, before anyone asked
            self._lost()
            return
        closed.remove_done_callback(_retrieve)  # one per connection, whatever it carried
        closed.add_done_callback(_retrieve, context=_NO_CONTEXT)
        closed.add_done_callback(self._lost, context=_NO_CONTEXT)
        self._closed = closed

    def _lost(self, _closed: object = None) -> None:
        """The connection closed. A body still open then would never end: aiohttp's
        C parser hands a broken chunked encoding (a bad chunk-size line, a chunk longer
        than it said) to the connection, which it closes, and never to the body, whose
        `readany()` would wait out `read_timeout` and read as a silence. So the body is
        ended here: what arrived is still read, then `error(kind="truncated")`."""
        resp = self._response
        if resp is None or self._disposed or self._cut is not None:
            return
        content, connection = resp.content, resp.connection
        if content.is_eof() or content.exception() is not None or connection is None:
            return  # it ended, or aiohttp told it why not
        cause = connection.protocol.exception() if connection.protocol is not None else None
        self._broken = (
            f"the connection closed mid-stream: {_not_http(cause)}"
            if cause is not None
            else "the connection closed before the body ended"
        )
        content.feed_eof()

    def _watch(self, seen: int) -> None:
        """`read_timeout` without a byte: one timer per period, not one per read, so
        a silence is noticed after `read_timeout` seconds and before twice that. A
        consumer that has not asked for more (the job not waiting) is not a silence:
        see `rxllm.sources.job.consumer_waits`."""
        job = self._job
        if job is None or job.finished:
            return
        read_timeout = self._settings.read_timeout
        assert read_timeout is not None  # (armed only with one)
        if self._progress != seen or not job.parked:
            self._watchdog = self._loop.call_later(read_timeout, self._watch, self._progress)
            return
        self.cut("stalled", _read_timed_out(self._settings.provider, read_timeout))

    def cut(self, kind: ErrorKind | None, message: str) -> None:
        """End the transfer from outside its job, on its loop: the response closed, the
        job cancelled, then `error(kind)` with `message`, or `cancelled` with it as the
        reason when `kind` is None. A transfer that has ended already is left alone."""
        if running_loop() is not self._loop:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.cut, kind, message)
            return
        job = self._job
        if self._disposed or self._cut is not None or job is None or job.finished:
            return
        self._cut = (kind, message)
        if self._response is not None:
            self._response.close()
        job.cancel()

    async def _run(self) -> None:
        settings = self._settings
        provider, read_timeout = settings.provider, settings.read_timeout
        if read_timeout is not None:
            self._watchdog = self._loop.call_later(read_timeout, self._watch, self._progress)
        try:
            session = settings.session
            if isinstance(session, SessionPool):  # the pool's, left open
                session.streaming.add(self)  # its `aclose()` cuts what streams
                try:
                    await self._transfer(session.session())
                finally:
                    session.streaming.discard(self)
            elif session is not None:  # the caller's, left open
                unusable = unusable_session(session, self._loop)
                if unusable is not None:
                    self._fail("transport", unusable)
                    return
                await self._transfer(session)
            else:
                async with _own_session(settings.guard) as client:
                    await self._transfer(client)
        except asyncio.CancelledError:
            if self._disposed:  # hung up: nobody listens any more
                _log_hang_up(provider, settings.attempt)
                raise
            # Ended by the source itself (`cut`), or its task cancelled by someone else
            # (the consumer's task, the loop shutting down as `asyncio.run` returns):
            # the observer is still subscribed, and hears how the turn ended.
            kind, message = self._cut or (None, TASK_CANCELLED)
            if kind is None:
                self._observer.on_next(
                    Cancelled.make(provider=provider, attempt=settings.attempt, reason=message)
                )
            else:
                self._fail(kind, message)
        except AddressRefused as exc:
            self._fail("policy", str(exc))
        except aiohttp.ConnectionTimeoutError:
            self._fail(
                "stalled",
                f"connect_timeout expired: no connection to {provider} "
                f"within {settings.connect_timeout:g} s"
                f"{_pool_wait(settings.session, URL(settings.request.url))}",
            )
        except (aiohttp.ServerTimeoutError, TimeoutError):
            self._fail("stalled", _read_timed_out(provider, read_timeout))
        except BROKEN_BODY as exc:
            self._fail("truncated", f"the connection closed mid-stream: {_not_http(exc)}")
        except aiohttp.ClientHttpProxyError as exc:  # the proxy's answer to CONNECT
            # Valid HTTP, and the proxy's, not the provider's: no `status` of the turn.
            target = exc.request_info.url
            self._fail(
                "transport",
                f"the proxy refused to open a tunnel to {target.host}:{target.port}: "
                f"HTTP {exc.status} {exc.message}",
            )
        except aiohttp.ClientResponseError as exc:  # its head (or a body parsed with it)
            missing = _decoder_missing(exc)
            if missing is not None:  # the next answer comes in the same encoding
                self._fail("protocol", missing, should_retry=False)
            else:
                message = _not_http(exc.message)
                self._fail("transport", f"the response is not valid HTTP: {message}")
        except aiohttp.ClientConnectorCertificateError as exc:
            # The same certificate fails the same check on the next attempt: no retry.
            self._fail("transport", _untrusted(exc), should_retry=False)
        except aiohttp.ClientConnectorError as exc:
            self._fail("transport", _no_connection(exc))
        except aiohttp.ClientError as exc:
            self._fail("transport", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a bug: surface it, as Rx does
            self._observer.on_error(exc)
            return
        finally:
            self._response = None
            if self._watchdog is not None:
                self._watchdog.cancel()
            if self._closed is not None:
                self._closed.remove_done_callback(self._lost)
        self._observer.on_completed()

    def _start(self, scheduler: abc.SchedulerBase | None) -> None:
        if not self._disposed:
            self._job = Job(self._run(), self._loop)
            start(self._job, scheduler)

    def _hang_up(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        rejecting = self._rejecting
        if rejecting is not None and hanging_up():
            # A deadline cuts off a rejection whose body was still arriving: the status
            # and headers that came are the verdict, not the wait for its words.
            closing(None, self._rejection(*rejecting, whole=False))
        if self._response is not None:
            self._response.close()  # drop the connection now, not at the task's next step
        if self._job is not None:
            self._job.cancel()

    def dispose(self) -> None:
        if running_loop() is self._loop:
            self._hang_up()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._hang_up)
