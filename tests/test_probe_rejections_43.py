"""The seventeenth round of unseen rejections (tests/rejections_extra, 3 cases, and the
bodies and headers below): rejections whose body is no JSON error object (proxies' and load
balancers' pages, plain text, XML, an empty body, a JSON string or list of strings), and
those whose verdict is in the headers (the wait of a spent rate limit). Each is read as
`sources.http` reads a rejection (`test_probe_rejections_7.response`: the body parsed, the
headers' wait, request id and `x-should-retry` beside it); the replay of tests/rejections_extra
(test_probe_rejections_2) sends the cases over a loopback server with their headers and
checks that the retry waits what they say.

One reading was missing: the wait of a rate limit spent in headers of the IETF draft's or a
gateway's own family, where no `Retry-After` is sent.

- WSO2's API Platform gateway (its advanced-ratelimit policy, for LLM routes among others)
  answers its 429 with `RateLimit-Limit`, `RateLimit-Remaining: 0` and `RateLimit-Reset`
  (seconds, draft-polli-ratelimit-headers up to -06, as Kong's rate-limiting plugin writes
  them too) and sends `Retry-After` only where configured to
  (wso2_gateway__429_rate_limit_exceeded_ietf_ratelimit_reset_only: before, backoff with no
  wait, so the computed backoff of a second or two, whatever the window). Mistral's
  size-based limit says the same in `ratelimitbysize-remaining` / `ratelimitbysize-reset`
  (mistral__429_requests_rate_limit_exceeded_ratelimitbysize_reset: before, no wait).
  Only `x-ratelimit-*` and Anthropic's headers were read. Now any `<family>-reset` beside
  its `<family>-remaining` at 0 (`ratelimit`, `x-ratelimit`, `ratelimitbysize`, with the
  limit's suffix) is the wait, as `x-ratelimit-reset` was; and the draft's later single
  field, `RateLimit: limit=10, remaining=0, reset=20` (-07) or one item per policy,
  `"default";r=0;t=20` (-08 on), gives the reset of each spent policy. As before,
  `Retry-After` (Kong's is the reset plus a jitter) and the body's words come first, a
  limit not spent is no wait, and the longest of several spent limits is the one waited.

And one reading was too wide: OpenRouter's policy reads its 502 as "no upstream takes this
body" and walks the static list, but OpenRouter writes every error as its JSON
(`{"error": {"code": 502, "message": ...}}`, openrouter.ai/docs/api-reference/errors). A
proxy's page, a text or nothing at 502 (Cloudflare's in front of it, as in front of OpenAI
in the round's third case) is no router's refusal: it degraded the body, dropping the
caller's keys while the edge had only failed to reach its origin. A 502 whose body is no
JSON is now a wait under that policy too; a JSON 502 degrades as before.

And a proxy's wait in words was not read: oxy's rate limiter (Traefik 1.x's) answers its
429 "max rate reached: retry-in 30s" (vulcand/oxy#139), and only "retry in" with a space was
a wait. "retry-in" and "retry-after" before a duration now are; a header's name in words
with no duration beside it is still no wait.

The round's third case was read right before:
cloudflare__502_bad_gateway_nginx_style_page_openai (a gateway's page: the same body later).
So were the other pages, texts and shapes below, kept as guards: a proxy's gateway error
or overload is a wait whatever its format, a 413 is the size, an auth or block page the
account, an empty 400 the static list. Their texts follow the servers' default pages
(nginx's, Cloudflare's `error code: 52x`, Envoy's local replies, Google Frontend's, AWS's
XML); none of these exact exchanges was recorded.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from rxllm.error_body import rate_limit_reset_of
from tests.rejection_rounds import assert_reads_as_its_file_says
from tests.test_probe_rejections_7 import OPENROUTER, TOOLS, body, response
from tests.test_probe_rejections_19 import action_counts

# backoff 3
ROUND_SEVENTEEN = (
    "cloudflare__502_bad_gateway_nginx_style_page_openai",
    "mistral__429_requests_rate_limit_exceeded_ratelimitbysize_reset",
    "wso2_gateway__429_rate_limit_exceeded_ietf_ratelimit_reset_only",
)

PLAIN = body(temperature=0.2)
WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
WITH_IMAGES = body(True, temperature=0.2)


def test_the_cases_are_round_seventeens() -> None:
    assert len(set(ROUND_SEVENTEEN)) == 3
    assert action_counts(ROUND_SEVENTEEN) == {"backoff": 3}


@pytest.mark.parametrize("case_name", ROUND_SEVENTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- a spent rate limit's reset, in the draft's headers or a gateway's own: the wait ------


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        # draft-polli-ratelimit-headers up to -06 (Kong, WSO2, Microsoft's Dev Proxy)
        ({"RateLimit-Limit": "10", "RateLimit-Remaining": "0", "RateLimit-Reset": "20"}, 20.0),
        ({"ratelimit-remaining": "0", "ratelimit-reset": "2.5"}, 2.5),
        # a gateway's own family of them (Mistral's limit by size)
        ({"ratelimitbysize-remaining": "0", "ratelimitbysize-reset": "27"}, 27.0),
        ({"x-ratelimitbysize-remaining-minute": "0", "x-ratelimitbysize-reset-minute": "40"}, 40.0),
        # draft -07: one field
        ({"RateLimit": "limit=10, remaining=0, reset=20"}, 20.0),
        # draft -08 on: one item per policy; the spent one's `t`
        ({"RateLimit": '"default";r=0;t=20', "RateLimit-Policy": '"default";q=10;w=60'}, 20.0),
        ({"RateLimit": '"burst";r=4;t=1, "daily";r=0;t=30'}, 30.0),
        # several spent: the last to refill
        ({"RateLimit": '"a";r=0;t=5, "b";r=0;t=12'}, 12.0),
        ({"ratelimit-remaining": "0", "ratelimit-reset": "3", "RateLimit": '"d";r=0;t=9'}, 9.0),
    ],
)
def test_a_spent_limit_in_the_drafts_headers_is_the_wait(
    headers: dict[str, str], seconds: float
) -> None:
    assert rate_limit_reset_of(headers) == seconds
    read = response(429, "", PLAIN, headers=headers)
    assert (read.action, read.delay) == ("backoff", seconds)


@pytest.mark.parametrize(
    "headers",
    [
        # a limit not spent says when a window turns, not that anyone must wait
        {"RateLimit-Limit": "10", "RateLimit-Remaining": "4", "RateLimit-Reset": "20"},
        {"ratelimitbysize-remaining": "499900", "ratelimitbysize-reset": "28"},
        {"RateLimit": "limit=10, remaining=3, reset=20"},
        {"RateLimit": '"default";r=5;t=20'},
        # a reset with no remaining beside it, or a policy alone
        {"RateLimit-Reset": "20"},
        {"RateLimit-Policy": '"default";q=10;w=60'},
        {"RateLimit": '"default";t=20'},
        # a remaining of another family than the reset's
        {"ratelimit-remaining": "0", "ratelimitbysize-reset": "20"},
        # not a number of seconds
        {"RateLimit-Remaining": "0", "RateLimit-Reset": "soon"},
        {"RateLimit": '"default";r=0;t=-5'},
        {"RateLimit": "remaining=0, reset=later"},
    ],
)
def test_no_spent_limit_is_no_wait(headers: dict[str, str]) -> None:
    assert rate_limit_reset_of(headers) is None
    read = response(429, "", PLAIN, headers=headers)
    assert (read.action, read.delay) == ("backoff", None)


def test_a_reset_written_as_a_moment_is_the_time_until_it() -> None:
    # GitLab's and DigitalOcean's `RateLimit-Reset` is Unix time, not seconds
    moment = int((datetime.now(UTC) + timedelta(seconds=50)).timestamp())
    wait = rate_limit_reset_of({"RateLimit-Remaining": "0", "RateLimit-Reset": str(moment)})
    assert wait == pytest.approx(50, abs=2)


@pytest.mark.parametrize(
    ("headers", "body_text", "seconds"),
    [
        # Kong: Retry-After is the reset plus its jitter, and the answer to this request
        (
            {"Retry-After": "3", "RateLimit-Remaining": "0", "RateLimit-Reset": "1"},
            '{"message":"API rate limit exceeded"}',
            3.0,
        ),
        ({"retry-after-ms": "1500", "RateLimit": '"d";r=0;t=9'}, "", 1.5),
        # the body's words before the reset of a window
        (
            {"ratelimitbysize-remaining": "0", "ratelimitbysize-reset": "27"},
            '{"message":"Rate limit exceeded. Please try again in 5 seconds."}',
            5.0,
        ),
    ],
)
def test_what_answers_the_request_comes_first(
    headers: dict[str, str], body_text: str, seconds: float
) -> None:
    assert response(429, body_text, PLAIN, headers=headers).delay == seconds


def test_a_spent_limit_at_a_status_that_is_no_rate_limit_changes_nothing() -> None:
    # a 400 naming a key, sent beside spent-limit headers: the key, as before
    payload = {"error": {"message": "Unrecognized request argument supplied: seed"}}
    headers = {"RateLimit-Remaining": "0", "RateLimit-Reset": "20"}
    read = response(400, payload, PLAIN, headers=headers)
    assert (read.action, read.drop) == ("drop", ("seed",))


# -- a 502 that is no router's JSON error: a proxy's, the same body later ----------------


@pytest.mark.parametrize(
    "text",
    [
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 "
        "Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n",
        "<!DOCTYPE html><html><head><title>openrouter.ai | 502: Bad gateway</title></head><body>"
        "Bad gateway Error code 502 The web server reported a bad gateway error. Please try "
        "again in a few minutes.</body></html>",
        "error code: 502",
        "Bad Gateway",
        "",
    ],
)
def test_a_proxys_502_in_front_of_a_router_is_a_wait(text: str) -> None:
    for sent in (PLAIN, WITH_TOOLS, WITH_IMAGES):
        assert response(502, text, sent, OPENROUTER).action == "backoff"


@pytest.mark.parametrize(
    ("payload", "sent", "expected"),
    [
        # the router's own 502: no upstream takes the body, the static list (as before)
        (
            {"error": {"message": "Provider returned error", "code": 502}},
            PLAIN,
            ("static", ()),
        ),
        # in a list, as a gateway may answer
        ([{"error": {"message": "Provider returned error", "code": 502}}], PLAIN, ("static", ())),
        # its JSON naming a key: that key (as before)
        (
            {"error": {"message": "Unrecognized request argument supplied: seed", "code": 502}},
            PLAIN,
            ("drop", ("seed",)),
        ),
    ],
)
def test_a_routers_own_502_still_degrades(
    payload: Any, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    read = response(502, payload, sent, OPENROUTER)
    assert (read.action, read.drop) == expected


def test_a_502_page_elsewhere_is_a_wait_as_before() -> None:
    page = "<html><head><title>502 Bad Gateway</title></head></html>"
    assert response(502, page, PLAIN).action == "backoff"
    # and under OpenRouter a 503 page is the overload it always was
    assert response(503, page.replace("502", "503"), PLAIN, OPENROUTER).action == "backoff"


# -- bodies that are no JSON error object: read by their status and words, as before -----

NGINX = (
    "<html>\r\n<head><title>{0}</title></head>\r\n<body>\r\n<center><h1>{0}</h1></center>\r\n"
    "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
GFE_502 = (
    "<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error 502 (Server "
    "Error)!!1</title>\n  <p><b>502.</b> <ins>That's an error.</ins>\n  <p>The server "
    "encountered a temporary error and could not complete your request.<p>Please try again "
    "in 30 seconds.  <ins>That's all we know.</ins>"
)
CLOUDFLARE_BLOCKED = (
    "<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body>"
    "<h1>Sorry, you have been blocked</h1><h2>You are unable to access api.example.com</h2>"
    "</body></html>"
)
S3_SLOW_DOWN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please '
    "reduce your request rate.</Message></Error>"
)


@pytest.mark.parametrize(
    ("status", "text", "expected"),
    [
        # a proxy's gateway error or overload: the same body later
        (502, NGINX.format("502 Bad Gateway"), ("backoff", None)),
        (503, NGINX.format("503 Service Temporarily Unavailable"), ("backoff", None)),
        (504, NGINX.format("504 Gateway Time-out"), ("backoff", None)),
        (429, NGINX.format("429 Too Many Requests"), ("backoff", None)),
        (502, GFE_502, ("backoff", 30.0)),
        (522, "error code: 522", ("backoff", None)),
        (524, "error code: 524", ("backoff", None)),
        (429, "error code: 1015", ("backoff", None)),
        (503, "no healthy upstream", ("backoff", None)),
        (504, "upstream request timeout", ("backoff", None)),
        (
            503,
            "upstream connect error or disconnect/reset before headers. retried and the "
            "latest reset reason: remote connection failure, transport failure reason: "
            "delayed connect error: 111",
            ("backoff", None),
        ),
        (502, "Bad Gateway", ("backoff", None)),
        (500, "Internal Server Error", ("backoff", None)),
        (500, "model is overloaded, please try again later", ("backoff", None)),
        (429, "rate limit exceeded", ("backoff", None)),
        (503, S3_SLOW_DOWN, ("backoff", None)),
        # a JSON string, or a list of strings
        (429, '"Too many requests"', ("backoff", None)),
        (503, '["Service Unavailable"]', ("backoff", None)),
        # an empty body: the status speaks
        (429, "", ("backoff", None)),
        (529, "", ("backoff", None)),
        (502, "", ("backoff", None)),
        # the size (the body's bytes: with images sent, they go, tests/test_probe_rejections_58)
        (413, NGINX.format("413 Request Entity Too Large"), ("surface", None)),
        (413, "Payload Too Large", ("surface", None)),
        (413, "", ("surface", None)),
        # the account, the endpoint or a block: no body or wait helps
        (401, NGINX.format("401 Authorization Required"), ("surface", None)),
        (403, NGINX.format("403 Forbidden"), ("surface", None)),
        (403, CLOUDFLARE_BLOCKED, ("surface", None)),
        (404, "404 page not found", ("surface", None)),
        (405, "Method Not Allowed", ("surface", None)),
        (400, NGINX.format("400 Request Header Or Cookie Too Large"), ("surface", None)),
    ],
)
def test_pages_and_texts_read_by_their_status(
    status: int, text: str, expected: tuple[str, float | None]
) -> None:
    for sent in (PLAIN, WITH_TOOLS, WITH_IMAGES):
        read = response(status, text, sent)
        images_go = status == 413 and sent is WITH_IMAGES
        assert (read.action, read.delay) == (("images", None) if images_go else expected), sent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a key named in plain text, a JSON string or a list of strings: that key
        ("Unrecognized request argument supplied: seed", ("drop", ("seed",))),
        ('"Unrecognized request argument supplied: seed"', ("drop", ("seed",))),
        ('["Unrecognized request argument supplied: seed"]', ("drop", ("seed",))),
        # a bare 400 page names nothing: the static list
        (NGINX.format("400 Bad Request"), ("static", ())),
        ("", ("static", ())),
    ],
)
def test_a_400_in_other_shapes(text: str, expected: tuple[str, tuple[str, ...]]) -> None:
    read = response(400, text, PLAIN)
    assert (read.action, read.drop) == expected


# -- the new reading takes linear time ---------------------------------------------------

_HOSTILE = {
    "items": '"p";r=0;t=1, ' * 20_000,
    "params": ";" * 60_000 + "r=0;t=1",
    "spaces": "remaining=0," + " " * 60_000 + "reset=1",
    "digits": "t=" + "9" * 60_000,
}


@pytest.mark.parametrize("field", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_reading_takes_linear_time(field: str) -> None:
    headers = {"RateLimit": field, "ratelimit" + "x" * 30_000 + "-reset": "1"}
    waits: list[Any] = []

    def read() -> None:
        waits.append(rate_limit_reset_of(headers))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(waits) == 1


# -- a proxy's wait written `retry-in`: the wait ------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        # oxy's rate limiter (Traefik 1.x's), its 429 in text: "max rate reached: retry-in %v"
        # with a Go duration (vulcand/oxy#139)
        ("max rate reached: retry-in 30s", 30.0),
        ("max rate reached: retry-in 1m0s", 60.0),
        ("max rate reached: retry-in 500ms", 0.5),
        ("Rate limited, retry-after 2 seconds", 2.0),
    ],
)
def test_a_hyphenated_retry_in_is_the_wait(text: str, seconds: float) -> None:
    read = response(429, text, PLAIN)
    assert (read.action, read.delay) == ("backoff", seconds)


@pytest.mark.parametrize(
    "text",
    [
        # a header's name in words, with no duration: no wait
        "Too Many Requests: see the Retry-After header",
        "retry-in progress",
        "Retry-After: 30",
    ],
)
def test_a_retry_header_named_in_words_is_no_wait(text: str) -> None:
    assert response(429, text, PLAIN).delay is None
