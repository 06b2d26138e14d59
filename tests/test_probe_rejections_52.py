"""The twenty-second round, first part: four readings session 35 left open, each narrower
than it was.

- A refusal of one tool TYPE ("Unsupported tool type: code_interpreter", "tool type
  'web_search_preview' is not supported", "tools[1].type: ...") dropped every tool, the
  function tools beside it too (aa063ed read "tool type" as a word for the tools). Where the
  body has tools of other types, only the tools of the type refused go now (`Verdict.prune`,
  `("tools", i)`), and `tool_choice` stays unless it forces one of them; where the words
  name only the type accepted ("tool types other than function"), the others go; where no
  type of the body is named, or every one, or the body has one type, the tools go as before.
- "the X parameter" or a path to X inside an object (`reasoning.effort`,
  `output_config.effort`, `response_format.json_schema.strict`) dropped the whole object.
  X goes alone now where its object stays valid without it (OpenAI's reasoning keeps its
  `summary`, Anthropic's `output_config` its `format`); the object goes whole where X was
  all it held, where X sits beside a `type` that says what the object is (Anthropic's
  `thinking: {"type": "enabled", "budget_tokens": ...}` requires its budget), where X is a
  name every object has, where the path enters a JSON schema, or points at nothing sent.
- "prompt_cache is full, try again" read as refusing `prompt_cache_key` (aa063ed's stem
  rule read any sentence that spelled the stem): a store of the server's said to be full is
  transient now (backoff), and a stem names keys only in a clause that refuses.
- "Number of images (2) exceeds maximum of 1" and "Request contains 52 images, exceeding
  the maximum of 50" walked the static list: a count of images over a maximum is the
  images action now. (All of them go, as for any image limit: the notice tells the model,
  and the limit's number may count per message, per request or per turn, which the words
  do not always say; keeping the last N is left for a mechanism that knows which.)

Readings are checked as the other rounds check them (`both_ways`: over HTTP at 400 and in a
frame after `200 OK`), the bodies the retries send against a loopback server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import RetryPlan
from rxllm.error_body import parse_error_body
from rxllm.events import ErrorInfo, Retry
from tests.rejection_rounds import both_ways, openai_error
from tests.test_probe_rejections_7 import DEGRADES, TOOLS, body, frame, response

WEB_SEARCH = {"type": "web_search_preview"}
INTERPRETER = {"type": "code_interpreter", "container": {"type": "auto"}}
MIXED = body(tools=[WEB_SEARCH, *TOOLS], tool_choice="auto", temperature=0.2)
REASONING = body(reasoning={"effort": "low", "summary": "auto"}, temperature=0.2)
EFFORT_AND_FORMAT = body(
    output_config={"effort": "high", "format": {"type": "json_schema", "schema": {}}},
    max_tokens=1024,
)
STRICT_FORMAT = body(
    response_format={
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}, "strict": True},
    },
    temperature=0.2,
)


def readings(message: str, sent: dict[str, Any]) -> list[tuple[str, tuple[str, ...], Any]]:
    """The action, the keys dropped whole and the parts pruned, over HTTP at 400 and in a
    frame after `200 OK`."""
    read = [response(400, openai_error(message), sent), frame({"message": message}, sent)]
    return [(verdict.action, verdict.drop, verdict.prune) for verdict in read]


def plan_after(message: str, sent: dict[str, Any], param: str | None = None) -> Any:
    """What `RetryPlan` sends after OpenAI's envelope of `message` at 400 (as `sources.http`
    reads one)."""
    raw = json.dumps(openai_error(message, param))
    parsed = parse_error_body(raw)
    error = ErrorInfo(
        kind="rejected",
        message=parsed.message,
        status=400,
        provider="p",
        raw=raw,
        **parsed.fields({}),
    )
    return RetryPlan(sent, DEGRADES).after(error)


# -- a tool's type refused: the tools of that type ------------------------------------------


@pytest.mark.parametrize(
    ("message", "sent", "pruned"),
    [
        ("Unsupported tool type: web_search_preview", MIXED, (("tools", 0),)),
        ("tool type 'web_search_preview' is not supported", MIXED, (("tools", 0),)),
        (
            "Unsupported tool type: code_interpreter",
            body(tools=[*TOOLS, INTERPRETER], tool_choice="auto"),
            (("tools", 1),),
        ),
        (
            "tools[1].type: value is not supported for this model",
            body(tools=[*TOOLS, WEB_SEARCH], tool_choice="auto"),
            (("tools", 1),),
        ),
        # only the type accepted named: the others go
        ("This endpoint does not support tool types other than function", MIXED, (("tools", 0),)),
        (
            "Unsupported tool type. Only 'function' tools are supported.",
            body(tools=[WEB_SEARCH, *TOOLS, INTERPRETER]),
            (("tools", 0), ("tools", 2)),
        ),
        # the function tools refused, the provider's own kept
        ("tool type 'function' is not supported", MIXED, (("tools", 1),)),
    ],
)
def test_a_tool_type_refused_drops_the_tools_of_that_type(
    message: str, sent: dict[str, Any], pruned: tuple[Any, ...]
) -> None:
    assert readings(message, sent) == [("drop", (), pruned)] * 2


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # the body has one type: all its tools, as before
        ("Unsupported tool type: web_search_preview", body(tools=[WEB_SEARCH], tool_choice="auto")),
        ("Unsupported Responses tool type: 'custom'", body(tools=TOOLS, tool_choice="auto")),
        # a type the body has not: no type of it is named, so all its tools
        ("Unsupported tool type: custom", MIXED),
        # every type the body has named: all of them
        ("tool types 'web_search_preview' and 'function' are not supported", MIXED),
    ],
)
def test_tool_types_near_the_rule_drop_every_tool(message: str, sent: dict[str, Any]) -> None:
    assert readings(message, sent) == [("drop", ("tools", "tool_choice"), ())] * 2


def test_a_tool_choice_that_forces_a_tool_that_goes_goes_with_it() -> None:
    forced = {**MIXED, "tool_choice": {"type": "web_search_preview"}}
    assert (
        readings("Unsupported tool type: web_search_preview", forced)
        == [("drop", ("tool_choice",), (("tools", 0),))] * 2
    )
    # a function chosen by its name stays with its tool
    chosen = {**MIXED, "tool_choice": {"type": "function", "function": {"name": "f"}}}
    assert (
        readings("Unsupported tool type: web_search_preview", chosen)
        == [("drop", (), (("tools", 0),))] * 2
    )
    # and goes where its tool does
    assert (
        readings("tool type 'function' is not supported", chosen)
        == [("drop", ("tool_choice",), (("tools", 1),))] * 2
    )


def test_the_plan_sends_the_other_tools_again() -> None:
    step = plan_after("Unsupported tool type: web_search_preview", MIXED)
    assert step is not None
    assert step.body == {**MIXED, "tools": TOOLS}
    assert step.dropped == ["tools[0]"]


# -- a key inside an object: that key, where the object stays valid without it -------------


@pytest.mark.parametrize(
    ("message", "sent", "pruned"),
    [
        ("Unsupported parameter: 'reasoning.effort'", REASONING, (("reasoning", "effort"),)),
        ("The reasoning.effort parameter is not supported", REASONING, (("reasoning", "effort"),)),
        (
            "output_config.effort: Extra inputs are not permitted",
            EFFORT_AND_FORMAT,
            (("output_config", "effort"),),
        ),
        (
            "This model does not support the effort parameter.",
            EFFORT_AND_FORMAT,
            (("output_config", "effort"),),
        ),
        (
            "response_format.json_schema.strict is not supported",
            STRICT_FORMAT,
            (("response_format", "json_schema", "strict"),),
        ),
        # a pointer written as a JSON pointer or pydantic's location reads the same
        (
            "Additional property #/reasoning/effort is not allowed",
            REASONING,
            (("reasoning", "effort"),),
        ),
    ],
)
def test_a_key_inside_an_object_goes_alone(
    message: str, sent: dict[str, Any], pruned: tuple[Any, ...]
) -> None:
    assert readings(message, sent) == [("drop", (), pruned)] * 2


@pytest.mark.parametrize(
    ("message", "sent", "whole"),
    [
        # the key was all the object held
        (
            "Unsupported parameter: 'reasoning.effort'",
            body(reasoning={"effort": "low"}, temperature=0.2),
            "reasoning",
        ),
        (
            "stream_options.include_usage is not supported",
            body(stream_options={"include_usage": True}, temperature=0.2),
            "stream_options",
        ),
        # beside a `type` that says what the object is: the type's to require
        (
            "thinking.budget_tokens: Input should be greater than or equal to 1024",
            body(thinking={"type": "enabled", "budget_tokens": 500}, temperature=0.2),
            "thinking",
        ),
        # a name every object has
        (
            "thinking.type: Input should be 'enabled' or 'disabled'",
            body(thinking={"type": "auto", "budget_tokens": 500}, temperature=0.2),
            "thinking",
        ),
        # a path into a schema: the caller's contract, not a setting
        (
            "response_format.json_schema.schema.additionalProperties is not supported",
            STRICT_FORMAT,
            "response_format",
        ),
        # a path to nothing the body sent
        ("Unsupported parameter: 'reasoning.generate_summary'", REASONING, "reasoning"),
        # the object refused by its own name
        ("reasoning is not supported with this model", REASONING, "reasoning"),
    ],
)
def test_the_object_goes_whole_near_the_rule(
    message: str, sent: dict[str, Any], whole: str
) -> None:
    assert readings(message, sent) == [("drop", (whole,), ())] * 2


def test_openais_param_at_the_inner_key_keeps_the_rest() -> None:
    step = plan_after(
        "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
        REASONING,
        param="reasoning.effort",
    )
    assert step is not None
    assert step.body == {**REASONING, "reasoning": {"summary": "auto"}}
    assert step.dropped == ["reasoning.effort"]


def test_a_second_refusal_inside_the_object_empties_it() -> None:
    """Each retry starts from the body sent last: what the object keeps is refused next, and
    it goes whole once nothing is left in it (the targeted cap counts both)."""
    plan = RetryPlan(REASONING, DEGRADES)
    for message in (
        "Unsupported parameter: 'reasoning.effort'",
        "Unsupported parameter: 'reasoning.summary'",
    ):
        error = ErrorInfo(kind="rejected", message=message, status=400, provider="p")
        step = plan.after(error)
        assert step is not None
    assert "reasoning" not in step.body and step.body["temperature"] == 0.2
    assert step.dropped == ["reasoning"]


# -- a store said full, or a state temporary: a wait, no key ---------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "prompt_cache is full, try again",
        "The KV cache is full. Please retry.",
        "prompt_cache is currently full",
        "prompt_cache is temporarily offline",
    ],
)
def test_a_store_said_full_or_a_state_temporary_backs_off(message: str) -> None:
    sent = body(prompt_cache_key="k", temperature=0.2)
    assert both_ways(message, sent) == [("backoff", ())] * 2


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a stem refused still names the keys it begins
        ("prompt_cache is not supported on this endpoint", ("drop", ("prompt_cache_key",))),
        # a stem in a clause that refuses nothing names nothing
        ("prompt_cache hit rate was 12% for this request", ("static", ())),
        # a context said full is the prompt's size, no store of the server's
        ("The context window is full", ("surface", ())),
        # "full" of something else is no state
        ("prompt_cache_key is full of invalid characters", ("drop", ("prompt_cache_key",))),
    ],
)
def test_full_and_stems_near_the_rule(message: str, expected: Any) -> None:
    sent = body(prompt_cache_key="k", temperature=0.2)
    assert both_ways(message, sent) == [expected, expected]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a key refused for now is refused: the body without it is served at once
        ("temperature is temporarily not supported for this model", ("drop", ("temperature",))),
        # the caller barred for a while is the account's
        ("Your account has been temporarily suspended.", ("surface", ())),
        ("The organization is temporarily restricted due to unusual activity.", ("surface", ())),
    ],
)
def test_temporarily_near_the_rule(message: str, expected: Any) -> None:
    sent = body(prompt_cache_key="k", temperature=0.2)
    assert both_ways(message, sent) == [expected, expected]


# -- a count of images over a maximum: the images ------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Number of images (2) exceeds maximum of 1",
        "Request contains 52 images, exceeding the maximum of 50",
        "The number of images exceeds the maximum of 4",
        "3 input images exceed the limit",
    ],
)
def test_a_count_of_images_over_a_maximum_removes_them(message: str) -> None:
    sent = body(images=True, temperature=0.2)
    assert both_ways(message, sent) == [("images", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # another key's maximum beside a count of images
        (
            "Request contains 2 images but max_tokens exceeds the maximum of 4096",
            body(images=True, max_tokens=9000),
            ("drop", ("max_tokens",)),
        ),
        # nouns joined by "or" keep the image the subject
        ("The image or video is too large", body(images=True, max_tokens=9000), ("images", ())),
        # tools counted over a maximum are the tools
        (
            "Number of tools (130) exceeds maximum of 128",
            body(images=True, tools=TOOLS, tool_choice="auto"),
            ("drop", ("tools", "tool_choice")),
        ),
        # no images in the body: nothing to remove
        ("Number of images (2) exceeds maximum of 1", body(temperature=0.2), ("static", ())),
    ],
)
def test_counts_near_the_images_rule(message: str, sent: dict[str, Any], expected: Any) -> None:
    assert both_ways(message, sent) == [expected, expected]


# -- the readings in turns against a loopback server ---------------------------------------


async def _turn(
    serve: Callable[[Any], Awaitable[str]], message: str, params: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """A vLLM turn whose first request is refused at 400 with OpenAI's envelope of
    `message` and whose later ones are answered; the bodies sent, and the events."""
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if len(bodies) == 1:
            return web.json_response(openai_error(message), status=400)
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    url = await serve(handler)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")], params=params)
    async with rxllm.provider(
        "vllm", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    return bodies, events


FUNCTION = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}


async def test_a_turn_keeps_its_function_tools(serve: Callable[[Any], Awaitable[str]]) -> None:
    params = {"tools": [WEB_SEARCH, FUNCTION], "tool_choice": "auto", "temperature": 0.2}
    bodies, events = await _turn(serve, "Unsupported tool type: web_search_preview", params)
    assert len(bodies) == 2
    assert bodies[1] == {**bodies[0], "tools": [FUNCTION]}
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["tools[0]"]
    assert events[-1].type == "done"


async def test_a_turn_keeps_the_rest_of_its_object(serve: Callable[[Any], Awaitable[str]]) -> None:
    params = {"reasoning": {"effort": "low", "summary": "auto"}, "temperature": 0.2}
    bodies, events = await _turn(serve, "Unsupported parameter: 'reasoning.effort'", params)
    assert len(bodies) == 2
    assert bodies[1] == {**bodies[0], "reasoning": {"summary": "auto"}}
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1 and retries[0].dropped == ["reasoning.effort"]


# -- the new readings take linear time ----------------------------------------------------

_HOSTILE = {
    "images counted": "52 images, " * 8_000 + "exceeding",
    "images remark": "2 images (" * 8_000,
    "full": "cache is " * 8_000 + "fully",
    "tool types": "tool type 'web_search_preview' only " * 4_000,
    "paths": "reasoning." * 8_000 + "effort is not supported",
    "tool paths": "tools[1].type " * 8_000,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = {**MIXED, **REASONING, **body(images=True)}
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, {"detail": text}, sent))
        verdicts.append(response(503, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
