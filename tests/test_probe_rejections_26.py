"""The ninth round of unseen rejections (tests/rejections_extra, 27 cases from families the
earlier rounds had few or none of: GigaChat, IBM watsonx.ai, ModelScope, StepFun behind
OpenRouter, KServe, NVIDIA Dynamo, Snowflake Cortex, Ollama Cloud's usage caps, Fireworks'
schema check, Anthropic's image errors, llama.cpp's prefill guard) taught these readings; the
bodies near each that must not change with them are read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`), or as the chat wire reads a frame after `200 OK`. The
words are paraphrases of the servers' formats.

- A JSON schema refused without its owner named, in words ("JSON Schema not supported: could
  not understand the instance ...") or by a path rooted at a schema's own keyword ("Field
  'properties.data.properties' is missing"), names the one key of the body that holds
  schemas: the tools, or a response_format with a json_schema; with both, neither
  (fireworks__json_schema_not_supported_could_not_understand_instance,
  gigachat__422_field_properties_data_properties_is_missing: before, static).
- A never-dropped key refused as unknown ("Unknown name \\"messages\\": Cannot find field.",
  beside `temperature` and `stream`) says the body reached another API: no body without the
  others passes (gemini__native_unknown_name_messages_openai_body_at_native_endpoint: before,
  drop `temperature`, `top_p`, `stream_options`).
- A turn that ended with `finish_reason: "error"` and no error object the wire reads is the
  generation failing, the server's trouble
  (openrouter__sse_choice_error_processing_stream_502_retryable: before, static).
- An image the server could not process, read, decode or load is image input refused
  (anthropic__could_not_process_image: before, static).
- A model or server "not ready yet" is a wait, whatever its status
  (kserve__400_model_is_not_ready_yet_scale_from_zero: before, static).
- The chat's messages in other words are the conversation: "chat message", an assistant
  "prefill", the "parts field" of a turn's content
  (openrouter__stepfun_unrecognized_chat_message,
  llamacpp__assistant_response_prefill_incompatible_with_enable_thinking,
  vertex__gemini_must_include_at_least_one_parts_field: before, static).
- "can not be" in two words, and "can not be support" in a server's own English, refuses the
  key before it (modelscope__enable_thinking_can_not_be_support_when_stream_false: before,
  static).

The round's other cases were read right before:
anthropic__image_format_not_supported_at_base64_data,
bedrock__validation_model_does_not_support_image_field_for_user_messages,
copilot__model_not_supported_for_this_request_param_model,
dashscope__enable_thinking_parameter_restricted_to_true,
dashscope__tool_choice_is_one_of_the_strings_none_auto,
dynamo__503_model_not_ready_to_serve_requests_retry_shortly,
litellm_bedrock__guardrails_extra_inputs_are_not_permitted,
minimax__2013_invalid_params_unknown_model,
mistral__422_extra_forbidden_safe_mode,
ollama_cloud__429_weekly_usage_limit_upgrade,
snowflake__assistant_role_in_final_position_when_tools_used,
volcengine__invalid_combination_of_reasoning_effort_and_thinking_type,
volcengine__unsupported_image_format_param_image_url,
watsonx__json_validation_error_tools_function_parameters_pointer,
watsonx__missing_json_field_response_format_type,
xai__argument_not_supported_include,
zai__1214_messages_parameter_is_illegal.

(Left out here as debatable: the error object OpenRouter puts inside a choice. The chat wire
reads it since, its "Error processing stream", 502 and `metadata.raw.retryable`; the 502 of
an error after `200 OK` is an upstream that failed while streaming, a backoff, as OpenRouter's
502 rule reads the HTTP status only.)
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rxllm.degradation import classify
from rxllm.events import ErrorInfo
from tests.test_probe_rejections_7 import DEGRADES, OPENROUTER, TOOLS, body, frame, response

SCHEMA_OUTPUT = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _google(message: str) -> dict[str, Any]:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def _verdict(payload: Any, sent: dict[str, Any], status: int = 400) -> tuple[str, tuple[str, ...]]:
    verdict = response(status, payload, sent)
    return verdict.action, verdict.drop


FIREWORKS = "JSON Schema not supported: could not understand the instance `{'required': ['q']}`."
GIGACHAT = "Field 'properties.data.properties' is missing"


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        (FIREWORKS, body(tools=TOOLS, tool_choice="auto"), ("drop", ("tools", "tool_choice"))),
        (GIGACHAT, body(tools=TOOLS, temperature=0.2), ("drop", ("tools",))),
        # the output's schema, where it is the one the body holds
        (FIREWORKS, body(response_format=SCHEMA_OUTPUT), ("drop", ("response_format",))),
        # a JSON pointer rooted at a schema keyword, quoted as a location
        (
            "Json document validation error: at '/items/0/type': value must be a string",
            body(tools=TOOLS),
            ("drop", ("tools",)),
        ),
    ],
)
def test_a_schema_refused_names_the_one_key_holding_schemas(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), sent) == expected


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # both the tools and the output hold schemas: which one is not said
        (FIREWORKS, body(tools=TOOLS, response_format=SCHEMA_OUTPUT)),
        # no schema in the body: json_object carries none
        (FIREWORKS, body(response_format={"type": "json_object"})),
        # the model's output checked against the schema, not the schema refused
        ("Generated JSON is invalid against the JSON schema.", body(response_format=SCHEMA_OUTPUT)),
        # a plain word, not a path into a schema
        ("Unknown properties are not allowed in this request.", body(tools=TOOLS)),
        # a schema named, nothing refused
        ("The JSON schema was compiled to a grammar.", body(tools=TOOLS)),
    ],
)
def test_schema_words_near_the_rule(message: str, sent: dict[str, Any]) -> None:
    assert _verdict(_error(message), sent) == ("static", ())


GEMINI_NATIVE = "\n".join(
    f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
    for key in ("messages", "temperature", "stream")
)


@pytest.mark.parametrize(
    "payload",
    [
        _google(GEMINI_NATIVE),
        _error("Unrecognized request argument supplied: stream"),
        # a validator's item at the key: its location quoted before the words
        {
            "detail": [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "messages"],
                    "msg": "Extra inputs are not permitted",
                }
            ]
        },
    ],
)
def test_a_never_dropped_key_unknown_means_another_api(payload: Any) -> None:
    assert _verdict(payload, body(temperature=0.2)) == ("surface", ())


@pytest.mark.parametrize(
    ("payload", "sent", "expected"),
    [
        # only optional keys unknown
        (
            _google(
                'Invalid JSON payload received. Unknown name "temperature": Cannot find field.'
            ),
            body(temperature=0.2),
            ("drop", ("temperature",)),
        ),
        # the never-dropped keys only in the list of the known ones
        (
            _error("unknown field `stream_option`, expected one of `model`, `stream`, `seed`"),
            body(temperature=0.2),
            ("static", ()),
        ),
        # a longer key that starts with a never-dropped one's name
        (
            _error("Unknown parameter: 'model_version'."),
            body(model_version="2024-01"),
            ("drop", ("model_version",)),
        ),
    ],
)
def test_unknown_key_words_near_the_rule(
    payload: Any, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(payload, sent) == expected


def _failed_finish(**fields: Any) -> ErrorInfo:
    """What the chat wire reports for `finish_reason: "error"` with no error object read."""
    base: dict[str, Any] = {
        "kind": "stream_error",
        "message": "p ended the turn with finish_reason 'error'",
        "status": None,
        "provider": "p",
        "code": "error",
    }
    return ErrorInfo(**{**base, **fields})


@pytest.mark.parametrize("policy", [OPENROUTER, DEGRADES])
def test_a_failed_finish_is_the_servers_trouble(policy: Any) -> None:
    assert classify(_failed_finish(), body(temperature=0.2), policy).action == "backoff"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        # the same code beside words that name a key
        (_failed_finish(message="temperature is not supported"), ("drop", ("temperature",))),
        # a 4xx is the request's fault whatever its code says
        (_failed_finish(status=400, kind="rejected"), ("static", ())),
    ],
)
def test_failed_finish_near_the_rule(
    error: ErrorInfo, expected: tuple[str, tuple[str, ...]]
) -> None:
    verdict = classify(error, body(temperature=0.2), OPENROUTER)
    assert (verdict.action, verdict.drop) == expected


def test_an_error_typed_error_is_no_failed_finish() -> None:
    # Anthropic's in-band envelope is typed "error" whatever it says: not the server's trouble
    payload = {"type": "error", "error": {"type": "invalid_request_error", "message": "Bad input"}}
    assert frame(payload, body(temperature=0.2)).action == "static"


@pytest.mark.parametrize(
    "message",
    [
        "Could not process image",
        "The image could not be processed.",
        "Unable to decode the image data.",
        "Failed to load image from the URL provided.",
    ],
)
def test_an_image_the_server_could_not_read_is_refused(message: str) -> None:
    assert _verdict(_error(message), body(images=True, temperature=0.2)) == ("images", ())


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # no image words
        ("Could not process request", ("static", ())),
        # the image fine, a key refused in the next sentence
        ("The image is fine. Could not parse 'temperature'.", ("drop", ("temperature",))),
        # images refused only where a role may not carry them: the conversation
        ("Could not process image in a system message", ("surface", ())),
    ],
)
def test_image_reading_words_near_the_rule(
    message: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), body(images=True, temperature=0.2)) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {"error": "Model sklearn-iris is not ready yet."},
        {"error": "Model with name llama-3-8b is not ready."},
        _error("The server is not ready to accept requests."),
    ],
)
def test_a_model_not_ready_yet_is_a_wait(payload: Any) -> None:
    assert _verdict(payload, body(temperature=0.2)) == ("backoff", ())


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # not ready for a capability: no wait brings it
        ("The model is not ready for tool calling.", body(tools=TOOLS), ("static", ())),
        # the model ready, a key refused
        (
            "The model is ready. Temperature must be <= 2.",
            body(temperature=3),
            ("drop", ("temperature",)),
        ),
        # a key not ready, not the server
        (
            "response_format is not ready for this model",
            body(response_format={"type": "json_object"}),
            ("drop", ("response_format",)),
        ),
    ],
)
def test_not_ready_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), sent) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"message": "Unrecognized chat message.", "type": "request_params_invalid"}},
        _error("Assistant response prefill is incompatible with enable_thinking."),
        _error("Prefilling the assistant response is not supported for this model."),
        _google(
            "Unable to submit request because it must include at least one parts field, which "
            "describes the prompt input."
        ),
    ],
)
def test_the_chat_messages_in_other_words_are_the_conversation(payload: Any) -> None:
    assert _verdict(payload, body(temperature=0.2, max_tokens=100)) == ("surface", ())


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key named beside the words is what is refused
        (
            "Assistant response prefill is incompatible with enable_thinking.",
            body(enable_thinking=True),
            ("drop", ("enable_thinking",)),
        ),
        (
            "chat message limit reached: max_tokens must be <= 4096",
            body(max_tokens=8192),
            ("drop", ("max_tokens",)),
        ),
        # the server's prefill phase, not an assistant turn
        (
            "Chunked prefill is not supported with prompt_logprobs",
            body(prompt_logprobs=1),
            ("drop", ("prompt_logprobs",)),
        ),
        ("Prefill tokens exceeded the batch budget.", body(temperature=0.2), ("static", ())),
    ],
)
def test_conversation_words_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert _verdict(_error(message), sent) == expected


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        (
            "enable thinking can not be support when `stream=False`.",
            body(enable_thinking=True, temperature=0.6),
            ("enable_thinking",),
        ),
        ("temperature can not be set for this model", body(temperature=0.2), ("temperature",)),
    ],
)
def test_can_not_in_two_words_refuses_the_key(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    assert _verdict(_error(message), sent) == ("drop", dropped)


@pytest.mark.parametrize(
    "message",
    [
        # possible, not refused
        "enable thinking can be supported when stream=true",
        # not the key's words
        "The upstream can not be reached right now.",
    ],
)
def test_can_not_words_near_the_rule(message: str) -> None:
    assert _verdict(_error(message), body(enable_thinking=True, temperature=0.6)) == ("static", ())


# Inputs aimed at the readings added here (an unknown name, a schema path, a server not
# ready, an image not read, a prefill): each is read well under a second.
_HOSTILE = {
    "unknown names": 'Unknown name "x' * 9_000,
    "schema paths": "'properties." * 8_000 + " is missing",
    "not ready": "model a-b.c:d " * 5_000 + "is not",
    "unread images": "image could not be " * 4_000,
    "prefills": "assistant prefill " * 4_000,
    "json schemas": "match the JSON schema " * 4_000 + "is invalid",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, response_format=SCHEMA_OUTPUT, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, _error(text), sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
