"""End to end over real HTTP: the embedded local provider on loopback, every outcome."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

import rxllm
from rxllm.events import Event
from rxllm.local import LocalServer
from rxllm.operators import speaker_guard
from rxllm.pipeline.record import RecordBuilder

WEATHER = rxllm.Tool(name="get_weather", parameters={"type": "object", "properties": {}})


def ask(model: str = "rxllm-local", text: str = "hello", tools: bool = False) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=model, messages=[rxllm.Message.user(text)], tools=[WEATHER] if tools else []
    )


async def until_requested(server: LocalServer) -> None:
    """Wait until the server holds the request, so a hang-up cannot precede it."""
    async with asyncio.timeout(5):
        while not server.requests:
            await asyncio.sleep(0.005)


def local(server: LocalServer, **options: Any) -> rxllm.Provider:
    return rxllm.provider("local", base_url=server.url, **options)


async def test_text_turn(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask())
    assert rec.text.startswith("Hello from rxllm's local provider!")
    assert rec.reasoning.startswith("The user wants a short greeting")
    assert rec.terminal.type == "done" and rec.terminal.stop_reason == "stop"
    assert rec.provider == "local" and rec.requested_model == rec.model == "rxllm-local"
    assert rec.usage is not None and rec.usage.input_tokens == 24
    assert rec.usage.reasoning_tokens > 0 and rec.usage.output_tokens > rec.usage.reasoning_tokens
    assert rec.usage.total_tokens == rec.usage.input_tokens + rec.usage.output_tokens
    assert rec.attempts[0].committed and rec.time_to_first_event is not None
    body = local_server.requests[-1]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_every_event_names_the_provider_and_one_terminal_ends(
    local_server: LocalServer,
) -> None:
    events = [ev async for ev in local(local_server).astream(ask(tools=True, text="weather?"))]
    assert {ev.provider for ev in events} == {"local"}
    assert [ev.type for ev in events].count("done") == 1 and events[-1].type == "done"


async def test_fragmented_tool_arguments(local_server: LocalServer) -> None:
    events = [
        ev async for ev in local(local_server).astream(ask(text="weather in Paris?", tools=True))
    ]
    types = [ev.type for ev in events]
    assert "tool_start" in types and types.index("tool_start") < types.index("tool_request")
    request = next(ev for ev in events if isinstance(ev, rxllm.ToolRequest))
    assert request.name == "get_weather" and request.call_id == "call_local_weather_1"
    assert request.arguments == {"city": "Paris", "unit": "celsius", "days": 3}
    assert events[-1].type == "done" and events[-1].stop_reason == "tool_use"


async def test_parallel_tool_calls(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/parallel_tools", tools=True))
    assert [(c.index, c.name, c.arguments) for c in rec.tool_calls] == [
        (0, "get_weather", {"city": "Paris"}),
        (1, "get_time", {"timezone": "Europe/Paris"}),
    ]


@pytest.mark.parametrize("fault", ["malformed_tool", "length_cut_tool"])
async def test_malformed_tool_arguments(local_server: LocalServer, fault: str) -> None:
    rec = await local(local_server).complete(ask(f"fault/{fault}", tools=True))
    assert rec.tool_calls == []
    assert rec.terminal.type == "error"
    error = rec.terminal.error
    assert error.kind == "malformed_tool_arguments" and error.provider == "local"
    assert "get_weather" in error.message and "call_" in error.message
    # the parser's words, then where: "Unterminated string starting at: char 9 of 17"
    assert re.search(r"not valid JSON \([^()]+: char \d+ of \d+\)", error.message)
    assert " at at " not in error.message


async def test_http_error_status(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/http_500"))
    assert rec.terminal.type == "error"
    assert rec.terminal.error.kind == "http" and rec.terminal.error.status == 500
    assert rec.terminal.error.retryable and "Internal server error" in rec.terminal.error.message
    assert rec.attempts[0].status == 500 and not rec.attempts[0].committed


async def test_error_event_inside_a_200_stream(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/error_event"))
    assert rec.text.startswith("Hello")  # what arrived before the error is kept
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "stream_error"
    assert "overloaded" in rec.terminal.error.message


async def test_truncated_stream(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/truncated"))
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "truncated"
    assert rec.text.endswith("no API key.")


async def test_late_event_after_settlement_is_ignored(local_server: LocalServer) -> None:
    events = [ev async for ev in local(local_server).astream(ask("fault/late_event"))]
    assert events[-1].type == "done"
    assert "LATE" not in "".join(getattr(ev, "text", "") for ev in events)


async def test_body_that_is_not_sse(local_server: LocalServer) -> None:
    rec = await local(local_server).complete(ask("fault/not_sse"))
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "protocol"
    assert "not an SSE stream" in rec.terminal.error.message


async def test_line_over_the_cap(local_server: LocalServer) -> None:
    rec = await local(local_server, max_line_bytes=100_000).complete(ask("fault/long_line"))
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "limit"


async def test_break_hangs_up_and_the_server_sees_it(local_server: LocalServer) -> None:
    async for _event in local(local_server).astream(ask("fault/hang")):
        break
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    assert local_server.disconnects == 1


async def test_aclose_hangs_up(local_server: LocalServer) -> None:
    stream = local(local_server).astream(ask("fault/hang"))
    first = await stream.__anext__()
    assert first.provider == "local"
    await stream.aclose()
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_cancel_signal_ends_with_cancelled_and_hangs_up(local_server: LocalServer) -> None:
    cancel = asyncio.Event()
    provider = local(local_server)
    task = asyncio.ensure_future(provider.complete(ask("fault/hang"), cancel=cancel))
    await until_requested(local_server)
    cancel.set()
    rec = await asyncio.wait_for(task, timeout=5)
    assert rec.terminal.type == "cancelled" and rec.terminal.provider == "local"
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_cancelling_the_awaiting_task_hangs_up(local_server: LocalServer) -> None:
    task = asyncio.ensure_future(local(local_server).complete(ask("fault/hang")))
    await until_requested(local_server)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_disposing_a_subscription_hangs_up(local_server: LocalServer) -> None:
    seen: list[Event] = []
    subscription = local(local_server).stream(ask("fault/hang")).subscribe(seen.append)
    while not seen:
        await asyncio.sleep(0.01)
    subscription.dispose()
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_stream_is_cold_and_composes_with_user_operators(local_server: LocalServer) -> None:
    stream = local(local_server).stream(ask())
    texts: list[str] = []
    done = asyncio.get_running_loop().create_future()
    stream.pipe(
        ops.filter(lambda ev: isinstance(ev, rxllm.TextDelta)),
        ops.map(lambda ev: ev.text),
        ops.to_list(),
    ).subscribe(texts.extend, done.set_exception, lambda: done.set_result(None))
    await done
    assert "".join(texts).startswith("Hello from rxllm")
    assert len(local_server.requests) == 1  # nothing was sent before subscribing
    await local(local_server).complete(ask())
    assert len(local_server.requests) == 2


async def test_connection_refused_is_a_transport_error() -> None:
    provider = rxllm.provider("local", base_url="http://127.0.0.1:9/v1", connect_timeout=2)
    rec = await provider.complete(ask())
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "transport"
    assert rec.terminal.error.retryable


def test_bad_configuration_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(rxllm.ConfigError, match="unknown provider 'nope'; known providers: "):
        rxllm.provider("nope")
    with pytest.raises(rxllm.ConfigError, match=r"needs an API key.*OPENAI_API_KEY"):
        rxllm.provider("openai")
    with pytest.raises(rxllm.ConfigError, match=r"bad option.*read_timeout"):
        rxllm.provider("openai", api_key="k", read_timeout=-1)
    with pytest.raises(rxllm.ConfigError, match=r"bad option.*no_such_option"):
        rxllm.provider("openai", api_key="k", no_such_option=1)
    with pytest.raises(rxllm.ConfigError, match="needs base_url"):
        rxllm.provider("custom")
    with pytest.raises(rxllm.ConfigError, match="http:// or https://"):
        rxllm.provider("custom", base_url="ftp://x")


def test_a_mistyped_name_names_the_one_meant() -> None:
    """Pydantic's "idle_timout: Extra inputs are not permitted" named neither the
    mistake nor the option meant."""
    with pytest.raises(
        rxllm.ConfigError,
        match=r"unknown option 'idle_timout' \(did you mean 'idle_timeout'\?\)",
    ):
        rxllm.provider("openai", api_key="k", idle_timout=5)
    with pytest.raises(
        rxllm.ConfigError, match=r"unknown option 'apikey' \(did you mean 'api_key'\?\)"
    ):
        rxllm.provider("openai", api_key="k", apikey="k")
    with pytest.raises(
        rxllm.ConfigError, match=r"unknown provider 'opneai' \(did you mean 'openai'\?\)"
    ):
        rxllm.provider("opneai", api_key="k")


def test_the_api_key_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = rxllm.provider("openai", api_key="sk-secret-123")
    assert "sk-secret" not in repr(provider) and "sk-secret" not in str(vars(provider).get("name"))


SECRET = "sk-secret-0123456789abcdefghij"


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        (SECRET, "bad key [redacted]; try: ollama pull llama3"),
        # A placeholder is no secret: redacting it would garble the provider's advice.
        ("ollama", "bad key ollama; try: ollama pull llama3"),
    ],
)
async def test_api_key_is_sent_and_redacted_from_errors(
    local_server: LocalServer, key: str, shown: str
) -> None:
    from aiohttp import web

    async def echo(request: web.Request) -> web.Response:
        key = request.headers["Authorization"].removeprefix("Bearer ")
        message = f"bad key {key}; try: ollama pull llama3"
        return web.json_response({"error": {"message": message}}, status=401)

    local_server.app.router._frozen = False  # test-only route on the running server
    local_server.app.router.add_post("/echo/chat/completions", echo)
    provider = rxllm.provider(
        "custom", api_key=key, base_url=local_server.root + "/echo", allow_private_network=True
    )
    rec = await provider.complete(ask())
    error = rec.terminal.error
    assert error.status == 401 and error.message == f"HTTP 401: {shown}"
    assert SECRET not in rec.model_dump_json()


def test_subscribing_outside_an_event_loop_is_a_clear_error() -> None:
    errors: list[Exception] = []
    provider = rxllm.provider("local", base_url="http://127.0.0.1:9/v1")
    provider.stream(ask()).subscribe(on_error=errors.append)
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError)
    assert "running asyncio event loop" in str(errors[0])


def test_replay_needs_no_loop_or_network() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    events: list[Event] = []
    rxllm.replay(body).subscribe(events.append)
    assert [ev.type for ev in events] == ["text", "done"]
    assert reactivex.from_iterable(events).pipe(ops.count()).run() == 2


def test_replay_of_a_non_json_data_line_is_a_protocol_error() -> None:
    events: list[Event] = []
    rxllm.replay(b"data: {not json\n\n").subscribe(events.append)
    assert len(events) == 1 and events[0].type == "error"
    assert events[0].error.kind == "protocol" and "not JSON" in events[0].error.message


def test_a_request_the_provider_cannot_express_raises_at_the_call() -> None:
    google = rxllm.provider("google", api_key="k", base_url="http://127.0.0.1:9/v1beta")
    orphan = rxllm.ChatRequest(model="m", messages=[rxllm.Message.tool("call_unknown", "42")])
    with pytest.raises(rxllm.ConfigError):
        google.stream(orphan)


async def test_params_that_override_the_wire_raise_at_the_call(local_server: LocalServer) -> None:
    provider = local(local_server)
    request = ask().model_copy(update={"params": {"stream": False}})
    with pytest.raises(rxllm.ConfigError, match="params may not set 'stream': rxllm streams"):
        provider.stream(request)
    with pytest.raises(rxllm.ConfigError, match="params may not set 'stream'"):
        await provider.complete(request)
    assert local_server.requests == []  # refused before anything was sent


def chat_body(*texts: str) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"content": t}}]} for t in texts]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


async def test_text_guards_are_opt_in_per_provider(serve_body: Any) -> None:
    url = await serve_body(
        chat_body("Streams arrive in pieces.", " in pieces. Then", "\nUser: more?")
    )
    plain = await rxllm.provider("custom", base_url=url, allow_private_network=True).complete(ask())
    assert plain.text == "Streams arrive in pieces. in pieces. Then\nUser: more?"
    guarded = rxllm.provider(
        "custom", base_url=url, allow_private_network=True, dedupe_overlap=True, speaker_guard=True
    )
    rec = await guarded.complete(ask())
    assert rec.text == "Streams arrive in pieces. Then"
    assert rec.terminal.type == "done"
    named = rxllm.provider(
        "custom", base_url=url, allow_private_network=True, speaker_guard=["Bot"]
    )
    assert (await named.complete(ask())).text == plain.text  # "User" is not a name it guards
    again = await guarded.complete(ask())  # state is per stream: a second turn is cut the same
    assert again.text == rec.text


def test_wrong_argument_types_are_clear_errors() -> None:
    provider = rxllm.provider("local", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError, match="takes a ChatRequest, got str"):
        provider.stream("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"replay data must be bytes.*got int"):
        rxllm.replay(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="replay chunks must be bytes, got str"):
        rxllm.replay(["data: x\n\n"])  # type: ignore[list-item]


# -- a consumer's exception is never the provider's -----------------------------------


class ConsumerBug(KeyError):
    """What a consumer's own code raises (a KeyError: the type a normalizer's guard catches)."""


def raise_on(kind: str) -> Any:
    def on_next(event: Event) -> None:
        if event.type == kind:
            raise ConsumerBug(kind)

    return on_next


async def outcome(stream: reactivex.Observable[Event], on_next: Any) -> Exception | None:
    """Subscribe with `on_next`; what reaches `on_error`, or None at completion."""
    ended: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
    stream.subscribe(on_next, ended.set_result, lambda: ended.set_result(None))
    return await asyncio.wait_for(ended, timeout=5)


async def test_a_consumer_exception_on_text_reaches_on_error_and_hangs_up() -> None:
    seen: list[str] = []

    def on_next(event: Event) -> None:
        seen.append(event.type)
        raise_on("text")(event)

    async with LocalServer(pace=0.02) as server:  # paced: still sending when it raises
        error = await outcome(local(server).stream(ask()), on_next)
        assert isinstance(error, ConsumerBug)
        assert "error" not in seen and seen[-1] == "text"
        await asyncio.wait_for(server.disconnected.wait(), timeout=5)
        assert server.disconnects == 1


async def test_a_consumer_exception_on_done_reaches_on_error(local_server: LocalServer) -> None:
    error = await outcome(local(local_server).stream(ask()), raise_on("done"))
    assert isinstance(error, ConsumerBug)


async def test_a_consumer_exception_on_cancelled_reaches_on_error(
    local_server: LocalServer,
) -> None:
    cancel = asyncio.Event()
    stream = local(local_server).stream(ask("fault/hang"), cancel=cancel)
    task = asyncio.ensure_future(outcome(stream, raise_on("cancelled")))
    await until_requested(local_server)
    cancel.set()
    assert isinstance(await task, ConsumerBug)
    await asyncio.wait_for(local_server.disconnected.wait(), timeout=5)


async def test_a_bug_in_the_record_folding_raises_from_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`complete` folds with rxllm's own code: what raises there is a bug, raised to the
    caller (never an `error` record), and the response is closed."""
    add = RecordBuilder.add

    def faulty(self: RecordBuilder, event: Event) -> None:
        add(self, event)
        raise_on("text")(event)

    monkeypatch.setattr(RecordBuilder, "add", faulty)
    async with LocalServer(pace=0.02) as server:
        with pytest.raises(ConsumerBug):
            await asyncio.wait_for(local(server).complete(ask()), timeout=5)
        await asyncio.wait_for(server.disconnected.wait(), timeout=5)


async def test_a_bug_folding_the_terminal_raises_from_complete(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    add = RecordBuilder.add

    def faulty(self: RecordBuilder, event: Event) -> None:
        add(self, event)
        raise_on("done")(event)

    monkeypatch.setattr(RecordBuilder, "add", faulty)
    with pytest.raises(ConsumerBug):  # it used to be swallowed, and complete() never returned
        await asyncio.wait_for(local(local_server).complete(ask()), timeout=5)


async def test_an_exception_in_the_async_for_body_propagates_and_hangs_up() -> None:
    async with LocalServer(pace=0.02) as server:
        with pytest.raises(ConsumerBug):
            async for event in local(server).astream(ask()):
                raise_on("text")(event)
        await asyncio.wait_for(server.disconnected.wait(), timeout=5)
        assert server.disconnects == 1


async def test_tool_arguments_over_the_limit_are_a_limit_error(local_server: LocalServer) -> None:
    p = local(local_server, max_tool_argument_bytes=10)
    rec = await p.complete(ask("fault/weather", text="weather?", tools=True))
    assert rec.tool_calls == [] and rec.terminal.type == "error"
    assert rec.terminal.error.kind == "limit"
    assert "max_tool_argument_bytes (10)" in rec.terminal.error.message
    assert len(rec.attempts) == 1  # the call had started: committed, never retried


@pytest.mark.parametrize(
    ("option", "named"),
    [({"max_events": 5}, "max_events (5)"), ({"max_response_bytes": 500}, "max_response_bytes")],
)
async def test_a_runaway_turn_hits_its_limit(
    local_server: LocalServer, option: dict[str, int], named: str
) -> None:
    rec = await local(local_server, **option).complete(ask())
    assert rec.terminal.type == "error" and rec.terminal.error.kind == "limit"
    assert named in rec.terminal.error.message
    assert len(rec.attempts) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google", "openai-responses"])
def test_an_event_with_empty_data_is_a_keepalive_and_other_text_an_error(provider: str) -> None:
    """Made by hand: `data:` alone carries nothing to lose; words that are not the
    wire's JSON could be part of the answer, so they end the stream."""
    empty: list[Any] = []
    rxllm.replay(b"data: \n\n", provider=provider).subscribe(empty.append)
    assert empty[-1].type == "error" and empty[-1].error.kind == "truncated"
    words: list[Any] = []
    rxllm.replay(b"data: keep-alive\n\n", provider=provider).subscribe(words.append)
    assert words[-1].type == "error" and words[-1].error.kind == "protocol"


def test_the_record_keeps_refusal_citations_and_server_tools_apart() -> None:
    """Made by hand: each new event kind folds into its own field of the record."""
    from rxllm.pipeline.record import RecordBuilder

    builder = RecordBuilder("p", "m")
    for event in (
        rxllm.TextDelta(provider="p", text="Sure. "),
        rxllm.Refusal(provider="p", text="I can't share that."),
        rxllm.ServerToolCall(provider="p", call_id="s1", name="web_search", arguments={"q": "x"}),
        rxllm.ServerToolResult(provider="p", call_id="s1", name="web_search", content=[{"u": 1}]),
        rxllm.Citation(provider="p", url="https://example.org", title="Example"),
        rxllm.Done(provider="p", stop_reason="stop"),
    ):
        builder.add(event)
    record = builder.build()
    assert record.text == "Sure. " and record.refusal == "I can't share that."
    assert [c.url for c in record.citations] == ["https://example.org"]
    assert [t.type for t in record.server_tools] == ["server_tool_call", "server_tool_result"]
    assert record.attempts[0].committed


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("ssrf_guard", "no", "should be True or False, got str 'no'"),
        ("speaker_guard", "true", "or a list of names, got str 'true'"),
        ("speaker_guard", [], "name at least one speaker"),
        ("dedupe_overlap", 0, "should be True or False, got int 0"),
        ("allow_private_network", "yes", "or networks, got str 'yes'"),
    ],
)
def test_a_flag_is_true_or_false_never_a_word(option: str, value: Any, said: str) -> None:
    """pydantic read ssrf_guard="no" as False, turning the guard off, and an empty
    speaker list turned the speaker guard off without a word."""
    with pytest.raises(rxllm.ConfigError, match=re.escape(said)):
        rxllm.provider("custom", base_url="http://example.com/v1", **{option: value})


@pytest.mark.parametrize("names", [[""], ["Bob", "Al\nice"], ["a`b"], ["x" * 40]], ids=repr)
def test_a_speaker_name_the_guard_refuses_is_a_config_error(names: list[str]) -> None:
    """The guard is built with the provider (`text_guards`): a name it refuses was a bare
    ValueError out of `rxllm.provider`, where every other bad option is a ConfigError
    naming it. Now the option's check says the guard's own words."""
    with pytest.raises(ValueError) as refused:
        speaker_guard(names)
    with pytest.raises(rxllm.ConfigError, match=re.escape(str(refused.value))) as caught:
        rxllm.provider("custom", base_url="http://example.com/v1", speaker_guard=names)
    assert "speaker_guard" in str(caught.value)
