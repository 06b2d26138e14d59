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
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_probe_rejections_7 import OPENROUTER, TOOLS, body, response
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
    "case_name", ["openrouter__anthropic_raw_thinking_may_not_be_enabled_forced_tool_choice"]
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
