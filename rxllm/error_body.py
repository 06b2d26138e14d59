"""What an error body says, whichever provider wrote it: message, param, code, wait.

Providers disagree on the envelope of a rejection. OpenAI and most compatible servers
send `{"error": {message, type, param, code}}`; Google wraps `{code, message, status,
details}` (and its OpenAI-compatible endpoint puts that in a JSON list); vLLM and
NVIDIA's NIM send the fields at the top with a numeric `code`; MiniMax says every
outcome in a status object, `base_resp`, and FastChat's worker and Baidu Qianfan's v1 API in
a code beside its words (`status_envelope`); Mistral's `message` can
be FastAPI's validation object; NVIDIA's cloud functions answer RFC 7807 problem
details; TGI sends `{"error": "text", "error_type": ...}`, xAI `{"code": ..., "error":
"text"}`; OpenRouter keeps the
upstream's words in `metadata.raw`; Anthropic nests `{type, message}` under `error`;
gateways answer HTML. The recovery layer needs the same facts from all of them, so
this pure module reads every shape into one `ErrorBody`. It knows nothing of HTTP: the
source gives it text (and headers to the header helpers).

A wait, wherever it is written, is a number of seconds from 0 to `MAX_WAIT_SECONDS`:
what is negative, not a number or not a date is no wait at all; what is longer (a
`Retry-After` of 10^14, an HTTP-date in the year 9999) is reported as the bound, so that
no caller sleeps for an absurd time or overflows a timer.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple

from rxllm.sources.sse import SseDecoder

__all__ = [
    "MAX_ERROR_BODY_BYTES",
    "ErrorBody",
    "MAX_MESSAGE_CHARS",
    "MAX_WAIT_SECONDS",
    "REQUEST_ID_HEADERS",
    "envelope_status",
    "error_envelope",
    "parse_error_body",
    "parse_error_payload",
    "rate_limit_reset_of",
    "request_id_of",
    "retry_after_of",
    "should_retry_of",
    "status_envelope",
    "status_in",
    "wait_of",
]

# An error body is read to its end, for its message and structured fields; a hostile
# one must not be read whole (the biggest real ones, pydantic lists, are a few KB). An
# error a stream sends is cut to the same length.
MAX_ERROR_BODY_BYTES = 64 * 1024

# A message is for people and for the degradation matcher: long enough for a pydantic
# list naming several parameters, short enough that an HTML page cannot flood a log.
# The whole body stays in `ErrorInfo.raw`.
MAX_MESSAGE_CHARS = 2000

# Where providers put their request id, most specific first: OpenAI and most compatible
# servers `x-request-id`, Anthropic `request-id` (docs.claude.com/en/api/errors), Azure
# OpenAI's API Management gateway `apim-request-id` (also on the 429s the gateway writes
# itself) and Azure's `x-ms-request-id`, Google `x-goog-request-id` (seen in client code
# reading Gemini responses, not in Google's docs), and OpenRouter's `x-generation-id`,
# the id its `/generation` endpoint and its support look a turn up by.
REQUEST_ID_HEADERS = (
    "x-request-id",
    "request-id",
    "apim-request-id",
    "x-ms-request-id",
    "x-goog-request-id",
    "x-generation-id",
)

MAX_WAIT_SECONDS = 86400.0
"""The longest wait reported: a day, the longest real providers name (Azure's daily
quota: "Please retry after 86400 seconds"). Any wait past a retry policy's patience
surfaces alike; the bound only keeps a hostile or broken value from being believed."""

# The patterns below are read on errors only, so they are kept as text and compiled by
# `re`'s own cache on first use: compiled at import, they cost `import rxllm` 12 M
# instructions (callgrind), which no stream that succeeds needs.

# "Please try again in 5.289s" (OpenAI, Groq), "in 20ms", Groq's Go durations
# "in 1m2.639999999s" / "in 7m12.864s", and Gemini's "Please retry in 17.14s".
# The wait in words as well: Azure's "Please retry after 86400 seconds", "Try again in 30
# seconds", "retry after 500 milliseconds", GitHub Models' "Please wait 5631 seconds before
# retrying", oxy's (Traefik 1.x's) "max rate reached: retry-in 30s"; or the reset of what is
# spent, a quota's or a limit's (Google Antigravity's "Your quota will reset after
# 25h20m26s.", "... Resets in 108h48m29s." opening its sentence), not a relay's note of its
# own cooldown ("(reset after 30s)", 9router).
_TRY_AGAIN = (
    r"(?i)(?:(?:try again|retry)[ -](?:in|after)|\bwait(?: for)?|"
    r"(?:\b(?:quota|limit|allowance|usage|it)\s+(?:will\s+)?(?:be\s+)?|(?:^|[.!?;:]\s+))"
    r"resets? (?:in|after))\s+("
    r"(?:\d+(?:\.\d+)?(?:h|ms|m|s)(?![a-z]))+|"
    r"\d+(?:\.\d+)?\s*(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|milliseconds?)\b"
    # and its further parts in words: "1 minute and 30 seconds", "2 hours, 5 minutes"
    r"(?:,?\s+(?:and\s+)?\d+(?:\.\d+)?\s*(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|milliseconds?)\b)*)"
)
_DURATION_PART = (
    r"(?i)(\d+(?:\.\d+)?)\s*(hours?|hrs?|h|ms|milliseconds?|minutes?|mins?|m|seconds?|secs?|s)"
)
_DURATION_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# Google's RetryInfo.retryDelay is a protobuf Duration in JSON: "30s", "3.5s".
_PROTO_DURATION = r"^\s*(\d+(?:\.\d+)?)s\s*$"
# RFC 9110 §10.2.3: `delay-seconds = 1*DIGIT` (a fraction tolerated, as Azure and the
# local server write one); no sign, exponent, underscore or non-ASCII digit.
_DELAY_SECONDS = r"(?a)\s*(\d+(?:\.\d+)?)\s*"
# OpenAI's and Groq's `x-ratelimit-reset-*`: a Go duration ("6m0s", "1s", "20ms",
# "2m59.56s"); Azure writes whole seconds.
_GO_DURATION = r"(?a)\s*((?:\d+(?:\.\d+)?(?:h|ms|m|s))+)\s*"
# A rate limit's reset header, and the header that says whether that limit is spent:
# OpenAI, Azure and Groq `x-ratelimit-reset-<limit>` / `x-ratelimit-remaining-<limit>` (a
# duration); OpenRouter's bare `x-ratelimit-reset` / `x-ratelimit-remaining` (a moment,
# epoch milliseconds); the IETF draft's `RateLimit-Reset` / `RateLimit-Remaining` (seconds:
# draft-polli-ratelimit-headers up to -06, which Kong's rate-limiting plugin sends) and a
# gateway's own family of them (Mistral's `ratelimitbysize-reset` /
# `ratelimitbysize-remaining`, seconds); Anthropic `anthropic-ratelimit-<limit>-reset` /
# `anthropic-ratelimit-<limit>-remaining` (RFC 3339).
_RESET_HEADER = (
    r"^(?:(?P<p>(?:x-)?ratelimit[a-z]*)-reset(?P<x>-.+)?|anthropic-ratelimit-(?P<a>.+)-reset)$"
)
# The draft's later single field, `RateLimit`: `limit=10, remaining=0, reset=20` (-07) or
# one item per policy, `"default";r=0;t=20` (-08 on), remaining `r` and seconds `t`.
_RATELIMIT_PARAM = r"(?a)^\s*(remaining|reset|r|t)\s*=\s*(\d+(?:\.\d+)?)\s*$"
# A reset written as a number this large is a moment (Unix epoch seconds, or
# milliseconds), not a duration: no window lasts 30 years.
_EPOCH_SECONDS = 1e9
_EPOCH_MILLISECONDS = 1e12
_TAG = r"<[^>]*>"
_SCRIPT_START = r"(?i)<(script|style)\b"
_SPACES = r"\s+"
# How an SSE-framed body begins: a field or a comment (WHATWG event-stream).
_SSE_FIELD = r"(?:data|event|id|retry)?:"


class ErrorBody(NamedTuple):
    """The facts of one rejection body. `message` is always readable text."""

    message: str
    param: str | None = None
    """The request parameter the provider named in a structured field (OpenAI `param`)."""
    code: str | None = None
    """The provider's string code, else its error type; numeric codes are statuses."""
    retry_after: float | None = None
    """Seconds the body asks to wait (a sentence or Google's RetryInfo)."""
    request_id: str | None = None
    """The request id the body carries (Anthropic's top-level `request_id`, Google's
    `RequestInfo` detail), for when no header says it."""
    should_retry: bool | None = None
    """The upstream's word on sending the same request again, where a gateway relays it
    (OpenRouter's `metadata.raw.retryable`); the server's `x-should-retry` outranks it."""

    def fields(self, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        """`ErrorInfo`'s structured fields (`failed(..., **fields)`) from this body and,
        for a response, its headers, which say the wait, the request id and whether to
        send the same request again before the body does."""
        headers = headers or {}
        said = should_retry_of(headers)
        return {
            "param": self.param,
            "code": self.code,
            "retry_after": wait_of(headers, self),
            "request_id": request_id_of(headers) or self.request_id,
            "should_retry": self.should_retry if said is None else said,
        }


def parse_error_body(text: str) -> ErrorBody:
    """Read an error body of any known shape; text that is not JSON is its own message.
    A body framed as SSE (a server that answers its error in the stream's framing,
    `data: {"error": ...}`, with its 4xx) is the data of its first event that has any."""
    stripped = text.strip()
    if re.match(_SSE_FIELD, stripped):
        stripped = _first_data(stripped) or stripped
    if stripped[:1] in ("{", "["):
        try:  # raw_decode: a body cut at the read cap or followed by junk still reads
            payload, _ = json.JSONDecoder().raw_decode(stripped)
            parsed = parse_error_payload(payload)
        except (ValueError, RecursionError):  # not JSON, or nested past reading
            pass
        else:
            return parsed if parsed.message else parsed._replace(message=_bounded(stripped))
    message = _plain_text(stripped)
    if not message:
        message = "(no readable text in the body)" if stripped else "(empty body)"
    return ErrorBody(message, retry_after=_wait_in(message))


def _first_data(body: str) -> str:
    """The data of the first event of an SSE-framed body that has any, as the stream's
    own decoder reads it."""
    decoder = SseDecoder()
    events = decoder.feed(body.encode("utf-8", "surrogatepass")) + decoder.close()
    return next((event.data.strip() for event in events if event.data), "")


def parse_error_payload(payload: Any) -> ErrorBody:
    """Read an already decoded error (an HTTP body or an in-stream `error` value).
    The message is empty only when the payload holds no words at all."""
    if isinstance(payload, list):
        payload = next((item for item in payload if isinstance(item, dict)), None)
    if isinstance(payload, str) and _nested_of(payload) is not None:
        payload = {"message": payload}  # an error body as text (an in-band `"error": "{...}"`)
    if isinstance(payload, str):
        message = _bounded(payload)
        return ErrorBody(message, retry_after=_wait_in(message))
    if not isinstance(payload, dict):
        return ErrorBody("" if payload is None else _bounded(json.dumps(payload)))
    error = payload.get("error")
    if isinstance(error, str) and _nested_of(error) is not None:
        # Ollama's and TGI's `{"error": "<text>"}` where the text is an upstream's error body
        # (a proxy's relay of Google's 429): that body is the error, as in a `message`
        error = {"message": error}
    elif isinstance(error, str):
        # the error object itself written as JSON text (Bedrock Mantle's Responses stream:
        # `{"type": "error", "error": "{\"message\": \"Too many requests...\"}"}`,
        # vercel/ai's normalize-responses-error-frames): its fields are the error's
        error = _stringified(error) or error
    # Spring Boot's and NestJS's `{"error": "Bad Request", "message": ...}`: there `error` is
    # only the reason phrase, and the words are the `message` beside it
    if isinstance(error, str) and payload.get("message") not in (None, ""):
        error = None
    if error is None and not _message_of(payload):
        error = _listed_error(payload.get("errors")) or status_envelope(payload)
    if isinstance(error, str):  # TGI: {"error": "...", "error_type": "validation"}
        message = _bounded(error)
        wait = _wait_in(message)
        return ErrorBody(
            message,
            # xAI's code beside its words: `{"code": "permission-denied", "error": "..."}`
            code=_string(payload.get("error_type")) or _string(payload.get("code")),
            retry_after=_estimated_time(payload) if wait is None else wait,
        )
    fields: dict[str, Any] = error if isinstance(error, dict) else payload
    message = _message_of(fields)
    nested = _nested_of(message)
    if nested is not None:  # an error body as the message: its fields are the ones to read
        fields = {**fields, **nested}
        message = _message_of(fields)
    details = fields.get("details")
    retry_after = _retry_delay(details)
    request_id = (
        _string(payload.get("request_id"))
        or _string(fields.get("request_id"))
        or _detail_request_id(details)
    )
    code = _code_of(fields)
    param = _string(fields.get("param")) or _field_violated(details)
    upstream = _upstream_of(fields)
    if upstream is not None:  # OpenRouter: the upstream's words are the useful ones
        message = _with_upstream(message, upstream.message, _upstream_name(fields))
        code = code or upstream.code
        param = param or upstream.param
        retry_after = retry_after if retry_after is not None else upstream.retry_after
    message = _bounded(message)
    if retry_after is None:
        retry_after = _wait_in(message)
    if retry_after is None:
        retry_after = _headers_wait(fields.get("metadata"))
    return ErrorBody(message, param, code, retry_after, request_id, _retryable_of(fields))


def _stringified(text: str) -> dict[str, Any] | None:
    """An error object written as JSON text, `{"message": "...", ...}` with words in its
    `message`, or None (any other text, TGI's plain words among them)."""
    text = text.strip()
    if text[:1] != "{":
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if value.__class__ is dict and isinstance(value.get("message"), str) and value["message"]:
        return value
    return None


def _listed_error(errors: Any) -> dict[str, Any] | None:
    """The error of an envelope that lists them, with no words of its own: Cloudflare's
    (`{"success": false, "errors": [{"code": 3036, "message": ...}], "result": null}`,
    Workers AI and AI Gateway), GraphQL's `{"errors": [{"message": ...}]}`. The first
    one's fields, with every listed message."""
    listed = [item for item in errors if isinstance(item, dict)] if isinstance(errors, list) else []
    if not listed:
        return None
    words = [message for item in listed if (message := _message_of(item))]
    return {**listed[0], "message": "; ".join(words)} if len(words) > 1 else listed[0]


# Bodies that say their outcome as a numeric status beside the result, 0 where all went
# well, rather than in an `error` member: (where the status object is, None for the top
# level; its code's key; its words' key). MiniMax's native `base_resp` on every response
# and chunk of its chatcompletion_v2 (`{"status_code": 1008, "status_msg": "insufficient
# balance"}`: dify-official-plugins' minimax plugin checks each), and FastChat's worker
# result passed on as it came (`{"text": "**NETWORK ERROR...**", "error_code": 50002}`:
# its openai_api_server.py), and Baidu Qianfan's v1 error, its words in `error_msg` (`{"error_code":
# 18, "error_msg": "Open api qps request limit reached"}`, at `200 OK`: bce-qianfan-sdk reads
# the same two keys).
_STATUS_ENVELOPES = (
    ("base_resp", "status_code", ("status_msg",)),
    (None, "error_code", ("text", "error_msg")),
)


def status_envelope(payload: Any) -> dict[str, Any] | None:
    """The error a status envelope says (`_STATUS_ENVELOPES`), as `{"message", "code"}`,
    or None where the payload has none or its code is 0 (success)."""
    if payload.__class__ is not dict:
        return None
    for where, code_key, words_keys in _STATUS_ENVELOPES:
        status = payload if where is None else payload.get(where)
        if status.__class__ is not dict:
            continue
        code = status.get(code_key)
        if code.__class__ is int and code != 0:
            said = (status.get(key) for key in words_keys)
            words = next((words for words in said if isinstance(words, str) and words), "")
            return {"message": words, "code": str(code)}
    return None


def status_in(error: Mapping[str, Any]) -> int | None:
    """The HTTP status an error object names, if any: Groq's `status_code`, a numeric
    `status`, or the numeric `code` of OpenRouter, vLLM, llama.cpp and Google."""
    for key in ("status_code", "status", "code"):
        value = error.get(key)
        if value.__class__ is int and 400 <= value < 600:
            return value
    return None


def envelope_status(payload: Any) -> int | None:
    """The status an error payload of any shape names: in its `error` object, else
    beside it; a list (Google's envelope) is read by its first object. An error written
    as JSON text (`"error": "{\"code\": 429, ...}"`, a proxy's relay of its upstream's
    body, or that text as the whole error of a frame) names the status inside it."""
    if payload.__class__ is str:
        payload = _nested_of(payload) or _stringified(payload)
    if payload.__class__ is list:
        payload = next((item for item in payload if item.__class__ is dict), None)
    if payload.__class__ is not dict:
        return None
    nested = payload.get("error")
    if nested.__class__ is str:
        nested = _nested_of(nested) or _stringified(nested)
    return (status_in(nested) if nested.__class__ is dict else None) or status_in(payload)


def error_envelope(text: str) -> Any:
    """The JSON value `text` holds when it is an error envelope, else None: an object
    with an `error` member, vLLM's `{"object": "error", ...}`, a status envelope that
    says a failure (MiniMax's `base_resp`), or a list of such (as Google's
    OpenAI-compatible endpoint answers)."""
    if text[:1] not in ("{", "["):
        return None
    try:  # raw_decode: a body cut at a cap still reads as far as it goes
        payload, _ = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    first = payload[0] if payload.__class__ is list and payload else payload
    if first.__class__ is dict and (
        "error" in first or first.get("object") == "error" or status_envelope(first)
    ):
        return payload
    return None


def wait_of(headers: Mapping[str, str], body: ErrorBody) -> float | None:
    """The wait a rejection names, most explicit first: `retry-after-ms`/`Retry-After`
    (the provider's answer to this request), the body's words or RetryInfo, then the
    reset of a rate limit the headers show spent (`rate_limit_reset_of`)."""
    wait = retry_after_of(headers)
    if wait is None:
        wait = body.retry_after
    return rate_limit_reset_of(headers) if wait is None else wait


def retry_after_of(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI, Azure; the more precise, so first)
    or `Retry-After` (seconds or an HTTP date, RFC 9110)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = _delay_seconds(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return _wait(milliseconds / 1000)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _delay_seconds(value)
    if seconds is not None:
        return _wait(seconds)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _until(when)


def rate_limit_reset_of(headers: Mapping[str, str]) -> float | None:
    """Seconds until the latest reset among the rate limits the headers show spent
    (remaining `0`), or None when none is.

    A reset header comes with every response and says when a window refills, not that
    the client must wait ("reset-requests is not the amount of time you have to wait"):
    only the limit that is at 0 is what a 429 waits for, and when several are, the last
    one to refill (the rule anthropic-sdk-typescript#357 asks for). Read after
    `Retry-After` and the body's words, which answer this very request."""
    lowered = {name.lower(): value for name, value in headers.items()}
    waits: list[float] = []
    for name, value in lowered.items():
        match = re.match(_RESET_HEADER, name)
        if match is None:
            continue
        if match["a"] is None:
            remaining = lowered.get(f"{match['p']}-remaining{match['x'] or ''}")
            wait = _reset_in(value)
        else:
            remaining = lowered.get(f"anthropic-ratelimit-{match['a']}-remaining")
            wait = _until_rfc3339(value)
        if wait is not None and _delay_seconds(remaining) == 0:
            waits.append(wait)
    waits.extend(_spent_policies(lowered.get("ratelimit", "")))
    return max(waits, default=None)


def _spent_policies(field: str) -> list[float]:
    """The resets of the spent limits a `RateLimit` field names: each `r=0` item's `t`
    (draft -08 on), or the one `reset` beside `remaining=0` (draft -07)."""
    waits: list[float] = []
    whole: dict[str, float] = {}
    for item in field.split(","):
        said: dict[str, float] = {}
        for part in item.split(";"):
            if (match := re.match(_RATELIMIT_PARAM, part)) is not None:
                said[match.group(1)] = float(match.group(2))
        whole.update(said)
        if said.get("r") == 0 and (wait := _wait(said.get("t", math.nan))) is not None:
            waits.append(wait)
    if whole.get("remaining") == 0 and (wait := _wait(whole.get("reset", math.nan))) is not None:
        waits.append(wait)
    return waits


def _wait(seconds: float) -> float | None:
    """A wait as reported: None for what is no wait (negative, NaN), bounded above."""
    if math.isnan(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_WAIT_SECONDS)


def _until(when: datetime) -> float | None:
    """Seconds from now until `when`; a time without a zone is UTC (an HTTP-date is
    always GMT, RFC 9110 §5.6.7, and `-0000` parses without one)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return _wait(max(0.0, when.timestamp() - time.time()))
    except (OverflowError, OSError, ValueError):
        return None


def _until_rfc3339(value: str) -> float | None:
    try:
        return _until(datetime.fromisoformat(value.strip()))
    except ValueError:
        return None


def _reset_in(value: str) -> float | None:
    """A rate limit's reset: a duration, or a moment as Unix epoch seconds or
    milliseconds (OpenRouter's `X-RateLimit-Reset: 1741305600000`)."""
    number = _delay_seconds(value)
    if number is not None and number >= _EPOCH_SECONDS:
        moment = number / 1000 if number >= _EPOCH_MILLISECONDS else number
        return _wait(max(0.0, moment - time.time()))
    return _duration(value)


def _duration(value: str) -> float | None:
    """A Go duration ("6m0s", "20ms") or whole seconds, as seconds."""
    seconds = _delay_seconds(value)
    if seconds is not None:
        return _wait(seconds)
    match = re.fullmatch(_GO_DURATION, value)
    return None if match is None else _seconds_in(match.group(1))


def _delay_seconds(value: str | None) -> float | None:
    match = re.fullmatch(_DELAY_SECONDS, value) if value is not None else None
    return float(match.group(1)) if match is not None else None


def should_retry_of(headers: Mapping[str, str]) -> bool | None:
    """The server's word on sending this same request again: `x-should-retry: true` or
    `false`, or None when it said neither. Compared exactly, as the openai and anthropic
    SDKs compare it (`BaseClient._should_retry`), which obey it before the status."""
    lowered = {name.lower(): value for name, value in headers.items()}
    return {"true": True, "false": False}.get(lowered.get("x-should-retry", ""))


def request_id_of(headers: Mapping[str, str]) -> str | None:
    """The provider's request id, for a support ticket (see `REQUEST_ID_HEADERS`)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    for name in REQUEST_ID_HEADERS:
        value = lowered.get(name, "").strip()
        if value:
            return value
    return None


def _message_of(fields: dict[str, Any]) -> str:
    message = fields.get("message")
    if message is not None and message != "":
        return message if isinstance(message, str) else _readable(message)
    detail = fields.get("detail")
    title = _string(fields.get("title"))
    if detail is not None and detail != "":  # RFC 7807 problem details, FastAPI's detail
        text = detail if isinstance(detail, str) else _readable(detail)
        return f"{title}: {text}" if title else text
    return title or _string(fields.get("type")) or ""


def _readable(value: Any) -> str:
    """A structured message as text that keeps every key name: FastAPI/pydantic
    validation errors become `body.max_completion_tokens: Extra inputs are not
    permitted (extra_forbidden)`, anything else compact JSON."""
    if isinstance(value, dict) and "detail" in value:
        value = value["detail"]
    if isinstance(value, str):
        return value
    items = value if isinstance(value, list) else [value]
    if items and all(isinstance(item, dict) and "msg" in item for item in items):
        return "; ".join(_validation_error(item) for item in items)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _validation_error(item: dict[str, Any]) -> str:
    location = ".".join(str(part) for part in item.get("loc") or ())
    kind = _string(item.get("type"))
    text = str(item["msg"])
    if location:
        text = f"{location}: {text}"
    return f"{text} ({kind})" if kind else text


def _code_of(fields: dict[str, Any]) -> str | None:
    # `status` is Google's code name (INVALID_ARGUMENT); numbers anywhere are statuses.
    for key in ("code", "type", "status", "error_type"):
        code = _string(fields.get(key))
        # Anthropic's envelope type "error" says nothing; an RFC 7807 type is a URI.
        if code is not None and code != "error" and ":" not in code and "/" not in code:
            return code
    return None


def _nested_of(message: str) -> dict[str, Any] | None:
    """The error object of an error body written as the message's text, or None.

    Google's streaming endpoint answers `{"error": {"message": "<its usual error body, as a
    JSON string>", "code": 429, "status": "Too Many Requests"}}` (voideditor/void#557,
    continuedev/continue#11164): the status name, the `RetryInfo` wait and the words are
    inside the string. A relay may write its own words before that body (LiteLLM's
    "litellm.RateLimitError: VertexAIException - {...}"): the body is read from its first
    brace. A message that is JSON but no error body (Mistral's validation `detail` as a
    string) stays as it is."""
    message = message.strip()
    start = 0 if message[:1] == "[" else message.find("{")
    payload = error_envelope(message[start:]) if start >= 0 else None
    if payload.__class__ is list:
        payload = next((item for item in payload if item.__class__ is dict), None)
    if payload.__class__ is not dict:
        return None
    error = payload.get("error")
    return error if error.__class__ is dict else payload


def _upstream_of(fields: dict[str, Any]) -> ErrorBody | None:
    """What the upstream said, in OpenRouter's `metadata.raw` (its body as JSON or text)."""
    metadata = fields.get("metadata")
    if not isinstance(metadata, dict):
        return None
    raw = metadata.get("raw")
    if isinstance(raw, dict | list):
        return parse_error_payload(raw)
    if isinstance(raw, str) and raw.strip():
        return parse_error_body(raw)
    return None


def _retryable_of(fields: dict[str, Any]) -> bool | None:
    """The upstream's word on sending the same request again, in OpenRouter's `metadata.raw`
    (its body as JSON text or an object): `retryable`, beside "Error processing stream" when
    an upstream failed mid-stream (hotovo/aider-desk#103, BerriAI/litellm#16226), and in the
    same place on its HTTP errors. None where it says nothing, or says it but not as a
    boolean."""
    metadata = fields.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw.lstrip()[:1] == "{":
        try:  # raw_decode: an upstream body followed by more text still reads
            raw, _ = json.JSONDecoder().raw_decode(raw.strip())
        except (ValueError, RecursionError):
            return None
    said = raw.get("retryable") if isinstance(raw, dict) else None
    return said if isinstance(said, bool) else None


def _upstream_name(fields: dict[str, Any]) -> str | None:
    metadata = fields.get("metadata")
    return _string(metadata.get("provider_name")) if isinstance(metadata, dict) else None


def _with_upstream(message: str, words: str, provider: str | None) -> str:
    """The gateway's message with its upstream's words and name ("Provider returned error:
    Fireworks: max_tokens is too large"). An upstream that said nothing readable (OpenRouter's
    `"raw": {"retryable": true}`) adds only its name, in parentheses ("Error processing stream
    (DeepInfra)"), so that no colon is left introducing nothing."""
    if not words:
        named = f"({provider})" if provider else ""
        return f"{message} {named}".strip()
    said = f"{provider}: {words}" if provider else words
    return f"{message}: {said}" if message else said


def _headers_wait(metadata: Any) -> float | None:
    """The wait in headers a gateway copied into the body (OpenRouter's 429:
    `metadata.headers` with `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset`)."""
    headers = metadata.get("headers") if isinstance(metadata, dict) else None
    if not isinstance(headers, dict):
        return None
    strings = {str(name): str(value) for name, value in headers.items()}
    wait = retry_after_of(strings)
    return rate_limit_reset_of(strings) if wait is None else wait


def _retry_delay(details: Any) -> float | None:
    """Google's `google.rpc.RetryInfo` detail: `{"retryDelay": "30s"}`."""
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and isinstance(detail.get("retryDelay"), str):
            match = re.match(_PROTO_DURATION, detail["retryDelay"])
            if match:
                return _wait(float(match.group(1)))
    return None


def _estimated_time(payload: dict[str, Any]) -> float | None:
    """Hugging Face's Inference API on a model still loading: 503 `{"error": "Model ... is
    currently loading", "estimated_time": 20.0}`, the seconds until it should be ready."""
    value = payload.get("estimated_time")
    if value.__class__ not in (int, float):  # not a bool, not a string
        return None
    return _wait(float(value))


def _field_violated(details: Any) -> str | None:
    """The one field Google's `google.rpc.BadRequest` detail says is violated
    (`{"fieldViolations": [{"field": "max_tokens", ...}]}`): its `param`. Several name no
    one of them."""
    fields = [
        violation.get("field")
        for detail in (details if isinstance(details, list) else ())
        if isinstance(detail, dict) and isinstance(detail.get("fieldViolations"), list)
        for violation in detail["fieldViolations"]
        if isinstance(violation, dict)
    ]
    return _string(fields[0]) if len(fields) == 1 else None


def _detail_request_id(details: Any) -> str | None:
    """Google's `google.rpc.RequestInfo` detail: `{"requestId": "..."}`."""
    if not isinstance(details, list):
        return None
    return next(
        (
            detail["requestId"]
            for detail in details
            if isinstance(detail, dict) and _string(detail.get("requestId"))
        ),
        None,
    )


def _wait_in(message: str) -> float | None:
    match = re.search(_TRY_AGAIN, message)
    return None if match is None else _seconds_in(match.group(1))


def _seconds_in(duration: str) -> float | None:
    """A duration as written ("1m2.5s", "20ms", "30 seconds", "1 minute and 30
    seconds"), as a wait: its parts while each unit is smaller than the one before
    ("retry after 5 seconds, 10 seconds max" is 5 s)."""
    seconds, last = 0.0, math.inf
    for amount, word in re.findall(_DURATION_PART, duration):
        unit = _DURATION_SECONDS[_unit(word)]
        if unit >= last:
            break
        seconds, last = seconds + float(amount) * unit, unit
    return _wait(seconds)


def _unit(word: str) -> str:
    """`h`, `m`, `s` or `ms` for a unit as written (`seconds`, `mins`, `ms`, `h`)."""
    word = word.lower()
    if word == "ms" or word.startswith("milli"):
        return "ms"
    return word[0]


def _plain_text(text: str) -> str:
    """HTML reduced to its words (a gateway's error page), whitespace collapsed."""
    if "<" in text and ">" in text:
        import html  # here: only an HTML error page needs it (~2 ms of `import rxllm`)

        text = html.unescape(re.sub(_TAG, " ", _without_scripts(text)))
    return _bounded(re.sub(_SPACES, " ", text).strip())


def _without_scripts(page: str) -> str:
    """The page without `<script>`/`<style>` blocks, in one pass (a lazy regex with a
    back-reference takes seconds on a hostile body of unclosed `<script>` tags)."""
    kept: list[str] = []
    position = 0
    lowered = page.lower()
    script_start = re.compile(_SCRIPT_START).search  # from `position` on
    while (match := script_start(page, position)) is not None:
        kept.append(page[position : match.start()])
        end = lowered.find(f"</{match.group(1).lower()}", match.end())
        if end < 0:
            return " ".join(kept)  # unclosed: the rest is code, not words
        position = lowered.find(">", end) + 1 or len(page)
        kept.append(" ")
    kept.append(page[position:])
    return "".join(kept)


# What ends a word for `_bounded`: a space, a quote, a bracket, a separator. A key is
# never split by one of these.
_WORD_BREAKS = frozenset("\"'`,;()[]{}<>")


def _bounded(text: str) -> str:
    """`text` cut to `MAX_MESSAGE_CHARS`, less the word the cut falls in: the secrets are
    not known here and the message is redacted later, where a key cut in two no longer
    reads as one (its start, "sk-proj-A1b2C3", would be shown)."""
    text = text.strip()
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    end = MAX_MESSAGE_CHARS - 1
    if not _breaks_word(text[end]):  # the cut falls inside a word: leave it out whole
        while end and not _breaks_word(text[end - 1]):
            end -= 1
    return text[:end].rstrip() + "…"


def _breaks_word(char: str) -> bool:
    return char.isspace() or char in _WORD_BREAKS


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
