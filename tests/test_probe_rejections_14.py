"""The third round of unseen rejections (tests/rejections_extra, listed by their slugs in
the report) taught three readings; these are the everyday rejections near each that must
not change with them, read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`). The words are paraphrases of the servers' formats.

- A tool's definition in prose ("Invalid schema for function 'ls'", "Tool parameters must
  be a JSON object") or as a path inside a `tools` entry ("13.function.parameters.type")
  names `tools`; a tool call of the history, the model's call, `tool_choice` and a schema
  of `response_format` do not.
- A validator's list of accepted values ("Input should be 'user', 'assistant' or
  'system'") names no key; listed roles are the conversation.
- An `error` that is JSON written as a string (LM Studio's zod issues) is read as JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, response


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


def _with_tools(**params: Any) -> dict[str, Any]:
    return {**body(**params), "tools": TOOLS, "tool_choice": "auto"}


@pytest.mark.parametrize(
    "message",
    [
        # DeepSeek (Kilo-Org/kilocode#12237), Perplexity (hawkxtreme/mini-ai-1c#181)
        "Invalid schema for function 'agent_manager': schema must be a JSON Schema of "
        "'type: \"object\"', got 'type: null'.",
        "Tool parameters must be a JSON object.",
        "invalid params, function parameters is empty (2013)",
    ],
)
def test_a_tool_definition_refused_in_prose_drops_the_tools(message: str) -> None:
    verdict = response(400, _error(message, param=None), _with_tools(temperature=0.2))
    assert (verdict.action, set(verdict.drop)) == ("drop", {"tools", "tool_choice"}), verdict


@pytest.mark.parametrize(
    "message",
    [
        # Groq's `tool_use_failed`: the model's call, not the definitions
        "tool call validation failed: parameters for tool web_search did not match schema: "
        "errors: [missing properties: 'type']",
        # a call of the history
        "Function call arguments must be valid JSON in the assistant message at index 2",
        "invalid params, invalid function arguments json string, tool_call_id: call_1 (2013)",
    ],
)
def test_a_tool_call_refused_keeps_the_tools(message: str) -> None:
    verdict = response(400, _error(message), _with_tools(temperature=0.2))
    assert verdict.action == "surface", verdict


def test_words_that_refuse_a_definition_do_not_refuse_a_capability() -> None:
    """ "must" refuses a definition; after "tool choice" it refuses that key's value, and
    the tools stay."""
    verdict = response(400, _error("Tool choice must be 'auto' or 'none'"), _with_tools())
    assert (verdict.action, verdict.drop) == ("drop", ("tool_choice",)), verdict


def test_a_response_format_schema_is_no_tool_definition() -> None:
    message = "Invalid schema for response_format 'answer': 'additionalProperties' is required"
    sent = {**_with_tools(), "response_format": {"type": "json_schema"}}
    verdict = response(400, _error(message, param="response_format"), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("response_format",)), verdict


@pytest.mark.parametrize(
    ("detail", "sent", "dropped"),
    [
        (
            {"loc": ["body", "tool_choice"], "msg": "Input should be 'none', 'auto' or 'required'"},
            {"tool_choice": "any"},
            ("tool_choice",),
        ),
        (
            {"loc": ["body", "reasoning_effort"], "msg": "Input should be 'low' or 'high'"},
            {"reasoning_effort": "max"},
            ("reasoning_effort",),
        ),
        # a pointer at the body's own `user` still names it
        ({"loc": ["body", "user"], "msg": "Input should be a valid string"}, {}, ("user",)),
    ],
)
def test_a_validators_accepted_values_leave_its_pointer(
    detail: dict[str, Any], sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = response(422, {"detail": [{"type": "literal_error", **detail}]}, body(**sent))
    assert (verdict.action, verdict.drop) == ("drop", dropped), verdict


def test_listed_roles_are_the_conversation_not_the_user_key() -> None:
    """AI21 on Azure (BerriAI/litellm#4815): `error` is a list of bare pydantic messages."""
    errors = {"error": ["Input should be 'user', 'assistant' or 'system'"]}
    assert response(422, errors, body(temperature=0.2)).action == "surface"


def _zod(*issues: dict[str, Any]) -> dict[str, Any]:
    """LM Studio's envelope: zod's issue list serialized into the `error` string."""
    return {"error": json.dumps(list(issues), indent=2)}


def test_zod_issues_inside_a_message_keep_the_tools() -> None:
    issue = {
        "code": "invalid_type",
        "path": ["messages", 2, "tool_calls", 0, "function", "arguments"],
        "message": "Expected string, received object",
    }
    verdict = response(400, _zod(issue), _with_tools(temperature=0.2))
    assert verdict.action == "surface", verdict


def test_zod_issues_that_point_at_a_key_drop_it() -> None:
    issue = {"code": "too_big", "path": ["temperature"], "message": "Number must be <= 2"}
    verdict = response(400, _zod(issue), body(temperature=3, top_p=0.9))
    assert (verdict.action, verdict.drop) == ("drop", ("temperature",)), verdict


def test_a_json_looking_prompt_echo_names_nothing() -> None:
    """A string value that is JSON but no validator's list (the prompt echoed) is read as
    JSON: its keys are data, not quoted names (before, `"user"` quoted in the echo dropped
    the body's `user`)."""
    echoed = {"error": {"message": "Prompt rejected", "input": '{"user": "temperature"}'}}
    verdict = response(400, echoed, body(temperature=0.2))
    assert verdict.action == "static", verdict
