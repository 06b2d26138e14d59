"""Every real rejection in ../shared/rejections, replayed over real HTTP.

A loopback server answers the first request with the rejection (its status, headers
and body, or `200 OK` and the event) and every later request with a short valid
stream; the provider is the case's preset. What the client sends next must be what
the case's `expected.action` says (see ../shared/rejections/INDEX.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import image_notice
from tests.support import NO_CAPTURES, REJECTIONS

CASES = sorted(REJECTIONS.glob("*.json")) if REJECTIONS.is_dir() else []
pytestmark = pytest.mark.skipif(not CASES, reason=NO_CAPTURES)

OK_STREAM = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in (
            {"model": "m", "choices": [{"index": 0, "delta": {"content": "fine"}}]},
            {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        )
    )
    + b"data: [DONE]\n\n"
)


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(payload).encode() + b"\n\n" for payload in payloads)


# The same short answer in each other wire's framing, for a case whose preset speaks it
# (its rejection an error frame of that wire after `200 OK`).
OK_STREAMS = {
    "openai": OK_STREAM,
    "anthropic": _events(
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "fine"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ),
    "google": _events(
        {
            "candidates": [
                {"content": {"parts": [{"text": "fine"}], "role": "model"}, "finishReason": "STOP"}
            ]
        }
    ),
    "openai-responses": _events(
        {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1"}},
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "output_index": 0,
            "content_index": 0,
            "delta": "fine",
        },
        {"type": "response.completed", "sequence_number": 2, "response": {"status": "completed"}},
    ),
}
UNRELATED = {"seed": 7, "user": "case-user"}
IMAGE = "data:image/png;base64,iVBORw0KGgo="


@dataclass
class Rejecting:
    """First request: the rejection; later ones: a valid stream. Keeps what it got."""

    case: dict[str, Any]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        self.times.append(time.monotonic())
        case = self.case
        if len(self.bodies) == 1:
            if case["transport"] == "http":
                return web.Response(
                    status=case["status"], text=case["body"], headers=case["headers"]
                )
            return web.Response(
                body=case["body"].encode(), headers={"Content-Type": "text/event-stream"}
            )
        ok = OK_STREAMS.get(case["preset"], OK_STREAM)
        return web.Response(body=ok, headers={"Content-Type": "text/event-stream"})


@pytest.fixture
async def rejecting() -> AsyncIterator[Any]:
    runners: list[web.AppRunner] = []

    async def start(case: dict[str, Any]) -> tuple[Rejecting, str]:
        server = Rejecting(case)
        app = web.Application()
        app.router.add_post("/{tail:.*}", server.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        return server, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()


def request_for(case: dict[str, Any]) -> rxllm.ChatRequest:
    wanted = case["request"]
    images = [IMAGE] * wanted.get("images", 0)
    tools = [rxllm.Tool(name="get_weather")] if wanted.get("tools") else []
    params = {**UNRELATED, **wanted.get("params", {})}
    for key in wanted.get("keep", []):
        params.setdefault(key, {"enabled": True})
    # The chat wire writes `stream_options` itself: the case's value is the same one.
    params.pop("stream_options", None)
    return rxllm.ChatRequest(
        model="case-model",
        messages=[rxllm.Message.user("Describe this, please.", images=images)],
        tools=tools,
        params=params,
    )


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
async def test_rejection(path: Path, rejecting: Any) -> None:
    case = json.loads(path.read_text())
    expected = case["expected"]
    server, url = await rejecting(case)
    key = "sk-test-key-0123456789abcdef"
    p = rxllm.provider(case["preset"], api_key=key, base_url=url, allow_private_network=True)
    record = await p.complete(request_for(case))
    first = server.bodies[0]
    action = expected["action"]
    in_band = case["transport"] == "sse_after_200"
    status = case.get("event_status") if in_band else case["status"]

    if action == "none":
        assert len(server.bodies) == 1, "a rejection that no body can fix is never retried"
    if action in ("none", "backoff") and len(server.bodies) == 1:
        assert record.terminal.type == "error"
        error = record.terminal.error
        assert error.status == status
        assert case.get("message_probe", "") in error.message
        assert len(record.attempts) == 1
        return

    assert record.terminal.type == "done", record.terminal
    assert record.text == "fine" and len(server.bodies) == 2
    second = server.bodies[1]
    retry = record.attempts[1]
    assert record.attempts[0].status == status
    assert not record.attempts[0].committed and retry.committed
    if action == "backoff":
        assert second == first, "a backoff retry sends the identical body"
        wait = expected.get("retry_after_s")
        if wait is not None:
            assert server.times[1] - server.times[0] >= wait
    elif action == "drop":
        dropped = set(expected["drop"])
        renamed = expected.get("rename", {})
        assert set(first) - set(second) == dropped
        for old, new in renamed.items():
            assert new not in second or second[new] == first[old]
        assert {k: v for k, v in second.items() if k not in renamed.values()} == {
            k: v for k, v in first.items() if k not in dropped
        }
        assert sorted(retry.dropped) == sorted(dropped)
    elif action == "images":
        count = case["request"]["images"]
        assert {k: v for k, v in second.items() if k != "messages"} == {
            k: v for k, v in first.items() if k != "messages"
        }
        parts = second["messages"][0]["content"]
        texts = [part["text"] for part in parts if part["type"] == "text"]
        assert texts == ["Describe this, please.", image_notice(count)]
        assert retry.images_removed == count
    elif action == "static":
        assert set(second) < set(first)
        assert all(second[key] == first[key] for key in second)
        assert {"model", "messages", "stream"} <= set(second)
        assert second == {k: v for k, v in first.items() if k != "stream_options"}
    else:  # pragma: no cover - a new action in the index
        pytest.fail(f"unknown action {action!r}")
    # (a backoff sent the identical body; where the wire puts them is its own: Gemini's
    # seed is in `generationConfig`)
    for key in UNRELATED if action != "backoff" else ():
        assert key in second, f"{key} is unrelated to the rejection and must survive"
    for key in case["request"].get("keep", []):
        assert second[key] == first[key]
