"""A configured provider: assembles source, normalizer and operators for each request."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from ipaddress import ip_network
from time import monotonic
from types import MappingProxyType
from typing import Any, TypeVar

import aiohttp
import reactivex
from loguru import logger
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from reactivex import Observable, abc
from reactivex.disposable import Disposable
from yarl import URL

from rxllm.degradation import NextBody, RetryPlan, Verdict, classify
from rxllm.error_body import request_id_of
from rxllm.errors import ConfigError, did_you_mean
from rxllm.events import Cancelled, Event, Failed, Retry, StreamRecord
from rxllm.fragments import Emit, FailureUsage, Fragment, SourceItem
from rxllm.operators._link import Operator, forward, link
from rxllm.operators._timers import loop_scheduler, on_its_loop
from rxllm.operators.accumulate_tool_arguments import accumulate_tool_arguments
from rxllm.operators.cancel_on import cancel_on
from rxllm.operators.cap_events import cap_events
from rxllm.operators.deadlines import deadlines
from rxllm.operators.dedupe_overlap import dedupe_overlap
from rxllm.operators.normalize import normalize
from rxllm.operators.retry_before_commit import Switch, retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.operators.speaker_guard import check_speaker_names, speaker_guard
from rxllm.operators.telemetry import require_otel, telemetry
from rxllm.operators.track_commitment import track_commitment
from rxllm.pipeline.aiter import EventStream
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers import wire_for
from rxllm.providers.base import Normalizer, WireProtocol
from rxllm.request import ChatRequest, ImagePart, Message, TextPart
from rxllm.secrets import redact, redact_said
from rxllm.sources.guard import SsrfGuard
from rxllm.sources.http import (
    DEFAULT_READ_TIMEOUT,
    HttpRequest,
    LaterBody,
    http_source,
    json_body,
    unusable_session,
)
from rxllm.sources.job import running_loop
from rxllm.sources.pool import SessionPool
from rxllm.sources.redirects import is_credential_header
from rxllm.sources.sse import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "Cancel",
    "Provider",
    "ProviderOptions",
    "Turn",
    "events_of",
    "provider",
    "record_of",
    "settled",
    "traced",
]

_T = TypeVar("_T")
_O = TypeVar("_O")

Cancel = asyncio.Event | Observable[Any] | None
FragmentOperator = Callable[[Observable[Fragment]], Observable[Fragment]]
EventOperator = Callable[[Observable[Event]], Observable[Event]]
Seen = Callable[[Normalizer], None]


# The most endpoint URLs a provider keeps shared between its streams (`Provider._urls`).
_URLS_KEPT = 64

# The flags that also take a list, and of what.
_FLAG_LISTS = {"speaker_guard": ", or a list of names", "allow_private_network": ", or networks"}


# A header name as RFC 9110 has it (a token); the headers that frame the request body.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_TOKEN_START = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]*")
_FRAMING_HEADERS = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "content-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "proxy-connection",
        "host",
    }
)


class ProviderOptions(BaseModel):
    """Options every provider takes; an unknown one is a `ConfigError`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    connect_timeout: float = Field(default=10.0, gt=0, allow_inf_nan=False)
    """Seconds to get a connection: waiting for the pool, DNS, TCP and TLS."""
    first_event_timeout: float | None = Field(default=600.0, gt=0, allow_inf_nan=False)
    """Seconds from sending a request to its first output (text, reasoning, a tool call,
    usage). Long: a reasoning model may think for minutes before saying anything."""
    idle_timeout: float | None = Field(default=120.0, gt=0, allow_inf_nan=False)
    """Seconds without output once it has begun; keepalives and comments do not count
    as output, tool-argument fragments do."""
    total_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds for the whole turn, every attempt and backoff wait included."""
    read_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds without a byte from the server (keepalives included): the transport's
    own guard, under the deadlines above. Checked once per period, not re-armed per
    read, so a silence ends the attempt within twice this. None: no guard of its own
    while `idle_timeout` is on (a silence without a byte is one without output, which
    the deadlines see first: `first_event_timeout`, or `idle_timeout` from the start
    without it, until the first output, `idle_timeout` after); else
    `first_event_timeout` (a shorter guard would cut the wait it allows: a reasoning
    model sends no byte while it thinks), or `DEFAULT_READ_TIMEOUT` when both are off."""
    max_line_bytes: int = Field(default=DEFAULT_MAX_LINE_BYTES, gt=0)
    """The SSE line cap: a longer line ends the stream with `error(kind="limit")`."""
    max_tool_argument_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    """The most argument JSON one tool call may stream before `error(kind="limit")`."""
    max_response_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    """The most body bytes one response may send before `error(kind="limit")`."""
    max_events: int | None = Field(default=None, gt=0)
    """The most events one turn may emit before `error(kind="limit")`: a stream of tiny
    deltas that never ends, stopped by count. Off by default: `max_response_bytes`
    already bounds every response, and this costs a step per event."""
    dedupe_overlap: bool = False
    """Drop text that repeats the tail of what was already emitted (resuming proxies).
    An answer's own repeats are cut too: not for JSON or other structured output."""
    speaker_guard: bool | list[str] = False
    """Cut the text where another speaker's turn begins (`True`: User, Human, Assistant,
    System; or the given names)."""
    telemetry: bool = False
    """Report each turn as one OpenTelemetry GenAI span, with the GenAI client metrics,
    to the global tracer and meter providers (`rxllm.operators.telemetry` takes
    others). Needs the OpenTelemetry API: `pip install 'rxllm[otel]'`."""
    max_attempts: int = Field(default=5, ge=1)
    """Requests one turn may send: the first, then degraded or backed-off retries
    before anything was committed (1: never retry)."""
    ssrf_guard: bool | None = None
    """Check every destination (URL, resolved address, redirect hop) against the SSRF
    guard (`rxllm.sources.guard`). None: the provider's default, on for `custom`."""
    allow_private_network: bool | tuple[str, ...] = False
    """Let the guard reach the private network: True for all of it (RFC 1918, loopback,
    link-local, CGNAT, unique-local), or only these networks (`["10.1.2.0/24"]`). Cloud
    metadata addresses stay refused."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Request headers besides the provider's own, which they replace whatever the case
    of their names (the SDKs' `default_headers`): `anthropic-beta`, OpenRouter's
    `HTTP-Referer` and `X-Title`, a gateway's own. The value of a credential header
    (`Authorization`, `x-api-key`, `Helicone-Auth`, ...) is kept secret as the API key
    is. Not shown in a repr."""
    send_reasoning: bool | None = None
    """Whether the assistant messages of the history carry their reasoning back (the
    OpenAI chat wire and its presets only). True: in the endpoint's own form
    (`ChatOptions.reasoning_back`), `reasoning_content` where the preset sends none back
    or only what came in `<think>` tags; for an endpoint that refuses a tool loop without
    it (Kimi with thinking on, served anywhere: "thinking is enabled but
    reasoning_content is missing in assistant tool call message"). False: no reasoning
    back at all. None: the provider's default (`deepseek`, `zai` and `moonshot` send
    `reasoning_content`, `openrouter` and `snowflake` `reasoning_details`, `ollama`
    `reasoning`, `mistral` `thinking` chunks, `together`, `nvidia` and `groq` what came
    in `<think>` tags as such a block)."""

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            # a slip may paste a credential into a name: only its leading token is shown
            shown = repr(_HEADER_TOKEN_START.match(name)[0])  # type: ignore[index]
            if _HEADER_NAME.fullmatch(name) is None:
                raise ValueError(f"header {shown}: a name is a token (letters, digits, '-')")
            if name.lower() in _FRAMING_HEADERS:
                # the transport writes them for the body it sends: another value cuts or
                # garbles the request, which the server refuses as if it were the body's
                raise ValueError(f"header {shown} is the transport's, not one to set")
            if not value.isprintable():  # aiohttp: "Forbidden control character", mid-turn
                raise ValueError(f"header {shown}: its value holds a line break or control")
            if not value.isascii():  # aiohttp sends UTF-8, which servers read as Latin-1
                raise ValueError(
                    f"header {shown}: its value holds a character that is not ASCII "
                    f"({_first_not_ascii(value)}): a header value goes as ASCII (httpx "
                    "refuses others); percent-encode it"
                )
        return headers

    @field_validator(
        "connect_timeout",
        "first_event_timeout",
        "idle_timeout",
        "total_timeout",
        "read_timeout",
        "max_line_bytes",
        "max_tool_argument_bytes",
        "max_response_bytes",
        "max_events",
        "max_attempts",
        mode="before",
    )
    @classmethod
    def _number(cls, value: Any) -> Any:
        # pydantic would read "10" as 10 and True as 1: a number here is a number
        if isinstance(value, str | bool):
            raise ValueError(f"should be a number, got {type(value).__name__} {value!r}")
        return value

    @field_validator(
        "dedupe_overlap",
        "speaker_guard",
        "telemetry",
        "ssrf_guard",
        "allow_private_network",
        "send_reasoning",
        mode="before",
    )
    @classmethod
    def _flag(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic would read "no" as False, and ssrf_guard="no" would turn the guard off
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            also = _FLAG_LISTS.get(info.field_name or "", "")
            raise ValueError(f"should be True or False{also}, got {type(value).__name__} {value!r}")
        return value

    @field_validator("speaker_guard")
    @classmethod
    def _names(cls, value: bool | list[str]) -> bool | list[str]:
        if isinstance(value, list):
            if not value:  # would turn the guard off unsaid
                raise ValueError("name at least one speaker, or pass True for the usual ones")
            check_speaker_names(value)  # speaker_guard's checks, a bad name's ValueError
        return value

    @field_validator("allow_private_network")
    @classmethod
    def _networks(cls, value: bool | tuple[str, ...]) -> bool | tuple[str, ...]:
        if not isinstance(value, bool):
            for net in value:
                ip_network(net, strict=False)  # a ValueError names the bad one
        return value

    def configured(self, wire: WireProtocol) -> WireProtocol:
        """`wire` as these options want it: one that sends reasoning back as
        `send_reasoning` says.

        Raises:
            ConfigError: `send_reasoning` for a wire that is not the OpenAI chat wire.
        """
        if self.send_reasoning is None:
            return wire
        from rxllm.providers.openai_chat import OpenAIChat  # here: only when asked for

        if not isinstance(wire, OpenAIChat):
            raise ConfigError(
                f"send_reasoning is an option of the OpenAI chat wire and its presets; "
                f"{wire.name!r} sends reasoning back as its API requires"
            )
        return wire.sending_reasoning(self.send_reasoning)

    def silence_allowed(self) -> float | None:
        """`read_timeout` as the transport applies it (see there): None for no guard."""
        if self.read_timeout is not None:
            return self.read_timeout
        if self.idle_timeout is not None:
            return None  # the deadlines see every silence first: a timer less per stream
        return self.first_event_timeout or DEFAULT_READ_TIMEOUT

    def text_guards(self) -> list[FragmentOperator]:
        """The opt-in text guards, in order; each keeps its state per subscription."""
        guards: list[FragmentOperator] = []
        if self.dedupe_overlap:
            guards.append(dedupe_overlap())
        if self.speaker_guard:
            names = None if self.speaker_guard is True else self.speaker_guard
            guards.append(speaker_guard(names))
        return guards


def _first_not_ascii(value: str) -> str:
    """Which is `value`'s first character beyond ASCII, and where (`'\\u2013',
    character 9`): one character, never the rest of a key."""
    at = next(i for i, c in enumerate(value) if not c.isascii())
    return f"{value[at]!a}, character {at + 1}"


# The characters of text and image URLs from which a request's body is encoded when it
# is sent, inside the turn and a piece at a time (`LaterBody`), rather than at the call:
# `json.dumps` takes 3 to 10 ms a MB, time the event loop stalls and no deadline counts
# (30 MB of base64 image: 0.15 to 1.3 s). A smaller body is encoded at the call, whole.
ENCODED_APART = 1 << 20


def _text_size(request: ChatRequest) -> int:
    """The characters of a request's text and image URLs (a data URL holds its image),
    what makes a body large."""
    return sum(
        len(part.text) if isinstance(part, TextPart) else len(part.url)
        for message in request.messages
        for part in message.content
        if isinstance(part, TextPart | ImagePart)
    )


def _check_json(value: Any) -> None:
    """Raise what `json_body` would for `value`, without writing it: for a large body,
    checked at the call and encoded later. Strings are what make it large, and only
    one that is not ASCII is looked into (for a lone surrogate)."""
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if not value.isascii():
                value.encode("utf-8")
        elif isinstance(value, dict):
            for key in value:
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise TypeError(
                        f"keys must be str, int, float, bool or None, not {type(key).__name__}"
                    )
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError("Out of range float values are not JSON compliant")
        elif value is not None and not isinstance(value, int):  # bool is an int
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_checked(write: Callable[[dict[str, Any]], _T], body: dict[str, Any]) -> _T:
    """`write(body)`, what makes a body no JSON (`json_body` would fail) said as a
    `ConfigError`."""
    try:
        return write(body)
    except UnicodeEncodeError as exc:  # a lone surrogate (bytes that were not UTF-8)
        raise ConfigError(
            f"the request holds text that is not Unicode ({exc.reason} at {exc.start}): "
            "decode what you read as UTF-8 first"
        ) from None
    except (ValueError, TypeError) as exc:  # NaN or Infinity, a set, bytes, an object
        raise ConfigError(f"the request cannot be sent as JSON: {exc}") from None


class Provider:
    """One provider, configured: `stream`, `astream` and `complete` a ChatRequest."""

    def __init__(
        self,
        wire: WireProtocol,
        *,
        api_key: str | None,
        base_url: str,
        session: aiohttp.ClientSession | None = None,
        options: ProviderOptions | None = None,
    ) -> None:
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError(f"api_key must be a str, got {type(api_key).__name__}")
        if api_key and (api_key != api_key.strip() or not api_key.isprintable()):
            # never shown: aiohttp's "Forbidden control character" mid-turn otherwise
            raise ConfigError(
                f"the API key of provider {wire.name!r} has whitespace at an end or a control "
                "character in it (a newline read from a file?): strip it"
            )
        if api_key and not api_key.isascii():  # a 401 after a round trip otherwise
            raise ConfigError(
                f"the API key of provider {wire.name!r} holds a character that is not ASCII "
                f"({_first_not_ascii(api_key)}): an API key is ASCII; was it pasted with a "
                "typographic character?"
            )
        if session is not None and not isinstance(session, aiohttp.ClientSession):
            raise TypeError(
                f"session must be an aiohttp.ClientSession, got {type(session).__name__}"
            )
        self.options = options = options or ProviderOptions()
        self.wire = wire = options.configured(wire)
        self.name = wire.name
        self.base_url = base_url
        self.session = session
        # Built once: every turn sends the same, and a server streams for many at once.
        given = {name.lower() for name in options.headers}
        own = {k: v for k, v in wire.headers(api_key).items() if k.lower() not in given}
        self._headers: Mapping[str, str] = MappingProxyType({**own, **options.headers})
        self._secrets: tuple[str, ...] = tuple(
            secret
            for secret in (
                api_key,
                # the token itself too: a server that echoes it quotes it without `Bearer`
                *(
                    part
                    for k, v in options.headers.items()
                    if is_credential_header(k)
                    for part in dict.fromkeys((v, v.rsplit(" ", 1)[-1]))
                ),
            )
            if secret
        )
        if options.telemetry:
            require_otel()  # asked for at construction: a ConfigError now, not mid-turn
        guarded = wire.ssrf_guard_by_default if options.ssrf_guard is None else options.ssrf_guard
        self.guard = SsrfGuard(options.allow_private_network) if guarded else None
        """The SSRF guard every attempt goes through, or None."""
        if self.guard is not None and session is not None:
            raise ConfigError(
                f"provider {self.name!r} is SSRF-guarded, and a session passed in cannot be "
                "(its connector resolves names unchecked): drop session=..., or pass "
                "ssrf_guard=False to trust this URL"
            )
        self._pool = SessionPool(self.guard) if session is None else None
        """The provider's own connections, reused across turns (none with a session
        passed in: that one is the caller's, used as is and never closed here)."""
        # Built once, not per stream: the transport's read timeout and the text guards
        # (each keeps its state per subscription, so every stream may share them).
        self._read_timeout = options.silence_allowed()
        self._text_guards = tuple(options.text_guards())
        self._urls: dict[str, str] = {}
        """One string per endpoint URL for every stream to it, held by the provider, not
        a process-wide cache: a URL with a key in its query (Gemini's `?key=`, a
        gateway's) goes when the provider does."""

    def __repr__(self) -> str:  # never shows the key, even one written into the URL
        base_url = redact(self.base_url, self._secrets)
        return f"Provider({self.name!r}, base_url={base_url!r})"

    def http_request(self, request: ChatRequest, body: dict[str, Any] | None = None) -> HttpRequest:
        """What would be sent for `request` (or `body` on its behalf), encoded once: the
        caller's own copy (its headers a dict it may change, copy or pickle)."""
        sent = self._to_send(request, body)
        encoded = sent.body if isinstance(sent.body, bytes) else sent.body.now()
        return dataclasses.replace(sent, body=encoded, headers=dict(sent.headers))

    def _to_send(self, request: ChatRequest, body: dict[str, Any] | None = None) -> HttpRequest:
        """`http_request` for the turns themselves: the provider's headers shared,
        read-only, rather than a dict per turn. A large request is checked here and
        encoded when it is sent (`LaterBody`), a piece at a time and within the turn's
        deadlines; a request that cannot be sent as JSON is a `ConfigError` either way."""
        body = self.wire.build_body(request) if body is None else body
        encoded: bytes | LaterBody
        if _text_size(request) < ENCODED_APART:
            encoded = _json_checked(json_body, body)
        else:
            _json_checked(_check_json, body)
            encoded = LaterBody(body)
        url = self.wire.url(self.base_url, request)
        if len(self._urls) >= _URLS_KEPT:  # Gemini's has the model in it: a model apiece
            self._urls.clear()
        return HttpRequest(
            url=self._urls.setdefault(url, url),
            body=encoded,
            headers=self._headers,
            secrets=self._secrets,
            calls_offered=self.wire.calls_offered(body),
        )

    def attempt(
        self, sent: HttpRequest, number: int = 1, seen: Seen | None = None
    ) -> Observable[Event]:
        """One attempt, unsettled: source, quirks, normalizer, text guards, tool-argument
        accumulation and commitment tracking, all with state of their own. `seen` is
        given the normalizer of each subscription (`events_of`)."""
        source = http_source(
            sent,
            provider=self.name,
            attempt=number,
            session=self.session or self._pool,
            guard=self.guard,
            connect_timeout=self.options.connect_timeout,
            read_timeout=self._read_timeout,
            max_line_bytes=self.options.max_line_bytes,
            max_response_bytes=self.options.max_response_bytes,
        )
        options = self.options
        watch: FragmentOperator = _shared(
            deadlines,
            first_event=options.first_event_timeout,
            idle=options.idle_timeout,
            provider=self.name,
            attempt=number,
        )
        return events_of(
            source,
            self.wire,
            self.name,
            number,
            (watch, *self._text_guards),
            options.max_tool_argument_bytes,
            sent.secrets,
            seen,
            sent.calls_offered,
        )

    def prepare(self, request: ChatRequest) -> Turn:
        """One turn's attempts, unsettled, numbered from the given first attempt: the
        first request, then, while nothing is committed, the retries the provider's
        recovery policy chooses, each announced by a `retry` event. Each subscription
        starts again from the full body.

        The body is built here, so a request the provider cannot express is a
        `ConfigError` raised to the caller, as is a session passed in that cannot serve
        it (closed, or made on another event loop than the one running)."""
        if not isinstance(request, ChatRequest):
            raise TypeError(
                f"stream() takes a ChatRequest, got {type(request).__name__}: "
                "rxllm.ChatRequest(model=..., messages=[rxllm.Message.user(...)])"
            )
        if self.session is not None:  # a setup mistake, not a failure to retry
            unusable = unusable_session(self.session, running_loop())
            if unusable is not None:
                raise ConfigError(unusable)
        body = self.wire.build_body(request)
        return Turn(self, request, body, self._to_send(request, body))

    def _hinted(self, failure: Failed) -> Failed:
        """The error with the wire's hint at its likely cause, if it has one."""
        hint = self.wire.hint(failure.error, redact(self.base_url, self._secrets))
        if hint is None:
            return failure
        error = failure.error.model_copy(update={"message": f"{failure.error.message} ({hint})"})
        return failure.model_copy(update={"error": error})

    def stream(self, request: ChatRequest, *, cancel: Cancel = None) -> Observable[Event]:
        """A cold Observable of the normalized events of one turn: each subscription
        sends the request (and its retries); exactly one terminal event ends it.

        The body is built and checked here, so a request the provider cannot express
        is a `ConfigError` raised to the caller, not an event; it is encoded once, here,
        or, a large one, when first sent (`LaterBody`: within the deadlines, the event
        loop free between its pieces)."""
        return traced(settled(self.prepare(request)(1), self.name, cancel), request, self)

    def astream(self, request: ChatRequest, *, cancel: Cancel = None) -> EventStream:
        """`async with provider.astream(request) as events: async for event in events:`;
        leaving the `async with` block hangs up (see `EventStream`)."""
        return EventStream(self.stream(request, cancel=cancel), drive=True)

    async def complete(self, request: ChatRequest, *, cancel: Cancel = None) -> StreamRecord:
        """Stream the turn to its end and return its record."""
        return await record_of(self.stream(request, cancel=cancel), self.name, request.model)

    async def aclose(self) -> None:
        """Close the provider's pooled connections (a session passed in is the caller's
        and stays open). The provider stays usable: a later turn opens a new pool."""
        if self._pool is not None:
            await self._pool.aclose()

    async def __aenter__(self) -> Provider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


# After the terminal event, the rest of the body (`[DONE]`, the chunked end) is read
# for up to this long, so its connection goes back to the pool instead of being closed.
DRAIN_SECONDS = 2.0
# After a `done`, a turn completes when its body ends, for at most this long: a caller
# that starts its next turn once the last one completed (`complete()`, `async for`) finds
# the connection back in the pool (`tests/test_connections.py`). The `done` is not delayed.
DONE_HOLD_SECONDS = 0.1


class Turn:
    """`Provider.prepare`'s result: one request, encoded once, whose attempts start
    again from its full body at each subscription. Called with the number of its first
    attempt, it is that turn's events (every attempt, unsettled)."""

    __slots__ = ("_body", "_first", "_provider", "_request")

    def __init__(
        self, provider: Provider, request: ChatRequest, body: dict[str, Any], first: HttpRequest
    ) -> None:
        self._provider = provider
        self._request = request
        self._body = body
        self._first = first

    def __call__(self, first_attempt: int, elapsed: float = 0.0) -> Observable[Event]:
        """`elapsed`: seconds of the provider's `total_timeout` already spent when
        this turn starts (a fallback's later provider gets what is left of the whole
        turn's); what is left bounds the backoff waits as well."""
        return Operator(functools.partial(self._subscribe, first_attempt, elapsed))

    def _subscribe(
        self,
        first_attempt: int,
        elapsed: float,
        observer: abc.ObserverBase[Event],
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:  # `defer`, without a wrapper per stream
        attempts = _Attempts(self, first_attempt, elapsed)
        return forward(attempts.events(), observer, scheduler)


class _Attempts:
    """One subscription of a turn: its retry plan, the number of its next attempt, and
    each body it sent, JSON-encoded once."""

    __slots__ = (
        "_closings",
        "_deadline",
        "_elapsed",
        "_normalizer",
        "_number",
        "_plan",
        "_requests",
        "_turn",
    )

    def __init__(self, turn: Turn, first_attempt: int, elapsed: float) -> None:
        self._turn = turn
        self._number = first_attempt
        self._elapsed = elapsed
        pool = turn._provider._pool
        self._closings = 0 if pool is None else pool.closings  # see `_unless_closed`
        # The retry plan is made at the first failure (most turns never need one), with
        # what is left then of the deadline the subscription set.
        total = turn._provider.options.total_timeout
        self._deadline = None if total is None else monotonic() + total - elapsed
        self._plan: RetryPlan | None = None
        # Bodies encoded after the first, for a retry (plan.sent keeps each body alive).
        self._requests: dict[int, HttpRequest] | None = None
        # The running attempt's normalizer, which keeps its response's headers.
        self._normalizer: Normalizer | None = None

    def _retry_plan(self) -> RetryPlan:
        plan = self._plan
        if plan is None:
            turn = self._turn
            provider = turn._provider
            options = provider.options
            deadline = self._deadline
            time_left = None if deadline is None else deadline - monotonic()
            plan = self._plan = RetryPlan(
                turn._body, provider.wire.recovery, options.max_attempts, time_left
            )
        return plan

    def events(self) -> Observable[Event]:
        turn = self._turn
        provider, options = turn._provider, turn._provider.options
        first = provider.attempt(turn._first, self._number, self._saw)
        events = retry_before_commit(first, self.decide)
        if options.max_events is not None:
            events = cap_events(options.max_events)(events)
        if options.total_timeout:
            events = deadlines(
                total=options.total_timeout,
                elapsed=self._elapsed,
                provider=provider.name,
                attempt=self._number,
            )(events)
        return events

    def _encoded(self, sent_body: dict[str, Any]) -> HttpRequest:
        turn = self._turn
        if sent_body is turn._body:
            return turn._first
        requests = self._requests
        if requests is None:
            requests = self._requests = {}
        found = requests.get(id(sent_body))
        if found is None:
            found = requests[id(sent_body)] = turn._provider._to_send(turn._request, sent_body)
        return found

    def _saw(self, normalizer: Normalizer) -> None:
        self._normalizer = normalizer

    def _named(self, failure: Failed) -> Failed:
        """The failure with the request id of the response its attempt read: the steps
        past the normalizer (tool arguments, a chunk it could not read) fail an attempt
        without knowing its headers, and a support ticket needs the id whatever failed."""
        normalizer, self._normalizer = self._normalizer, None  # the next attempt's is its own
        if normalizer is None or failure.error.request_id is not None:
            return failure
        headers = normalizer.response_headers
        fields = {"request_id": None if headers is None else request_id_of(headers)}
        if fields["request_id"] is None:
            return failure
        redact_said(fields, normalizer.secrets)  # a server may echo the key anywhere
        error = failure.error.model_copy(update=fields)
        return failure.model_copy(update={"error": error})

    def decide(self, failure: Failed, committed: bool) -> Failed | Switch:
        failure = self._named(failure)
        turn, plan = self._turn, self._retry_plan()
        provider = turn._provider
        step = None if committed else plan.after(failure.error)
        if step is None:
            verdict = plan.last_verdict if not committed else None
            verdict = verdict or classify(failure.error, turn._body, plan.policy)
            return surfaced(provider._hinted(failure), verdict)
        self._number += 1
        _log_retry(failure, step)
        sent = self._encoded(step.body)
        absorbed = surfaced(failure, plan.last_verdict) if plan.last_verdict else failure
        retry = Retry.make(
            provider=failure.provider,
            attempt=failure.attempt,
            reason=absorbed.error,  # `retryable` as the policy concluded, as if surfaced
            next_attempt=self._number,
            next_provider=provider.name,
            dropped=step.dropped,
            images_removed=step.images_removed,
            delay=step.delay,
        )
        following = provider.attempt(sent, self._number, self._saw)
        pool = provider._pool
        if pool is not None:
            following = _unless_closed(following, pool, self._closings, provider.name, self._number)
        return Switch(retry, following, step.delay)


def _unless_closed(
    attempt: Observable[Event], pool: SessionPool, closings: int, provider: str, number: int
) -> Observable[Event]:
    """`attempt`, unless `pool` was closed since the turn began (`aclose()` ends the
    turns in flight, and one waiting out a backoff is one): then `cancelled`."""

    def subscribe(
        observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        if pool.closings == closings:
            return forward(attempt, observer, scheduler)
        reason = "the provider was closed (aclose()) while the turn waited to retry"
        observer.on_next(Cancelled.make(provider=provider, attempt=number, reason=reason))
        observer.on_completed()
        return Disposable()

    return Operator(subscribe)


def settled(turn: Observable[Event], provider: str, cancel: Cancel = None) -> Observable[Event]:
    """A turn's events with exactly one terminal event, ended early by `cancel`."""
    settle: EventOperator = _shared(settle_once, provider, DRAIN_SECONDS, DONE_HOLD_SECONDS)
    events = settle(turn)
    if cancel is not None:
        events = cancel_on(_signal(cancel), provider)(events)
    return events


@functools.lru_cache(maxsize=256)
def _shared(factory: Callable[..., _O], *args: Any, **kwargs: Any) -> _O:
    """`factory(*args, **kwargs)`, an operator built (its arguments checked) once for
    every stream that asks for it with these arguments, rather than once per stream:
    rxllm's operators keep their state per subscription."""
    return factory(*args, **kwargs)


def traced(
    events: Observable[Event], request: ChatRequest, provider: Provider
) -> Observable[Event]:
    """The settled turn, in one span when the provider asked for it (`telemetry=True`)."""
    if not provider.options.telemetry:
        return events
    return events.pipe(telemetry(request=request, providers=[provider]))


def surfaced(failure: Failed, verdict: Verdict) -> Failed:
    """The error as the user gets it: `retryable` says what the policy concluded
    (the same request may succeed later), wherever the error was first noticed."""
    retryable = verdict.action == "backoff"
    if failure.error.retryable == retryable:
        return failure
    error = failure.error.model_copy(update={"retryable": retryable})
    return failure.model_copy(update={"error": error})


def _log_retry(failure: Failed, step: NextBody) -> None:
    logger.bind(
        provider=failure.provider,
        attempt=failure.attempt,
        status=failure.error.status,
        dropped=step.dropped,
        images_removed=step.images_removed,
    ).info(
        "{} rejected attempt {} before anything was committed ({}); retrying: {} ({})",
        failure.provider,
        failure.attempt,
        failure.error.message,
        step.verdict.action,
        step.verdict.why,
    )


def events_of(
    source: Observable[SourceItem],
    wire: WireProtocol,
    provider: str,
    attempt: int = 1,
    guards: Sequence[FragmentOperator] = (),
    max_tool_argument_bytes: int | None = None,
    secrets: tuple[str, ...] = (),
    seen: Seen | None = None,
    calls_offered: bool = True,
) -> Observable[Event]:
    """One attempt's events from its raw source: the provider's quirk operators, its
    normalizer, the opt-in text guards, tool-argument accumulation, then commitment
    tracking. Not settled:
    that is the caller's. `secrets`: the request's credentials, which an error the
    provider sends inside the body never quotes. `seen`: given each subscription's
    normalizer as it is made. `calls_offered`: whether the request offered tools to
    call (`HttpRequest.calls_offered`)."""
    # A partial, not a closure: a stream keeps it until its first item (two objects
    # for the collector to walk, where a closure's cells are one each).
    make_normalizer = functools.partial(
        _normalizer, wire, provider, attempt, secrets, calls_offered, seen
    )
    for quirk in wire.preprocess():
        source = quirk(source)
    fragments = normalize(make_normalizer)(source)
    for guard in guards:
        fragments = guard(fragments)
    accumulate: Callable[[Observable[Fragment]], Observable[Event | FailureUsage]]
    accumulate = _shared(accumulate_tool_arguments, max_tool_argument_bytes)
    track: Callable[[Observable[Event | FailureUsage]], Observable[Event]]
    track = _shared(track_commitment)
    return track(accumulate(fragments))


def _normalizer(
    wire: WireProtocol,
    provider: str,
    attempt: int,
    secrets: tuple[str, ...],
    calls_offered: bool,
    seen: Seen | None,
    emit: Emit,
) -> Normalizer:
    """An attempt's normalizer (`events_of`), made when its source says something."""
    normalizer = wire.normalizer(emit, provider, attempt)
    normalizer.secrets = secrets
    normalizer.calls_offered = calls_offered
    if seen is not None:
        seen(normalizer)
    return normalizer


async def record_of(
    events: Observable[Event], provider: str, requested_model: str | None = None
) -> StreamRecord:
    """Subscribe, fold every event into a record, and return it at completion."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()
    builder = RecordBuilder(provider, requested_model)

    def on_error(error: Exception) -> None:
        if not finished.done():
            finished.set_exception(error)

    def on_completed() -> None:
        if not finished.done():
            finished.set_result(None)

    subscription = link(events, builder.add, on_error, on_completed, loop_scheduler(loop))
    try:
        await finished
    finally:
        subscription.dispose()
    return builder.build()


def _signal(cancel: asyncio.Event | Observable[Any]) -> Observable[Any]:
    if isinstance(cancel, Observable):
        return cancel
    if not isinstance(cancel, asyncio.Event):  # a threading.Event's wait() would block the loop
        raise TypeError(
            f"cancel= takes an asyncio.Event or an Observable, got {type(cancel).__name__}"
        )
    event = cancel

    def subscribe(observer: Any, scheduler: Any = None) -> Any:
        # The event is waited on on the turn's loop, from whichever thread the stream is
        # subscribed (`AsyncIOThreadSafeScheduler(loop)` from another) or disposed.
        waiter: asyncio.Task[bool] | None = None
        stopped = False

        def start() -> None:
            nonlocal waiter
            if stopped:  # disposed from another thread before the loop got to this
                return
            loop = running_loop()
            if loop is None:
                raise RuntimeError(
                    "cancel=asyncio.Event() needs a running event loop, or "
                    "scheduler=AsyncIOThreadSafeScheduler(loop) from another thread"
                )
            waiter = loop.create_task(event.wait())
            waiter.add_done_callback(
                lambda task: None if task.cancelled() else observer.on_next(True)
            )

        def stop() -> None:
            nonlocal stopped
            stopped = True
            if waiter is not None:
                waiter.cancel()

        on_its_loop(start, scheduler)()
        return Disposable(on_its_loop(stop, scheduler))

    return reactivex.create(subscribe)


def provider(
    name: str,
    api_key: str | None = None,
    base_url: str | None = None,
    session: aiohttp.ClientSession | None = None,
    **options: Any,
) -> Provider:
    """Build a provider by name (`rxllm.providers.PROVIDER_NAMES` lists them).

    The API key defaults to the provider's environment variable; a real provider with
    no key is a `ConfigError`, as is an unknown name or option.
    """
    wire = wire_for(name)
    try:
        settings = ProviderOptions(**options)
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise ConfigError(f"bad option for provider {name!r}: {problems}") from None
    if api_key is None and wire.api_key_env:
        api_key = os.environ.get(wire.api_key_env) or None
    if wire.requires_api_key and not api_key and not _carries_credential(wire, settings.headers):
        hint = f" or set {wire.api_key_env}" if wire.api_key_env else ""
        raise ConfigError(f"provider {name!r} needs an API key: pass api_key=...{hint}")
    if base_url is None:
        base_url = wire.default_base_url
        if name == "local" and not base_url:
            from rxllm.local.server import shared_server_url

            base_url = shared_server_url()
    if isinstance(base_url, str):
        base_url = base_url.strip()  # a file's line end, a pasted space: not the URL's
    if not base_url:
        raise ConfigError(f"provider {name!r} needs base_url=... (the endpoint's base URL)")
    if not isinstance(base_url, str):
        raise TypeError(f"base_url must be a str, got {type(base_url).__name__}")
    _check_base_url(base_url, wire, api_key)
    return Provider(wire, api_key=api_key, base_url=base_url, session=session, options=settings)


def _carries_credential(wire: WireProtocol, headers: Mapping[str, str]) -> bool:
    """Whether the caller's own headers authenticate: an `Authorization` (a token, such
    as Azure's Microsoft Entra ID bearer, which the openai SDK sends as `azure_ad_token`)
    or the header the wire would put the key in."""
    given = {name.lower() for name in headers}
    keyed = {name.lower() for name in wire.headers("key")} - {
        name.lower() for name in wire.headers(None)
    }
    return "authorization" in given or not given.isdisjoint(keyed)


def _problem(error: Any) -> str:
    """One option's problem, in words; an unknown option names the closest known one."""
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        known = [*ProviderOptions.model_fields, "api_key", "base_url", "session"]
        return f"unknown option {where!r}{did_you_mean(where, known)}"
    return f"{where}: {error['msg']}"


def _check_base_url(base_url: str, wire: WireProtocol, api_key: str | None) -> None:
    """Refuse at the call what aiohttp would raise from inside every turn."""
    shown = redact(base_url, (api_key,) if isinstance(api_key, str) else ())
    if any(char.isspace() or not char.isprintable() for char in base_url):
        # yarl drops a tab or line break anywhere (WHATWG), quotes a space or NUL: the
        # URL sent would not be the one written ("/v1\r\nX: 1" -> "/v1X:%201")
        raise ConfigError(f"base_url holds whitespace or a control character: {shown!r}")
    try:
        url = URL(base_url)  # parsed as the transport parses it: port, IPv6, backslash
    except ValueError as exc:
        raise ConfigError(f"base_url is not a URL ({exc}): {shown!r}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"base_url must be an http:// or https:// URL with a host, got {shown!r}")
    if "#" in base_url:  # the wire's path would go after it, and a fragment is never sent
        raise ConfigError(f"base_url holds a fragment ('#...'), which is never sent: {shown!r}")
    # An endpoint's URL pasted whole (".../v1/chat/completions", as Azure's and Snowflake's
    # docs print it) would have the wire's path added again: every turn a plain 404.
    base_path = url.path.rstrip("/")
    sample = ChatRequest(model="m", messages=[Message.user("hi")])
    tail = URL(wire.url(base_url, sample)).path[len(base_path) :]
    if tail and base_path.endswith(tail):
        base, mark, query = shown.partition("?")
        base = base.rstrip("/")[: -len(tail)]
        raise ConfigError(
            f"base_url already ends in {tail!r}, which rxllm adds: give the base, "
            f"{base + mark + query!r}"
        )
    bearer = api_key and "authorization" in {name.lower() for name in wire.headers(api_key)}
    if bearer and url.raw_user is not None:  # aiohttp would refuse every request
        raise ConfigError(
            "base_url holds user:password@ and the API key goes in the Authorization "
            "header too: keep one"
        )
