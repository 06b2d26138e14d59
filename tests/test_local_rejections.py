"""The local provider's rejections, over real HTTP with a plain aiohttp client: each
refuses while its trigger holds in the body and answers normally once it does not."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from rxllm.error_body import parse_error_body, retry_after_of
from rxllm.events import ErrorInfo, Failed
from rxllm.local import REJECTIONS, LocalServer
from rxllm.sources import HttpRequest, http_source
from tests.support import drain

USER = {"role": "user", "content": "hi"}
IMAGE = {
    "role": "user",
    "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ],
}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


class Reply:
    def __init__(self, status: int, headers: Mapping[str, str], text: str) -> None:
        self.status, self.headers, self.text = status, headers, text

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def streamed_answer(self) -> bool:
        """The normal scripted answer: a 200 event stream ending with [DONE]."""
        return self.status == 200 and self.text.rstrip().endswith("data: [DONE]")


async def post(server: LocalServer, body: dict[str, Any], path: str = "/chat/completions") -> Reply:
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.url + path, json=body) as response,
    ):
        return Reply(response.status, CIMultiDict(response.headers), await response.text())


def chat(fault: str, **extra: Any) -> dict[str, Any]:
    return {"model": f"fault/{fault}", "messages": [USER], "stream": True, **extra}


# name -> (a body that triggers it, the same body degraded, status, param, code, words)
TRIGGERED: dict[str, tuple[dict[str, Any], dict[str, Any], int, str | None, str | None, str]] = {
    "reject_param": (
        chat("reject_param", temperature=0.2, seed=1),
        chat("reject_param", seed=1),
        400,
        "temperature",
        "unsupported_parameter",
        "Unsupported parameter: 'temperature' is not supported with this model.",
    ),
    "reject_max_tokens": (
        chat("reject_max_tokens", max_tokens=64),
        chat("reject_max_tokens", max_completion_tokens=64),
        400,
        "max_tokens",
        "unsupported_parameter",
        "Use 'max_completion_tokens' instead.",
    ),
    "reject_images": (
        {**chat("reject_images"), "messages": [IMAGE]},
        chat("reject_images"),
        400,
        None,
        "BadRequestError",
        "fault/reject_images is not a multimodal model None",
    ),
    "reject_tools": (
        chat("reject_tools", tools=[TOOL]),
        chat("reject_tools"),
        400,
        None,
        "api_error",
        "registry.ollama.ai/library/fault/reject_tools does not support tools",
    ),
    "nvidia_opaque_500": (
        chat("nvidia_opaque_500", stream_options={"include_usage": True}),
        chat("nvidia_opaque_500"),
        500,
        None,
        "internal_server_error",
        "Internal server error",
    ),
    "openrouter_502": (
        chat("openrouter_502", stream_options={"include_usage": True}),
        chat("openrouter_502"),
        502,
        None,
        None,
        "Provider returned error",
    ),
}


@pytest.mark.parametrize("name", sorted(TRIGGERED))
async def test_a_rejection_plays_while_its_trigger_holds(
    local_server: LocalServer, name: str
) -> None:
    first, degraded, status, param, code, words = TRIGGERED[name]
    refused = await post(local_server, first)
    assert refused.status == status and refused.headers["x-request-id"].startswith("req_local_")
    assert refused.headers["Content-Type"].startswith("application/json")
    parsed = parse_error_body(refused.text)
    assert (parsed.param, parsed.code) == (param, code)
    assert words in parsed.message
    answered = await post(local_server, degraded)
    assert answered.streamed_answer, answered.text
    assert local_server.requests == [first, degraded]


async def test_two_params_are_named_together_then_one_by_one(local_server: LocalServer) -> None:
    both = await post(local_server, chat("reject_two_params", top_p=0.9, seed=7, user="u"))
    assert both.status == 400 and both.json["code"] == 400 and both.json["param"] is None
    message = both.json["message"]
    assert "('body', 'top_p')" in message and "('body', 'seed')" in message
    assert "extra_forbidden" in message
    one = await post(local_server, chat("reject_two_params", seed=7, user="u"))
    assert one.status == 400
    assert "('body', 'seed')" in one.json["message"] and "top_p" not in one.json["message"]
    assert (await post(local_server, chat("reject_two_params", user="u"))).streamed_answer


async def test_error_after_200_is_one_tgi_event(local_server: LocalServer) -> None:
    refused = await post(local_server, chat("error_after_200", top_p=0.9))
    assert refused.status == 200 and refused.headers["Content-Type"] == "text/event-stream"
    assert refused.headers["x-request-id"].startswith("req_local_")
    assert refused.text == (
        'data:{"error":"Input validation error: `top_p` must be > 0.0 and < 1.0",'
        '"error_type":"validation"}\n\n'
    )
    assert (await post(local_server, chat("error_after_200"))).streamed_answer


async def test_overloaded_refuses_every_odd_request(local_server: LocalServer) -> None:
    body = chat("overloaded", temperature=0.2)
    replies = [await post(local_server, body) for _ in range(4)]
    assert [r.status for r in replies] == [503, 200, 503, 200]
    assert replies[1].streamed_answer and replies[3].streamed_answer
    refused = replies[0]
    assert retry_after_of(refused.headers) == 0.05
    assert refused.headers["x-request-id"] != replies[2].headers["x-request-id"]
    assert parse_error_body(refused.text).code == "overloaded"
    assert local_server.requests == [body] * 4  # the same body each time: nothing degraded


async def test_overloaded_speaks_anthropic_on_its_route(local_server: LocalServer) -> None:
    body = {"model": "fault/overloaded", "max_tokens": 64, "messages": [USER], "stream": True}
    refused = await post(local_server, body, "/messages")
    assert refused.status == 529 and retry_after_of(refused.headers) == 0.05
    assert refused.json == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    answered = await post(local_server, body, "/messages")
    assert answered.status == 200 and "message_stop" in answered.text


async def test_rate_limited_names_its_wait_only_in_the_body(local_server: LocalServer) -> None:
    replies = [await post(local_server, chat("rate_limited")) for _ in range(3)]
    assert [r.status for r in replies] == [429, 200, 429]
    refused = parse_error_body(replies[0].text)
    assert retry_after_of(replies[0].headers) is None
    assert (refused.code, refused.retry_after) == ("rate_limit_exceeded", 0.05)
    assert "Please try again in 0.05s." in refused.message


@pytest.mark.parametrize(
    ("name", "status", "param", "code"),
    [
        ("context_length", 400, "messages", "context_length_exceeded"),
        ("bad_key", 401, None, "invalid_api_key"),
        ("quota", 429, None, "insufficient_quota"),
    ],
)
async def test_account_and_size_rejections_always_refuse(
    local_server: LocalServer, name: str, status: int, param: str | None, code: str
) -> None:
    for body in (chat(name, temperature=0.2), {"model": f"fault/{name}", "messages": [USER]}):
        refused = await post(local_server, body)
        assert refused.status == status and "x-request-id" in refused.headers
        parsed = parse_error_body(refused.text)
        assert (parsed.param, parsed.code) == (param, code)


async def test_unknown_faults_list_the_rejections(local_server: LocalServer) -> None:
    reply = await post(local_server, chat("no_such_fault"))
    assert reply.status == 404 and "x-request-id" in reply.headers
    assert all(name in reply.json["error"]["message"] for name in REJECTIONS)


async def test_the_older_http_faults_carry_a_request_id_too(local_server: LocalServer) -> None:
    for name in ("http_500", "http_400_param"):
        assert "x-request-id" in (await post(local_server, chat(name))).headers


async def test_the_http_source_reports_every_structured_field(local_server: LocalServer) -> None:
    """What the recovery layer reads: the local rejections through rxllm's own source
    (below any retry, so the first answer is what is checked)."""

    async def first_error(body: dict[str, Any]) -> ErrorInfo:
        url = local_server.url + "/chat/completions"
        source = http_source(HttpRequest(url, json.dumps(body).encode()), provider="local")
        items = await drain(source)
        failures = [item for item in items if isinstance(item, Failed)]
        assert len(failures) == 1
        return failures[0].error

    error = await first_error(chat("reject_param", temperature=0.2))
    assert (error.kind, error.status, error.param, error.code) == (
        "rejected",
        400,
        "temperature",
        "unsupported_parameter",
    )
    assert error.request_id and error.request_id.startswith("req_local_")
    error = await first_error(chat("overloaded"))
    assert (error.kind, error.status, error.retry_after) == ("http", 503, 0.05)
