"""The twentieth round of unseen rejections, part one: the readings session 34 saw and left
(tests/rejections_extra, 11 cases), each fixed as a family of wording, with the bodies near
each that must not change, read as `sources.http` reads a rejection
(`test_probe_rejections_7.response`) or as the chat wire reads a frame after `200 OK`. The
near misses are paraphrases of the servers' formats; none was recorded.

Ten of the 11 were misread before (against the previous degradation.py and error_body.py
each fails `test_each_case_reads_as_its_file_says`; Baidu's daily limit read right, its
message the whole object):

- Baidu Qianfan's v1 error, `{"error_code": 18, "error_msg": "Open api qps request limit
  reached"}` at `200 OK` (baidu_qianfan__200_error_code_18_...: before, static): error_body
  read the status envelope's code and no words (its `error_msg`), and the words it then
  quoted named no rate. `error_msg` is the words of a status envelope beside `error_code`
  now (as FastChat's `text` is), and a limit of queries per second or minute (`QPS`, `QPM`)
  is a rate's window, as `RPM` and `TPS` are; the daily limit (error_code 17) surfaces as
  before, now with Baidu's words as its message.
- A count of requests at its bound: OpenRouter's upstream "ResourceExhausted: Worker local
  total request limit reached (71/32)" at HTTP 502 (openrouter__502_resource_exhausted_...:
  before, static: OpenRouter's 502 is a body no upstream serves). "request limit reached"
  (or exceeded, hit) is a rate limit's words now, the same body later; a limit by the day,
  or the account's, surfaces before it is read.
- Google's words for RESOURCE_EXHAUSTED without the code: "Resource has been exhausted
  (e.g. check quota)." (gemini__sse_error_resource_has_been_exhausted_words_only: before,
  surfaced, the account's "quota") and Vertex's "Resource exhausted." in Gemini's stream
  (vertex__sse_error_resource_exhausted_message_only: before, surfaced on the Gemini wire,
  `static` on the chat wire). A resource said to be exhausted is a rate limit at 429 or where
  no status speaks, as the code is; gRPC's code name `ResourceExhausted` beside a message
  too large is not these words.
- A quota spent at 429 with no window (vertex_quota__429_quota_exceeded_message_only:
  before, surfaced): the status asks for a wait, and Google's request quotas are counted per
  minute. "Quota exceeded" at 429 backs off now, unless its words speak of what is paid
  ("please check your plan and billing details", OpenAI's insufficient quota) or of a day;
  at 400, 403 and in a frame without a status it surfaces as before.
- TGI's 424 (Failed Dependency) with words of no failure: "CUDA out of memory ..." with
  `error_type: generation` (tgi__424_generation_error_type_cuda_out_of_memory: before,
  surfaced). The 424 itself says what the server depends on failed; words that name a key,
  the images, the conversation or the size are read first, as before, and words that relay
  a client's error ("Received client error (400) from primary ...", SageMaker) keep their
  reading. TGI's `generation` error type, and an accelerator's failure in words ("CUDA out of
  memory", "CUDA error: ..."), are the server's trouble in a frame too.
- A stringified error's status: `data: {"error": "{\\"message\\": \\"Provider returned error\\",
  \\"code\\": 429, ...}"}` (openrouter_relay__sse_error_stringified_code_429_...: before,
  static): the words were read out of the JSON text (dc2ed7f), its `code` was not. The status
  a stringified error names is the frame's status now (`error_body.envelope_status`).
- MiniMax's content check, 1026 "input new_sensitive" and 1027 "output new_sensitive" in
  `base_resp` after `200 OK` (minimax__sse_base_resp_1026_... and _1027_...: before, static:
  the degraded retry dropped keys the check had nothing to do with). Input, output, prompt,
  text or an image said to be sensitive is a content policy now, surfaced; a name "case
  sensitive" and a value "sensitive to" something are not.
- "最多" (at most) in a sentence with an image word refused the images whatever the limit
  was on: "图片理解模型的max_tokens最多支持1024" (zhipu__400_max_tokens_at_most_beside_image_
  model_chinese: before, images, and `max_tokens` sent again). As in English since
  test_probe_rejections_47, the limit is the images' only where they are its subject or what
  it counts, nothing but Chinese words and numbers between ("最多只能上传1张图片", "图片最多
  10张"); `max_tokens` is dropped here and the images kept.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import envelope_status, parse_error_body
from tests.rejection_rounds import (
    assert_reads_as_its_file_says,
    both_ways,
    in_band,
    openai_error,
    over_http,
    verdict,
)
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# backoff 7, none 3, drop 1
ROUND_TWENTY_ONE = (
    "baidu_qianfan__200_error_code_17_open_api_daily_request_limit_reached",
    "baidu_qianfan__200_error_code_18_open_api_qps_request_limit_reached",
    "gemini__sse_error_resource_has_been_exhausted_words_only",
    "minimax__sse_base_resp_1026_input_new_sensitive",
    "minimax__sse_base_resp_1027_output_new_sensitive",
    "openrouter__502_resource_exhausted_worker_local_total_request_limit",
    "openrouter_relay__sse_error_stringified_code_429_provider_returned_error",
    "tgi__424_generation_error_type_cuda_out_of_memory",
    "vertex__sse_error_resource_exhausted_message_only",
    "vertex_quota__429_quota_exceeded_message_only",
    "zhipu__400_max_tokens_at_most_beside_image_model_chinese",
)

# Part two: seven bodies of vendors the earlier rounds had none or one of (Scaleway's
# Generative APIs, FastChat's OpenAI API server, AI21, Elasticsearch's inference API): read
# right but one, Scaleway's 429 "You exceeded your current threshold of concurrent requests"
# in a frame without its status (test_probe_rejections_49), now the concurrency words it is.
# drop 2, none 4, backoff 1.
ROUND_TWENTY_TWO = (
    "ai21__422_detail_the_provided_model_is_not_supported",
    "elastic_inference__400_sse_framed_failed_to_parse_field_messages",
    "fastchat__400_zero_is_less_than_the_minimum_of_1_max_tokens",
    "scaleway__400_conversation_roles_must_alternate_mistral",
    "scaleway__400_tool_call_id_must_be_a_z_length_9_devstral",
    "scaleway__416_max_completion_tokens_is_limited_for_this_model",
    "scaleway__429_exceeded_current_threshold_of_concurrent_requests",
)

PLAIN = body(temperature=0.2)
WITH_IMAGES = body(True, max_tokens=4096, temperature=0.2)
WITH_STOP = body(True, stop=["a", "b", "c", "d", "e"], temperature=0.2)
SURFACE = ("surface", ())
BACKOFF = ("backoff", ())
STATIC = ("static", ())
IMAGES = ("images", ())
NO_MAX_TOKENS = ("drop", ("max_tokens",))
# OpenRouter's: a 502 with a JSON body is a body no upstream serves
ROUTER = RecoveryPolicy(degrade=True, degrade_on_bad_gateway=True)


def test_the_cases_are_round_twentys() -> None:
    assert len(set(ROUND_TWENTY_ONE)) == 11
    assert action_counts(ROUND_TWENTY_ONE) == {"backoff": 7, "none": 3, "drop": 1}


@pytest.mark.parametrize("case_name", ROUND_TWENTY_ONE + ROUND_TWENTY_TWO)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


def test_part_twos_cases() -> None:
    assert len(set(ROUND_TWENTY_TWO)) == 7
    assert action_counts(ROUND_TWENTY_TWO) == {"drop": 2, "none": 4, "backoff": 1}


# == concurrent requests over their bound, in words: a wait ==============================


@pytest.mark.parametrize(
    "message",
    [
        "You exceeded your current threshold of concurrent requests",
        "You have reached the maximum number of concurrent requests",
        "Exceeded the limit of parallel requests for this key",
        "Concurrent requests limit has been reached",
    ],
)
def test_concurrent_requests_over_their_bound_back_off(message: str) -> None:
    assert both_ways(message, PLAIN) == [BACKOFF, BACKOFF]


@pytest.mark.parametrize(
    "message",
    [
        # a count said, no bound exceeded
        "The number of concurrent requests is 4",
        "Concurrent requests are supported on dedicated endpoints",
    ],
)
def test_concurrent_requests_near_the_rule(message: str) -> None:
    assert over_http(message, PLAIN, 400) == STATIC


# == Baidu's `error_msg`: the words of a status envelope ==================================


@pytest.mark.parametrize(
    ("payload", "message", "code"),
    [
        (
            {"error_code": 18, "error_msg": "Open api qps request limit reached"},
            "Open api qps request limit reached",
            "18",
        ),
        (
            {
                "error_code": 336003,
                "error_msg": "the max length of current question is 11200",
                "id": "as-1",
            },
            "the max length of current question is 11200",
            "336003",
        ),
        # FastChat's worker result: its `text`, as before
        (
            {"text": "**NETWORK ERROR DUE TO HIGH TRAFFIC.**", "error_code": 50001},
            "**NETWORK ERROR DUE TO HIGH TRAFFIC.**",
            "50001",
        ),
    ],
)
def test_a_status_envelopes_words_are_read(
    payload: dict[str, Any], message: str, code: str
) -> None:
    read = parse_error_body(json.dumps(payload))
    assert (read.message, read.code) == (message, code)


@pytest.mark.parametrize(
    "payload",
    [
        # success, or no code: no error to read
        {"error_code": 0, "error_msg": "success"},
        # words that are no string, or empty: no words (the object is quoted whole)
        {"error_code": 18, "error_msg": ["Open api qps request limit reached"]},
        {"error_code": 18, "error_msg": ""},
    ],
)
def test_status_envelopes_near_the_rule(payload: dict[str, Any]) -> None:
    read = parse_error_body(json.dumps(payload))
    assert read.message == json.dumps(payload)


def test_a_databricks_error_code_is_no_status_envelope() -> None:
    # (its `error_code` is a name, its words in `message`)
    read = parse_error_body(json.dumps({"error_code": "BAD_REQUEST", "message": "Bad request: x"}))
    assert (read.message, read.code) == ("Bad request: x", None)


# == a request limit reached, a limit of queries per second: a rate ========================


@pytest.mark.parametrize(
    "message",
    [
        "Open api qps request limit reached",
        "ResourceExhausted: Worker local total request limit reached (71/32)",
        "Worker local total request limit reached (33/32)",
        "Concurrent request limit exceeded for this deployment",
        "The request limit has been reached for this model",
    ],
)
def test_a_request_limit_reached_backs_off(message: str) -> None:
    assert both_ways(message, PLAIN) == [BACKOFF, BACKOFF]


@pytest.mark.parametrize("message", ["QPS limit exceeded", "qpm limit hit for this key"])
def test_a_limit_of_queries_per_second_is_a_window(message: str) -> None:
    # (a window, as RPM is: at 429 and where no status speaks)
    assert in_band({"message": message}, PLAIN) == BACKOFF
    assert over_http(message, PLAIN, 429) == BACKOFF


def test_a_request_limit_at_an_openrouter_502_backs_off() -> None:
    payload = {
        "error": {
            "message": "Worker local total request limit reached (33/32)",
            "code": 502,
            "metadata": {"error_type": "provider_unavailable"},
        }
    }
    assert verdict(payload, PLAIN, 502, ROUTER) == BACKOFF
    # a 502 that says nothing of a limit degrades there, as before
    assert (
        verdict({"error": {"message": "Provider returned error", "code": 502}}, PLAIN, 502, ROUTER)
        == STATIC
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a limit by the day, or the account's: surfaces first
        ("Open api daily request limit reached", SURFACE),
        ("Monthly request limit reached for your plan", SURFACE),
        # a request's size, no count of requests
        ("Request size limit exceeded", STATIC),
        ("The request body exceeds the size limit", STATIC),
        # a limit on a key, named
        ("max_tokens exceeds the request limit of 4096", ("drop", ("max_tokens",))),
    ],
)
def test_request_limits_near_the_rule(message: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert over_http(message, body(max_tokens=99999, temperature=0.2), 400) == expected


# == RESOURCE_EXHAUSTED in words: a rate limit =============================================


@pytest.mark.parametrize(
    "message",
    [
        "Resource exhausted.",
        "Resource has been exhausted (e.g. check quota).",
        "Resources exhausted, please retry",
        "resource is exhausted",
    ],
)
def test_resource_exhausted_in_words_backs_off(message: str) -> None:
    assert in_band({"message": message}, PLAIN) == BACKOFF
    assert over_http(message, PLAIN, 429) == BACKOFF


@pytest.mark.parametrize(
    ("message", "status", "expected"),
    [
        # a day's quota: surfaces, whatever the code says
        ("Resource has been exhausted: daily quota", 429, SURFACE),
        # gRPC's code name beside a message too large: a size, not these words
        (
            "rpc error: code = ResourceExhausted desc = grpc: received message larger than "
            "max (8388608 vs. 4194304)",
            400,
            STATIC,
        ),
        # at 403 the account, as before
        ("Resource has been exhausted (e.g. check quota).", 403, SURFACE),
        # an account code outranks the words
    ],
)
def test_resource_exhausted_near_the_rule(
    message: str, status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, PLAIN, status) == expected


def test_an_account_code_outranks_exhausted_words() -> None:
    payload = openai_error("Resource has been exhausted", code="insufficient_quota")
    assert verdict(payload, PLAIN, 429) == SURFACE


# == a quota spent at 429: a wait, unless it is the account's =============================


@pytest.mark.parametrize(
    "message",
    [
        "Quota exceeded",
        "Quota exceeded for this model.",
        "Quota exceeded for quota metric 'Generate Content API requests' and limit of "
        "service 'generativelanguage.googleapis.com'.",
        "You have exhausted the quota for this model",
    ],
)
def test_a_quota_spent_at_429_backs_off(message: str) -> None:
    assert over_http(message, PLAIN, 429) == BACKOFF


@pytest.mark.parametrize(
    ("message", "status", "expected"),
    [
        # what is paid: the account's
        (
            "You exceeded your current quota, please check your plan and billing details.",
            429,
            SURFACE,
        ),
        ("Quota exceeded. Please upgrade your subscription.", 429, SURFACE),
        ("Quota exhausted: insufficient balance", 429, SURFACE),
        # a day's: surfaces
        ("Daily quota exceeded", 429, SURFACE),
        ("Quota exceeded for requests per day", 429, SURFACE),
        # other statuses: the account's, as before
        ("Quota exceeded", 403, SURFACE),
        ("Quota exceeded", 400, SURFACE),
        ("Quota exceeded for this model.", 402, SURFACE),
        # a quota that is not spent
        ("Your quota is 100 requests", 429, SURFACE),
    ],
)
def test_quotas_near_the_rule(
    message: str, status: int, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, PLAIN, status) == expected


def test_a_quota_in_a_frame_without_a_status_is_still_the_accounts() -> None:
    assert in_band({"message": "Quota exceeded"}, PLAIN) == SURFACE


# == 424 Failed Dependency: the server's trouble ===========================================


@pytest.mark.parametrize(
    "payload",
    [
        {"error": "CUDA out of memory. Tried to allocate 2.00 GiB", "error_type": "generation"},
        {"error": "Server error: the shard was lost", "error_type": "generation"},
        {"error": "The model returned an error", "error_type": "model_error"},
        {"message": 'Received server error (0) from primary with message "upstream gone"'},
    ],
)
def test_a_424_is_the_servers_trouble(payload: dict[str, Any]) -> None:
    assert verdict(payload, PLAIN, 424) == BACKOFF


@pytest.mark.parametrize(
    ("payload", "sent", "expected"),
    [
        # a key named: that key first, as before
        (
            {"error": "temperature must be strictly positive", "error_type": "generation"},
            PLAIN,
            ("drop", ("temperature",)),
        ),
        # the images, the conversation, the size: read before the status
        (
            {"error": "image input is not supported", "error_type": "generation"},
            body(True, temperature=0.2),
            IMAGES,
        ),
        (
            {
                "error": "Conversation roles must alternate user/assistant",
                "error_type": "generation",
            },
            PLAIN,
            SURFACE,
        ),
        (
            {"error": "Input validation error: prompt is too long", "error_type": "generation"},
            PLAIN,
            SURFACE,
        ),
    ],
)
def test_424s_near_the_rule(
    payload: dict[str, Any], sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert verdict(payload, sent, 424) == expected


def test_tgis_generation_type_in_a_frame_is_the_servers_trouble() -> None:
    payload = {"error": "CUDA out of memory", "error_type": "generation"}
    assert in_band(payload, PLAIN) == BACKOFF
    # its validation type is the body's, as before
    assert (
        in_band({"error": "Input validation error: x", "error_type": "validation"}, PLAIN) == STATIC
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the accelerator failed the run: the server's trouble, where no status speaks
        ("CUDA out of memory. Tried to allocate 2.00 GiB", BACKOFF),
        ("CUDA error: an illegal memory access was encountered", BACKOFF),
        # a device named, no failure of it
        ("device_map must be auto", STATIC),
        ("GPU acceleration is not available for this model", STATIC),
    ],
)
def test_an_accelerators_failure_in_a_frame(
    message: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert in_band({"message": message}, PLAIN) == expected


def test_a_generation_type_at_another_4xx_keeps_its_reading() -> None:
    assert (
        verdict({"error": "CUDA out of memory", "error_type": "generation"}, PLAIN, 400) == STATIC
    )


# == a stringified error's status ==========================================================


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        (json.dumps({"code": 429, "message": "Provider returned error"}), 429),
        ({"error": json.dumps({"code": 503, "message": "x"})}, 503),
        ({"error": json.dumps({"error": {"code": 500, "message": "y"}})}, 500),
        (json.dumps([{"error": {"code": 404, "message": "no model"}}]), 404),
        # no words, no error object, no JSON: no status
        (json.dumps({"code": 429}), None),
        ({"error": "Model busy"}, None),
        ("plain words 429", None),
        ({"error": json.dumps({"code": "429", "message": "x"})}, None),
    ],
)
def test_the_status_of_a_stringified_error(payload: Any, status: int | None) -> None:
    assert envelope_status(payload) == status


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ({"code": 429, "message": "Provider returned error"}, BACKOFF),
        ({"code": 401, "message": "Provider returned error"}, SURFACE),
        ({"code": 400, "message": "Provider returned error"}, STATIC),
    ],
)
def test_a_stringified_errors_status_is_the_frames(
    inner: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert in_band(json.dumps(inner), PLAIN) == expected  # type: ignore[arg-type]
    assert in_band({"error": json.dumps(inner)}, PLAIN) == expected


# == sensitive input or output: a content policy ==========================================


@pytest.mark.parametrize(
    "message",
    [
        "input new_sensitive",
        "output new_sensitive",
        "input new_sensitive (1026)",
        "input new_sensitive, input text sensitive",
        "input new_sensitive, messages[21]'s content[0] image is sensitive",
        "The prompt was flagged as sensitive",
        "Output sensitive, generation stopped",
        "内容涉及敏感信息",
    ],
)
def test_sensitive_content_surfaces(message: str) -> None:
    assert both_ways(message, PLAIN) == [SURFACE, SURFACE]


def test_sensitive_content_at_a_500_surfaces() -> None:
    # MiniMax's Anthropic-compatible endpoint: "API Error: 500 input new_sensitive (1026)"
    payload = {
        "type": "error",
        "error": {"type": "api_error", "message": "input new_sensitive (1026)"},
    }
    assert verdict(payload, PLAIN, 500) == SURFACE


def test_minimaxs_status_envelope_in_a_frame_surfaces() -> None:
    chunk = {
        "id": "x",
        "choices": None,
        "base_resp": {"status_code": 1027, "status_msg": "output new_sensitive"},
    }
    assert frame(chunk, PLAIN)[:1] == ("surface",)


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        # a name "case sensitive": no verdict on the content
        ("The model name is case sensitive", PLAIN, STATIC),
        ("Parameter names are case-sensitive: use top_p", body(top_p=0.5), ("drop", ("top_p",))),
        # a value "sensitive to" something
        ("temperature is sensitive to the sampler settings", PLAIN, STATIC),
        # a key named beside the words: that key, as before
        (
            "logit_bias contains sensitive words",
            body(logit_bias={"1": 1}),
            ("drop", ("logit_bias",)),
        ),
    ],
)
def test_sensitive_near_the_rule(
    message: str, sent: dict[str, Any], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert over_http(message, sent, 400) == expected


# == "最多" beside an image word: the images' only where they are its subject ==============


@pytest.mark.parametrize(
    "message",
    [
        "图片理解模型的max_tokens最多支持1024",
        "max_tokens最多为4096\uff0c图片理解模型",
        "图像理解\uff1amax_tokens最多为8192",
        "视觉模型max_tokens最多2048",
    ],
)
def test_another_keys_limit_beside_an_image_word_is_that_keys(message: str) -> None:
    assert both_ways(message, WITH_IMAGES) == [NO_MAX_TOKENS, NO_MAX_TOKENS]


@pytest.mark.parametrize(
    "message",
    [
        "最多只能上传1张图片",
        "图片最多10张",
        "最多支持 5 张图片",
        "单次请求图片数量最多为5",
        "每条消息最多包含一张图片",
        "图片大小最多10MB",
    ],
)
def test_a_limit_on_the_images_in_chinese_removes_them(message: str) -> None:
    assert both_ways(message, WITH_IMAGES) == [IMAGES, IMAGES]


def test_stops_limit_beside_an_image_word_is_stops() -> None:
    message = "stop参数最多支持4个\uff0c图片请使用url"
    assert over_http(message, WITH_STOP, 400) == ("drop", ("stop",))


# == the new readings take linear time ====================================================

_HOSTILE = {
    "request limit": "request " * 8_000 + "limit reached",
    "request limit spaces": "requests" + " " * 60_000 + "limit",
    "exhausted": "resource has been " * 4_000 + "exhausted",
    "quota": "quota " * 8_000 + "exceeded",
    "quota spaces": "exceeded" + " a" * 30_000 + " quota",
    "sensitive": "input new " * 6_000 + "sensitive",
    "sensitive spaces": "input" + " " * 60_000 + "sensitive",
    "cjk": "图片" * 10_000 + "最多",
    "cjk gap": "最多" + "张" * 30_000,
    "concurrent": "exceeded the " * 6_000 + "threshold of concurrent",
    "concurrent spaces": "concurrent requests" + " " * 60_000 + "limit",
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    sent = body(True, tools=TOOLS, tool_choice="auto", max_tokens=99, temperature=0.2)
    verdicts: list[Any] = []

    def read() -> None:
        verdicts.append(frame({"message": text}, sent))
        verdicts.append(response(429, {"detail": text}, sent))
        verdicts.append(response(424, text, sent))
        verdicts.append(envelope_status({"error": text}))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 4
