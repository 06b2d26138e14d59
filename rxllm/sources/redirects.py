"""Redirects, followed by hand: each hop decided here, checked, and stripped of credentials.

aiohttp follows redirects itself and, on a cross-origin hop, drops only
`Authorization`: Anthropic's `x-api-key`, Azure's `api-key` and Google's
`x-goog-api-key` would reach whatever host a 307 names, with the conversation. So the
source sends with `allow_redirects=False` and asks `next_hop` what to do:

- 307 and 308 are followed with the same method and body (that is what they mean),
  at most `MAX_REDIRECTS` times; one more is a policy error.
- 301, 302 and 303 are not followed: clients turn them into a GET without a body,
  which cannot be the streamed POST the caller asked for. Silently sending a bodiless
  GET (or, as some clients do, re-POSTing where the server asked for a GET) would hide
  a misconfigured `base_url`; the error names the new location instead.
- A hop to another origin (scheme, host, port) carries no credential: every header
  whose value holds one of the request's secrets (wherever the wire put the key) and
  every header that carries credentials by name. Once dropped they stay dropped,
  even if a later hop comes back.
- A hop from https to http is refused: the body (and any credential) would cross the
  network in clear text.
- A location with credentials in it (`https://user:pass@host/`) is refused: they are
  not the caller's, aiohttp would send them as Basic auth (to the same origin it
  cannot even combine them with the caller's `Authorization`), and a URL is no place
  for a secret anyway.
- Guarded providers check every hop with the SSRF guard too (`rxllm.sources.guard`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from yarl import URL

__all__ = [
    "CREDENTIAL_HEADERS",
    "is_credential_header",
    "FOLLOWED",
    "MAX_REDIRECTS",
    "REDIRECTS",
    "Hop",
    "next_hop",
    "origin",
    "without_credentials",
]

# Three hops cover an http -> https upgrade, a host move and a trailing-slash fix;
# more is a loop or a chain rxllm has no reason to walk (Vercel's validated fetch and
# most SDKs stop far earlier than aiohttp's default of 10).
MAX_REDIRECTS = 3
REDIRECTS = frozenset({301, 302, 303, 307, 308})
FOLLOWED = frozenset({307, 308})
"""Redirects that keep the method and body: the only ones a streamed POST can follow."""

CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-goog-api-key"}
)
"""Headers dropped on a cross-origin hop whatever their value (besides any holding a secret)."""
# A gateway's own credential header goes by its own name (Helicone's `Helicone-Auth`,
# Cloudflare AI Gateway's `cf-aig-authorization`): what such names say.
# (Azure API Management's `Ocp-Apim-Subscription-Key`, Portkey's `x-portkey-virtual-key`
# too; not a session's or a request's id, which a wire may need on the next hop.)
# Text, compiled by `re`'s cache on first use: only headers of the user's own, or a
# redirect, are read by it.
_CREDENTIAL_NAME = (
    r"(?i)auth|api[-_]?key|(?:^|[-_])key(?:$|[-_])|token|secret|password|cookie|signature"
    r"|credential|bearer"
)


def is_credential_header(name: str) -> bool:
    """Whether a header of this name carries a credential, by its name alone."""
    return name.lower() in CREDENTIAL_HEADERS or re.search(_CREDENTIAL_NAME, name) is not None


class Hop(NamedTuple):
    """The next request of a redirect chain."""

    url: URL
    headers: dict[str, str]
    """Never in the repr: on the same origin they carry the key."""
    cross_origin: bool

    def __repr__(self) -> str:
        return f"Hop(url={self.url!r}, cross_origin={self.cross_origin!r})"


def origin(url: URL) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when not written)."""
    return (url.scheme.lower(), (url.host or "").lower(), url.port)


def without_credentials(headers: Mapping[str, str], secrets: tuple[str, ...]) -> dict[str, str]:
    """`headers` without any that carries a credential: by name, or by holding a secret
    as a whole token (`Token <key>`), so that a placeholder key such as `x` does not
    take `Accept: text/event-stream` with it."""
    holds = [_token(secret) for secret in secrets if secret]
    return {
        name: value
        for name, value in headers.items()
        if not is_credential_header(name) and not any(p.search(value) for p in holds)
    }


def _token(secret: str) -> re.Pattern[str]:
    """`secret` standing alone: not inside a longer word (the rule `redact` follows)."""
    return re.compile(rf"(?<![\w-]){re.escape(secret)}(?![\w-])")


def next_hop(
    current: URL,
    status: int,
    location: str,
    headers: Mapping[str, str],
    secrets: tuple[str, ...],
    hops: int,
) -> Hop | str:
    """The request to send after `current` answered `status` with `location`, having
    followed `hops` redirects already; or why it is not followed (a policy error)."""
    try:
        target = current.join(URL(location))
    except ValueError:
        return f"the endpoint redirected ({status}) to an invalid location {location!r}"
    if status not in FOLLOWED:
        return (
            f"the endpoint redirected ({status}) to {target}; a streamed POST follows only "
            "307 and 308, which keep the method and body: set base_url to the new address"
        )
    if hops >= MAX_REDIRECTS:
        return f"more than {MAX_REDIRECTS} redirects (the last to {target})"
    if target.scheme not in ("http", "https") or not target.host:
        return f"the endpoint redirected ({status}) to {target}, which is not an http(s) URL"
    if current.scheme == "https" and target.scheme == "http":
        return f"the endpoint redirected ({status}) from https to http ({target})"
    if target.raw_user is not None or target.raw_password is not None:
        shown = target.with_user(None)
        return f"the endpoint redirected ({status}) to {shown} with credentials in the URL"
    cross = origin(target) != origin(current)
    next_headers = without_credentials(headers, secrets) if cross else dict(headers)
    return Hop(target, next_headers, cross)
