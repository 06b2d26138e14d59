"""Round twelve's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the twelfth round (listed in
tests/test_probe_rejections_33.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_31.py does for
round eleven): 400 combinations. Each must get the original's action, dropped keys and
renames; none is marked different. Against the degradation.py before round twelve 14 of them
read otherwise: llama-swap's "no model id could be identified" in the four frames without its
404 (static), and OpenAI's refusal of a `file` part in the ten envelopes that lose its `param`
at `messages[3].content[0].type` (static), which the part types it lists now say.

Then, as tests/test_probe_rejections_31.py does, one to three paraphrases of each case
(`VARIANTS`, in the servers' own formats where they could be read: OpenRouter's raw upstream
body, Google's list envelope, FastAPI's `detail`, LiteLLM's relay, zod's "Expected 'text' |
'image_url'"), and for each of round twelve's five readings (`RULES`: the prompt against the
context by the server's field; an input's count over what the model supports; the part types
listed; a part of other media than images; no model found for the request) one more positive
and two near misses. None of these bodies was recorded.

Two readings are narrowed or widened here, each with its near misses (`WIDENED`):

- An input's count over what the model supports says so of the model (or the server, the
  context): "The prompt token count is 1200 but max_tokens only supports up to 4096." is
  `max_tokens`'s refusal, not the size (before, surface).
- The part types listed may be separated as zod writes them ("Expected 'text' |
  'image_url', received 'file'"; before, static).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.test_probe_rejections_7 import OPENROUTER, TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, pydantic, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_23 import flat, google
from tests.test_probe_rejections_33 import ROUND_TWELVE

# None: every envelope keeps what the round's readings rest on.
DIFFERENT: dict[str, str] = {}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_TWELVE))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_twelves() -> None:
    assert len(combinations(ROUND_TWELVE)) == 400


STRICT = (
    "Invalid schema for response_format 'json_schema': In context=('properties', 'etymology'), "
    "'additionalProperties' is required to be supplied and to be false."
)
SCHEMA = {
    "type": "json_schema",
    "json_schema": {"name": "json_schema", "schema": {"type": "object", "properties": {}}},
}
VERTEX = (
    "Unable to submit request because the input token count is 1251952 but model only "
    "supports up to 1048576. Reduce the input token count and try again."
)
N_KEEP = "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"
FILE_PART = "Invalid value: file. Supported values are: 'text','image_url','video_url' and 'video'."
AUDIO = "The audio file could not be decoded or its format is not supported."


def _openrouter(status: int, raw: Any, provider: str = "Azure") -> dict[str, Any]:
    return {
        "error": {
            "message": "Provider returned error",
            "code": status,
            "metadata": {"raw": json.dumps(raw), "provider_name": provider},
        }
    }


def _tgi(message: str) -> dict[str, Any]:
    return {"error": message, "error_type": "validation"}


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- dashscope__400_invalid_value_file_supported_values_text_image_url_video: none ------
    case(
        "file_part/a: in-band, no status",
        frame({"message": FILE_PART, "code": "invalid_value"}, body(temperature=0.7)),
        "surface",
    ),
    case(
        "file_part/b: a document's part, LiteLLM's relay",
        response(
            400,
            litellm(
                "litellm.BadRequestError: OpenAIException - Invalid value: document. Supported "
                "values are: 'text', 'image_url' and 'input_audio'.",
                400,
            ),
            body(temperature=0.7, max_tokens=4096),
        ),
        "surface",
    ),
    # -- epam_dial__400_deployment_does_not_support_n_greater_than_1: drop n ----------------
    case(
        "n/a: in-band, DIAL's envelope",
        frame(
            {"message": "The deployment doesn't support n > 1", "code": "400"},
            body(n=3, temperature=0.7),
        ),
        "drop",
        ("n",),
    ),
    case(
        "n/b: vLLM's flat envelope, 'greater than 1'",
        response(
            400, vllm("This model does not support n greater than 1."), body(n=2, temperature=0.7)
        ),
        "drop",
        ("n",),
    ),
    # -- fireworks__429_too_many_requests_exceeded_usage_limits_try_again_later: backoff ----
    case(
        "usage_limits/a: in-band, no status",
        frame(
            {
                "message": "You have exceeded your usage limits. Please try again later or "
                "contact Fireworks to explore dedicated capacity."
            },
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "usage_limits/b: OpenAI's envelope, its code the rate limit",
        response(
            429,
            error(
                "You have exceeded your usage limits. Please try again later.",
                type="rate_limit_error",
                code="rate_limit_exceeded",
            ),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- gemini__503_model_experiencing_high_demand_spikes_temporary: backoff ---------------
    case(
        "high_demand/a: in-band, Google's envelope without its 503",
        frame(
            {
                "message": "This model is currently experiencing high demand. Spikes in demand "
                "are usually temporary. Please try again later.",
                "status": "UNAVAILABLE",
            },
            body(temperature=0.4),
        ),
        "backoff",
    ),
    case(
        "high_demand/b: a 400 that says the demand",
        response(400, error("The model is experiencing high demand right now."), body()),
        "backoff",
    ),
    # -- gemini__openai_compat_400_unknown_name_metadata_and_store_list_envelope: drop ------
    case(
        "unknown_names/a: one name, in-band",
        frame(
            {
                "code": 400,
                "message": 'Invalid JSON payload received. Unknown name "store": Cannot find '
                "field.",
                "status": "INVALID_ARGUMENT",
            },
            body(store=False, temperature=0.4),
        ),
        "drop",
        ("store",),
    ),
    case(
        "unknown_names/b: Google's fieldViolations carry the names",
        response(
            400,
            google(
                'Invalid JSON payload received. Unknown name "metadata": Cannot find field.',
                "metadata",
            ),
            body(metadata={"run": "a"}, temperature=0.4),
        ),
        "drop",
        ("metadata",),
    ),
    # -- groq__400_property_prediction_is_unsupported: drop prediction ----------------------
    case(
        "prediction/a: in-band",
        frame(
            {"message": "property 'prediction' is unsupported", "type": "invalid_request_error"},
            body(prediction={"type": "content", "content": "x"}, temperature=0.2),
        ),
        "drop",
        ("prediction",),
    ),
    case(
        "prediction/b: backticks, refused with reasoning models",
        response(
            400,
            error("`prediction` is not supported with reasoning models."),
            body(prediction={"type": "content", "content": "x"}, temperature=0.2),
        ),
        "drop",
        ("prediction",),
    ),
    # -- groq__400_reasoning_effort_must_be_one_of_none_or_default: drop --------------------
    case(
        "effort_values/a: the values bare",
        response(
            400,
            error("reasoning_effort must be one of none or default"),
            body(reasoning_effort="low", temperature=0.6),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    case(
        "effort_values/b: in-band, quoted values",
        frame(
            {"message": "`reasoning_effort` must be one of 'none' or 'default'"},
            body(reasoning_effort="high", temperature=0.6),
        ),
        "drop",
        ("reasoning_effort",),
    ),
    # -- hf_tgi__422_inputs_tokens_plus_max_new_tokens_must_be_le_given: none ---------------
    case(
        "tgi_inputs/a: in-band, TGI's frame",
        frame(
            _tgi(
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. "
                "Given: 3474 `inputs` tokens and 60 `max_new_tokens`"
            ),
            body(max_tokens=60),
        ),
        "surface",
    ),
    case(
        "tgi_inputs/b: the inputs alone",
        response(
            422,
            _tgi("Input validation error: `inputs` must have less than 4096 tokens. Given: 5120"),
            body(max_tokens=60),
        ),
        "surface",
    ),
    # -- llama_swap__404_no_model_id_could_be_identified_src: none --------------------------
    case(
        "no_model/a: in-band, llama-swap's own object",
        frame({"error": "no model id could be identified", "src": "llama-swap"}, body()),
        "surface",
    ),
    case(
        "no_model/b: at 400, a name for the id",
        response(400, error("no model name could be found for this request"), body()),
        "surface",
    ),
    # -- lmstudio__400_cannot_truncate_prompt_with_n_keep_ge_n_ctx: none --------------------
    case(
        "n_keep/a: in-band",
        frame({"message": N_KEEP}, body(max_tokens=2048, temperature=0.7)),
        "surface",
    ),
    case(
        "n_keep/b: llama.cpp's envelope, the slot's context",
        response(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the prompt (9120 tokens) exceeds n_ctx_slot (8192)",
                    "type": "invalid_request_error",
                }
            },
            body(max_tokens=2048),
        ),
        "surface",
    ),
    # -- lmstudio__400_tokens_to_keep_greater_than_context_length_n_keep_n_ctx: none --------
    case(
        "tokens_to_keep/a: in-band",
        frame(
            {
                "error": "The number of tokens to keep from the initial prompt is greater than "
                "the context length (n_keep: 13055>= n_ctx: 4096)."
            },
            body(max_tokens=2048),
        ),
        "surface",
    ),
    # -- mistral__429_service_tier_capacity_exceeded_for_this_model: backoff ----------------
    case(
        "tier_capacity/a: in-band, Mistral's flat object",
        frame(
            flat("Service tier capacity exceeded for this model.", "invalid_request_error"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    case(
        "tier_capacity/b: at 400, its code",
        response(
            400,
            flat("Service tier capacity exceeded for this model.", "invalid_request_error", "3505"),
            body(temperature=0.2),
        ),
        "backoff",
    ),
    # -- moonshot__429_max_request_per_minute_reached_try_again_after_seconds: backoff ------
    case(
        "per_minute/a: in-band, the wait named",
        frame(
            {
                "message": "max request per minute reached: 3, please try again after 1 seconds",
                "type": "rate_limit_reached_error",
            },
            body(temperature=0.3),
        ),
        "backoff",
    ),
    case(
        "per_minute/b: the organization's RPM, no wait",
        response(
            429,
            error("request reached organization max RPM: 3", type="rate_limit_reached_error"),
            body(temperature=0.3),
        ),
        "backoff",
    ),
    # -- openai__400_audio_file_could_not_be_decoded_or_format_not_supported: none ----------
    case("audio/a: in-band", frame({"message": AUDIO}, body(temperature=0.7)), "surface"),
    case(
        "audio/b: audio input refused beside an image",
        response(400, error("Audio input is not supported by this model."), body(True)),
        "surface",
    ),
    # -- openai__400_invalid_value_file_param_messages_content_type: none -------------------
    case(
        "file_value/a: its param lost, the part types listed",
        response(
            400,
            error(
                "Invalid value: 'file'. Supported values are: 'text', 'image_url', "
                "'input_audio', 'refusal', and 'audio'.",
                type="invalid_request_error",
                code="invalid_value",
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- openai__400_response_format_additional_properties_required_to_be_false: drop -------
    case(
        "strict/a: OpenRouter's raw upstream body, Azure's words",
        response(
            400,
            _openrouter(
                400,
                error(STRICT, type="invalid_request_error", param="response_format", code=None),
            ),
            body(response_format=SCHEMA, temperature=0.3),
            OPENROUTER,
        ),
        "drop",
        ("response_format",),
    ),
    case(
        "strict/b: its param lost",
        response(400, error(STRICT), body(response_format=SCHEMA, temperature=0.3)),
        "drop",
        ("response_format",),
    ),
    # -- openai__400_unknown_parameter_web_search_options_code: drop ------------------------
    case(
        "web_search/a: in-band, the code alone",
        frame(
            {"message": "Unknown parameter: 'web_search_options'.", "code": "unknown_parameter"},
            body(web_search_options={}, temperature=0.2),
        ),
        "drop",
        ("web_search_options",),
    ),
    # -- openai__400_unsupported_value_verbosity_low_supported_medium: drop -----------------
    case(
        "verbosity/a: its param lost",
        response(
            400,
            error(
                "Unsupported value: 'verbosity' does not support 'low' with this model. "
                "Supported values are: 'medium'."
            ),
            body(verbosity="low", temperature=0.2),
        ),
        "drop",
        ("verbosity",),
    ),
    # -- vertex__400_input_token_count_is_but_model_only_supports_up_to: none ---------------
    case(
        "input_count/a: Google's list envelope",
        response(
            400,
            [{"error": {"code": 400, "message": VERTEX, "status": "INVALID_ARGUMENT"}}],
            body(max_tokens=8192),
        ),
        "surface",
    ),
    case(
        "input_count/b: in-band, no status",
        frame({"message": VERTEX}, body(max_tokens=8192, temperature=0.4)),
        "surface",
    ),
    # -- vllm__400_extra_forbidden_prompt_logprobs_repr_tuple_loc: drop prompt_logprobs -----
    case(
        "prompt_logprobs/a: FastAPI's 422, `logprobs` sent too",
        response(
            422,
            pydantic("prompt_logprobs"),
            body(prompt_logprobs=True, logprobs=True, temperature=0.2),
        ),
        "drop",
        ("prompt_logprobs",),
    ),
    case(
        "prompt_logprobs/b: in prose",
        response(
            400,
            vllm("prompt_logprobs is not supported by the chat endpoint"),
            body(prompt_logprobs=True, logprobs=True),
        ),
        "drop",
        ("prompt_logprobs",),
    ),
]


# == the round's readings: one more positive and two near misses each ==================
RULES = [
    # -- the prompt against the context by the server's field -------------------------------
    case(
        "context_field/positive: the input larger than max_seq_len",
        response(400, error("input (5000 tokens) is larger than max_seq_len (4096)"), body()),
        "surface",
    ),
    case(
        "context_field/near: a rule between the fields, nothing over",
        response(400, error("n_keep must be <= n_ctx"), body(temperature=0.2)),
        "static",
    ),
    case(
        "context_field/near: a key's value over the context",
        response(
            400,
            error("max_completion_tokens (9000) > max_model_len (8192)"),
            body(max_completion_tokens=9000, temperature=0.2),
        ),
        "drop",
        ("max_completion_tokens",),
    ),
    # -- an input's count over what the model supports --------------------------------------
    case(
        "input_count/positive: the prompt's count, 'while' and 'allows'",
        frame(
            {"message": "Your prompt token count is 210000 while the model allows up to 200000."},
            body(max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "input_count/near: a minimum, not a maximum",
        response(
            400,
            error("The input token count is 900 but the model supports a minimum of 1024."),
            body(temperature=0.2),
        ),
        "static",
    ),
    case(
        "input_count/near: the count beside the tokenizer's failure",
        response(
            400, error("input token count is 12 but it failed to tokenize"), body(temperature=0.2)
        ),
        "static",
    ),
    # -- the part types listed --------------------------------------------------------------
    case(
        "part_types/positive: pydantic's literal, three types",
        response(
            400,
            error("Input should be 'text', 'image_url' or 'input_audio'"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "part_types/near: the output's modalities, the param at them",
        response(
            400,
            error(
                "Invalid value: 'image'. Supported values are: 'text' and 'audio'.",
                param="modalities",
            ),
            body(modalities=["image"], temperature=0.2),
        ),
        "drop",
        ("modalities",),
    ),
    case(
        "part_types/near: a key named beside the list",
        response(
            400,
            error("'text' or 'image_url' parts only; 'temperature' must be at most 1"),
            body(temperature=1.5),
        ),
        "drop",
        ("temperature",),
    ),
    # -- a part of other media than images --------------------------------------------------
    case(
        "media/positive: video input",
        frame({"message": "Video input is not supported for this model."}, body()),
        "surface",
    ),
    case(
        "media/near: the output's modalities by name",
        response(
            400,
            error("The 'modalities' parameter does not support audio output for this model."),
            body(modalities=["text", "audio"], temperature=0.2),
        ),
        "drop",
        ("modalities",),
    ),
    case(
        "media/near: the output's voice, the `audio` key",
        response(
            400,
            error("The requested audio voice 'nova' is not supported."),
            body(audio={"voice": "nova", "format": "wav"}, temperature=0.2),
        ),
        "drop",
        ("audio",),
    ),
    # -- no model found for the request -----------------------------------------------------
    case(
        "no_model/positive: could not determine it",
        frame({"message": "Could not determine the model from the request."}, body()),
        "surface",
    ),
    case(
        "no_model/near: a model for a capability",
        response(
            400,
            error("Could not find a model for tool use."),
            body(tools=TOOLS, temperature=0.2),
        ),
        "static",
    ),
    case(
        "no_model/near: the model's output",
        response(400, error("No model output could be parsed as JSON."), body(temperature=0.2)),
        "static",
    ),
]


# == narrowed and widened here ===========================================================
WIDENED = [
    # an input's count over what the model supports says so of the model
    case(
        "input_count/narrowed: a key's limit after the count",
        response(
            400,
            error("The prompt token count is 1200 but max_tokens only supports up to 4096."),
            body(max_tokens=8192, temperature=0.2),
        ),
        "drop",
        ("max_tokens",),
    ),
    case(
        "input_count/narrowed: the server's limit is one",
        response(
            400,
            error("The input length is 70000 tokens, but the server accepts at most 65536."),
            body(max_tokens=1024),
        ),
        "surface",
    ),
    # the part types listed as zod writes them
    case(
        "part_types/widened: zod's enum, in-band",
        frame(
            {
                "message": "messages.0.content.1.type: Invalid enum value. Expected 'text' | "
                "'image_url', received 'file'"
            },
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "part_types/widened: zod's enum over HTTP",
        response(
            400,
            error("Invalid enum value. Expected 'text' | 'image_url', received 'input_audio'"),
            body(temperature=0.2),
        ),
        "surface",
    ),
    # (the output's formats: not the conversation; the value 'xml' is quoted in another
    # sentence than the word "value", so nothing names its key, and the static list tries)
    case(
        "part_types/near: zod's enum of response formats",
        response(
            400,
            error("Invalid enum value. Expected 'text' | 'json_object', received 'xml'"),
            body(response_format={"type": "xml"}, temperature=0.2),
        ),
        "static",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS + RULES + WIDENED)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert (verdict.action, set(verdict.drop)) == (action, set(drop)), verdict
    if rename is not None:
        assert dict(verdict.rename) == rename, verdict


# Inputs aimed at the readings narrowed and widened here (the subject of a supported maximum,
# zod's separators).
_HOSTILE = {
    "counts and subjects": "input token count is 1 but the model " * 2_000 + "support",
    "the model and spaces": "prompt length is 1 but model" + " " * 30_000 + "accept",
    "bars": "'text' | " * 8_000 + "'image_ur",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, max_tokens=100, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(400, error(text), sent))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
