"""The API used the ways users get it wrong: each is a clear error at the call (a
`ConfigError`, `TypeError`, `ValueError` or pydantic `ValidationError` naming what is
wrong), never a hang, a traceback from deep inside, or a silent wrong result; and the
key never shows."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pydantic
import pytest
import reactivex

import rxllm
from rxllm.pipeline.aiter import EventStream

KEY = "sk-test-" + "k" * 40
REQ = rxllm.ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])
# Nothing listens here: these tests fail before a request would be sent.
NOWHERE = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("connect_timeout", "10", "connect_timeout: Value error, should be a number, got str"),
        ("max_attempts", True, "max_attempts: Value error, should be a number, got bool"),
        ("idle_timeout", float("inf"), "idle_timeout: Input should be a finite number"),
        ("total_timeout", float("inf"), "total_timeout: Input should be a finite number"),
    ],
)
def test_an_option_that_is_not_a_finite_number_is_a_config_error(
    option: str, value: Any, says: str
) -> None:
    # "10" and True were read as 10 and 1; an infinite timeout was an OverflowError
    # raised mid-turn
    with pytest.raises(rxllm.ConfigError, match=says):
        rxllm.provider("local", base_url=NOWHERE, **{option: value})


@pytest.mark.parametrize("base_url", [5, b"http://127.0.0.1/v1"])
def test_a_base_url_that_is_not_a_str_is_a_type_error(base_url: Any) -> None:
    with pytest.raises(TypeError, match=f"base_url must be a str, got {type(base_url).__name__}"):
        rxllm.provider("local", base_url=base_url)


@pytest.mark.parametrize("name", [None, 3, rxllm.provider("local")])
def test_a_provider_that_is_not_named_by_a_str_is_a_type_error(name: Any) -> None:
    """`rxllm.provider(...)` and `rxllm.replay(..., provider=...)` take a provider's name:
    anything else was an AttributeError from deep inside (`'NoneType' object has no
    attribute 'lower'`)."""
    with pytest.raises(TypeError, match="a provider is named by a str such as 'openai'"):
        rxllm.provider(name)
    with pytest.raises(TypeError, match="a provider is named by a str such as 'openai'"):
        rxllm.replay(b"data: [DONE]\n\n", provider=name)


def test_a_base_url_without_a_host_is_a_config_error() -> None:
    # was accepted, then every turn ended in "InvalidUrlClientError: http:///chat/completions"
    with pytest.raises(rxllm.ConfigError, match="with a host, got 'http://'"):
        rxllm.provider("custom", api_key=KEY, base_url="http://")


@pytest.mark.parametrize(
    ("base_url", "said"),
    [
        ("http://127.0.0.1:99999/v1", "Port out of range"),
        ("http://[::1/v1", "Invalid IPv6 URL"),
        ("http://127.0.0.1\\@evil.com/v1", "backslash"),
    ],
)
def test_a_base_url_the_transport_cannot_parse_is_a_config_error(base_url: str, said: str) -> None:
    # was accepted, then `complete()` raised aiohttp's ValueError through on_error
    with pytest.raises(rxllm.ConfigError, match=f"base_url is not a URL .*{said}"):
        rxllm.provider("custom", api_key=KEY, base_url=base_url)


def test_credentials_in_the_base_url_beside_a_bearer_key_are_a_config_error() -> None:
    # aiohttp refuses to send URL credentials and an Authorization header together
    with pytest.raises(rxllm.ConfigError, match="user:password@ and the API key"):
        rxllm.provider("custom", api_key=KEY, base_url="http://user:pw@example.com/v1")
    # without a key, the URL's credentials are the endpoint's Basic auth
    assert rxllm.provider("custom", base_url="http://user:pw@example.com/v1")


def test_a_key_written_into_the_base_url_never_shows() -> None:
    p = rxllm.provider("custom", api_key=KEY, base_url=f"https://example.com/v1?key={KEY}")
    assert KEY not in repr(p)
    assert "key=[redacted]" in repr(p)
    with pytest.raises(rxllm.ConfigError) as raised:
        rxllm.provider("custom", api_key=KEY, base_url=f"example.com/v1?key={KEY}")
    assert KEY not in str(raised.value)


@pytest.mark.parametrize("api_key", [12345, KEY.encode()])
def test_an_api_key_that_is_not_a_str_is_a_type_error(api_key: Any) -> None:
    # an int was sent as "Bearer 12345", bytes as "Bearer b'sk-...'"
    with pytest.raises(TypeError, match=f"api_key must be a str, got {type(api_key).__name__}"):
        rxllm.provider("custom", api_key=api_key, base_url=NOWHERE, ssrf_guard=False)


@pytest.mark.parametrize("api_key", [KEY + "\n", " " + KEY, KEY[:20] + "\r" + KEY[20:]])
def test_an_api_key_with_a_newline_is_a_config_error_that_does_not_show_it(api_key: str) -> None:
    # was aiohttp's "Forbidden control character detected in headers" raised mid-turn
    with pytest.raises(rxllm.ConfigError, match="control character") as raised:
        rxllm.provider("custom", api_key=api_key, base_url=NOWHERE, ssrf_guard=False)
    assert KEY[:20] not in str(raised.value)


def test_a_session_that_is_not_an_aiohttp_session_is_a_type_error() -> None:
    # was "AttributeError: 'str' object has no attribute 'post'" raised mid-turn
    with pytest.raises(TypeError, match=r"session must be an aiohttp\.ClientSession, got str"):
        rxllm.provider("local", base_url=NOWHERE, session="s")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", float("inf")),
        ("presence_penalty", float("nan")),
        ("frequency_penalty", float("-inf")),
    ],
)
def test_a_sampling_field_that_is_not_finite_is_refused(field: str, value: float) -> None:
    # was sent as `Infinity` / `NaN`: not JSON
    fields: dict[str, Any] = {field: value}
    with pytest.raises(pydantic.ValidationError, match=f"{field}\n  Input should be a finite"):
        rxllm.ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **fields)


async def test_params_that_are_not_json_are_a_config_error_at_the_call() -> None:
    p = rxllm.provider("local", base_url=NOWHERE)
    request = REQ.model_copy(update={"params": {"top_k": float("nan")}})
    with pytest.raises(rxllm.ConfigError, match="cannot be sent as JSON: Out of range float"):
        p.stream(request)


@pytest.mark.parametrize(
    "params",
    [{"stop_ids": {1, 2}}, {"blob": b"\x00"}, {"when": object()}, {"metadata": {("a",): 1}}],
)
@pytest.mark.parametrize("size", [10, 2_000_000], ids=["small", "encoded-later"])
async def test_params_of_a_type_json_has_not_are_a_config_error_at_the_call(
    params: dict[str, Any], size: int
) -> None:
    """A set, bytes, an object or a tuple key in `params` raised json's own TypeError
    from inside the encoder (a probe of the public API): a `ConfigError` as NaN is, for
    a small body and for a large one checked at the call and encoded later."""
    p = rxllm.provider("local", base_url=NOWHERE)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("x" * size)], params=params)
    with pytest.raises(
        rxllm.ConfigError, match=r"cannot be sent as JSON: .*(set|bytes|object|keys)"
    ):
        p.stream(request)


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:9/v1#frag", "http://127.0.0.1:9/v1#", "https://h.example/v1?k=1#x"],
)
def test_a_base_url_with_a_fragment_is_refused(base_url: str) -> None:
    """`endpoint()` put the wire's path after the '#', and the fragment is never sent:
    every turn went to the base's path (`.../v1`), a 404 (a probe of the public API)."""
    with pytest.raises(rxllm.ConfigError, match="holds a fragment"):
        rxllm.provider("openai", api_key="sk-test", base_url=base_url)


@pytest.mark.parametrize("name", ["my tool!", "get weather", "f" * 129, "tool/name"])
def test_a_tool_name_no_provider_takes_is_refused(name: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="is not one a provider takes"):
        rxllm.Tool(name=name)


@pytest.mark.parametrize("name", ["get_weather", "get-weather", "mcp.server:tool", "f" * 128])
def test_a_tool_name_a_provider_takes_is_kept(name: str) -> None:
    assert rxllm.Tool(name=name).name == name


def test_images_as_one_str_is_a_type_error() -> None:
    # was one image per character of the URL
    with pytest.raises(TypeError, match=r"images=\['https://x/a.png'\]"):
        rxllm.Message.user("hi", images="https://x/a.png")  # type: ignore[arg-type]


@pytest.mark.parametrize("cancel", ["now", True, threading.Event()])
async def test_a_cancel_that_is_not_an_event_or_observable_is_a_type_error(cancel: Any) -> None:
    # a threading.Event's wait() blocked the event loop for good; others were an
    # AttributeError raised from inside the turn
    p = rxllm.provider("local", base_url=NOWHERE)
    says = f"cancel= takes an asyncio.Event or an Observable, got {type(cancel).__name__}"
    with pytest.raises(TypeError, match=says):
        p.stream(REQ, cancel=cancel)
    with pytest.raises(TypeError, match=says):
        await p.complete(REQ, cancel=cancel)
    with pytest.raises(TypeError, match=says):
        rxllm.fallback([p]).astream(REQ, cancel=cancel)


async def second_consumer_is_refused(events: EventStream, first: asyncio.Future[Any]) -> None:
    """With `first` waiting on `events`, a second task's wait is a RuntimeError and the
    first waits on; both are then cancelled and the stream closed."""
    second = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)
    try:
        assert second.done()
        with pytest.raises(RuntimeError, match="already waiting for its next event"):
            second.result()
        assert not first.done()
    finally:
        first.cancel()
        second.cancel()
        await asyncio.gather(first, second, return_exceptions=True)
        await events.aclose()


async def test_two_tasks_waiting_on_one_event_stream_is_a_runtime_error() -> None:
    events = EventStream(reactivex.never())
    first = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)  # the first task now waits for an event
    await second_consumer_is_refused(events, first)


async def test_two_tasks_on_one_driven_stream_is_a_runtime_error(local_server: Any) -> None:
    """`astream()`'s consumer steps its source: a second task must not step it too."""
    p = rxllm.provider("local", api_key=KEY, base_url=local_server.url)
    events = p.astream(rxllm.ChatRequest(model="fault/hang", messages=REQ.messages))
    for _ in range(100):  # read the little output until the first task waits on the source
        first = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.1)
        if not first.done():
            break
    await second_consumer_is_refused(events, first)
    await p.aclose()


def test_fallback_reads_a_generator_of_providers() -> None:
    p = rxllm.provider("local", base_url=NOWHERE)
    # was an IndexError: the generator was spent checking it
    assert rxllm.fallback(q for q in [p]).providers == [p]  # type: ignore[arg-type]


def test_fallback_given_one_provider_not_in_a_list_says_so() -> None:
    p = rxllm.provider("local", base_url=NOWHERE)
    with pytest.raises(TypeError, match=r"a list of providers: rxllm.fallback\(\[p1, p2\]\)"):
        rxllm.fallback(p)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("max_line_bytes", "error", "says"),
    [
        (0, rxllm.ConfigError, "must be greater than 0, got 0"),
        (-1, rxllm.ConfigError, "must be greater than 0, got -1"),
        ("5", TypeError, "must be an int, got str"),
    ],
)
def test_replay_with_a_bad_max_line_bytes_says_so(
    max_line_bytes: Any, error: type[Exception], says: str
) -> None:
    # 0 ended every replay in a limit error; "5" was a TypeError inside the stream
    with pytest.raises(error, match=f"max_line_bytes {says}"):
        rxllm.replay(b"data: [DONE]\n\n", max_line_bytes=max_line_bytes)


def test_a_for_loop_over_a_stream_is_a_type_error_not_an_endless_loop() -> None:
    """RxPY's Observable has `__getitem__` (slicing), so `for event in observable` asked
    for items 0, 1, 2... for ever: every rxllm Observable refuses to be iterated."""
    p = rxllm.provider("local", base_url=NOWHERE)
    for observable in (
        p.stream(REQ),
        rxllm.fallback([p]).stream(REQ),
        rxllm.replay(b"data: [DONE]\n\n"),
    ):
        with pytest.raises(TypeError, match="an Observable is not iterable"):
            iter(observable)  # what `for` calls first (before, it made an endless iterator)


def test_text_that_is_not_unicode_is_a_config_error_at_the_call() -> None:
    # bytes that were not UTF-8, read with surrogateescape: a UnicodeEncodeError from
    # inside stream() before
    p = rxllm.provider("local", base_url=NOWHERE)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi \udcff")])
    with pytest.raises(rxllm.ConfigError, match="the request holds text that is not Unicode"):
        p.stream(request)


@pytest.mark.parametrize(
    ("name", "base_url", "base"),
    [
        (  # as Azure's docs print the endpoint
            "azure-openai",
            "https://res.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-10-21",
            "https://res.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21",
        ),
        (
            "snowflake",
            "https://acct.snowflakecomputing.com/api/v2/cortex/v1/chat/completions/",
            "https://acct.snowflakecomputing.com/api/v2/cortex/v1",
        ),
        ("openai-responses", "https://api.openai.com/v1/responses", "https://api.openai.com/v1"),
    ],
)
def test_a_base_url_that_is_already_the_endpoint_is_refused_with_its_base(
    name: str, base_url: str, base: str
) -> None:
    """The wire's path was added again (".../chat/completions/chat/completions"): every
    turn a plain 404 (a review of the presets). The error names the base to give."""
    with pytest.raises(rxllm.ConfigError, match="already ends in") as caught:
        rxllm.provider(name, api_key="sk-test-0123456789abcdef", base_url=base_url)
    assert repr(base) in str(caught.value)
    rxllm.provider(name, api_key="sk-test-0123456789abcdef", base_url=base)
