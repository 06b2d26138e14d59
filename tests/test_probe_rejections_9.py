"""The same rejection in every envelope reads the same.

Each of the 28 shared rejections and 40 of tests/rejections_extra is taken apart into
what a server says (its message, unchanged, and its `param`, `code` and `type` where it
has them) and put back together in the envelope of each server below, as an HTTP body
and, where the chat wire reads one, as a `data:` frame after `200 OK`. Each combination
is read as the source reads it (`tests.test_probe_rejections_7.response` and `frame`)
and must get the original's action and dropped keys, unless the envelope loses what the
action rests on and the words cannot say it (`DIFFERENT`, each with its reason).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import rxllm
from rxllm.degradation import RecoveryPolicy, Verdict, classify
from rxllm.error_body import parse_error_body, status_envelope
from rxllm.events import Failed
from tests.support import NO_CAPTURES, REJECTIONS
from tests.test_probe_rejections_7 import IMAGE, TOOLS, frame, response

EXTRA = Path(__file__).parent / "rejections_extra"
# Forty extra cases, every action represented: drop 14, none 10, backoff 7, images 4,
# static 5.
EXTRA_CASES = (
    "azure-openai__404_unrecognized_argument_tools",
    "cerebras__store_property_unsupported",
    "dashscope__enable_thinking_false_chinese",
    "dashscope__sse_range_of_max_tokens",
    "deepseek__presence_penalty_backticked",
    "gemini__unknown_names_four_keys",
    "groq__store_unsupported_did_you_mean_stop",
    "litellm_bedrock__temperature_and_top_p_cannot_both_be_specified",
    "mistral__extra_forbidden_n",
    "nvidia__422_pydantic_v1_body_arrows",
    "ollama__model_does_not_support_thinking",
    "openai__max_tokens_and_max_completion_tokens_same_time",
    "openrouter__no_endpoints_tool_use_try_disabling",
    "xai__argument_not_supported_on_this_model_camelcase",
    "anthropic__prompt_is_too_long_tokens_maximum",
    "copilot_api__unexpected_anthropic_beta_header",
    "deepseek__successive_user_messages",
    "gemini__user_location_failed_precondition",
    "groq__413_request_too_large_tpm",
    "groq__nested_message_property_metadata",
    "moonshot__404_model_not_found_or_permission_denied",
    "sglang__sse_input_longer_than_context_length",
    "snowflake__account_not_allowed_403",
    "vllm__model_does_not_support_chat_completions_api",
    "deepinfra__429_model_busy",
    "gemini__429_retry_info_inside_message_json_string",
    "gemini__503_model_overloaded",
    "litellm__sse_anthropic_overloaded_code_string",
    "nvidia__degraded_function_cannot_be_invoked",
    "openai__sse_server_error_before_content",
    "together__429_credit_limit_type",
    "deepseek__unknown_variant_image_url",
    "lmstudio__model_does_not_support_images",
    "openrouter__crucible_at_most_one_image_per_prompt",
    "sub2api__chinese_model_does_not_support_image_input",
    "dashscope__required_body_invalid",
    "maritaca__422_loc_body_only_not_a_key",
    "minimax__invalid_chat_setting_2013",
    "openrouter__502_invalid_url_stealth_upstream",
    "zai__1210_invalid_api_parameter_top_level",
)
SHARED = sorted(REJECTIONS.glob("*.json")) if REJECTIONS.is_dir() else []
PATHS = SHARED + [EXTRA / f"{name}.json" for name in EXTRA_CASES]


class Said(NamedTuple):
    """What a server said, without its envelope."""

    message: str
    param: str | None
    code: str | None
    type: str | None
    status: int | None
    """The HTTP status, or the status an in-band error names (its number or its code)."""


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def said_in(payload: Any, status: int | None) -> Said:
    """Take an error payload apart: an OpenRouter body is its upstream's (the body in
    `metadata.raw`); a structured message (pydantic's list) is its readable text."""
    if isinstance(payload, list):
        payload = next(item for item in payload if isinstance(item, dict))
    if isinstance(payload.get("error"), str):
        text = payload["error"]
        return Said(text, None, _string(payload.get("code")), payload.get("error_type"), status)
    fields = payload["error"] if isinstance(payload.get("error"), dict) else payload
    raw = _string((fields.get("metadata") or {}).get("raw"))
    if raw is not None and raw.strip()[:1] in ("{", "["):
        return said_in(json.loads(raw), status)
    if raw is not None:  # the upstream's words, as text
        return Said(parse_error_body(raw).message, None, None, None, status)
    message = _string(fields.get("message")) or parse_error_body(json.dumps(payload)).message
    code = _string(fields.get("code")) or _string(fields.get("status"))  # Google's name
    kind = _string(fields.get("type"))
    if status is None and code is not None and code.isdigit():
        status = int(code)  # LiteLLM's status as the code
    kind = kind if kind != "error" else None  # Anthropic's envelope type
    return Said(message, _string(fields.get("param")), code, kind, status)


def framed(case: dict[str, Any]) -> bool:
    """Whether an in-band case's body is SSE; else it is one JSON object sent whole after
    `200 OK` in place of the stream (Baidu's `{"error_code": ..., "error_msg": ...}`)."""
    return any(line.startswith("data:") for line in case["body"].splitlines())


def error_frame(case: dict[str, Any]) -> Any:
    """The decoded `data:` frame of an in-band case that holds its error (or the object a
    case sends whole in place of the stream)."""
    if not framed(case):
        return json.loads(case["body"])
    for line in case["body"].splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            data = json.loads(line[5:])
            if chat_wire_error(data) is not None or status_envelope(data) is not None:
                return data
    raise AssertionError("no error frame")


def said(case: dict[str, Any]) -> Said:
    if case["transport"] == "http":
        text = case["body"]
        if text.strip()[:1] not in ("{", "["):
            return Said(parse_error_body(text).message, None, None, None, case["status"])
        return said_in(json.loads(text), case["status"])
    return said_in(error_frame(case), case.get("event_status"))


# -- the envelopes ---------------------------------------------------------------------


def http_status(s: Said) -> int:
    """An in-band original names no status: over HTTP it gets the one OpenAI gives its
    type (`server_error` 500, any other 400)."""
    return s.status or (500 if s.type == "server_error" else 400)


def openai(s: Said) -> Any:
    # OpenAI and most compatible servers (platform.openai.com/docs/guides/error-codes)
    return {"error": {"message": s.message, "type": s.type, "param": s.param, "code": s.code}}


def vllm(s: Said) -> Any:
    # vLLM's and SGLang's ErrorResponse: flat, `code` is the HTTP status
    return {
        "object": "error",
        "message": s.message,
        "type": s.type or "BadRequestError",
        "param": s.param,
        "code": s.status,
    }


def fastapi(s: Said) -> Any:
    # FastAPI's HTTPException (Mistral's and many Python servers' 4xx)
    return {"detail": s.message}


def tgi(s: Said) -> Any:
    # text-generation-inference's ErrorResponse (router/src/lib.rs)
    return {"error": s.message, "error_type": s.type or "validation"}


def ollama(s: Said) -> Any:
    # Ollama's native API
    return {"error": s.message}


# llama.cpp's server: `format_error_response` maps its error types to statuses
_LLAMACPP_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    501: "not_supported_error",
    503: "unavailable_error",
}


def llamacpp(s: Said) -> Any:
    # llama.cpp's server (tools/server/utils.hpp, format_error_response)
    status = http_status(s)
    fallback = "server_error" if status >= 500 else "invalid_request_error"
    kind = s.type or _LLAMACPP_TYPES.get(status, fallback)
    return {"error": {"code": status, "message": s.message, "type": kind}}


# Anthropic's error types by status (docs.claude.com/en/api/errors)
_ANTHROPIC_TYPES = {
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def anthropic(s: Said) -> Any:
    # Anthropic's Messages API and the servers that copy it
    status = http_status(s)
    fallback = "api_error" if status >= 500 else "invalid_request_error"
    kind = s.type or _ANTHROPIC_TYPES.get(status, fallback)
    return {"type": "error", "error": {"type": kind, "message": s.message}}


# google.rpc.Code names by HTTP status (cloud.google.com/apis/design/errors)
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def google(s: Said) -> Any:
    # Google's APIs (Gemini, Vertex): the field refused as a BadRequest fieldViolation
    status = http_status(s)
    details = (
        [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": s.param, "description": s.message}],
            }
        ]
        if s.param
        else []
    )
    return {
        "error": {
            "code": status,
            "message": s.message,
            "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
            "details": details,
        }
    }


def openrouter(s: Said) -> Any:
    # OpenRouter: the upstream's (OpenAI-shaped) body as a JSON string in `metadata.raw`
    return {
        "error": {
            "message": "Provider returned error",
            "code": http_status(s),
            "metadata": {"raw": json.dumps(openai(s)), "provider_name": "Upstream"},
        }
    }


# LiteLLM's exception class by status (litellm/exceptions.py)
_LITELLM_CLASSES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
}


def litellm(s: Said) -> Any:
    # LiteLLM's proxy: its exception class before the provider's words, `code` the status
    status = http_status(s)
    name = _LITELLM_CLASSES.get(status, "APIError")
    return {
        "error": {
            "message": f"litellm.{name}: OpenAIException - {s.message}",
            "type": s.type,
            "param": s.param,
            "code": str(status),
        }
    }


def plain(s: Said) -> Any:
    # a plain-text body (`text/plain`): a proxy's or a bare server's words
    return s.message


ENVELOPES = {
    "openai": openai,
    "vllm": vllm,
    "fastapi": fastapi,
    "tgi": tgi,
    "ollama": ollama,
    "llamacpp": llamacpp,
    "anthropic": anthropic,
    "google": google,
    "openrouter": openrouter,
    "litellm": litellm,
    "plain": plain,
}


def chat_wire_error(data: Any) -> Any:
    """The error the chat wire reads in a `data:` frame (`_beside_choices`): its `error`,
    or the frame itself when it is flat (`"object": "error"`); None when it reads none."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if error is None and "error" in (data.get("object"), data.get("type")):
        return data
    return error


# -- reading -------------------------------------------------------------------------


def sent(case: dict[str, Any]) -> dict[str, Any]:
    """The chat body the case's request becomes (as `tests/test_rejections.request_for`
    asks for it, as the chat wire writes it)."""
    wanted = case["request"]
    content: list[dict[str, Any]] = [{"type": "text", "text": "Describe this, please."}]
    body: dict[str, Any] = {
        "model": "case-model",
        "messages": [{"role": "user", "content": content + [IMAGE] * wanted.get("images", 0)}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "seed": 7,
        "user": "case-user",
        **wanted.get("params", {}),
    }
    for key in wanted.get("keep", []):
        body.setdefault(key, {"enabled": True})
    if wanted.get("tools"):
        body["tools"] = TOOLS
    return body


def policy(case: dict[str, Any]) -> RecoveryPolicy:
    provider = rxllm.provider(case["preset"], api_key="k", base_url="http://127.0.0.1:9/v1")
    return provider.wire.recovery


# Presets whose wire is not the chat wire: an in-band case of theirs is that wire's own error
# frame (Anthropic's `event: error`, a Responses `response.failed`, Gemini's error object),
# read by the wire itself. Their policies degrade no body, so the chat body `sent` stands in.
OTHER_WIRES = frozenset({"anthropic", "google", "openai-responses"})


def in_its_wire(case: dict[str, Any]) -> Failed:
    """The error an in-band case of another wire ends its turn in, read by that wire."""
    events: list[Any] = []
    rxllm.replay(case["body"].encode(), provider=case["preset"]).subscribe(events.append)
    end = events[-1]
    assert isinstance(end, Failed), end
    return end


def original(case: dict[str, Any]) -> Verdict:
    if case["transport"] == "http":
        return response(
            case["status"], case["body"], sent(case), policy(case), case["headers"] or {}
        )
    # (and a status object, whole or in a chunk: the wire reads it, `status_envelope`)
    if case["preset"] in OTHER_WIRES or chat_wire_error(error_frame(case)) is None:
        return classify(in_its_wire(case).error, sent(case), policy(case))
    return frame(chat_wire_error(error_frame(case)), sent(case), policy(case))


def wrapped(case: dict[str, Any], envelope: str, in_band: bool) -> Verdict | None:
    s = said(case)
    payload = ENVELOPES[envelope](s)
    if not in_band:
        return response(http_status(s), payload, sent(case), policy(case))
    error = chat_wire_error(payload)
    return None if error is None else frame(error, sent(case), policy(case))


# Envelopes the chat wire reads no error in, sent as a frame: FastAPI's has no `error`
# member (a chunk of unknown keys), plain text is no JSON.
NOT_IN_BAND = frozenset({"fastapi", "plain"})


def combinations() -> list[Any]:
    cases = []
    for path in PATHS:
        for envelope in ENVELOPES:
            for in_band in (False, True) if envelope not in NOT_IN_BAND else (False,):
                name = f"{path.stem}/{envelope}{'/sse' if in_band else ''}"
                cases.append(pytest.param(path, envelope, in_band, id=name))
    return cases


# Combinations whose envelope loses what the original's action rests on: id -> why.
_PAIR = "openai__max_tokens_and_max_completion_tokens_same_time/"
_PAIR_WHY = "no `param` points at one key of the pair, so both go (accepted too)"
# The envelopes that have no `param`.
NO_PARAM = (
    "fastapi",
    "tgi",
    "tgi/sse",
    "ollama",
    "ollama/sse",
    "llamacpp",
    "llamacpp/sse",
    "anthropic",
    "anthropic/sse",
    "plain",
)

DIFFERENT: dict[str, str] = {
    **{_PAIR + envelope: _PAIR_WHY for envelope in NO_PARAM},
    "openai__insufficient_quota_429/google": "Google's 429 status is RESOURCE_EXHAUSTED, a rate "
    "limit's code, and `insufficient_quota` is lost: quota words under it are a rate limit",
    "openai__insufficient_quota_429/google/sse": "as over HTTP",
    "nvidia__opaque_500_internal_server_error/openrouter": "OpenRouter's words and the "
    "provider's name precede the upstream's: the body says more than 'Internal server error'",
    "nvidia__opaque_500_internal_server_error/openrouter/sse": "as over HTTP",
    "openrouter__502_invalid_url_stealth_upstream/plain": "plain text at 502 is no router's "
    "JSON error (OpenRouter's always is one): a proxy's in front of it that got no answer, "
    "the same body later (backoff), not OpenRouter refusing the body",
    "openrouter__502_invalid_url_stealth_upstream/anthropic/sse": "the frame has no status, "
    "and its type for a 5xx (`api_error`) says the server's trouble, not OpenRouter's 502",
    **{
        f"openrouter__502_invalid_url_stealth_upstream/{envelope}/sse": "a 502 in a frame after "
        "`200 OK` is an upstream that failed while streaming, not OpenRouter's HTTP 502 (no "
        "provider accepts the body): the server's trouble, a backoff"
        for envelope in ("vllm", "llamacpp", "google", "openrouter", "litellm")
    },
}


@pytest.mark.skipif(not SHARED, reason=NO_CAPTURES)
@pytest.mark.parametrize(("path", "envelope", "in_band"), combinations())
def test_every_envelope_reads_the_same(path: Path, envelope: str, in_band: bool) -> None:
    case = json.loads(path.read_text())
    verdict = wrapped(case, envelope, in_band)
    assert verdict is not None
    expected = original(case)
    got = (verdict.action, set(verdict.drop))
    name = f"{path.stem}/{envelope}{'/sse' if in_band else ''}"
    if name in DIFFERENT:
        assert got != (expected.action, set(expected.drop)), "now reads the same: unmark it"
        return
    assert got == (expected.action, set(expected.drop)), (verdict, said(case))


# Inputs aimed at the readings added with these combinations (a status line, the server's
# trouble in words, a dotted model name, the caller refused, relay classes before an opaque
# 500, an error body after a relay's words).
_HOSTILE = {
    "spaces before a status line": " " * 65_536,
    "server trouble words": "server had an " * 4_681,
    "dots after model": "model " + "a." * 32_765,
    "account words": "account is not " * 4_369,
    "relay classes": "AError " * 9_362,
    "a brace after text": "x" * 65_535 + "{",
    "braces": "{" * 65_536,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    nvidia = RecoveryPolicy(degrade=True, degrade_on_opaque_server_error=True)
    body = {"model": "m", "messages": [], "stream": True, "user": "u", "temperature": 1}
    verdicts: list[Verdict] = []

    def read() -> None:
        for status in (None, 500):
            verdicts.append(
                frame(text, body, nvidia)
                if status is None
                else response(status, {"error": text}, body, nvidia)
            )

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is about a second here
    assert len(verdicts) == 2
