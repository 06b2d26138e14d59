"""Round thirteen's rejections in every envelope and in other words.

The 20 cases tests/rejections_extra gained in the thirteenth round (listed in
tests/test_probe_rejections_35.py) are taken apart and put back together in each envelope of
`tests.test_probe_rejections_9`, as an HTTP body and as a `data:` frame after `200 OK`
(`tests.test_probe_rejections_19.wrapped`, as tests/test_probe_rejections_34.py does for
round twelve): 400 combinations. Each must get the original's action, dropped keys and
renames; none is marked different. Against the degradation.py of round thirteen's commit, 2
of them read otherwise: TGI's "Template error: invalid operation: ..." behind LiteLLM's
"litellm.UnprocessableEntityError: OpenAIException - ", over HTTP and in its frame (static):
the words that open the server's template error now open it after a relay's dash too (and
so does the variant "template/b" below, a template's syntax error behind the same relay).

Then, as tests/test_probe_rejections_34.py does, one or two paraphrases of each case in
another server's envelope or words (`VARIANTS`: vLLM's flat envelope, FastAPI's `detail`,
LiteLLM's relay, TGI's `error_type`, a frame without a status). None of these bodies was
recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_probe_rejections_7 import TOOLS, body, frame, litellm, response
from tests.test_probe_rejections_16 import combinations
from tests.test_probe_rejections_17 import case, error, vllm
from tests.test_probe_rejections_19 import assert_reads_the_same
from tests.test_probe_rejections_35 import ROUND_THIRTEEN

# None: every envelope keeps what the round's readings rest on.
DIFFERENT: dict[str, str] = {}


@pytest.mark.parametrize(("case_name", "envelope", "in_band"), combinations(ROUND_THIRTEEN))
def test_every_envelope_reads_the_same(case_name: str, envelope: str, in_band: bool) -> None:
    assert_reads_the_same(case_name, envelope, in_band, DIFFERENT)


def test_the_combinations_are_round_thirteens() -> None:
    assert len(combinations(ROUND_THIRTEEN)) == 400


def _tgi(message: str, kind: str = "validation") -> dict[str, Any]:
    return {"error": message, "error_type": kind}


def _lmdeploy(message: str) -> dict[str, Any]:
    return {
        "message": message,
        "type": "invalid_request_error",
        "code": 400,
        "param": None,
        "object": "error",
    }


# == the round's cases in other words ===================================================
VARIANTS = [
    # -- lmdeploy__400_launch_api_server_with_tool_call_parser_to_use_tools: drop tools -----
    case(
        "flag/a: in-band, no status",
        frame(
            {
                "message": "Please launch the api_server with --tool-call-parser if you want to "
                "use tools."
            },
            body(tools=TOOLS, temperature=0.7),
        ),
        "drop",
        ("tools",),
    ),
    case(
        "flag/b: another server's words, the flag after the purpose",
        response(
            400,
            vllm("To use tools, the server must be started with --enable-auto-tool-choice."),
            body(tools=TOOLS, tool_choice="auto", temperature=0.7),
        ),
        "drop",
        ("tools", "tool_choice"),
    ),
    # -- lmdeploy__400_logprobs_requested_but_logprobs_mode_not_enabled: drop both ----------
    case(
        "logprobs_mode/a: LiteLLM's relay",
        response(
            400,
            litellm(
                "litellm.BadRequestError: OpenAIException - Logprobs(True)/top_logprobs(3) "
                "requested but not enabled logprobs_mode in engine configuration",
                400,
            ),
            body(logprobs=True, top_logprobs=3, temperature=0.7),
        ),
        "drop",
        ("logprobs", "top_logprobs"),
    ),
    # -- lmdeploy__400_top_k_cannot_be_a_negative_integer: drop top_k -----------------------
    case(
        "top_k/a: in-band, LMDeploy's envelope",
        frame(_lmdeploy("The top_k -1 cannot be a negative integer."), body(top_k=-1)),
        "drop",
        ("top_k",),
    ),
    # -- llamacpp__500_cannot_use_tools_with_stream: drop tools -----------------------------
    case(
        "cannot_use/a: in-band, no status",
        frame({"message": "Cannot use tools with stream"}, body(tools=TOOLS, temperature=0.2)),
        "drop",
        ("tools",),
    ),
    case(
        "cannot_use/b: 'can't use' and the legacy functions, vLLM's envelope at 500",
        response(
            500,
            vllm("You can't use functions when streaming is enabled.", 500),
            body(functions=[{"name": "f", "parameters": {}}], temperature=0.2),
        ),
        "drop",
        ("functions",),
    ),
    # -- lmstudio__400_url_field_must_be_a_base64_encoded_image: images ---------------------
    case(
        "image_form/a: in-band, no status",
        frame({"message": "'url' field must be a base64 encoded image."}, body(True)),
        "images",
    ),
    case(
        "image_form/b: 'should be a data URL', FastAPI's detail",
        response(400, {"detail": "image_url.url should be a data URL"}, body(True)),
        "images",
    ),
    # -- tgi__422_template_error_*: none ----------------------------------------------------
    case(
        "template/a: in-band, TGI's frame",
        frame(_tgi("Template error: template not found", "template_error"), body()),
        "surface",
    ),
    case(
        "template/b: a syntax error of the template, behind LiteLLM at 422",
        response(
            422,
            litellm(
                "litellm.UnprocessableEntityError: OpenAIException - Template error: syntax "
                "error: unexpected end of input (in <string>:12)",
                422,
            ),
            body(temperature=0.7),
        ),
        "surface",
    ),
    # -- vllm__400_max_tokens_must_be_at_least_1_got_negative: none -------------------------
    case(
        "no_room/a: in-band, vLLM's frame",
        frame(vllm("max_tokens must be at least 1, got -1872."), body(temperature=0.7)),
        "surface",
    ),
    case(
        "no_room/b: 'max_new_tokens', TGI's envelope",
        response(422, _tgi("max_new_tokens must be strictly positive, got -12"), body()),
        "surface",
    ),
    # -- cloudflare_workers_ai__400_oneof_not_met_required_properties_input_requests --------
    case(
        "required/a: in-band, no status",
        frame(
            {"message": "AiError: Bad input: Error: required properties at '/' are 'prompt'"},
            body(temperature=0.2),
        ),
        "surface",
    ),
    case(
        "required/b: a gateway's relay in OpenAI's envelope",
        response(
            400,
            error(
                "5006: Error: oneOf at '/' not met, 0 matches: required properties at '/' "
                "are 'input', required properties at '/' are 'requests'",
                type="invalid_request_error",
            ),
            body(temperature=0.2, max_tokens=512),
        ),
        "surface",
    ),
    # -- triton__503_exceeds_maximum_queue_size: backoff ------------------------------------
    case(
        "queue/a: in-band, Triton's words",
        frame({"error": "Exceeds maximum queue size"}, body(temperature=0.2)),
        "backoff",
    ),
    case(
        "queue/b: 'queue length limit reached', in-band without a status",
        frame({"message": "Rejected: queue length limit reached."}, body(temperature=0.2)),
        "backoff",
    ),
    # -- the round's other cases, in a frame or another envelope ----------------------------
    case(
        "mlc/a: in-band, MLC's words",
        frame(
            vllm(
                "Request prompt has 9120 tokens in total, larger than the model input length "
                "limit 8192."
            ),
            body(max_tokens=1024),
        ),
        "surface",
    ),
    case(
        "ds4/a: in-band, its own type",
        frame(
            {
                "message": "Prompt tokens (70412) exceeds context size (65536)",
                "type": "context_exceeded",
            },
            body(max_tokens=4096),
        ),
        "surface",
    ),
    case(
        "ollama_busy/a: in-band, Ollama's words without its 503",
        frame(
            {"error": "server busy, please try again.  maximum pending requests exceeded"},
            body(temperature=0.7),
        ),
        "backoff",
    ),
    case(
        "funds/a: in-band, a gateway's words",
        frame({"message": "Insufficient funds. Please top up your balance."}, body()),
        "surface",
    ),
    case(
        "xinference/a: in-band, FastAPI's detail",
        frame({"detail": "Model not found in the model list, uid: my-qwen"}, body()),
        "surface",
    ),
    case(
        "monthly_credits/a: in-band, the router's words",
        frame(
            {"error": "You have exceeded your monthly included credits for Inference Providers."},
            body(),
        ),
        "surface",
    ),
]


@pytest.mark.parametrize(("verdict", "action", "drop", "rename"), VARIANTS)
def test_variant(verdict: Any, action: str, drop: tuple[str, ...], rename: Any) -> None:
    assert verdict.action == action, verdict
    assert verdict.drop == drop, verdict
    assert dict(verdict.rename) == (rename or {})
