"""Rejections the shared cases do not hold, replayed over real HTTP like them.

Each body is a provider's rejection from the public thread or docs named beside it (where
a value was changed, or an envelope assembled around the provider's words, the comment
says so), answered by a loopback server to the first request; every later request gets a
short valid stream. The request is built as in
tests/test_rejections.py (two unrelated keys, `seed` and `user`, ride along), and what the
client sends next must be what a careful client does: nothing more (`none`), the same
body again (`backoff`), the body less exactly the refused keys (`drop`), the images
replaced by the notice (`images`), or the first body of the static list (`static`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import rxllm
from rxllm.degradation import image_notice
from tests.test_rejections import UNRELATED, rejecting, request_for

__all__ = ["rejecting"]  # the loopback server fixture, shared with the replayed cases

KEY = "sk-test-key-0123456789abcdef"


def error(message: str, **fields: Any) -> str:
    """OpenAI's envelope, as most compatible servers write it."""
    return json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "param": None, **fields}}
    )


def case(
    preset: str,
    status: int,
    body: str,
    action: str,
    *,
    drop: tuple[str, ...] = (),
    params: dict[str, Any] | None = None,
    tools: bool = False,
    images: int = 0,
    headers: dict[str, str] | None = None,
    in_band: bool = False,
    probe: str = "",
    wait: float | None = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {"params": params or {}, "tools": tools, "images": images}
    return {
        "preset": preset,
        "status": status,
        "transport": "sse_after_200" if in_band else "http",
        "headers": headers or {},
        "body": body,
        "request": request,
        "expected": {"action": action, "drop": list(drop), "wait": wait, "probe": probe},
    }


GROQ_TOOL_USE_FAILED = (
    '{"error":{"message":"Failed to call a function. Please adjust your prompt. See '
    '\'failed_generation\' for more details.","type":"invalid_request_error",'
    '"code":"tool_use_failed","failed_generation":"Tool use failed: JSON does not match the '
    'expected schema for tool calls","status_code":400}}'
)

CASES: dict[str, dict[str, Any]] = {
    # OpenAI (and Azure) refuse image input on a text model with a `param` pointing inside
    # `messages`: the images go, not the turn. https://github.com/vllm-project/vllm/issues/11629
    # (OpenAI's body quoted), https://github.com/browser-use/web-ui/issues/274 (Azure)
    "openai-image-only-certain-models": case(
        "openai",
        400,
        error(
            "Invalid content type. image_url is only supported by certain models.",
            param="messages.[0].content.[1].type",
            code=None,
        ),
        "images",
        images=1,
    ),
    "azure-image-only-certain-models": case(
        "azure-openai",
        400,
        error(
            "Invalid content type. image_url is only supported by certain models.",
            param="messages.[1].content.[1].type",
            code=None,
        ),
        "images",
        images=2,
    ),
    # A part of the wrong shape is the conversation's fault: it surfaces (OpenAI's
    # `invalid_type` wording, as its API writes it for any field).
    "openai-invalid-type-image-url": case(
        "openai",
        400,
        error(
            "Invalid type for 'messages[0].content[1].image_url': expected an object, but got "
            "a string instead.",
            param="messages[0].content[1].image_url",
            code="invalid_type",
        ),
        "none",
        images=1,
        probe="Invalid type",
    ),
    # https://github.com/alan-turing-institute/t0-1/issues/69: a flagged prompt; sending it
    # again with fewer keys changes nothing (and repeats the flagged prompt)
    "openai-invalid-prompt-usage-policy": case(
        "openai",
        400,
        error(
            "Invalid prompt: your prompt was flagged as potentially violating our usage "
            "policy. Please try again with a different prompt: "
            "https://platform.openai.com/docs/guides/reasoning#advice-on-prompting",
            code="invalid_prompt",
        ),
        "none",
        params={"temperature": 0.2},
        probe="usage policy",
    ),
    # https://github.com/microsoft/vscode/issues/258088: Gemini's OpenAI-compatible endpoint
    # refusing a system turn for Gemma; no body key can make it accept one
    "gemini-developer-instruction-not-enabled": case(
        "custom",
        400,
        '[{ "error": { "code": 400, "message": "Developer instruction is not enabled for '
        'models/gemma-3-27b-it", "status": "INVALID_ARGUMENT" } } ]',
        "none",
        params={"temperature": 0.2},
        probe="Developer instruction",
    ),
    # https://github.com/RightNow-AI/openfang/issues/697: a model id OpenRouter does not know
    "openrouter-not-a-valid-model-id": case(
        "openrouter",
        400,
        '{"error":{"message":"healer-alpha is not a valid model ID","code":400},'
        '"user_id":"user_39ktqAYU0JZKhG1fder8F40HVSC"}',
        "none",
        params={"temperature": 0.2},
        probe="not a valid model ID",
    ),
    # https://github.com/cline/cline/issues/3120 (message); xAI's envelope as in
    # https://github.com/BerriAI/litellm/issues/14056
    "xai-maximum-prompt-length": case(
        "xai",
        400,
        '{"code":"Client specified an invalid argument","error":"This model\'s maximum prompt '
        'length is 131072 but the request contains 136973 tokens."}',
        "none",
        params={"temperature": 0.2},
        probe="maximum prompt length",
    ),
    # https://github.com/unslothai/unsloth/issues/2666 (vLLM's words); vLLM's error envelope
    "vllm-longer-than-maximum-model-length": case(
        "vllm",
        400,
        '{"object":"error","message":"The decoder prompt (length 322) is longer than the '
        "maximum model length of 256. Make sure that `max_model_len` is no smaller than the "
        'number of text tokens.","type":"BadRequestError","param":null,"code":400}',
        "none",
        params={"temperature": 0.2},
        probe="maximum model length",
    ),
    # https://github.com/valentinfrlch/ha-llmvision/issues/691: Ollama's 500 for a model
    # without image input (its words; the OpenAI-compatible envelope as in the shared case)
    "ollama-missing-data-for-image-input": case(
        "ollama",
        500,
        error(
            "Failed to create new sequence: failed to process inputs: this model is missing "
            "data required for image input",
            type="api_error",
            code=None,
        ),
        "images",
        images=1,
    ),
    # https://github.com/opea-project/GenAIInfra/issues/487: TGI, 200 then the error event
    "tgi-inputs-plus-max-new-tokens-in-band": case(
        "custom",
        200,
        'data:{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= '
        '2048. Given: 1887 `inputs` tokens and 1024 `max_new_tokens`","error_type":"validation"}'
        "\n\n",
        "none",
        params={"max_tokens": 1024},
        in_band=True,
        probe="must be <= 2048",
    ),
    # TGI's `ValidationError::InputLength` (router/src/validation.rs), over HTTP
    "tgi-inputs-must-have-less-than": case(
        "custom",
        422,
        '{"error":"Input validation error: `inputs` must have less than 4096 tokens. Given: '
        '5000","error_type":"validation"}',
        "none",
        probe="must have less than 4096 tokens",
    ),
    # https://github.com/anomalyco/opencode/issues/1018: Groq's `event: error` after 200. The
    # model's call failed; dropping the tools would turn the agent's turn into prose.
    "groq-tool-use-failed-in-band": case(
        "groq",
        200,
        f"event: error\ndata: {GROQ_TOOL_USE_FAILED}\n\n",
        "none",
        tools=True,
        in_band=True,
        probe="Failed to call a function",
    ),
    # https://github.com/huggingface/smolagents/issues/1119 (shape): the error quotes the
    # model's output, here one that spells a body key ("temperature", changed from "query").
    "groq-tool-use-failed-quotes-the-output": case(
        "groq",
        400,
        '{"error":{"message":"Failed to call a function. Please adjust your prompt. See '
        '\'failed_generation\' for more details.","type":"invalid_request_error",'
        '"code":"tool_use_failed","failed_generation":"web_search{\\"temperature\\": 2}'
        '\\u003c/function\\u003e"}}',
        "none",
        tools=True,
        params={"temperature": 0.2},
        probe="Failed to call a function",
    ),
    # https://github.com/louisho5/picobot/issues/6 (the shared case's words), with a
    # `tool_choice` too: OpenAI-compatible servers refuse one without tools.
    "ollama-does-not-support-tools-with-tool-choice": case(
        "ollama",
        400,
        error(
            "registry.ollama.ai/library/gemma3:4b does not support tools",
            type="api_error",
            code=None,
        ),
        "drop",
        drop=("tools", "tool_choice"),
        tools=True,
        params={"tool_choice": "auto"},
    ),
    # https://github.com/continuedev/continue/issues/9800 (Cerebras's message); the envelope
    # is assembled in its style: a per-minute limit whose code and param say `quota`
    "cerebras-tokens-per-minute": case(
        "custom",
        429,
        '{"message":"Tokens per minute limit exceeded - too many tokens processed.",'
        '"type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}',
        "backoff",
        probe="Tokens per minute",
    ),
    # console.groq.com/docs/flex-processing: 498 `capacity_exceeded`, "Add jittered backoff"
    "groq-498-flex-capacity": case(
        "groq",
        498,
        '{"error":{"message":"Capacity temporarily exceeded for flex tier, please try again '
        'later","type":"capacity_exceeded"}}',
        "backoff",
        probe="Capacity temporarily exceeded",
    ),
    # https://github.com/huggingface/unity-api/issues/18: "wait the estimated time and try
    # again" (20.0 there; 1.5 here, to keep the test short)
    "hf-model-loading-estimated-time": case(
        "custom",
        503,
        '{"error":"Model distilbert-base-cased-distilled-squad is currently loading",'
        '"estimated_time":1.5}',
        "backoff",
        wait=1.5,
        probe="currently loading",
    ),
    # OpenAI's mid-stream server error names no status: the same body, not a smaller one
    "openai-server-error-in-band": case(
        "openai",
        200,
        'data: {"error":{"message":"The server had an error while processing your request. '
        'Sorry about that!","type":"server_error","param":null,"code":null}}\n\n',
        "backoff",
        params={"temperature": 0.3},
        in_band=True,
        probe="server had an error",
    ),
    # NVIDIA's cloud functions answer in RFC 7807 problem details (the shared 404); its
    # opaque 500 in that shape is the same refusal as the bare "Internal server error"
    "nvidia-opaque-500-problem-details": case(
        "nvidia",
        500,
        '{"status":500,"title":"Internal Server Error","detail":"Internal server error"}',
        "static",
        params={"temperature": 0.6},
    ),
    # https://github.com/block/buzz/issues/3018, https://github.com/AventurasTeam/Aventuras/issues/48
    "openrouter-requested-parameters-404": case(
        "openrouter",
        404,
        '{"error":{"message":"No endpoints found that can handle the requested parameters. To '
        "learn more about provider routing, visit: "
        'https://openrouter.ai/docs/guides/routing/provider-selection","code":404}}',
        "static",
        params={"temperature": 0.2},
    ),
    # Guard: the capability still names the tools where its sentence refuses it.
    # https://github.com/Routstr/routstr-core/issues/554
    "openrouter-no-endpoints-tool-use": case(
        "openrouter",
        404,
        '{"error":{"message":"No endpoints found that support tool use. To learn more about '
        'provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection",'
        '"code":404}}',
        "drop",
        drop=("tools", "tool_choice"),
        tools=True,
        params={"tool_choice": "auto"},
    ),
}


def request(wanted: dict[str, Any]) -> rxllm.ChatRequest:
    shared = {"request": {k: v for k, v in wanted.items() if v}}
    return request_for(shared)


@pytest.mark.parametrize("name", list(CASES))
async def test_a_careful_client(name: str, rejecting: Any) -> None:
    spec = CASES[name]
    expected = spec["expected"]
    server, url = await rejecting(spec)
    async with rxllm.provider(
        spec["preset"], api_key=KEY, base_url=url, allow_private_network=True
    ) as p:
        record = await p.complete(request(spec["request"]))
    action = expected["action"]
    first = server.bodies[0]

    if action == "none":
        assert len(server.bodies) == 1, f"retried: {server.bodies[1:]}"
        assert record.terminal.type == "error"
        assert expected["probe"] in record.terminal.error.message
        return
    assert record.terminal.type == "done", record.terminal
    assert len(server.bodies) == 2 and record.text == "fine"
    second = server.bodies[1]
    for key in UNRELATED:
        assert second[key] == first[key]
    if action == "backoff":
        assert second == first
        if expected["wait"] is not None:
            assert server.times[1] - server.times[0] >= expected["wait"]
    elif action == "drop":
        assert set(first) - set(second) == set(expected["drop"])
        assert second == {k: v for k, v in first.items() if k not in expected["drop"]}
    elif action == "images":
        count = spec["request"]["images"]
        assert {k: v for k, v in second.items() if k != "messages"} == {
            k: v for k, v in first.items() if k != "messages"
        }
        parts = second["messages"][0]["content"]
        assert [part["text"] for part in parts] == ["Describe this, please.", image_notice(count)]
        assert record.attempts[1].images_removed == count
    else:
        assert action == "static"
        assert second == {k: v for k, v in first.items() if k != "stream_options"}
