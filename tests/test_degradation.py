"""The degradation policy as a table: pure functions, no network.

Most error texts here are made by hand in the shapes the providers document (the shared
real bodies are replayed in tests/test_rejections.py); the last section reads real
bodies from public threads that the shared cases do not hold, each as the HTTP source
would (`parse_error_body`, the whole body as `raw`)."""

from __future__ import annotations

import json
import random
from typing import Any, Literal

import pytest

from rxllm.degradation import (
    MAX_BACKOFF_RETRIES,
    MAX_TARGETED_RETRIES,
    RecoveryPolicy,
    RetryPlan,
    backoff_wait,
    classify,
    image_notice,
    remove_images,
    static_bodies,
)
from rxllm.error_body import parse_error_body
from rxllm.events import ErrorInfo

FAMILY = RecoveryPolicy(degrade=True)
OPENROUTER = RecoveryPolicy(degrade=True, degrade_on_bad_gateway=True)
NVIDIA = RecoveryPolicy(
    degrade=True,
    degrade_on_opaque_server_error=True,
    mandatory_body_keys=frozenset({"chat_template_kwargs"}),
)
NO_DEGRADATION = RecoveryPolicy()


def body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        **extra,
    }


def rejection(
    message: str, status: int | None = 400, param: str | None = None, **fields: Any
) -> ErrorInfo:
    raw = json.dumps({"error": {"message": message, "param": param}})
    kind: Literal["stream_error", "rejected"] = "stream_error" if status is None else "rejected"
    return ErrorInfo(
        kind=kind, message=message, status=status, provider="p", raw=raw, param=param, **fields
    )


@pytest.mark.parametrize(
    ("message", "param", "present", "dropped"),
    [
        # A plain-word key counts only where words say it is a parameter.
        (
            "We stop accepting 'top_k' values above 100.",
            None,
            {"stop": ["\n"], "top_k": 200},
            ("top_k",),
        ),
        (
            "This model does not support stop sequences.",
            None,
            {"stop": ["\n"]},
            ("stop",),
        ),
        (
            "Unsupported parameters: 'temperature' and 'top_p' cannot both be set.",
            None,
            {"temperature": 0.2, "top_p": 0.9},
            ("temperature", "top_p"),
        ),
        (
            "Web search options not supported.",
            "web_search_options",
            {"web_search_options": {}},
            ("web_search_options",),
        ),
        ("Unrecognized request argument supplied: thinking", None, {"thinking": {}}, ("thinking",)),
        (
            "logit_bias is not supported by this server",
            None,
            {"logit_bias": {}, "n": 1},
            ("logit_bias",),
        ),
        (
            "No endpoints found that support tool use.",
            None,
            {"tools": [], "tool_choice": "auto"},
            ("tools", "tool_choice"),
        ),
        (
            "'max_tokens' must be at most 4096",
            None,
            {"max_tokens": 10**6, "max_completion_tokens": 5},
            ("max_tokens",),
        ),
    ],
)
def test_named_keys_are_dropped_together(
    message: str, param: str | None, present: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    sent = body(seed=1, user="u", **present)
    verdict = classify(rejection(message, param=param), sent, FAMILY)
    assert verdict.action == "drop" and verdict.drop == dropped
    assert not {"seed", "user"} & set(verdict.drop)


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (rejection("Incorrect API key provided: sk-abc", 401), "account"),
        (rejection("Forbidden", 403), "account"),
        (rejection("Insufficient Balance", 402), "account"),
        (rejection("You exceeded your current quota", 429, code="insufficient_quota"), "account"),
        (rejection("maximum context length is 4097 tokens", 400, "messages"), "too long"),
        (
            rejection(
                "Unsupported value: 'messages[0].role' does not support 'system'",
                400,
                "messages[0].role",
            ),
            "never dropped",
        ),
        (rejection("Roles must alternate between user and assistant", 400), "conversation"),
        (rejection("The model `gpt-9` does not exist", 404), "does not exist"),
        (rejection("filtered by the content management policy", 400, "prompt"), "content policy"),
    ],
)
def test_what_no_body_can_fix_surfaces(error: ErrorInfo, why: str) -> None:
    verdict = classify(error, body(temperature=0.2, seed=1), FAMILY)
    assert verdict.action == "surface" and why in verdict.why


def test_eligibility_of_5xx_is_per_provider() -> None:
    bare_502 = rejection("<html>502 Bad Gateway</html>", 502)
    assert classify(bare_502, body(), FAMILY).action == "backoff"
    assert classify(bare_502, body(), OPENROUTER).action == "static"
    opaque = rejection("Internal server error", 500)
    assert classify(opaque, body(), NVIDIA).action == "static"
    assert classify(opaque, body(), FAMILY).action == "backoff"
    detailed = rejection("Internal server error: worker 3 crashed while loading weights", 500)
    assert classify(detailed, body(), NVIDIA).action == "backoff"
    assert classify(rejection("Overloaded", 529), body(), FAMILY).action == "backoff"


def test_openrouter_degrades_on_its_http_502_only() -> None:
    """OpenRouter answers 502 when no provider accepts the body; a 502 in an error event
    after `200 OK` (its "Error processing stream", by status or code) is the upstream that
    failed while streaming: the same body again, never a smaller one."""
    assert classify(rejection("Provider returned error", 502), body(), OPENROUTER).action == (
        "static"
    )
    in_stream = rejection("Error processing stream (DeepInfra)", None)
    for said in ({"status": 502}, {"code": "502"}):
        verdict = classify(in_stream.model_copy(update=said), body(temperature=0.6), OPENROUTER)
        assert verdict.action == "backoff", (said, verdict)


@pytest.mark.parametrize("code", [None, "upstream_failure"])
def test_a_mid_stream_server_error_backs_off_whatever_its_code(code: str | None) -> None:
    """vercel/ai's moonshotai-error fixture: an error chunk after `200 OK` whose OpenAI
    envelope types it `server_error` beside a code of the upstream's own. The server
    failed: the same request again, never a smaller one."""
    error = {"message": "Internal server error", "type": "server_error", "code": code}
    failure = ErrorInfo(
        kind="stream_error",
        message="Internal server error",
        provider="p",
        raw=json.dumps({"error": error}),
        code=code or "server_error",
    )
    assert classify(failure, body(temperature=0.2), FAMILY).action == "backoff"


def test_a_provider_without_degradation_only_backs_off() -> None:
    named = rejection("Unsupported parameter: 'temperature'", 400, "temperature")
    assert classify(named, body(temperature=1), NO_DEGRADATION).action == "surface"
    limited = rejection("rate limited", 429, retry_after=2.5)
    verdict = classify(limited, body(), NO_DEGRADATION)
    assert verdict.action == "backoff" and verdict.delay == 2.5


def test_images_are_replaced_by_one_notice_per_message() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    sent = body(
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "first"}, image, image]},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [image, {"type": "text", "text": "second"}]},
        ]
    )
    error = rejection("facebook/opt-125m is not a multimodal model None")
    assert classify(error, sent, FAMILY).action == "images"
    stripped = remove_images(sent, FAMILY)
    first, middle, last = stripped["messages"]
    assert first["content"] == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": image_notice(2)},
    ]
    assert middle == sent["messages"][1]
    assert last["content"][0] == {"type": "text", "text": image_notice(1)}
    assert image_notice(1) == (
        "[System: An attached image was removed because this endpoint rejected image "
        "input. Do not guess or claim to see the image contents.]"
    )
    assert image_notice(3).startswith("[System: 3 attached images were removed because")
    # Without images in the body, the same words are not an image rejection.
    assert classify(error, body(), FAMILY).action != "images"


def test_the_static_list_is_lazy_and_keeps_mandatory_keys() -> None:
    sent = body(temperature=0.6, seed=1, tools=[{"type": "function"}], chat_template_kwargs={})
    bodies = list(static_bodies(sent, NVIDIA))
    assert bodies[0] == {k: v for k, v in sent.items() if k != "stream_options"}
    assert bodies[1] == {k: v for k, v in sent.items() if k != "temperature"}
    assert bodies[2] == {k: v for k, v in sent.items() if k != "seed"}
    assert bodies[3] == {k: v for k, v in sent.items() if k != "tools"}
    assert bodies[4] == {
        k: sent[k] for k in ("model", "messages", "stream", "chat_template_kwargs")
    }
    assert len(bodies) == 5
    for each in bodies:
        assert {"model", "messages", "stream", "chat_template_kwargs"} <= set(each)


def test_the_plan_renames_a_replaced_key_and_reports_what_it_dropped() -> None:
    sent = body(max_tokens=1024, seed=1)
    plan = RetryPlan(sent, FAMILY)
    error = rejection(
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        param="max_tokens",
    )
    step = plan.after(error)
    assert step is not None and step.dropped == ["max_tokens"]
    assert step.body == {
        **{k: v for k, v in sent.items() if k != "max_tokens"},
        "max_completion_tokens": 1024,
    }


def test_drops_accumulate_and_targeted_retries_are_capped() -> None:
    keys = ["alpha_x", "beta_x", "gamma_x", "delta_x"]
    plan = RetryPlan(body(**dict.fromkeys(keys, 1)), FAMILY, max_attempts=10)
    steps = [plan.after(rejection(f"Unknown field {key}")) for key in keys]
    assert [s.dropped if s else None for s in steps[:3]] == [keys[:1], keys[:2], keys[:3]]
    assert steps[3] is None and MAX_TARGETED_RETRIES == 3


def test_a_body_already_sent_is_never_sent_again() -> None:
    plan = RetryPlan(body(temperature=0.5), FAMILY, max_attempts=10)
    opaque = rejection("Bad request")
    first = plan.after(opaque)  # static: without stream_options
    second = plan.after(opaque)  # static: without temperature too... or mandatory only
    bodies = [step.body for step in (first, second) if step is not None]
    assert len(bodies) == len({json.dumps(b, sort_keys=True) for b in bodies})
    while (step := plan.after(opaque)) is not None:
        bodies.append(step.body)
    encoded = [json.dumps(b, sort_keys=True) for b in [plan.full, *bodies]]
    assert len(encoded) == len(set(encoded)), "a body was sent twice"


def test_attempts_are_capped() -> None:
    plan = RetryPlan(body(a_b=1, c_d=2, e_f=3), FAMILY, max_attempts=2)
    assert plan.after(rejection("a_b is unknown")) is not None
    assert plan.after(rejection("c_d is unknown")) is None


def test_backoff_honours_retry_after_within_bounds() -> None:
    plan = RetryPlan(body(), FAMILY, max_attempts=10)
    step = plan.after(rejection("Rate limit reached", 429, retry_after=1.5))
    assert step is not None and step.delay == 1.5 and step.body is plan.full
    assert plan.after(rejection("Rate limit reached", 429)) is not None
    assert plan.after(rejection("Rate limit reached", 429)) is None  # the backoff cap
    assert MAX_BACKOFF_RETRIES == 2
    patient = RetryPlan(body(), FAMILY)
    assert patient.after(rejection("slow down", 429, retry_after=3600)) is None


# -- real bodies the shared cases do not hold ---------------------------------------------


def received(text: str, status: int) -> ErrorInfo:
    """An HTTP rejection as `rxllm.sources.http` builds it from the body it read."""
    parsed = parse_error_body(text)
    return ErrorInfo(
        kind="rejected" if status < 500 else "http",
        message=f"HTTP {status}: {parsed.message}",
        status=status,
        provider="p",
        raw=text,
        param=parsed.param,
        code=parsed.code,
        retry_after=parsed.retry_after,
    )


TOOL = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


@pytest.mark.parametrize(
    ("text", "status", "present", "dropped"),
    [
        # A key offered as a suggestion ("did you mean 'stop'?") is not the refused one.
        # https://github.com/fanenr/chatbot/issues/21
        (
            '{"error":{"message":"property \'store\' is unsupported, did you mean \'stop\'?",'
            '"type":"invalid_request_error"}}',
            400,
            {"store": True, "stop": ["\n\n"]},
            ("store",),
        ),
        # xAI writes the body's snake_case key in camelCase.
        # https://github.com/BerriAI/litellm/issues/14056
        (
            '{"code":"Client specified an invalid argument",'
            '"error":"Argument not supported on this model: frequencyPenalty"}',
            400,
            {"frequency_penalty": 0.5, "presence_penalty": 0.1},
            ("frequency_penalty",),
        ),
        # https://github.com/neavo/LinguaGacha/issues/771
        (
            '"Model grok-4.20-0309-non-reasoning does not support parameter reasoningEffort."',
            400,
            {"reasoning_effort": "low"},
            ("reasoning_effort",),
        ),
        # `tool_choice` spelled as the key refuses its value, not tool use: tools stay.
        # https://github.com/zed-industries/zed/issues/36094
        (
            '{"error":{"message":"No endpoints found that support the provided \'tool_choice\' '
            "value. To learn more about provider routing, visit: "
            'https://openrouter.ai/docs/provider-routing","code":404}}',
            404,
            {"tools": TOOL, "tool_choice": "required"},
            ("tool_choice",),
        ),
        # https://github.com/deepseek-ai/awesome-deepseek-integration/issues/598
        (
            '{"error":{"message":"deepseek-reasoner does not support this tool_choice",'
            '"type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
            400,
            {"tools": TOOL, "tool_choice": "required"},
            ("tool_choice",),
        ),
        # Thinking refused names the keys that switch it on, though none is spelled.
        # https://github.com/Gitlawb/openclaude/issues/1371
        (
            '{"error":{"message":"\\"llama3.1:8b\\" does not support thinking",'
            '"type":"invalid_request_error","param":null,"code":null}}',
            400,
            {"reasoning_effort": "high", "temperature": 0.2},
            ("reasoning_effort",),
        ),
    ],
    ids=[
        "groq-did-you-mean",
        "xai-camelcase",
        "xai-camelcase-in-json-string",
        "openrouter-tool_choice-value",
        "deepseek-this-tool_choice",
        "ollama-thinking",
    ],
)
def test_real_bodies_name_exactly_the_refused_keys(
    text: str, status: int, present: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    verdict = classify(received(text, status), body(seed=1, user="u", **present), FAMILY)
    assert verdict.action == "drop" and verdict.drop == dropped, verdict


@pytest.mark.parametrize(
    "text",
    [
        # A structured code that says the model (or its endpoint) is not there.
        # https://github.com/HeyPuter/puter/issues/3168
        '{"id":"okkMWqL-2kFHot-a023f60e9b77ff7e","error":{"message":"Unable to access '
        "non-serverless model mistralai/Mistral-Small-24B-Instruct-2501. Please visit "
        "https://api.together.ai/models/mistralai/Mistral-Small-24B-Instruct-2501 to create "
        'and start a new dedicated endpoint for the model.","type":"invalid_request_error",'
        '"param":null,"code":"model_not_available"}}',
        # https://github.com/HeyPuter/puter/issues/3168
        '{"id":"okkMWzu-2kFHot-a023f611fd50ff7e","error":{"message":"The dedicated endpoint '
        "for mistralai/Mixtral-8x22B-Instruct-v0.1 is not running. Please visit "
        'https://api.together.ai/models to start the endpoint.","type":"invalid_request_error",'
        '"param":null,"code":"dedicated_endpoint_not_running"}}',
        # https://github.com/Ivy-Interactive/Ivy-Tendril/issues/1403
        '{"type":"error","status":400,"error":{"type":"invalid_request_error","message":'
        "\"The 'gpt-5' model is not supported when using Codex with a ChatGPT account.\"}}",
    ],
    ids=["together-model_not_available", "together-endpoint-not-running", "codex-model"],
)
def test_real_bodies_about_the_model_never_degrade(text: str) -> None:
    sent = body(temperature=0.2, seed=1, tools=TOOL)
    verdict = classify(received(text, 400), sent, FAMILY)
    assert verdict.action == "surface" and "model" in verdict.why
    assert RetryPlan(sent, FAMILY).after(received(text, 400)) is None


def test_a_limit_on_the_number_of_images_removes_them() -> None:
    # https://github.com/vllm-project/vllm/issues/17757
    text = (
        '{"object":"error","message":"At most 1 image(s) may be provided in one request.",'
        '"type":"BadRequestError","param":null,"code":400}'
    )
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    sent = body(messages=[{"role": "user", "content": [image, image]}])
    step = RetryPlan(sent, FAMILY).after(received(text, 400))
    assert step is not None and step.verdict.action == "images" and step.images_removed == 2


def test_a_wait_named_in_words_is_honoured() -> None:
    # https://github.com/jasonacox/TinyLLM/issues/17
    text = (
        '{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation '
        "under Azure OpenAI API version 2023-05-15 have exceeded token rate limit of your "
        "current AIServices S0 pricing tier. Please retry after 86400 seconds. Please contact "
        'Azure support service if you would like to further increase the default rate limit."}}'
    )
    error = received(text, 429)
    verdict = classify(error, body(), FAMILY)
    assert verdict.action == "backoff" and verdict.delay == 86400
    assert RetryPlan(body(), FAMILY).after(error) is None  # a day: surfaced, not retried


@pytest.mark.parametrize(
    ("text", "present", "dropped"),
    [
        # Guards, true before and after: "tool choice" in prose is still tool use.
        # https://github.com/langchain4j/langchain4j/issues/3475
        (
            '{"object":"error","message":"\\"auto\\" tool choice requires '
            '--enable-auto-tool-choice and --tool-call-parser to be set",'
            '"type":"BadRequestError","param":null,"code":400}',
            {"tools": TOOL, "tool_choice": "auto"},
            ("tools", "tool_choice"),
        ),
        # A parameter refused "with this model" is not a missing model.
        # https://github.com/web-infra-dev/midscene/issues/259 (message; OpenAI's envelope)
        (
            '{"error":{"message":"Invalid parameter: \'response_format\' of type \'json_schema\' '
            "is not supported with this model. Learn more about supported models at the "
            'Structured Outputs guide: https://platform.openai.com/docs/guides/structured-outputs",'
            '"type":"invalid_request_error","param":"response_format","code":null}}',
            {"response_format": {"type": "json_schema"}},
            ("response_format",),
        ),
        # A capability the model lacks is not a missing model (made by hand).
        (
            '{"error":{"message":"The model is not supported for tool calling.",'
            '"type":"invalid_request_error","param":null,"code":null}}',
            {"tools": TOOL},
            ("tools",),
        ),
    ],
    ids=["vllm-tool-choice-prose", "openai-with-this-model", "model-not-supported-for-tools"],
)
def test_real_bodies_guards(text: str, present: dict[str, Any], dropped: tuple[str, ...]) -> None:
    verdict = classify(received(text, 400), body(seed=1, **present), FAMILY)
    assert verdict.action == "drop" and verdict.drop == dropped, verdict


# -- rate limits worded like account trouble, sizes worded like rate limits ----------------

AZURE_429 = (
    # https://github.com/jasonacox/TinyLLM/issues/17 and the Azure docs' 429: a per-minute
    # limit whose words link a quota page
    '{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation '
    "under Azure OpenAI API version 2024-08-01-preview have exceeded token rate limit of "
    "your current AIServices S0 pricing tier. Please retry after 6 seconds. Please go here: "
    "https://aka.ms/oai/quotaincrease if you would like to further increase the default "
    'rate limit."}}'
)
GEMINI_429 = json.dumps(
    # https://github.com/RooCodeInc/Roo-Code/issues/3883: a per-minute free-tier limit
    {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {"quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier"}
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"},
            ],
        }
    }
)
GEMINI_429_NO_WAIT = (
    # https://github.com/google/generative-ai-docs/issues/438
    '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",'
    '"status":"RESOURCE_EXHAUSTED"}}'
)
GROQ_TPD = (
    # https://github.com/Aider-AI/aider/issues/3265 (the shape); Groq links its billing page
    '{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in '
    "organization `org_x` service tier `on_demand` on tokens per day (TPD): Limit 100000, "
    "Used 99000, Requested 1500. Please try again in 9m45.6s. Need more tokens? Upgrade to "
    'Dev Tier today at https://console.groq.com/settings/billing","type":"tokens",'
    '"code":"rate_limit_exceeded"}}'
)


@pytest.mark.parametrize(
    ("text", "delay"),
    [(AZURE_429, 6.0), (GEMINI_429, 26.0), (GEMINI_429_NO_WAIT, None), (GROQ_TPD, 585.6)],
    ids=["azure", "gemini", "gemini-no-wait", "groq-tpd"],
)
@pytest.mark.parametrize("policy", [FAMILY, NO_DEGRADATION], ids=["family", "no-degradation"])
def test_a_rate_limit_worded_like_quota_backs_off(
    text: str, delay: float | None, policy: RecoveryPolicy
) -> None:
    """Quota and billing words decide only where nothing structured does: a rate-limit
    code (RESOURCE_EXHAUSTED, rate_limit_exceeded) or a 429 that names its wait is a rate
    limit, whatever page its message links."""
    verdict = classify(received(text, 429), body(), policy)
    assert (verdict.action, verdict.delay) == ("backoff", delay)


def test_an_account_code_still_outranks_a_named_wait() -> None:
    quota = rejection(
        "You exceeded your current quota, please check your plan and billing details.",
        429,
        code="insufficient_quota",
        retry_after=20.0,
    )
    assert classify(quota, body(), FAMILY).action == "surface"
    # words alone, no code, no wait: the account (a 429 of an old compatible server)
    assert classify(rejection("You exceeded your current quota", 429), body(), FAMILY).action == (
        "surface"
    )


@pytest.mark.parametrize(
    ("text", "status"),
    [
        # A request bigger than the whole per-minute allowance never fits by waiting
        # (Groq's words as public client tests quote them; 413 and 429 alike).
        (
            '{"error":{"message":"Request too large for model `openai/gpt-oss-120b` in '
            "organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit "
            "8000, Requested 20976, please reduce your message size and try again. Need more "
            'tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing",'
            '"type":"tokens","code":"rate_limit_exceeded"}}',
            413,
        ),
        (
            '{"error":{"message":"Request too large for model `qwen/qwen3-32b` in organization '
            "`org_x` service tier `on_demand` on output tokens per minute (OTPM): Limit 1000, "
            'Requested 1456.","type":"tokens","code":"rate_limit_exceeded"}}',
            429,
        ),
        # docs.claude.com/en/api/errors: 413 request_too_large, from Cloudflare
        (
            '{"type":"error","error":{"type":"request_too_large",'
            '"message":"Request exceeds the maximum allowed number of bytes."}}',
            413,
        ),
    ],
)
def test_a_request_too_large_for_any_wait_surfaces(text: str, status: int) -> None:
    for policy in (FAMILY, NO_DEGRADATION):
        assert classify(received(text, status), body(), policy).action == "surface"


def test_too_early_is_retried() -> None:
    # RFC 8470 §5.2: 425 says the server would not risk a replay of early data; the
    # same request, sent again, is fine.
    assert classify(rejection("Too Early", 425), body(), NO_DEGRADATION).action == "backoff"


def test_a_wait_past_the_turn_deadline_surfaces_at_once() -> None:
    """`total_timeout` bounds the whole turn: a backoff that would end after it is no
    retry at all, and the rejection (still retryable) surfaces now, not the deadline."""
    now = [100.0]
    plan = RetryPlan(body(), FAMILY, max_attempts=5, total_timeout=10, clock=lambda: now[0])
    limited = rejection("Rate limit reached", 429, code="rate_limit_exceeded", retry_after=30)
    assert plan.after(limited) is None
    assert plan.last_verdict is not None and plan.last_verdict.action == "backoff"
    step = plan.after(rejection("Rate limit reached", 429, retry_after=4))
    assert step is not None and step.delay == 4
    now[0] = 107.0  # 3 s left: the next named 4 s wait does not fit, nor does 2 s of backoff
    assert plan.after(rejection("Rate limit reached", 429, retry_after=4)) is None
    assert RetryPlan(body(), FAMILY, total_timeout=None).after(limited) is not None
    no_wait = RetryPlan(body(), FAMILY, total_timeout=0.2, clock=lambda: 0.0)
    assert no_wait.after(rejection("Overloaded", 529)) is None  # a first backoff > 0.375 s > 0.2 s


# -- jittered backoff ------------------------------------------------------------------------


def test_a_computed_backoff_is_jittered_within_the_sdks_bounds() -> None:
    """No wait named: the exponential wait loses up to a quarter to jitter (the OpenAI and
    Anthropic SDKs' `1 - 0.25 * random()`), so each wait lies in 75 % to 100 % of it."""
    overloaded = rejection("Overloaded", 529)
    for draw, first, second in [(0.0, 0.5, 1.0), (0.5, 0.4375, 0.875), (0.75, 0.40625, 0.8125)]:
        plan = RetryPlan(body(), FAMILY, max_attempts=10, random=lambda d=draw: d)
        steps = [plan.after(overloaded), plan.after(overloaded)]
        assert [step.delay if step else None for step in steps] == [first, second]
    almost_one = 1 - 2**-53  # the largest value `random.random()` returns
    step = RetryPlan(body(), FAMILY, random=lambda: almost_one).after(overloaded)
    assert step is not None and step.delay == 0.375  # the lower bound, once rounded


def test_streams_refused_together_do_not_come_back_together() -> None:
    """A thousand streams rate-limited at one instant: without jitter every retry fell on
    the same 0.5 s. With it, the waits spread over [0.375, 0.5]."""
    draws = random.Random(7)
    overloaded = rejection("Rate limit reached", 429)
    delays = [
        step.delay
        for _ in range(1000)
        if (step := RetryPlan(body(), FAMILY, random=draws.random).after(overloaded))
    ]
    assert len(delays) == 1000 and all(0.375 <= delay <= 0.5 for delay in delays)
    assert len(set(delays)) == 1000
    assert max(delays) - min(delays) > 0.1


def test_a_named_wait_is_honoured_as_given_without_a_draw() -> None:
    """`Retry-After` (or the body's wait) is the provider's answer to this request: the
    SDKs sleep exactly that long, and so does the plan."""
    draws: list[float] = []

    def draw() -> float:
        draws.append(0.9)
        return 0.9

    plan = RetryPlan(body(), FAMILY, max_attempts=10, random=draw)
    step = plan.after(rejection("Rate limit reached", 429, retry_after=1.5))
    assert step is not None and step.delay == 1.5 and draws == []
    step = plan.after(rejection("Rate limit reached", 429))  # none named: computed, jittered
    assert step is not None and step.delay == 1.0 * (1 - 0.25 * 0.9) and draws == [0.9]


def test_a_named_wait_of_zero_is_backed_off_with_jitter() -> None:
    """A wait of 0 (a `Retry-After` date already past, a spent limit's reset that has come)
    would send every stream refused together back at once: the SDKs honour only a named
    wait above 0 and back off otherwise, and so does the plan."""
    plan = RetryPlan(body(), FAMILY, random=lambda: 0.5)
    step = plan.after(rejection("Rate limit reached", 429, retry_after=0.0))
    assert step is not None and step.delay == 0.4375


def test_the_deadline_is_checked_against_the_jittered_wait() -> None:
    """The wait actually used decides whether the retry fits in the turn: 0.5 s does not
    fit in 0.45 s, its jittered 0.4 s does."""
    overloaded = rejection("Overloaded", 529)
    late = RetryPlan(body(), FAMILY, total_timeout=0.45, clock=lambda: 0.0, random=lambda: 0.0)
    assert late.after(overloaded) is None
    fits = RetryPlan(body(), FAMILY, total_timeout=0.45, clock=lambda: 0.0, random=lambda: 0.8)
    step = fits.after(overloaded)
    assert step is not None and step.delay == 0.4


@pytest.mark.parametrize("draw", [-1.0, 1.5, 1e308, float("nan"), float("inf")])
def test_a_draw_outside_the_unit_interval_never_stretches_or_negates_the_wait(
    draw: float,
) -> None:
    step = RetryPlan(body(), FAMILY, random=lambda: draw).after(rejection("Overloaded", 529))
    assert step is not None and step.delay == 0.5


def test_the_computed_wait_is_capped_before_jitter() -> None:
    """The SDKs' `MAX_RETRY_DELAY`: however many backoffs a policy allows, no computed
    wait exceeds 8 s."""
    assert [backoff_wait(n, 0.0) for n in (0, 1, 2, 3, 4, 60, 5000)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        8.0,
        8.0,
    ]
    assert backoff_wait(4, 0.5) == 7.0


@pytest.mark.parametrize(
    ("status", "message", "action"),
    [
        # A 429 that says it is a rate limit is the key's rate, whatever else it names.
        (429, "Rate limit exceeded for this API key.", "backoff"),
        (429, "API key rate-limited: too many requests, slow down.", "backoff"),
        # Near misses: the key or the account refused, or a limit a short wait cannot lift.
        (401, "Rate limit check failed: invalid API key.", "surface"),
        (
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "surface",
        ),
        (
            429,
            "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock more.",
            "surface",
        ),
    ],
)
def test_a_rate_limit_of_the_key_backs_off(status: int, message: str, action: str) -> None:
    assert classify(rejection(message, status=status), body(), FAMILY).action == action
