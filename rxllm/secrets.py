"""Credentials never shown: what `redact` replaces in every error message, raw body,
log line and record that could quote one (an API key a server echoes back, a key or a
password written into a URL), and what it leaves alone (placeholder keys)."""

from __future__ import annotations

import base64
import re
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import quote

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "RedactedLines",
    "redact",
    "redact_head",
    "redact_said",
]

# Shorter "keys" are placeholders (`ollama`, `EMPTY`, `lm-studio`, `not-needed`,
# LiteLLM's `sk-1234`), words a server's advice may hold; every real provider key is 32
# characters or more, and a test's fake one (`sk-test-secret-key`) is still redacted. A
# longer placeholder (llama.cpp's `sk-no-key-required`) is redacted only where it is
# written whole, which no advice needs.
MIN_SECRET_CHARS = 12
# A credential in a URL's query is anyone's, the user's or one a provider's advice shows
# (`?key=YOUR_API_KEY`): only one as long as a real key is.
_MIN_QUERY_CREDENTIAL_CHARS = 20

REDACTED = "[redacted]"

# Where a token begins besides after a character that is not a word's: after an escape
# that ends in one, `\n` or `\u0022` in a JSON body's raw text, `%20` or `%3D` in an
# encoded URL ("Bearer%20sk-..."), whose last character would otherwise glue it to the key.
_TOKEN_START = r"(?:(?<![\w-])|(?<=\\[nrtbf])|(?<=\\u[0-9A-Fa-f]{4})|(?<=%[0-9A-Fa-f]{2}))"
_TOKEN_END = r"(?![\w-])"

# A credential a URL carries itself, whether or not it is the API key: the password of
# its userinfo (`https://user:password@host`: the position says it is one, so any length)
# and a key in its query (Gemini's `?key=`, `api_key`, `access_token`, an Azure SAS
# `sig`), a real one by the rule above (`?key=YOUR_KEY` in a provider's advice is none).
# (Kept as text, compiled by `re`'s cache when a text has an `@` or an `=`: a provider's
# base URL, which every provider redacts, seldom has either.)
_URL_PASSWORD = r"(?<=//)([^\s/?#@:'\"<>]*):[^\s/?#@'\"<>]+(?=@)"
_QUERY_CREDENTIAL = (
    r"(?i)(?<=[?&;])((?:key|api[_-]?key|x-goog-api-key|access[_-]?token|token|sig)=)"
    rf"[^\s&#'\"<>\\]{{{_MIN_QUERY_CREDENTIAL_CHARS},}}"
)
# That userinfo as the Authorization header aiohttp sends for it, echoed back.
_BASIC = re.compile(r"(?i)(?<![\w-])(Basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![\w+/=-])")


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each real credential replaced, as a whole token. A placeholder key is
    left alone: redacting `ollama` would turn Ollama's "try pulling it first with:
    ollama pull llama3" into nonsense, and it protects nothing. A credential written
    into a URL (`user:password@`, `?key=...`) is replaced too, whatever the key."""
    for secret in secrets:
        if len(secret) >= MIN_SECRET_CHARS:
            for form in _written(secret):
                if form in text:
                    text = re.sub(rf"{_TOKEN_START}{re.escape(form)}{_TOKEN_END}", REDACTED, text)
    if "@" in text:
        text = re.sub(_URL_PASSWORD, rf"\1:{REDACTED}", text)
    text = _BASIC.sub(_basic_credentials, text)
    if "=" in text:
        text = re.sub(_QUERY_CREDENTIAL, rf"\1{REDACTED}", text)
    return text


# How far past a quote's cut a credential that the cut falls in may still run, beyond
# the longest written form of a key: a password written into a URL, any length.
_CREDENTIAL_REACH = 1024


# A failure's fields that quote the server, besides its message and raw body.
_SAID_FIELDS = ("param", "code", "request_id")


def redact_said(fields: MutableMapping[str, Any], secrets: tuple[str, ...]) -> None:
    """Redact, in place, a failure's fields that quote the server (`param`, `code`, the
    request id): one that echoes the key there would show it whole."""
    for name in _SAID_FIELDS:
        value = fields.get(name)
        if isinstance(value, str):
            fields[name] = redact(value, secrets)


def redact_head(text: str, secrets: tuple[str, ...], chars: int) -> str:
    """`text` redacted, then cut to its first `chars` characters, as a log or an error
    quotes it: cut first, a key the cut falls in would show its start (`key=sk-proj-A1b`),
    which `redact` no longer recognizes. Only the part the quote can hold is redacted,
    with room for a credential begun within it, not a body of megabytes: room measured
    after redacting, which shortens a text of echoed keys (the key the window's end cuts
    must stay past the quote's end), so the window widens until it has it."""
    margin = _CREDENTIAL_REACH + 3 * max(map(len, secrets), default=0)
    reach = chars + margin
    while True:
        shown = redact(text[:reach], secrets)
        if reach >= len(text) or len(shown) >= chars + margin:
            return shown[:chars]
        reach *= 2


class RedactedLines:
    """`redact` over bytes that come in pieces (a body as it is read, for a file): each
    piece's whole lines are redacted and given back, the rest held until its line ends
    or `flush`. No credential spans a line break, so one cut between two reads is whole
    when it is redacted. Bytes that are not UTF-8 pass through as they came."""

    __slots__ = ("_held", "_secrets")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._held: list[bytes] = []

    def feed(self, data: bytes) -> bytes:
        end = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        if not end:
            self._held.append(data)
            return b""
        lines = b"".join((*self._held, data[:end])) if self._held else data[:end]
        self._held = [data[end:]] if end < len(data) else []
        return self._redacted(lines)

    def flush(self) -> bytes:
        """What is held, redacted: the end of a body that ended without a line break."""
        rest, self._held = b"".join(self._held), []
        return self._redacted(rest)

    def _redacted(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "surrogateescape")
        shown = redact(text, self._secrets)
        return data if shown == text else shown.encode("utf-8", "surrogateescape")


def _basic_credentials(match: re.Match[str]) -> str:
    """`Basic <user:password in base64>` with the credentials redacted; `Basic plan` or
    any word that does not decode to a `user:password` pair is left as it is."""
    try:
        pair = base64.b64decode(match[2], validate=True)
    except ValueError:
        return match[0]
    return match[1] + REDACTED if b":" in pair else match[0]


# A percent-encoding's hex digits, which .NET writes in lower case.
_LOWER_HEX = r"%[0-9A-F]{2}"


def _written(secret: str) -> tuple[str, ...]:
    """The ways a body or a URL writes `secret`: as it is; percent-encoded (a key with
    `+`, `/` or `=` in a query), in upper-case hex as RFC 3986 advises and in the
    lower-case hex .NET's `HttpUtility.UrlEncode` writes (`%2f`); and with each `/`
    escaped as `\\/`, as PHP's `json_encode` writes it by default."""
    encoded = quote(secret, safe="")
    if encoded == secret:
        return (secret,)
    forms = dict.fromkeys((secret, encoded, re.sub(_LOWER_HEX, _lower, encoded)))
    if "/" in secret:
        forms[secret.replace("/", "\\/")] = None
    return tuple(forms)


def _lower(match: re.Match[str]) -> str:
    return match[0].lower()
