"""The twenty-third round, first part: four readings session 36 left open.

- A tool choice that lists tools (OpenAI's `allowed_tools`, flat in the Responses API,
  inside `allowed_tools` in chat) kept the entry of a tool `Verdict.prune` took from
  `tools`: the retry listed a tool it no longer sent. The entry goes with the tool now, and
  the choice goes where it would list none.
- "The conversation is full" read as a store of the server's said full (backoff): the
  conversation is the prompt, which no wait frees. It is a size now, as "The context window
  is full" and "maximum context length" were: surfaced, a `ContextLengthError` at 400.
- "Only 'function' tools are supported." alone walked the static list: a sentence of the
  tools that names the only types accepted refuses the others the body has, as "Unsupported
  tool type: code_interpreter" did; the tools of those types go, the function tools stay.
- "Vector store is full", "Your file storage is full" backed off: the caller's own storage
  frees only as the caller deletes what it keeps, so it surfaces; a cache or a queue of the
  server's said full still backs off.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import RetryPlan
from rxllm.errors import ContextLengthError, error_for
from rxllm.events import ErrorInfo, Retry
from tests.rejection_rounds import both_ways, openai_error
from tests.test_probe_rejections_7 import DEGRADES, TOOLS, body, frame, response

WEB_SEARCH = {"type": "web_search_preview"}
CODE = {"type": "code_interpreter", "container": {"type": "auto"}}
HOSTED = "Hosted tool 'web_search_preview' is not supported with gpt-4.1."


# -- a choice that lists tools loses the entries of the tools that go ---------------------


@pytest.mark.parametrize(
    ("choice", "entry_path"),
    [
        # the Responses API's shape
        (
            {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "web_search_preview"}, {"type": "function", "name": "f"}],
            },
            ("tool_choice", "tools", 0),
        ),
        # chat's shape
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [
                        {"type": "web_search_preview"},
                        {"type": "function", "function": {"name": "f"}},
                    ],
                },
            },
            ("tool_choice", "allowed_tools", "tools", 0),
        ),
    ],
)
def test_an_allowed_tools_choice_loses_the_pruned_tools_entry(
    choice: dict[str, Any], entry_path: tuple[Any, ...]
) -> None:
    sent = body(tools=[WEB_SEARCH, *TOOLS], tool_choice=choice)
    read = response(400, openai_error(HOSTED, param="tools"), sent)
    assert (read.action, read.drop, read.prune) == ("drop", (), (("tools", 0), entry_path))


def test_an_allowed_tools_choice_with_nothing_left_goes() -> None:
    choice = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "web_search_preview"}],
    }
    sent = body(tools=[WEB_SEARCH, *TOOLS], tool_choice=choice)
    read = response(400, openai_error(HOSTED, param="tools"), sent)
    assert (read.action, read.drop, read.prune) == ("drop", ("tool_choice",), (("tools", 0),))


def test_an_allowed_tools_choice_of_kept_tools_stays_whole() -> None:
    choice = {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]}
    sent = body(tools=[WEB_SEARCH, *TOOLS], tool_choice=choice)
    read = response(400, openai_error(HOSTED, param="tools"), sent)
    assert (read.action, read.drop, read.prune) == ("drop", (), (("tools", 0),))


def test_the_retry_lists_only_the_tools_it_sends() -> None:
    function = {"type": "function", "function": {"name": "f"}}
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "auto", "tools": [WEB_SEARCH, function]},
    }
    sent = body(tools=[WEB_SEARCH, *TOOLS], tool_choice=choice)
    error = ErrorInfo(kind="rejected", message=HOSTED, status=400, provider="p", param="tools")
    step = RetryPlan(sent, DEGRADES).after(error)
    assert step is not None
    assert step.body == {
        **sent,
        "tools": TOOLS,
        "tool_choice": {
            "type": "allowed_tools",
            "allowed_tools": {"mode": "auto", "tools": [function]},
        },
    }


async def test_an_allowed_tools_choice_in_a_turn(serve: Callable[[Any], Awaitable[str]]) -> None:
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(openai_error(HOSTED, param="tools"), status=400)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    function = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    listed = {"type": "function", "function": {"name": "lookup"}}
    url = await serve(handler)
    request = rxllm.ChatRequest(
        model="gpt-4.1",
        messages=[rxllm.Message.user("news today?")],
        params={
            "tools": [WEB_SEARCH, function],
            "tool_choice": {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "auto", "tools": [WEB_SEARCH, listed]},
            },
        },
    )
    async with rxllm.provider(
        "custom", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    assert len(bodies) == 2
    assert bodies[1]["tools"] == [function]
    assert bodies[1]["tool_choice"]["allowed_tools"]["tools"] == [listed]
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1
    assert events[-1].type == "done"


# -- the conversation said full is its size ------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "The conversation is full.",
        "The conversation is full. Please start a new conversation.",
        "This thread is already full",
        # the other context-overflow wordings, read the same
        "The context window is full",
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 9000 tokens.",
    ],
)
@pytest.mark.parametrize("status", [400, 429])
def test_a_full_conversation_surfaces_as_its_size(message: str, status: int) -> None:
    read = response(status, openai_error(message), body(temperature=0.5))
    assert (read.action, read.drop) == ("surface", ())
    assert frame({"message": message}, body(temperature=0.5)).action == "surface"
    info = ErrorInfo(kind="rejected", message=message, status=400, provider="p")
    assert isinstance(error_for(info), ContextLengthError)


# -- the types accepted, named alone ------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Only 'function' tools are supported.",
        "Only function tools are supported",
        "Invalid request: only `function` type tools are supported by this endpoint.",
    ],
)
def test_the_only_tool_type_accepted_prunes_the_others(message: str) -> None:
    sent = body(tools=[CODE, *TOOLS], tool_choice="auto")
    for read in (response(400, openai_error(message), sent), frame({"message": message}, sent)):
        assert (read.action, read.drop, read.prune) == ("drop", (), (("tools", 0),))


@pytest.mark.parametrize(
    ("message", "tools", "expected"),
    [
        # every tool of a type not accepted: the tools go
        ("Only 'function' tools are supported.", [CODE], ("drop", ("tools", "tool_choice"), ())),
        # nothing of another type sent: not the tools
        ("Only 'function' tools are supported.", TOOLS, ("static", (), ())),
        # "only ... function" that is no sentence of the tools
        ("Only function names of 64 characters are supported.", [CODE, *TOOLS], ("static", (), ())),
    ],
)
def test_the_only_type_accepted_near_the_rule(
    message: str, tools: list[Any], expected: tuple[Any, ...]
) -> None:
    read = response(400, openai_error(message), body(tools=tools, tool_choice="auto"))
    assert (read.action, read.drop, read.prune) == expected


# -- the caller's storage full surfaces; the server's store backs off ----------------------


@pytest.mark.parametrize(
    "message",
    [
        "Vector store is full.",
        "Vector store vs_abc123 is full",
        "Your file storage is full. Delete files to free up space.",
        "Storage quota exceeded for this organization's files",
        "File storage limit reached",
    ],
)
@pytest.mark.parametrize("status", [400, 429, 507])
def test_the_callers_own_storage_full_surfaces(message: str, status: int) -> None:
    read = response(status, openai_error(message), body(temperature=0.5))
    assert (read.action, read.drop) == ("surface", ())


@pytest.mark.parametrize(
    "message",
    [
        "prompt_cache is full, try again",
        "The KV cache is full. Please retry.",
        "KV cache storage is full",
    ],
)
def test_a_store_of_the_servers_still_backs_off(message: str) -> None:
    assert both_ways(message, body(prompt_cache_key="k", temperature=0.2)) == [("backoff", ())] * 2
