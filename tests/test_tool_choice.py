"""`ChatRequest.tool_choice`: one portable setting, written by each wire in its own form,
checked where it is given, and carried across a fallback in each provider's form.

What each provider's reference says of the forms (quoted where a test relies on them):

- OpenAI Chat Completions: "`none` means the model will not call any tool and instead
  generates a message. `auto` means the model can pick between generating a message or
  calling one or more tools. `required` means the model must call one or more tools.
  Specifying a particular tool via `{"type": "function", "function": {"name":
  "my_function"}}` forces the model to call that tool."
- Responses: the same modes; a function is `{"type": "function", "name": ...}`, flat.
- Anthropic: `{"type": "auto"}`, `{"type": "any"}`, `{"type": "tool", "name": ...}`,
  `{"type": "none"}`; "Tool use with thinking only supports tool_choice: {"type":
  "auto"} (the default) or tool_choice: {"type": "none"}", else 400 "Thinking may not be
  enabled when tool_choice forces tool use."
- Gemini `toolConfig.functionCallingConfig`: mode `AUTO`, `ANY` ("constrained to always
  predicting function calls only. If allowedFunctionNames are set, the predicted
  function calls will be limited to any one of allowedFunctionNames"), `NONE`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rxllm
from rxllm.local import WIRES, LocalServer
from tests.support import Recorder, Serve

KEY = "sk-tool-choice-test-0123456789abcdef"
TOOLS = [
    rxllm.Tool(
        name="get_weather",
        description="the weather in a city",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    ),
    rxllm.Tool(name="get_time", description="the time now"),
]

GEMINI_ANSWER = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},'
    b'"finishReason":"STOP"}]}\n\n'
)
RESPONSES_ANSWER = b"".join(
    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    for event in (
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": "ok",
        },
        {
            "type": "response.completed",
            "response": {"id": "r", "status": "completed", "output": []},
        },
    )
)
ANSWERS = {":streamGenerateContent": GEMINI_ANSWER, "/responses": RESPONSES_ANSWER}

# The body key each wire writes the choice under.
CHOICE_KEY = {"openai-responses": "tool_choice", "anthropic": "tool_choice", "google": "toolConfig"}

FORMS: dict[str, dict[str, Any]] = {
    "openai": {
        "auto": "auto",
        "required": "required",
        "none": "none",
        "get_time": {"type": "function", "function": {"name": "get_time"}},
    },
    "openai-responses": {
        "auto": "auto",
        "required": "required",
        "none": "none",
        "get_time": {"type": "function", "name": "get_time"},
    },
    "anthropic": {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "none": {"type": "none"},
        "get_time": {"type": "tool", "name": "get_time"},
    },
    "google": {
        "auto": {"functionCallingConfig": {"mode": "AUTO"}},
        "required": {"functionCallingConfig": {"mode": "ANY"}},
        "none": {"functionCallingConfig": {"mode": "NONE"}},
        "get_time": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}
        },
    },
}
# The chat presets write OpenAI's form: one of them, and the catch-all.
FORMS["groq"] = FORMS["custom"] = FORMS["openai"]


def ask(**fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("What time is it?")], **fields)


async def sent(serve: Serve, provider: str, request: rxllm.ChatRequest) -> dict[str, Any]:
    """The body `provider` sent for `request` to a loopback endpoint of its wire, which
    answered one complete turn."""
    recorder = Recorder(answers=ANSWERS)
    options = {"allow_private_network": True} if provider == "custom" else {}
    async with rxllm.provider(
        provider, api_key=KEY, base_url=await serve(recorder.handle), **options
    ) as p:
        record = await p.complete(request)
    assert record.ok, record.terminal
    [only] = recorder.requests
    body: dict[str, Any] = only["body"]
    return body


@pytest.mark.parametrize("choice", ["auto", "required", "none", "get_time"])
@pytest.mark.parametrize("provider", sorted(FORMS))
async def test_each_wire_writes_the_choice_in_its_own_form(
    serve: Serve, provider: str, choice: str
) -> None:
    body = await sent(serve, provider, ask(tools=TOOLS, tool_choice=choice))
    key = CHOICE_KEY.get(provider, "tool_choice")
    assert body[key] == FORMS[provider][choice]
    assert not {"tool_choice", "toolConfig", "tool_config"} - {key} & body.keys()


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "google"])
async def test_no_choice_and_no_tools_write_nothing(serve: Serve, provider: str) -> None:
    """Unset, nothing is sent (each provider's own default). `auto` and `none` without any
    tool are what a provider does anyway, and a choice without tools is refused
    (vLLM: "When using `tool_choice`, `tools` must be set."; Gemini: "Function calling
    config is set without function_declarations.")."""
    for request in (ask(tools=TOOLS), ask(tool_choice="none"), ask(tool_choice="auto")):
        body = await sent(serve, provider, request)
        assert not {"tool_choice", "toolConfig", "tool_config"} & body.keys(), body


async def test_a_providers_own_tools_in_params_take_auto_and_none(serve: Serve) -> None:
    tools = [{"type": "web_search"}]
    body = await sent(serve, "openai-responses", ask(tool_choice="none", params={"tools": tools}))
    assert body["tool_choice"] == "none"
    assert body["tools"] == tools


# -- validation at construction -------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"tool_choice": "required"}, r"tool_choice='required' needs tools to choose from"),
        ({"tool_choice": "get_time"}, r"tool_choice='get_time' needs tools to choose from"),
        (
            {"tools": TOOLS, "tool_choice": "get_date"},
            r"tool_choice names 'get_date', which is not among the tools \(get_weather, "
            r"get_time\)",
        ),
        ({"tools": TOOLS, "tool_choice": "Required"}, r"tool_choice names 'Required'"),
    ],
)
def test_a_choice_that_cannot_be_made_is_refused_at_construction(
    fields: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        ask(**fields)


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_auto_and_none_need_no_tools(choice: str) -> None:
    assert ask(tool_choice=choice).tool_choice == choice


# -- the SDKs' choice shapes ---------------------------------------------------------------

# What each SDK's `tool_choice` takes besides the modes, read as the field's own value:
# openai's `ChatCompletionNamedToolChoiceParam` and Responses `ToolChoiceFunctionParam`,
# anthropic's `ToolChoiceAutoParam`, `ToolChoiceAnyParam`, `ToolChoiceNoneParam` and
# `ToolChoiceToolParam`.
SDK_SHAPES: list[tuple[dict[str, Any], str]] = [
    ({"type": "function", "function": {"name": "get_time"}}, "get_time"),
    ({"type": "function", "name": "get_time"}, "get_time"),
    ({"type": "auto"}, "auto"),
    ({"type": "any"}, "required"),
    ({"type": "none"}, "none"),
    ({"type": "tool", "name": "get_time"}, "get_time"),
]


@pytest.mark.parametrize(("given", "value"), SDK_SHAPES)
def test_the_sdks_choice_shapes_read_as_the_field(given: dict[str, Any], value: str) -> None:
    assert ask(tools=TOOLS, tool_choice=given).tool_choice == value


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "google"])
@pytest.mark.parametrize(("given", "value"), SDK_SHAPES)
async def test_each_wire_writes_an_sdks_choice_in_its_own_form(
    serve: Serve, provider: str, given: dict[str, Any], value: str
) -> None:
    """Anthropic's `{"type": "any"}` reaches OpenAI as `"required"`, OpenAI's named
    function reaches Anthropic as `{"type": "tool", ...}`: one wire's form is never
    sent to another."""
    body = await sent(serve, provider, ask(tools=TOOLS, tool_choice=given))
    assert body[CHOICE_KEY.get(provider, "tool_choice")] == FORMS[provider][value]


def test_any_is_a_tools_name() -> None:
    """Anthropic's SDK takes `{"type": "any"}`, never the bare string: "any" names a tool,
    as any other string that is not a mode."""
    any_tool = rxllm.Tool(name="any", description="a tool named any")
    assert ask(tools=[*TOOLS, any_tool], tool_choice="any").tool_choice == "any"
    with pytest.raises(ValueError, match="tool_choice names 'any', which is not among the tools"):
        ask(tools=TOOLS, tool_choice="any")


# Shapes with more in them than the field holds, each with the wire that takes it in
# params (and `tools` in params, without the field's, for a provider's own tool).
IN_PARAMS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "openai",
        {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "required",
                "tools": [{"type": "function", "function": {"name": "get_time"}}],
            },
        },
        {},
    ),
    (
        "openai-responses",
        {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "get_time"}],
        },
        {},
    ),
    (
        "openai-responses",
        {"type": "web_search_preview"},
        {"tools": [{"type": "web_search_preview"}]},
    ),
    ("openai", {"type": "custom", "custom": {"name": "get_time"}}, {}),
    ("anthropic", {"type": "tool", "name": "get_time", "disable_parallel_tool_use": True}, {}),
    ("anthropic", {"type": "any", "disable_parallel_tool_use": False}, {}),
    ("openai", {"type": "function", "function": {"name": "get_time", "strict": True}}, {}),
]


@pytest.mark.parametrize(("provider", "given", "others"), IN_PARAMS)
async def test_a_choice_the_field_cannot_hold_goes_in_params(
    serve: Serve, provider: str, given: dict[str, Any], others: dict[str, Any]
) -> None:
    """Refused when the request is built, the message naming params; given there, it is
    sent as it is."""
    tools = [] if "tools" in others else TOOLS
    with pytest.raises(ValueError, match=r"params=\{'tool_choice': \.\.\.\}"):
        ask(tools=tools, tool_choice=given, params=others)
    body = await sent(serve, provider, ask(tools=tools, params={"tool_choice": given, **others}))
    assert body["tool_choice"] == given


def test_anthropics_parallel_switch_in_the_choice_says_where_it_goes() -> None:
    given = {"type": "tool", "name": "get_time", "disable_parallel_tool_use": True}
    with pytest.raises(
        ValueError,
        match=r"tool_choice='get_time', params=\{'disable_parallel_tool_use': True\}",
    ):
        ask(tools=TOOLS, tool_choice=given)


@pytest.mark.parametrize(
    "given",
    [
        {"type": "tool", "name": "none"},
        {"type": "function", "function": {"name": "required"}},
        {"type": "function", "name": "auto"},
    ],
)
def test_a_shape_naming_a_mode_is_refused(given: dict[str, Any]) -> None:
    """The modes are names the field keeps for itself: a tool named `none`, chosen by an
    SDK's shape, would read as the mode, the opposite of what was asked."""
    with pytest.raises(ValueError, match="names a tool the field reads as its mode"):
        ask(tools=TOOLS, tool_choice=given)


# -- the same setting in params --------------------------------------------------------


@pytest.mark.parametrize(
    "provider", ["openai", "mistral", "openai-responses", "anthropic", "google"]
)
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tool_choice", "required"),
        ("tool_choice", {"type": "tool", "name": "get_time"}),
        ("toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
        ("tool_config", {"function_calling_config": {"mode": "NONE"}}),
    ],
)
async def test_the_choice_also_in_params_is_set_twice(
    serve: Serve, provider: str, key: str, value: Any
) -> None:
    """Under any wire's name, on every wire: a fallback shares one request, and one
    wire's form is another's 400 or a key a degraded retry drops."""
    request = ask(tools=TOOLS, tool_choice="get_time", params={key: value})
    with pytest.raises(
        rxllm.ConfigError,
        match=rf"tool_choice is set twice, as ChatRequest.tool_choice and in params\['{key}'\]",
    ):
        await sent(serve, provider, request)


@pytest.mark.parametrize("key", ["toolConfig", "tool_config"])
async def test_geminis_other_tool_settings_keep_their_place_beside_the_choice(
    serve: Serve, key: str
) -> None:
    """A `toolConfig` without `functionCallingConfig` is not the choice: the mode joins
    it, under the spelling the user gave."""
    given = {"includeServerSideToolInvocations": True}
    body = await sent(serve, "google", ask(tools=TOOLS, tool_choice="none", params={key: given}))
    assert body[key] == {**given, "functionCallingConfig": {"mode": "NONE"}}
    assert not {"toolConfig", "tool_config"} - {key} & body.keys()


# -- Anthropic's extended thinking ------------------------------------------------------

THINKING = {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.parametrize("thinking", [THINKING, {"type": "adaptive"}])
@pytest.mark.parametrize("choice", ["required", "get_time"])
async def test_anthropic_refuses_a_forced_choice_with_thinking_before_sending(
    serve: Serve, choice: str, thinking: dict[str, Any]
) -> None:
    """ "Thinking may not be enabled when tool_choice forces tool use.": a ConfigError at
    the call, which a fallback skips, rather than a 400 from the API."""
    request = ask(tools=TOOLS, tool_choice=choice, params={"thinking": thinking})
    with pytest.raises(rxllm.ConfigError, match="forces tool use"):
        await sent(serve, "anthropic", request)


@pytest.mark.parametrize(
    ("choice", "thinking"),
    [("auto", THINKING), ("none", THINKING), ("required", {"type": "disabled"})],
)
async def test_anthropic_takes_the_choices_thinking_allows(
    serve: Serve, choice: str, thinking: dict[str, Any]
) -> None:
    request = ask(tools=TOOLS, tool_choice=choice, params={"thinking": thinking})
    body = await sent(serve, "anthropic", request)
    assert body["tool_choice"] == FORMS["anthropic"][choice]
    assert body["thinking"] == thinking


# -- across a fallback, and through a degraded retry --------------------------------------

OVERLOADED = (
    529,
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
)


async def test_a_fallback_sends_each_provider_its_own_form(serve: Serve) -> None:
    """Anthropic overloaded, then OpenAI: each gets the named choice as it reads it (with
    the choice in params, one of them got the other's form, a 400 or a dropped key)."""
    anthropic, openai = Recorder(OVERLOADED), Recorder()
    first = rxllm.provider(
        "anthropic", api_key=KEY, base_url=await serve(anthropic.handle), max_attempts=1
    )
    second = rxllm.provider("openai", api_key=KEY, base_url=await serve(openai.handle))
    request = ask(tools=TOOLS, tool_choice="get_weather")
    events = [e async for e in rxllm.fallback([first, second]).astream(request)]
    await first.aclose()
    await second.aclose()
    assert events[-1].type == "done" and events[-1].provider == "openai"
    [retry] = [e for e in events if e.type == "retry"]
    assert retry.next_provider == "openai" and retry.reason.status == 529
    [to_anthropic] = anthropic.requests
    [to_openai] = openai.requests
    assert to_anthropic["body"]["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert to_openai["body"]["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }


async def test_a_fallback_skips_anthropic_thinking_with_a_forced_choice(serve: Serve) -> None:
    """The leg that cannot express the request is skipped at the call: nothing reaches
    Anthropic, and the next provider answers with the choice in its form."""
    anthropic, openai = Recorder(), Recorder()
    first = rxllm.provider("anthropic", api_key=KEY, base_url=await serve(anthropic.handle))
    second = rxllm.provider("openai", api_key=KEY, base_url=await serve(openai.handle))
    request = ask(tools=TOOLS, tool_choice="required", params={"thinking": THINKING})
    record = await rxllm.fallback([first, second]).complete(request)
    await first.aclose()
    await second.aclose()
    assert record.ok and record.provider == "openai"
    assert not anthropic.requests
    assert openai.requests[0]["body"]["tool_choice"] == "required"


REJECTIONS = Path(__file__).parent / "rejections_extra"


async def test_a_degraded_retry_drops_the_choice_by_its_body_key(serve: Serve) -> None:
    """Cerebras refuses a forced choice ("Unsupported tool_choice: type='function' ...
    Expected 'auto' or 'none'.", param `tool_choice`): the retry drops `tool_choice`, as
    it would the key given in params, and keeps the tools."""
    case = json.loads(
        (REJECTIONS / "cerebras__unsupported_tool_choice_expected_auto_or_none.json").read_text()
    )
    recorder = Recorder((case["status"], json.loads(case["body"])))
    async with rxllm.provider(
        "custom", api_key=KEY, base_url=await serve(recorder.handle), allow_private_network=True
    ) as p:
        record = await p.complete(ask(tools=TOOLS, tool_choice="get_weather"))
    assert record.ok
    first, second = (r["body"] for r in recorder.requests)
    assert first["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "tool_choice" not in second and len(second["tools"]) == 2
    assert record.attempts[-1].dropped == ["tool_choice"]


# -- the local provider honours the choice on each of its wires ---------------------------

WEATHER_QUESTION = "What's the weather in Paris?"
# Each wire's own form in params, as a user of that wire alone writes it (no field).
OWN_FORMS: dict[str, dict[str, dict[str, Any]]] = {
    "openai": {
        "none": {"tool_choice": "none"},
        "required": {"tool_choice": "required"},
        "get_time": {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    },
    "openai-responses": {
        "none": {"tool_choice": "none"},
        "required": {"tool_choice": "required"},
        "get_time": {"tool_choice": {"type": "function", "name": "get_time"}},
    },
    "anthropic": {
        "none": {"tool_choice": {"type": "none"}},
        "required": {"tool_choice": {"type": "any"}},
        "get_time": {"tool_choice": {"type": "tool", "name": "get_time"}},
    },
    "google": {
        "none": {"tool_config": {"function_calling_config": {"mode": "NONE"}}},
        "required": {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
        "get_time": {
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}
            }
        },
    },
}


def local_ask(text: str, choice: str, wire: str, own_form: bool) -> rxllm.ChatRequest:
    if own_form:
        return ask_with(text, params=OWN_FORMS[wire][choice])
    return ask_with(text, tool_choice=choice)


def ask_with(text: str, **fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model="local", messages=[rxllm.Message.user(text)], tools=TOOLS, **fields
    )


@pytest.mark.parametrize("own_form", [False, True], ids=["field", "params"])
@pytest.mark.parametrize("wire", WIRES)
async def test_the_local_provider_answers_in_text_under_none(
    local_server: LocalServer, wire: str, own_form: bool
) -> None:
    """The weather question calls get_weather under `auto`; under `none` it is answered."""
    p = local_server.provider(wire)
    auto = await p.complete(ask_with(WEATHER_QUESTION))
    assert [call.name for call in auto.tool_calls] == ["get_weather"]
    record = await p.complete(local_ask(WEATHER_QUESTION, "none", wire, own_form))
    assert record.tool_calls == []
    assert record.text.startswith("Hello from rxllm's local provider!")
    assert record.terminal.type == "done" and record.terminal.stop_reason == "stop"


@pytest.mark.parametrize("own_form", [False, True], ids=["field", "params"])
@pytest.mark.parametrize("wire", WIRES)
async def test_the_local_provider_calls_a_tool_when_one_is_required(
    local_server: LocalServer, wire: str, own_form: bool
) -> None:
    """ "Hello there" asks for no tool: `auto` answers it, `required` calls one anyway
    (the first offered: none is asked about), and only the call comes."""
    p = local_server.provider(wire)
    auto = await p.complete(ask_with("Hello there"))
    assert auto.tool_calls == []
    record = await p.complete(local_ask("Hello there", "required", wire, own_form))
    [call] = record.tool_calls
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris", "unit": "celsius", "days": 3}  # the story's
    assert record.text == ""
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"


@pytest.mark.parametrize("own_form", [False, True], ids=["field", "params"])
@pytest.mark.parametrize("wire", WIRES)
async def test_the_local_provider_calls_the_tool_a_choice_names(
    local_server: LocalServer, wire: str, own_form: bool
) -> None:
    """The weather question, with get_time forced: get_time is called, with its sample
    arguments (none: it declares no property)."""
    p = local_server.provider(wire)
    record = await p.complete(local_ask(WEATHER_QUESTION, "get_time", wire, own_form))
    [call] = record.tool_calls
    assert call.name == "get_time" and call.arguments == {}
    assert record.terminal.type == "done" and record.terminal.stop_reason == "tool_use"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_forced_choice_calls_again_after_a_result(
    local_server: LocalServer, wire: str
) -> None:
    """A result is answered under `auto`; a request that still requires a call gets one,
    as a real endpoint's does (an agent loop relaxes its choice after the first call)."""
    p = local_server.provider(wire)
    first = await p.complete(ask_with(WEATHER_QUESTION))
    history = [
        rxllm.Message.user(WEATHER_QUESTION),
        first.to_message(),
        rxllm.Message.tool(first.tool_calls[0].call_id, {"celsius": 21}),
    ]
    answered = await p.complete(
        rxllm.ChatRequest(model="local", messages=history, tools=TOOLS, tool_choice="auto")
    )
    assert answered.tool_calls == [] and "get_weather returned" in answered.text
    forced = await p.complete(
        rxllm.ChatRequest(model="local", messages=history, tools=TOOLS, tool_choice="get_time")
    )
    assert [call.name for call in forced.tool_calls] == ["get_time"]


@pytest.mark.parametrize(
    ("wire", "params"),
    [
        ("openai", {"tool_choice": {"type": "function", "function": {"name": "get_date"}}}),
        ("openai-responses", {"tool_choice": {"type": "function", "name": "get_date"}}),
        ("anthropic", {"tool_choice": {"type": "tool", "name": "get_date"}}),
        (
            "google",
            {
                "toolConfig": {
                    "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_date"]}
                }
            },
        ),
    ],
)
async def test_the_local_provider_refuses_a_choice_of_a_tool_not_offered(
    local_server: LocalServer, wire: str, params: dict[str, Any]
) -> None:
    """A 400, as a real endpoint's; the OpenAI chat wire's degraded retry then drops the
    key it names, as it would any refused parameter."""
    record = await local_server.provider(wire).complete(ask_with("Hello there", params=params))
    refused = record.attempts[0]
    assert refused.status == 400
    assert "tool_choice names 'get_date', which no offered tool declares" in (refused.error or "")
    if wire == "openai":
        assert record.ok and record.attempts[1].dropped == ["tool_choice"]
    else:
        assert record.terminal.type == "error" and len(record.attempts) == 1


# -- the command line -----------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`rxllm stream` as a user runs it (the local provider: no key, no network)."""
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "rxllm.cli", "stream", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_cli_sends_the_choice() -> None:
    answered = cli("--tool-choice", "none", "What's the weather in Paris?")
    assert answered.returncode == 0, answered.stderr
    assert "[tool_request]" not in answered.stdout and "[done] stop" in answered.stdout
    called = cli("--tool-choice", "get_weather", "Hello there")
    assert called.returncode == 0, called.stderr
    assert "[tool_request] get_weather(" in called.stdout
    assert "[done] tool_use" in called.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--tool-choice", "required", "--no-tools"), "no tool to call, as --no-tools offers none"),
        (("--tool-choice", "get_time"), "the tool offered is get_weather"),
    ],
)
def test_the_cli_refuses_a_choice_it_cannot_send(args: tuple[str, ...], says: str) -> None:
    result = cli(*args, "hi")
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr


# -- Gemini's own tools alone --------------------------------------------------------------

GOOGLE_SEARCH = [{"googleSearch": {}}]


@pytest.mark.parametrize("given", [{}, {"toolConfig": {"includeServerSideToolInvocations": True}}])
async def test_gemini_writes_no_mode_with_only_its_own_tools(
    serve: Serve, given: dict[str, Any]
) -> None:
    """`functionCallingConfig` governs declared functions, and the Gemini API refuses it
    without one ("Function calling config is set without function_declarations.", for
    googleSearch alone: pydantic/pydantic-ai tests/models/google/test_tool_config.py).
    `auto` is its default: nothing is written, the user's other settings stay as given."""
    params = {"tools": GOOGLE_SEARCH, **given}
    body = await sent(serve, "google", ask(tool_choice="auto", params=params))
    assert body["tools"] == GOOGLE_SEARCH
    assert body.get("toolConfig") == given.get("toolConfig")


async def test_gemini_refuses_none_with_only_its_own_tools(serve: Serve) -> None:
    """No mode turns Gemini's own tools off: a ConfigError at the call, not a 400."""
    recorder = Recorder(answers=ANSWERS)
    async with rxllm.provider("google", api_key=KEY, base_url=await serve(recorder.handle)) as p:
        with pytest.raises(rxllm.ConfigError, match="with only its own tools"):
            await p.complete(ask(tool_choice="none", params={"tools": GOOGLE_SEARCH}))
    assert not recorder.requests


@pytest.mark.parametrize("spelling", ["functionDeclarations", "function_declarations"])
async def test_gemini_writes_the_mode_for_functions_declared_in_params(
    serve: Serve, spelling: str
) -> None:
    tools = [{spelling: [{"name": "get_time"}]}, *GOOGLE_SEARCH]
    body = await sent(serve, "google", ask(tool_choice="none", params={"tools": tools}))
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


# -- Anthropic's parallel switch ------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "written"),
    [
        ("auto", {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", {"type": "any", "disable_parallel_tool_use": True}),
        ("get_time", {"type": "tool", "name": "get_time", "disable_parallel_tool_use": True}),
        ("none", {"type": "none"}),
        (None, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
async def test_anthropics_parallel_switch_joins_the_choice(
    serve: Serve, choice: str | None, written: dict[str, Any]
) -> None:
    """`disable_parallel_tool_use` is a setting of Anthropic's `tool_choice` object, never
    a top-level key ("Extra inputs are not permitted"), and a `tool_choice` in params beside
    the field is the choice set twice: given in params, it joins the choice written
    (`{"type": "none"}` has no such setting, and calls nothing)."""
    params = {"disable_parallel_tool_use": True}
    body = await sent(serve, "anthropic", ask(tools=TOOLS, tool_choice=choice, params=params))
    assert body["tool_choice"] == written
    assert "disable_parallel_tool_use" not in body


async def test_anthropics_parallel_switch_joins_a_choice_given_in_params(serve: Serve) -> None:
    params = {"tool_choice": {"type": "any"}, "disable_parallel_tool_use": True}
    body = await sent(serve, "anthropic", ask(tools=TOOLS, params=params))
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert "disable_parallel_tool_use" not in body


# -- the local provider: a choice limited to some tools ---------------------------------

ONLY_GET_TIME: dict[str, dict[str, dict[str, Any]]] = {
    "openai": {
        mode: {
            "tool_choice": {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": mode,
                    "tools": [{"type": "function", "function": {"name": "get_time"}}],
                },
            }
        }
        for mode in ("auto", "required")
    },
    "openai-responses": {
        mode: {
            "tool_choice": {
                "type": "allowed_tools",
                "mode": mode,
                "tools": [{"type": "function", "name": "get_time"}],
            }
        }
        for mode in ("auto", "required")
    },
    "google": {
        mode: {
            "toolConfig": {
                "functionCallingConfig": {"mode": given, "allowedFunctionNames": ["get_time"]}
            }
        }
        for mode, given in (("auto", "VALIDATED"), ("required", "ANY"))
    },
}


@pytest.mark.parametrize(
    ("wire", "mode"), [(wire, mode) for wire in ONLY_GET_TIME for mode in ("auto", "required")]
)
async def test_the_local_provider_calls_only_the_tools_a_choice_allows(
    local_server: LocalServer, wire: str, mode: str
) -> None:
    """OpenAI's `allowed_tools` ("`auto` allows the model to pick from among the allowed
    tools and generate a message. `required` requires the model to call one or more of
    the allowed tools.") and Gemini's `allowedFunctionNames` under `ANY` or `VALIDATED`:
    the weather question, with get_time the only tool allowed, never calls get_weather;
    under `auto` it is answered, under `required` get_time is called."""
    request = ask_with(WEATHER_QUESTION, params=ONLY_GET_TIME[wire][mode])
    record = await local_server.provider(wire).complete(request)
    assert record.ok, record.terminal
    if mode == "auto":
        assert record.tool_calls == []
        assert record.text.startswith("Hello from rxllm's local provider!")
    else:
        assert [call.name for call in record.tool_calls] == ["get_time"]
