"""The thirteenth round of unseen rejections (tests/rejections_extra, 20 cases from servers
and wordings the earlier rounds had few or none of: LMDeploy, MLC LLM, Triton, Xinference,
antirez's ds4, Workers AI's model schemas, OCI Generative AI, Nebius behind LiteLLM, TGI's
template and grammar errors, LM Studio's image form, Ollama's full queue, llama.cpp's tools
with a stream, vLLM's derived output limit, and the 402s of the Hugging Face router and two
gateways) taught these readings;
the bodies near each that must not change with them are read as `sources.http` reads a
rejection (`test_probe_rejections_7.response`), or as the chat wire reads a frame after
`200 OK`. The words of the near misses are paraphrases of the servers' formats.

Six of the 20 were misread before, and a seventh was read right for a wrong reason:

- A server's command-line flag said to be needed, in one sentence with the key it serves
  ("Please launch the api_server with --tool-call-parser if you want to use tools.",
  LMDeploy) refuses that key, though only the clause of purpose names it
  (lmdeploy__400_launch_api_server_with_tool_call_parser_to_use_tools: before, static).
- Words that refuse using the key right after them ("Cannot use tools with stream",
  llama.cpp's 500) name it; the stream is never dropped, so the tools go
  (llamacpp__500_cannot_use_tools_with_stream: before, backoff: the same body, refused the
  same way again).
- An image in another form than the server takes ("'url' field must be a base64 encoded
  image.", LM Studio, to an image by its URL) is image input refused
  (lmstudio__400_url_field_must_be_a_base64_encoded_image: before, static, whose list reaches
  the body without images only after each optional key alone).
- The server's template failing ("Template error: template not found", "Template error:
  invalid operation: ...", TGI's 422 `template_error`) is no part of the body
  (tgi__422_template_error_template_not_found,
  tgi__422_template_error_invalid_operation_plus_operator: before, static).
- The output's limit refused as a negative number that no key of the body holds
  ("max_tokens must be at least 1, got -53.", vLLM, to a body without `max_tokens`): the
  server derived it as the context less the prompt, so the prompt is longer than the context
  (vllm__400_max_tokens_must_be_at_least_1_got_negative: before, static).
- A validator's properties required at the body's root, none of which the body has
  ("oneOf at '/' not met, 0 matches: required properties at '/' are 'input', required
  properties at '/' are 'requests'", Workers AI, to a chat body for a model of another
  schema): no body without keys has one
  (cloudflare_workers_ai__400_oneof_not_met_required_properties_input_requests). It surfaced
  before only because Cloudflare's envelope (`{"errors": [...], "messages": []}`) was read as
  words, its key `"messages"` a quoted `messages`, the never-dropped key; a message that is a
  body no envelope reading knew is now read by its strings, not its keys, so that the same
  envelope with nothing named is static.

And one reading widened that the replay cannot see: a queue over its bound ("Exceeds maximum
queue size", Triton's scheduler, its 503 lost in a frame) is a wait (its case backs off by
its 503; in a frame it was static).

The round's other cases were read right before:
ds4__400_prompt_tokens_exceeds_context_size_context_exceeded,
huggingface_router__402_exceeded_monthly_included_credits,
lmdeploy__400_logprobs_requested_but_logprobs_mode_not_enabled,
lmdeploy__400_top_k_cannot_be_a_negative_integer,
mlc_llm__400_request_prompt_tokens_larger_than_model_input_length_limit,
nebius_litellm__422_file_part_input_should_be_text_loc_messages,
oci__400_please_pass_in_correct_format_of_request,
ollama__503_server_busy_maximum_pending_requests_exceeded,
tgi__422_grammar_and_tools_are_mutually_exclusive,
thalam__402_insufficient_funds_please_top_up_balance,
triton__503_exceeds_maximum_queue_size,
ultramaxo__402_insufficient_credits_payment_required,
xinference__400_model_not_found_in_the_model_list.

Left as they read, marked debatable in its file: TGI's "Grammar and tools are mutually
exclusive" is static, as "grammar" is TGI's name for `response_format` and no key's; the
static list reaches the body without `response_format` after the optional keys before it,
where a reader that knew the name would drop that key alone.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.rejection_rounds import (
    assert_reads_as_its_file_says,
    both_ways,
    openai_error,
    verdict,
)
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# none 11, drop 4, backoff 2, static 2, images 1
ROUND_THIRTEEN = (
    "cloudflare_workers_ai__400_oneof_not_met_required_properties_input_requests",
    "ds4__400_prompt_tokens_exceeds_context_size_context_exceeded",
    "huggingface_router__402_exceeded_monthly_included_credits",
    "llamacpp__500_cannot_use_tools_with_stream",
    "lmdeploy__400_launch_api_server_with_tool_call_parser_to_use_tools",
    "lmdeploy__400_logprobs_requested_but_logprobs_mode_not_enabled",
    "lmdeploy__400_top_k_cannot_be_a_negative_integer",
    "lmstudio__400_url_field_must_be_a_base64_encoded_image",
    "mlc_llm__400_request_prompt_tokens_larger_than_model_input_length_limit",
    "nebius_litellm__422_file_part_input_should_be_text_loc_messages",
    "oci__400_please_pass_in_correct_format_of_request",
    "ollama__503_server_busy_maximum_pending_requests_exceeded",
    "tgi__422_grammar_and_tools_are_mutually_exclusive",
    "tgi__422_template_error_invalid_operation_plus_operator",
    "tgi__422_template_error_template_not_found",
    "thalam__402_insufficient_funds_please_top_up_balance",
    "triton__503_exceeds_maximum_queue_size",
    "ultramaxo__402_insufficient_credits_payment_required",
    "vllm__400_max_tokens_must_be_at_least_1_got_negative",
    "xinference__400_model_not_found_in_the_model_list",
)


def test_the_cases_are_round_thirteens() -> None:
    assert len(set(ROUND_THIRTEEN)) == 20
    assert action_counts(ROUND_THIRTEEN) == {
        "none": 11,
        "drop": 4,
        "backoff": 2,
        "static": 2,
        "images": 1,
    }


@pytest.mark.parametrize("case_name", ROUND_THIRTEEN)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- a server's flag needed for a key: that key ------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Please launch the api_server with --tool-call-parser if you want to use tools.",
        "To use tools, start the server with --enable-auto-tool-choice.",
    ],
)
def test_a_flag_needed_to_use_a_key_names_it(message: str) -> None:
    sent = body(tools=TOOLS, tool_choice="auto", temperature=0.2)
    assert both_ways(message, sent) == [("drop", ("tools", "tool_choice"))] * 2


@pytest.mark.parametrize(
    "message",
    [
        # a flag, and no key it is for
        "Please launch the server with --max-model-len 8192.",
        # the purpose, and no flag: nothing says the tools are refused
        "If you want to use tools, pick a model that supports them.",
    ],
)
def test_flags_and_purposes_near_the_rule(message: str) -> None:
    assert both_ways(message, body(tools=TOOLS, temperature=0.2)) == [("static", ())] * 2


# -- "cannot use" a key: that key --------------------------------------------------------


def test_cannot_use_a_key_names_it() -> None:
    assert (
        both_ways("Cannot use tools with stream", body(tools=TOOLS, temperature=0.2))
        == [("drop", ("tools",))] * 2
    )
    sent = body(logprobs=True, top_logprobs=2, temperature=0.2)
    assert (
        both_ways("Unable to use logprobs with this model.", sent)
        == [("drop", ("logprobs", "top_logprobs"))] * 2
    )


def test_cannot_use_tools_with_stream_is_the_tools_at_500() -> None:
    # llama.cpp's runtime_error is a 500: before, the same body again (backoff)
    said = {
        "error": {"code": 500, "message": "Cannot use tools with stream", "type": "server_error"}
    }
    assert verdict(said, body(tools=TOOLS, temperature=0.2), 500) == ("drop", ("tools",))


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        # a thing of the key's word, not the key (`user`)
        ("Unable to use user-provided credentials.", body(user="u1", temperature=0.2)),
        # a thing that is no key of the body
        ("Cannot use the model with this deployment type.", body(temperature=0.2)),
    ],
)
def test_cannot_use_near_the_rule(message: str, sent: dict[str, Any]) -> None:
    assert both_ways(message, sent) == [("static", ())] * 2


# -- a queue over its bound: a wait ------------------------------------------------------


@pytest.mark.parametrize(
    "message", ["Exceeds maximum queue size", "Request rejected: queue size limit exceeded."]
)
def test_a_queue_over_its_bound_is_a_wait(message: str) -> None:
    assert both_ways(message, body(temperature=0.2)) == [("backoff", ())] * 2


def test_the_queue_bound_is_a_wait_in_tritons_frame() -> None:
    assert frame({"error": "Exceeds maximum queue size"}, body(temperature=0.2)).action == (
        "backoff"
    )


@pytest.mark.parametrize(
    "message",
    [
        # a count of the request's own over the bound: the body's
        "Batch size exceeds maximum queue size (64)",
        "Number of requests exceeds maximum queue size (32)",
    ],
)
def test_counts_over_a_queue_bound_are_not_a_wait(message: str) -> None:
    assert both_ways(message, body(temperature=0.2)) == [("static", ())] * 2


# -- properties required at the root, none in the body: surface ---------------------------

WORKERS_AI = (
    "AiError: Bad input: Error: oneOf at '/' not met, 0 matches: required properties at '/' "
    "are 'input', required properties at '/' are 'requests'"
)


@pytest.mark.parametrize(
    "message", [WORKERS_AI, "AiError: Bad input: Error: required properties at '/' are 'prompt'"]
)
def test_properties_required_at_the_root_and_absent_surface(message: str) -> None:
    assert both_ways(message, body(temperature=0.2, max_tokens=512)) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # required inside a key the body holds: that key
        (
            "AiError: Bad input: Error: required properties at '/response_format' are 'type'",
            body(response_format={"json_schema": {}}, temperature=0.2),
            ("drop", ("response_format",)),
        ),
        # one of those required is in the body: not another API's schema
        (
            "AiError: Bad input: Error: required properties at '/' are 'temperature,input'",
            body(temperature=0.2),
            ("static", ()),
        ),
    ],
)
def test_required_properties_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


_CLOUDFLARE = {"errors": [], "success": False, "result": {}, "messages": []}


def test_an_unknown_envelopes_keys_are_no_words() -> None:
    # Cloudflare's envelope, its `"messages": []` no `messages` quoted: nothing is named
    said = {**_CLOUDFLARE, "errors": [{"message": "AiError: Bad input: odd", "code": 5006}]}
    assert verdict(said, body(temperature=0.2)) == ("static", ())


def test_an_unknown_envelopes_words_still_name_the_messages() -> None:
    said = {**_CLOUDFLARE, "errors": [{"message": "'messages' must not be empty", "code": 5006}]}
    assert verdict(said, body(temperature=0.2)) == ("surface", ())


# -- an image in another form than the server takes: the images ---------------------------


@pytest.mark.parametrize(
    "message", ["'url' field must be a base64 encoded image.", "image_url must be a data URL"]
)
def test_an_image_in_another_form_is_refused_image_input(message: str) -> None:
    assert both_ways(message, body(True, temperature=0.2)) == [("images", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # no image in the body: nothing to remove
        ("'url' field must be a base64 encoded image.", body(temperature=0.2), ("static", ())),
        # a key's value in that form, no image word: the key
        (
            "'user' field must be a base64 string",
            body(True, user="u1", temperature=0.2),
            ("drop", ("user",)),
        ),
    ],
)
def test_image_forms_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the server's template failing: no part of the body ----------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Template error: template not found",
        "Template error: invalid operation: tried to use + operator on unsupported types "
        "string and undefined (in <string>:5)",
    ],
)
def test_the_servers_template_failing_surfaces(message: str) -> None:
    assert both_ways(message, body(temperature=0.2)) == [("surface", ())] * 2


def test_tgis_template_error_surfaces_at_422() -> None:
    said = {"error": "Template error: template not found", "error_type": "template_error"}
    assert verdict(said, body(temperature=0.7), 422) == ("surface", ())


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a key of the body named: that key
        (
            "chat_template_kwargs: template not found",
            body(chat_template_kwargs={"x": 1}, temperature=0.2),
            ("drop", ("chat_template_kwargs",)),
        ),
        # templates in general, no failure of the server's
        ("Templates are not supported by this endpoint", body(temperature=0.2), ("static", ())),
    ],
)
def test_templates_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- a negative output limit the body did not send: the size -----------------------------


@pytest.mark.parametrize(
    "message",
    [
        "max_tokens must be at least 1, got -53.",
        "max_completion_tokens must be at least 1, got -120",
    ],
)
def test_a_derived_negative_output_limit_is_the_size(message: str) -> None:
    assert both_ways(message, body(temperature=0.2)) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # the body's own negative value: that key
        (
            "max_tokens must be at least 1, got -5.",
            body(max_tokens=-5, temperature=0.2),
            ("drop", ("max_tokens",)),
        ),
        # not negative: no room said to be missing
        ("max_tokens must be at least 1, got 0.", body(temperature=0.2), ("static", ())),
    ],
)
def test_output_limits_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert both_ways(message, sent) == [expected] * 2


# -- the new readings take linear time ---------------------------------------------------

_HOSTILE = {
    "flags": "--a " * 15_000 + "use tool",
    "flags after a use": "use tools " + "x " * 30_000 + "--",
    "cannot use": "cannot use " * 6_000 + "tool",
    "queues": "exceeds maximum queue " * 3_000 + "siz",
    "required": "required properties at '/' are '" + "a," * 20_000,
    "output limits": "max_tokens " * 6_000 + "got -",
    "templates": "template " * 8_000 + "erro",
    "base64": "image must be a " * 4_000 + "base6",
    "an envelope": "{" * 2_000 + '"errors": []' + "}" * 1_999,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, max_tokens=100, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, openai_error(text), sent))
        verdicts.append(response(400, text, sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 3
