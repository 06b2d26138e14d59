"""Rejections no body can fix, in words the earlier rules did not read: a moderation's
verdict that never says "content policy", an account barred or over its spending cap at
400, and a prompt said to exceed a length. Each one was read as `static` (nothing named,
400, so the body must be at fault) and sent again without its optional keys, which only
repeats the refusal. The real bodies are in tests/rejections_extra (DeepSeek's
"Content Exists Risk", DashScope's `data_inspection_failed`, Zhipu's 1301 and 1261,
Groq's `organization_restricted`, Anthropic's "specified API usage limits"); these are
paraphrases and near misses of the same words, read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import body, response

SENT = body(temperature=0.7, max_tokens=1024, top_p=0.9)


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


@pytest.mark.parametrize(
    "message",
    [
        "Input data may contain inappropriate content.",
        "The request failed because the input text may contain sensitive information.",
        "Content Exists Risk",
        "Output data may contain unsafe content.",
        "输入内容包含敏感词",  # the input holds sensitive words
        "系统检测到输入或生成内容可能包含不安全或敏感内容",  # unsafe or sensitive content
    ],
)
def test_a_moderation_verdict_in_its_own_words_surfaces(message: str) -> None:
    assert response(400, _error(message), SENT).action == "surface"


@pytest.mark.parametrize(
    "message",
    [
        "Organization has been restricted. Please reach out to support.",
        "Your account has been suspended due to a policy violation",
        "This workspace is disabled.",
        "You have reached your specified API usage limits. You will regain access on "
        "2026-04-01 at 00:00 UTC.",
        "Monthly spending limit reached for this key",
    ],
)
def test_the_caller_barred_or_over_its_cap_surfaces_at_400(message: str) -> None:
    assert response(400, _error(message), SENT).action == "surface"


def test_a_rate_limit_that_names_its_wait_still_backs_off_whatever_it_calls_itself() -> None:
    """ "usage limit" is an account's word only where nothing says a wait helps."""
    error = _error("Usage limit reached for this minute. Please try again in 2s.")
    verdict = response(429, error, SENT)
    assert (verdict.action, verdict.delay) == ("backoff", 2.0)


@pytest.mark.parametrize(
    "message", ["Prompt exceeds max length", "Input exceeds the maximum allowed length"]
)
def test_a_prompt_over_a_length_is_the_size(message: str) -> None:
    assert response(400, _error(message), SENT).action == "surface"


def test_near_misses_still_name_their_keys() -> None:
    """The new words stay where they mean the caller or the content: a key named in the
    same breath is still dropped."""
    cases = [
        # "sensitive" of a value, not of content
        ("'top_p' is sensitive to temperature; set only one", ("top_p",)),
        # a key that exceeds a length is that key's
        ("max_tokens exceeds max length of 8192", ("max_tokens",)),
        # "content" of a key's own refusal, no moderation word
        ("Unsupported parameter: 'temperature' is not supported.", ("temperature",)),
    ]
    for message, dropped in cases:
        verdict = response(400, _error(message), SENT)
        assert (verdict.action, verdict.drop) == ("drop", dropped), message


def test_a_field_that_opens_the_message_before_a_colon_is_named() -> None:
    """Validators write "field: message"; the field is the location, whatever the
    language of the words after it (Zhipu's "stop:最大只能有4个停止词")."""
    sent = body(stop=["a", "b", "c", "d", "e"], temperature=0.2)
    for message in ("stop:最大只能有4个停止词", "stop: must contain at most 4 items"):
        verdict = response(400, _error(message), sent)
        assert (verdict.action, verdict.drop) == ("drop", ("stop",)), message
    # a word before a colon that is no key of the body, or a URL's scheme, names nothing
    sent = body(temperature=0.2)
    for message in ("Error: invalid request", "https://docs.example.com/temperature"):
        assert response(400, _error(message), sent).action == "static", message
