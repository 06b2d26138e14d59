"""A read-only review of the day's new rejection rules proved, with scripts, that some of
them misread everyday rejections; these are those rejections (paraphrases, each read as
`sources.http` reads a rejection: `test_probe_rejections_7.response`), and each failed
before its fix."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import body, response


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


def test_a_prompt_a_validator_echoes_names_no_key() -> None:
    """FastAPI's 422 (`{"detail": exc.errors()}`) refuses a message's role and echoes the
    message as its `input`; a few-shot prompt's "user: ..." lines are the client's data,
    not the `user` key: the conversation is refused, nothing is dropped."""
    prompt = "Classify the last line.\nuser: I love this phone\nassistant: positive\nuser: meh"
    detail = {
        "type": "union_tag_invalid",
        "loc": ["body", "messages", 0],
        "msg": "Input tag 'developer' found using 'role' does not match any of the "
        "expected tags: 'system', 'user', 'assistant'",
        "input": {"role": "developer", "content": prompt},
    }
    verdict = response(422, {"detail": [detail]}, body(user="u-1", temperature=0.2))
    assert verdict.action == "surface", verdict


def test_a_transcript_the_message_quotes_names_no_key() -> None:
    message = "Invalid conversation:\nuser: hello\nuser: again\nroles must alternate"
    verdict = response(400, _error(message), body(user="u-1", temperature=0.2))
    assert verdict.action == "surface", verdict


@pytest.mark.parametrize(
    "message",
    [
        "Usage limit reached for this minute. Please try again later.",
        "Rate limit exceeded: usage limit of 20 requests reached. Please retry later.",
        "Too many requests: you hit the usage limit, try again later",
    ],
)
def test_a_usage_limit_that_a_wait_lifts_backs_off(message: str) -> None:
    assert response(429, _error(message), body(temperature=0.2)).action == "backoff"


def test_the_callers_own_usage_limit_surfaces_and_a_keys_does_not() -> None:
    anthropic = (
        "You have reached your specified API usage limits. You will regain access on 2026-12-31"
    )
    assert response(400, _error(anthropic), body(temperature=0.2)).action == "surface"
    key = _error("max_tokens exceeds the output token usage limit of 8192", param="max_tokens")
    verdict = response(400, key, body(max_tokens=100000))
    assert (verdict.action, verdict.drop) == ("drop", ("max_tokens",))


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        (
            "logprobs is not supported for this model because it may expose sensitive information",
            {"logprobs": True},
            "logprobs",
        ),
        (
            "Invalid value for safety_settings: category HARM_X is not a valid harmful "
            "content category",
            {"safety_settings": [{"category": "HARM_X"}]},
            "safety_settings",
        ),
    ],
)
def test_moderation_words_about_a_key_are_not_a_moderation(
    message: str, sent: dict[str, Any], dropped: str
) -> None:
    verdict = response(400, _error(message), body(**sent))
    assert verdict.action == "drop" and dropped in verdict.drop, verdict


def test_a_key_restricted_for_an_account_is_the_keys() -> None:
    """ "is restricted" refuses the caller where the sentence ends there (Groq's "has been
    restricted. Please reach out to support"), not where it goes on to a key."""
    groq = "Organization has been restricted. Please reach out to support."
    assert response(400, _error(groq), body(temperature=0.2)).action == "surface"
    message = "This account is restricted: 'service_tier' flex is not available"
    verdict = response(400, _error(message, param="service_tier"), body(service_tier="flex"))
    assert (verdict.action, verdict.drop) == ("drop", ("service_tier",))


def test_a_value_over_a_length_is_the_keys_and_a_prompt_over_it_the_size() -> None:
    verdict = response(
        400, _error("max_tokens is too large: inputs exceed max length"), body(max_tokens=10**6)
    )
    assert (verdict.action, verdict.drop) == ("drop", ("max_tokens",))
    prompt = response(400, _error("Prompt exceeds max length"), body(temperature=0.2))
    assert prompt.action == "surface"


def test_a_provider_key_refused_is_dropped_and_a_gateways_provider_surfaces() -> None:
    """OpenRouter's `provider` (routing preferences) is a key of the body; a gateway's
    "Invalid provider" without one is the model's route."""
    sent = body(provider={"only": ["Foo"]}, temperature=0.2)
    verdict = response(400, _error("Unknown provider 'Foo' in provider.only"), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("provider",))
    assert response(400, _error("Invalid provider"), body(temperature=0.2)).action == "surface"


def test_keys_refused_with_this_model_are_not_a_pair() -> None:
    """ "with" pairs two keys ("Function tools with reasoning_effort"), not keys refused
    "with this model": with `param` at one, both still go."""
    message = "Unsupported parameters: 'temperature' and 'top_p' are not supported with this model."
    verdict = response(400, _error(message, param="temperature"), body(temperature=0.2, top_p=0.9))
    assert set(verdict.drop) == {"temperature", "top_p"}


# -- a second review, of all the day's rules: everyday rejections they misread ----------


def test_a_text_literal_at_another_key_refuses_that_key_not_the_images() -> None:
    """ "Input should be 'text'" removes the images only where the error points into a
    message's content: at `response_format.type` it refuses that key's value."""
    detail = {
        "type": "literal_error",
        "loc": ["body", "response_format", "type"],
        "msg": "Input should be 'text'",
        "input": "json_schema",
    }
    sent = body(images=True, response_format={"type": "json_schema"})
    verdict = response(422, {"detail": [detail]}, sent)
    assert (verdict.action, verdict.drop) == ("drop", ("response_format",))


@pytest.mark.parametrize("message", ["Unknown provider error", "Invalid provider response"])
def test_a_providers_failed_answer_backs_off(message: str) -> None:
    assert response(502, _error(message), body(temperature=0.2)).action == "backoff"


def test_an_unsupported_provider_option_is_the_keys() -> None:
    error = _error("unsupported provider option: reasoning_effort", param="reasoning_effort")
    verdict = response(400, error, body(reasoning_effort="low"))
    assert (verdict.action, verdict.drop) == ("drop", ("reasoning_effort",))


def test_a_key_of_several_words_not_implemented_is_that_key() -> None:
    """ "not yet implemented" refuses the key it follows, as "not supported" does; the
    tools stay."""
    sent = body(tools=[{"type": "function", "function": {"name": "f"}}], parallel_tool_calls=True)
    message = "Parallel tool calls are not yet implemented for this model"
    verdict = response(400, _error(message), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("parallel_tool_calls",))


def test_a_usage_limit_a_short_wait_lifts_backs_off() -> None:
    message = "You have reached your usage limit. Please wait a moment before sending more."
    assert response(429, _error(message), body(temperature=0.2)).action == "backoff"


def test_moderation_words_about_a_named_key_are_that_keys() -> None:
    verdict = response(400, _error("logit_bias contains prohibited words"), body(logit_bias={}))
    assert (verdict.action, verdict.drop) == ("drop", ("logit_bias",))


def test_a_feature_disabled_for_a_project_is_its_key() -> None:
    message = "Storing responses for this project is disabled."
    verdict = response(400, _error(message, param="store"), body(store=True))
    assert (verdict.action, verdict.drop) == ("drop", ("store",))


def test_a_keys_input_over_a_length_is_that_key() -> None:
    verdict = response(400, _error("'user' input exceeds maximum length of 256"), body())
    assert (verdict.action, verdict.drop) == ("drop", ("user",))


def test_an_unsupported_model_for_a_key_is_that_key() -> None:
    message = "Unsupported model 'o1-mini' for parameter 'reasoning_effort'"
    verdict = response(400, _error(message, param="reasoning_effort"), body(reasoning_effort="low"))
    assert (verdict.action, verdict.drop) == ("drop", ("reasoning_effort",))


def test_only_supports_of_a_keys_value_is_no_capability() -> None:
    functions = [{"name": "f", "parameters": {"type": "object"}}]
    message = "stop only supports up to 4 sequences; functions are fine"
    verdict = response(
        400, _error(message, param="stop"), body(stop=list("abcde"), functions=functions)
    )
    assert (verdict.action, verdict.drop) == ("drop", ("stop",))


def test_a_call_checked_against_a_tool_schema_is_no_definition_refused() -> None:
    """Groq's tool_use_failed: the model's call failed the schema; the tools are fine."""
    message = (
        "tool call validation failed: arguments do not match the tool schema: "
        "'city' is a required property"
    )
    error = _error(message, code="tool_use_failed")
    verdict = response(400, error, body(tools=[{"type": "function", "function": {"name": "f"}}]))
    assert "tools" not in verdict.drop


def test_an_indented_request_echo_names_no_key() -> None:
    message = "request:\n  temperature: 0.2\n  top_k: 40\nerror: top_k is not supported"
    verdict = response(400, _error(message), body(temperature=0.2, top_k=40))
    assert (verdict.action, verdict.drop) == ("drop", ("top_k",))
