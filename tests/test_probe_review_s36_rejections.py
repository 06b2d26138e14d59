"""Review of session 36's rejection readings (af92334, 4702ec0, 30a4e35, 6f28c2e): what
`Verdict.prune` leaves behind must still be a request the endpoint can take.

A tool of a refused type goes alone where the body has tools of other types (af92334), and
`tool_choice` goes with it where it forces that tool. A choice that forces a tool by its
name in Anthropic's shape, `{"type": "tool", "name": "web_fetch"}`
(docs.anthropic.com/en/docs/build-with-claude/tool-use, "Forcing tool use"; the shape relays
map OpenAI's named choice to, BerriAI/litellm#3752), was read as forcing none: its type is no
tool's, and only a function's name was compared. So Anthropic's own refusal of its web fetch
tool without the beta (tests/rejections_extra/anthropic__400_tools_1_input_tag_web_fetch_*),
sent beside a web search tool with the fetch forced, got a body forcing a tool it no longer
had. Before af92334 every tool went, and the choice with them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

import rxllm
from rxllm.events import Retry
from tests.rejection_rounds import openai_error
from tests.test_probe_rejections_7 import TOOLS, body
from tests.test_probe_rejections_52 import plan_after, readings

# Anthropic's refusal of the web fetch tool, its words as anthropic-sdk-go#235 gives them
REFUSED = (
    "tools.1: Input tag 'web_fetch_20250910' found using 'type' does not match any of the "
    "expected tags: 'bash_20250124', 'code_execution_20250522', 'custom', "
    "'text_editor_20250124', 'text_editor_20250429', 'text_editor_20250728', "
    "'web_search_20250305'"
)
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
WEB_FETCH = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}


def test_a_choice_that_names_the_tool_that_goes_goes_with_it() -> None:
    sent = body(tools=[WEB_SEARCH, WEB_FETCH], tool_choice={"type": "tool", "name": "web_fetch"})
    assert readings(REFUSED, sent) == [("drop", ("tool_choice",), (("tools", 1),))] * 2
    step = plan_after(REFUSED, sent)
    assert step is not None
    assert step.body == {
        key: value for key, value in {**sent, "tools": [WEB_SEARCH]}.items() if key != "tool_choice"
    }
    assert step.dropped == ["tools[1]", "tool_choice"]


def test_a_choice_that_names_a_tool_that_stays_stays() -> None:
    # guards: the tool forced by name stays, and so does its choice; "any" forces none
    for choice in ({"type": "tool", "name": "web_search"}, {"type": "any"}):
        sent = body(tools=[WEB_SEARCH, WEB_FETCH], tool_choice=choice)
        assert readings(REFUSED, sent) == [("drop", (), (("tools", 1),))] * 2
    # a function chosen by its name, in chat's shape, as af92334 read it
    chosen = {"type": "function", "function": {"name": "f"}}
    sent = body(tools=[WEB_FETCH, *TOOLS], tool_choice=chosen)
    assert (
        readings(REFUSED.replace("tools.1", "tools.0"), sent) == [("drop", (), (("tools", 0),))] * 2
    )


async def test_a_turn_with_the_forced_tool_refused_recovers_in_one_retry(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    """A loopback server that refuses the web fetch tool, as Anthropic did, and a choice that
    names a tool the request does not define, as a validator does."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        from tests.test_rejections import OK_STREAMS

        sent = await request.json()
        bodies.append(sent)
        names = {tool.get("name") for tool in sent.get("tools", ())}
        if any(tool.get("type") == WEB_FETCH["type"] for tool in sent.get("tools", ())):
            return web.json_response(openai_error(REFUSED), status=400)
        choice = sent.get("tool_choice")
        if isinstance(choice, dict) and choice.get("name") not in names:
            message = f"tool_choice.name: Tool '{choice.get('name')}' not found in tools"
            return web.json_response(openai_error(message), status=400)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    url = await serve(handler)
    params = {
        "tools": [WEB_SEARCH, WEB_FETCH],
        "tool_choice": {"type": "tool", "name": "web_fetch"},
        "max_tokens": 1024,
    }
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params=params)
    async with rxllm.provider(
        "vllm", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    assert events[-1].type == "done"
    assert len(bodies) == 2
    assert bodies[1]["tools"] == [WEB_SEARCH] and "tool_choice" not in bodies[1]
    retries = [event for event in events if isinstance(event, Retry)]
    assert [retry.dropped for retry in retries] == [["tools[1]", "tool_choice"]]
