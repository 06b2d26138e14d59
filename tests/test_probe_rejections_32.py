"""This session's reviews of degradation.py, each reading with real bodies and near misses.

- Thinking refused where the tool choice forces a call ("Thinking may not be enabled when
  tool_choice forces tool use.", Anthropic, relayed by OpenRouter or an OpenAI-compatible
  gateway): before, the refusal "may not be enabled" was not read as one of the reasoning
  phrase, the "when ..." clause was cut as a condition, nothing was named outside it, and the
  whole text named the tools by "tool use ... not be enabled": the retry sent no tools and the
  forced call came back as prose. Now the reasoning switch the body sent goes (the forced call
  is the shape the caller asked for; OpenRouter itself discards `reasoning` when a choice is
  forced, pydantic-ai#6916), and a capability named inside a condition is never what is
  refused: with no reasoning key in the body, the `tool_choice` the condition spells goes.
- The model's own output that broke the tool rules (Groq's `tool_use_failed`: "Tool choice is
  none, but model called a tool", BerriAI/litellm#21242, OpenHands#11725; "Tool choice is
  required, but model did not call a tool"): before, static, so the turn went again without
  `stream_options`, then without the tools (a required call become prose), then surfaced.
  Now it surfaces at once, as "Please adjust your prompt" did: no body is at fault, and no
  client resamples a 400 (the Groq SDK retries 408, 409, 429 and 5xx; LiteLLM raises it).
- Refused "not currently supported" (or "not yet") reads as "not supported": Ollama's /v1
  answer to an image by its URL, "image URLs are not currently supported, please use base64
  encoded data instead", was static, and `custom` pointed at Ollama first retried without an
  unrelated `stream_options`; now it is image input refused. The same words refuse a key
  ("seed is not currently supported") or a capability ("Tool calling is not yet supported").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

import rxllm
from tests.support import Serve
from tests.test_probe_rejections_7 import OPENROUTER, TOOLS, body, frame, response
from tests.test_probe_rejections_9 import EXTRA, original
from tests.test_probe_rejections_16 import reading

FORCED = {"type": "function", "function": {"name": "f"}}
THINKING_FORCED = "Thinking may not be enabled when tool_choice forces tool use."


def _error(message: str, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }


def _anthropic_via_openrouter(message: str) -> dict[str, Any]:
    raw = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {"raw": json.dumps(raw), "provider_name": "Anthropic"},
        }
    }


def _verdict(payload: Any, sent: dict[str, Any], policy: Any = None) -> tuple[str, tuple[str, ...]]:
    verdict = (
        response(400, payload, sent) if policy is None else response(400, payload, sent, policy)
    )
    return verdict.action, verdict.drop


@pytest.mark.parametrize(
    "case_name",
    [
        "openrouter__anthropic_raw_thinking_may_not_be_enabled_forced_tool_choice",
        "groq__400_tool_use_failed_tool_choice_none_model_called_a_tool",
        "ollama__v1_400_image_urls_not_currently_supported_use_base64",
        "ollama__v1_400_invalid_image_input",
    ],
)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    case = json.loads((EXTRA / f"{case_name}.json").read_text())
    expected = case["expected"]
    action = {"none": "surface"}.get(expected["action"], expected["action"])
    assert reading(original(case))[:2] == (action, set(expected.get("drop", ())))


# -- thinking refused where the tool choice forces a call: the switch goes, never the tools --


@pytest.mark.parametrize(
    ("switch", "payload", "policy"),
    [
        (
            {"reasoning": {"max_tokens": 2000}},
            _anthropic_via_openrouter(THINKING_FORCED),
            OPENROUTER,
        ),
        ({"reasoning": {"effort": "high"}}, _error(THINKING_FORCED), None),
        ({"reasoning_effort": "high"}, _error(THINKING_FORCED), None),
        ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, _error(THINKING_FORCED), None),
        # Bedrock's words around it (can1357/oh-my-pi#341), through a relay
        (
            {"reasoning_effort": "high"},
            _error("The model returned the following errors: " + THINKING_FORCED),
            None,
        ),
        # the same refusal in other modal words
        (
            {"reasoning_effort": "low"},
            _error("Reasoning cannot be enabled when tool_choice is 'required'."),
            None,
        ),
        (
            {"enable_thinking": True},
            _error("thinking must not be enabled while a tool call is forced"),
            None,
        ),
    ],
)
def test_thinking_refused_with_a_forced_call_drops_the_switch(
    switch: dict[str, Any], payload: Any, policy: Any
) -> None:
    sent = body(tools=TOOLS, tool_choice=FORCED, temperature=0.2, **switch)
    assert _verdict(payload, sent, policy) == ("drop", tuple(switch))


@pytest.mark.parametrize("choice", ["required", FORCED])
def test_without_a_switch_the_forced_choice_goes_not_the_tools(choice: Any) -> None:
    """The gateway turned thinking on (a model's `:thinking` variant): the only key the
    refusal spells is the condition's `tool_choice`."""
    sent = body(tools=TOOLS, tool_choice=choice, temperature=0.2)
    assert _verdict(_error(THINKING_FORCED), sent) == ("drop", ("tool_choice",))


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # a capability before the condition is still refused by its words (vLLM)
        (
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
            "to be set",
            body(tools=TOOLS, tool_choice="auto"),
            ("tools", "tool_choice"),
        ),
        # the tools refused in the main clause, thinking the condition
        (
            "Tool use is not supported when thinking is enabled.",
            body(tools=TOOLS, reasoning_effort="high"),
            ("tools",),
        ),
        # a key spelled refused for the thinking mode: that key (DashScope, cloudwego/eino#994)
        (
            "<400> InternalError.Algo.InvalidParameter: The tool_choice parameter does not "
            "support being set to required or object in thinking mode",
            body(tools=TOOLS, tool_choice="required", enable_thinking=True),
            ("tool_choice",),
        ),
        # thinking said to be on, a field of a message missing: no switch is refused
        (
            "thinking is enabled but reasoning_content is missing in assistant tool call "
            "message at index 11",
            body(tools=TOOLS, reasoning={"effort": "high"}),
            (),
        ),
    ],
)
def test_near_the_forced_call_rule(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    assert _verdict(_error(message), sent)[1] == dropped


# -- the model's output broke the tool rules: surfaced, no other body ---------------------

NONE_CALLED = "Tool choice is none, but model called a tool"
REQUIRED_NOT_CALLED = "Tool choice is required, but model did not call a tool"


@pytest.mark.parametrize(
    ("message", "code", "choice"),
    [
        (NONE_CALLED, "tool_use_failed", "none"),
        (REQUIRED_NOT_CALLED, "tool_use_failed", "required"),
        (REQUIRED_NOT_CALLED, "tool_use_failed", FORCED),
        # the code lost by a relay: the words say it
        (NONE_CALLED, None, "none"),
        ("litellm.BadRequestError: GroqException - " + REQUIRED_NOT_CALLED, None, "required"),
        # the code alone, whatever the words
        (
            "tool call validation failed: attempted to call tool 'x' not in request.tools",
            "tool_use_failed",
            "auto",
        ),
    ],
)
def test_the_models_output_against_the_tool_rules_surfaces(
    message: str, code: str | None, choice: Any
) -> None:
    sent = body(tools=TOOLS, tool_choice=choice, temperature=0.2)
    assert _verdict(_error(message, code), sent) == ("surface", ())


def test_the_models_output_against_the_tool_rules_surfaces_in_a_frame() -> None:
    """Groq's `event: error` after `200 OK`, its status inside."""
    error = {
        "message": NONE_CALLED,
        "type": "invalid_request_error",
        "code": "tool_use_failed",
        "status_code": 400,
    }
    assert frame(error, body(tools=TOOLS, tool_choice="none")).action == "surface"


@pytest.mark.parametrize(
    ("message", "sent", "action", "dropped"),
    [
        # the model lacks the capability: the tools go
        ("This model does not support function calling", body(tools=TOOLS), "drop", ("tools",)),
        # the body's choice refused, in words about the model's ability
        (
            "tool_choice is set but the model cannot call tools",
            body(tools=TOOLS, tool_choice="required"),
            "drop",
            ("tool_choice",),
        ),
        # a choice sent without tools is the body's fault
        (
            "Tool choice is required, but no tools were provided",
            body(tool_choice="required"),
            "static",
            (),
        ),
    ],
)
def test_near_the_models_output_rule(
    message: str, sent: dict[str, Any], action: str, dropped: tuple[str, ...]
) -> None:
    assert _verdict(_error(message), sent) == (action, dropped)


async def test_groq_sends_one_body_when_the_model_broke_the_tool_rules(serve: Serve) -> None:
    """Before, four bodies: without `stream_options`, without the tools, without both."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        bodies.append(json.loads(await request.read()))
        refusal = _error(NONE_CALLED, "tool_use_failed")
        refusal["error"]["failed_generation"] = '{"name": "get_time", "arguments": {}}'
        return web.json_response(refusal, status=400)

    url = await serve(handler)
    async with rxllm.provider("groq", api_key="gsk_" + "k" * 48, base_url=url) as provider:
        ask = rxllm.ChatRequest(
            model="m",
            messages=[rxllm.Message.user("what time is it?")],
            tools=[rxllm.Tool(name="get_time")],
            params={"tool_choice": "none"},
        )
        record = await provider.complete(ask)
    assert len(bodies) == 1 and bodies[0]["tool_choice"] == "none" and bodies[0]["tools"]
    assert record.terminal.type == "error" and record.terminal.error.status == 400
    assert NONE_CALLED in record.terminal.error.message


# -- "not currently supported" is "not supported": an image by its URL on Ollama ----------

IMAGE_URL_REFUSED = "image URLs are not currently supported, please use base64 encoded data instead"


@pytest.mark.parametrize(
    "message",
    [
        IMAGE_URL_REFUSED,
        "invalid image input",
        # another server's words for the same rule
        "HTTPS image URLs are not currently supported, use base64 data URIs only "
        "(data:image/{type};base64,...)",
        "Images are not yet supported for this model",
    ],
)
def test_an_image_not_currently_supported_is_image_input_refused(message: str) -> None:
    sent = body(images=True, temperature=0.2, stream_options={"include_usage": True})
    assert _verdict(_error(message), sent) == ("images", ())


@pytest.mark.parametrize(
    ("message", "sent", "verdict"),
    [
        ("seed is not currently supported", body(temperature=0.2), ("drop", ("seed",))),
        (
            "Tool calling is not currently supported for this model",
            body(tools=TOOLS, temperature=0.2),
            ("drop", ("tools",)),
        ),
        (
            "logprobs are not yet supported",
            body(logprobs=True, top_logprobs=2),
            ("drop", ("logprobs", "top_logprobs")),
        ),
        # no image in the body: nothing to take out, the body is at fault
        (IMAGE_URL_REFUSED, body(temperature=0.2), ("static", ())),
        # supported, currently: the adverb alone refuses nothing
        (
            "temperature is currently supported only between 0 and 1",
            body(temperature=1.5, seed=3),
            ("static", ()),
        ),
    ],
)
def test_near_the_not_currently_supported_rule(
    message: str, sent: dict[str, Any], verdict: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), sent) == verdict


async def test_custom_on_ollama_takes_the_image_url_out_first(serve: Serve) -> None:
    """Before, three bodies: the first retry dropped the unrelated `stream_options`."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        sent = json.loads(await request.read())
        bodies.append(sent)
        parts = [
            p for m in sent["messages"] if isinstance(m["content"], list) for p in m["content"]
        ]
        if any(p.get("type") == "image_url" for p in parts):
            return web.json_response(_error(IMAGE_URL_REFUSED), status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(
            b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},'
            b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        )
        return response

    url = await serve(handler)
    async with rxllm.provider(
        "custom", api_key="ollama", base_url=url, allow_private_network=True
    ) as provider:
        ask = rxllm.ChatRequest(
            model="llava",
            messages=[rxllm.Message.user("what is this?", images=["https://example.com/cat.png"])],
        )
        record = await provider.complete(ask)
    assert record.terminal.type == "done"
    assert len(bodies) == 2 and record.attempts[1].images_removed == 1
    assert bodies[1]["stream_options"] == bodies[0]["stream_options"]
