"""The fourth round of unseen rejections (tests/rejections_extra, collected by family: images
refused, opaque bodies, drops with a rename or inside a key, waits in new forms, errors
in-band) taught three readings and showed one misreading of everyday words; these are the
bodies near each that must not change with them, read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`). The words are paraphrases of the servers' formats.

- The legacy key spelled as itself names that key alone ("function_call is not supported;
  use tools/tool_choice instead", FreeToken); "function call" in prose is still the
  capability, and advice that lists keys ("use tools/tool_choice instead") names none.
- A model served at another API only ("only supports the Responses API. Please use
  /serving-endpoints/responses instead.", Databricks) is no body's fault.
- "model ... is not supported" is read within one line: the message's next copy in the raw
  body ("... by this model\\n'logprobs' is not supported ...") is not its continuation.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.degradation import Verdict, classify
from rxllm.events import ErrorInfo
from rxllm.providers.openai_chat import DEGRADES
from tests.test_probe_rejections_7 import TOOLS, body, response

FUNCTIONS = [{"name": "f", "parameters": {"type": "object"}}]


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


def _with_tools(**params: Any) -> dict[str, Any]:
    return {**body(**params), "tools": TOOLS, "tool_choice": "auto"}


def test_the_legacy_key_spelled_as_itself_is_that_key() -> None:
    """FreeToken (freetoken__function_call_not_supported_use_tools_tool_choice): before, the
    capability's phrase dropped the tools, and the advice's `tool_choice` was read as named."""
    message = "function_call is not supported; use tools/tool_choice instead"
    verdict = response(400, _error(message), _with_tools(function_call="auto", temperature=0.2))
    assert (verdict.action, verdict.drop, dict(verdict.rename)) == ("drop", ("function_call",), {})


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # in prose, "function call" is the capability: every tool key of the body goes
        (
            "Function call is not supported for this model",
            body(functions=FUNCTIONS, function_call="auto"),
            ("functions", "function_call"),
        ),
        (
            "function calling is not supported by this model",
            _with_tools(function_call="auto"),
            ("function_call", "tools", "tool_choice"),
        ),
        # the identifier where the body has no such key: still the capability
        ("function_call is not supported", _with_tools(), ("tools", "tool_choice")),
        ("Tool choice is not supported", _with_tools(), ("tools", "tool_choice")),
        # `tool_choice` spelled as the key names it alone, as before
        ("tool_choice is not supported", _with_tools(), ("tool_choice",)),
    ],
)
def test_function_calling_in_prose_is_still_the_capability(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", dropped), verdict


@pytest.mark.parametrize(
    ("message", "sent", "dropped", "rename"),
    [
        # advice naming several keys is no key refused, nor a key to move a value to
        (
            "'functions' is deprecated; use tools or tool_choice instead",
            _with_tools(functions=FUNCTIONS),
            ("functions",),
            {},
        ),
        # one key advised is still the replacement
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            body(max_tokens=10),
            ("max_tokens",),
            {"max_tokens": "max_completion_tokens"},
        ),
        # advice that is no key leaves the refused key named
        ("stop must be a string or list; use a list instead", body(stop="x"), ("stop",), {}),
        (
            "'stream_options' is not supported, use 'stream' instead",
            body(stream_options={"include_usage": True}),
            ("stream_options",),
            {},
        ),
    ],
)
def test_advice_names_no_key(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...], rename: dict[str, str]
) -> None:
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop, dict(verdict.rename)) == ("drop", dropped, rename)


def test_a_model_served_at_another_api_only_is_no_bodys_fault() -> None:
    """Databricks (databricks__model_only_supports_the_responses_api_...): before, static."""
    message = (
        "Model databricks-gpt-5-1-codex-max only supports the Responses API. "
        "Please use /serving-endpoints/responses instead."
    )
    payload = {"error_code": "BAD_REQUEST", "message": message}
    assert response(400, payload, body(temperature=0.2)).action == "surface"


@pytest.mark.parametrize(
    ("message", "action", "dropped"),
    [
        # a key named beside the API's name is still the key refused
        (
            "Invalid value for 'response_format': 'json_object' is not supported with the "
            "Responses API.",
            "drop",
            ("response_format",),
        ),
        # nothing named, no other API: the static list, as before
        ("Bad request", "static", ()),
        ("Please use /v1/chat/completions with a valid body", "static", ()),
        ("The model returned no responses for this request", "static", ()),
    ],
)
def test_words_near_another_api_keep_their_reading(
    message: str, action: str, dropped: tuple[str, ...]
) -> None:
    sent = body(temperature=0.2, response_format={"type": "json_object"})
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == (action, dropped), verdict


@pytest.mark.parametrize(
    "message",
    ["'logprobs' is not supported by this model", "logprobs is not supported on this model"],
)
def test_a_key_refused_by_this_model_is_no_missing_model(message: str) -> None:
    """Before, "model\\n'logprobs' is not supported" across the message and its copy in the
    raw body read as "model ... is not supported": the model missing, surfaced."""
    verdict = response(400, _error(message), body(logprobs=True, temperature=0.2))
    assert (verdict.action, verdict.drop) == ("drop", ("logprobs",)), verdict


@pytest.mark.parametrize(
    "message",
    [
        "The requested model is not supported",
        "The 'gpt-5' model is not supported when using this endpoint.",
        "model gpt-x is not supported",
    ],
)
def test_a_model_not_supported_still_surfaces(message: str) -> None:
    assert response(400, _error(message), body(temperature=0.2)).action == "surface"


_HOSTILE = {
    "advice lists": "use a/" + "b/" * 16_384 + " instead",
    "advice words": "use a or " * 7_281,
    "model lines": "model x\n" * 8_192,
    "legacy key": "function_call " * 4_681,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = _with_tools(function_call="auto", temperature=0.1)
    error = ErrorInfo(kind="rejected", message=text, status=400, provider="p")
    verdicts: list[Verdict] = []
    reader = threading.Thread(
        target=lambda: verdicts.append(classify(error, sent, DEGRADES)), daemon=True
    )
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is a fraction of a second
    assert verdicts


def test_a_value_refused_with_another_value_advised_is_no_rename() -> None:
    """ "Invalid value for 'response_format': use json_schema instead" advises a value of
    the key, not a key to move it to: `response_format` is dropped, not renamed to a
    `json_schema` no endpoint reads. The parameter advice still renames."""
    sent = body(response_format={"type": "json_object"}, temperature=0.2)
    message = "Invalid value for 'response_format': use json_schema instead"
    verdict = response(400, _error(message, param="response_format"), sent)
    assert (verdict.action, verdict.drop, dict(verdict.rename)) == (
        "drop",
        ("response_format",),
        {},
    )
    openai = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead."
    )
    verdict = response(400, _error(openai, param="max_tokens"), body(max_tokens=100))
    assert dict(verdict.rename) == {"max_tokens": "max_completion_tokens"}
