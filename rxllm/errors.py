"""Exceptions: raised at the API boundary (bad configuration), and, on request, for a
turn that failed (`StreamRecord.raise_for_error()`).

A stream itself never raises: its failures are `error` events. `ProviderError` and its
subclasses carry that event's `ErrorInfo` as `.info`, named as the openai SDK names
what its users catch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rxllm.events import ErrorInfo, StreamRecord

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ConflictError",
    "ContextLengthError",
    "InternalServerError",
    "LimitError",
    "MalformedResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "PolicyError",
    "ProviderError",
    "RateLimitError",
    "RxllmError",
    "StreamError",
    "UnprocessableEntityError",
    "did_you_mean",
    "error_for",
]


class RxllmError(Exception):
    """Base of every exception rxllm raises on purpose."""


class ConfigError(RxllmError, ValueError):
    """A provider cannot be built as asked: unknown name, missing key, bad option."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`" (did you mean 'x'?)"` for the known name closest to a mistyped one, or ""."""
    import difflib  # only a mistake pays for it

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


class ProviderError(RxllmError):
    """A turn that ended in an `error` event, raised by `raise_for_error()`.

    `info` is the event's `ErrorInfo` (kind, message, status, provider, retryable, the
    raw body, request id, ...); `record` is the turn's `StreamRecord` when there is
    one, with what arrived before the error."""

    def __init__(self, info: ErrorInfo, record: StreamRecord | None = None) -> None:
        super().__init__(f"{info.provider}: {info.message}")
        self.info = info
        self.record = record

    def __reduce__(self) -> tuple[type[ProviderError], tuple[ErrorInfo, StreamRecord | None]]:
        # `Exception` rebuilds from `args`, the message alone: pickle (a process pool,
        # loguru's `enqueue=True`) and `copy` need what `__init__` takes.
        return type(self), (self.info, self.record)

    @property
    def status(self) -> int | None:
        return self.info.status

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later (rxllm already retried what it
        could within the turn)."""
        return self.info.retryable


class APIStatusError(ProviderError):
    """The provider answered with an HTTP error status (or an in-stream error whose
    type stands for one): `status` is set."""


class BadRequestError(APIStatusError):
    """400, 413 or 422: the request was refused as it is (what rxllm could drop and
    retry, it did)."""


class UnprocessableEntityError(BadRequestError):
    """422: the body was read and refused (a validation error, as FastAPI-based servers
    answer); the openai and anthropic SDKs' name, and a `BadRequestError` as before. A
    422 that says the conversation is too long is a `ContextLengthError`."""


class ContextLengthError(BadRequestError):
    """The conversation is too long for the model: shorten it."""


class AuthenticationError(APIStatusError):
    """401: the API key is missing, wrong or revoked."""


class PermissionDeniedError(APIStatusError):
    """402 or 403: the account may not do this (billing, access to the model)."""


class NotFoundError(APIStatusError):
    """404: a wrong base URL or path, or a model the endpoint does not have."""


class ConflictError(APIStatusError):
    """409: the request conflicts with the server's state (a lock another request held):
    rxllm sent it again within the turn, as the SDKs do, unless the server said not to
    (`x-should-retry: false`)."""


class RateLimitError(APIStatusError):
    """429: rate limited or out of quota; `info.retry_after` says how long to wait,
    when the provider said."""


class InternalServerError(APIStatusError):
    """5xx, including overload (503, 529): the provider's trouble; try again later."""


class StreamError(ProviderError):
    """The provider reported an error inside the stream, with no status to classify."""


class APIConnectionError(ProviderError):
    """No usable connection: DNS, refused or reset connections, TLS."""


class APITimeoutError(APIConnectionError):
    """A deadline expired (`connect_timeout`, `first_event_timeout`, `idle_timeout`,
    `total_timeout`, `read_timeout`); the message names which."""


class MalformedResponseError(ProviderError):
    """The response broke its protocol: cut off before its end (`truncated`), not the
    wire's format (`protocol`), or tool arguments that are not a JSON object."""


class LimitError(ProviderError):
    """A limit of rxllm's was reached (`max_line_bytes`, `max_response_bytes`,
    `max_tool_argument_bytes`, `max_events`); the message names which."""


class PolicyError(ProviderError):
    """rxllm refused to connect: the SSRF guard, or a redirect it does not follow."""


_BY_KIND: dict[str, type[ProviderError]] = {
    # a status below 400: a redirect not followed (no `Location`, a 300, a 304), which
    # the openai SDK raises as an `APIStatusError` too
    "http": APIStatusError,
    "rejected": APIStatusError,
    "transport": APIConnectionError,
    "stalled": APITimeoutError,
    "truncated": MalformedResponseError,
    "protocol": MalformedResponseError,
    "malformed_tool_arguments": MalformedResponseError,
    "limit": LimitError,
    "policy": PolicyError,
    "stream_error": StreamError,
}
_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PermissionDeniedError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: BadRequestError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def error_for(info: ErrorInfo, record: StreamRecord | None = None) -> ProviderError:
    """The exception for an error: by its HTTP status where it has one (as the openai
    SDK does), else by its kind."""
    from rxllm.degradation import too_long  # degradation reads events, which read us

    status = info.status
    if info.kind in ("http", "rejected", "stream_error") and status is not None and status >= 400:
        cls: type[ProviderError] = _BY_STATUS.get(
            status, InternalServerError if status >= 500 else APIStatusError
        )
        if cls in (BadRequestError, UnprocessableEntityError) and too_long(info):
            cls = ContextLengthError
    else:
        cls = _BY_KIND.get(info.kind, ProviderError)
    return cls(info, record)
