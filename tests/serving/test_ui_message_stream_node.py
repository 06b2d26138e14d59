"""Conformance: the real `ai` client (locked in tests/serving/node: 5.0.277 and 6.0.325,
and 5.0.92 and 6.0.0, whose chunk schemas are strict) reads every UI message stream
rxllm writes, for every real capture replayed, every story of the local provider in
every wire, and the bad inputs, with no error.

tests/serving/node/check.mjs takes each body the way `useChat` does
(`DefaultChatTransport`: the package's SSE parser and its `uiMessageChunkSchema`, then
`readUIMessageStream`, then `safeValidateUIMessages` on the message built). All bodies
go to one Node process. Without Node this skips with one reason, except under
`CI=true`, where it fails: CI installs Node (.ci/run).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from reactivex.subject import Subject

import rxllm
from rxllm.events import (
    Cancelled,
    ErrorInfo,
    Event,
    Failed,
    ReasoningDelta,
    ServerToolResult,
    TextDelta,
    ToolRequest,
    ToolStart,
)
from rxllm.local import FAULTS, WIRES, LocalServer
from rxllm.operators import cancel_on
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers.base import gemini_text_signature
from rxllm.serving import UI_MESSAGE_STREAM_HEADERS, generic_error_text, ui_message_stream
from tests.hypothesis_support import BODIES, wire_of
from tests.serving.support import Stream, check_rules, encode, read_sse
from tests.support import capture, needs_captures

NODE_DIR = Path(__file__).parent / "node"
MIN_NODE = 18  # the `ai` package's own floor (engines: node >= 18)
# The aliases in node/package.json, as check.mjs imports them.
VERSIONS = {"ai5-strict", "ai5", "ai6-strict", "ai6"}
STAMP = NODE_DIR / "node_modules" / ".rxllm-lock-sha256"


def _node_missing() -> str | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "needs Node.js and npm (the real `ai` client checks the frames): install nodejs"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    major = int(version.stdout.strip().lstrip("v").split(".")[0])
    if major < MIN_NODE:
        return f"needs Node.js {MIN_NODE}+ for the `ai` package, found {version.stdout.strip()}"
    return None


@pytest.fixture(scope="module")
def node_client() -> Iterator[Path]:
    """tests/serving/node with its locked packages installed (`npm ci`, once per
    lockfile: node_modules stays between runs, git-ignored)."""
    missing = _node_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI must run the Node conformance test)")
        pytest.skip(missing)
    lock = hashlib.sha256((NODE_DIR / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.is_file() or STAMP.read_text() != lock:
        npm = ["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
        done = subprocess.run(npm, cwd=NODE_DIR, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
        STAMP.write_text(lock)
    yield NODE_DIR


def run_client(
    node_dir: Path, bodies: dict[str, bytes], tools: list[str] | None = None
) -> dict[str, Any]:
    """check.mjs over `bodies`; with `tools` (the app's tool names), each message is
    also validated against them (`validateUIMessages`)."""
    extra = {} if tools is None else {"tools": tools}
    inputs = [
        {"name": name, "body": body.decode("utf-8"), **extra} for name, body in bodies.items()
    ]
    return _run(node_dir, "check.mjs", inputs)


def run_chat(node_dir: Path, bodies: dict[str, bytes]) -> list[dict[str, Any]]:
    """chat.mjs over `bodies`: what `useChat`'s AbstractChat holds after each response
    (its status, its error's message, the assistant's message), per version."""
    inputs = [{"name": name, "body": body.decode("utf-8")} for name, body in bodies.items()]
    results: list[dict[str, Any]] = _run(node_dir, "chat.mjs", inputs)["results"]
    return results


def _run(node_dir: Path, script: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", script],
        cwd=node_dir,
        input=json.dumps({"inputs": inputs}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


# --- what rxllm writes --------------------------------------------------------------

STORIES = sorted(FAULTS)


def _request(story: str, **fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model=f"fault/{story}",
        messages=[rxllm.Message.user("What's the weather in Paris? Tell me about rxllm.")],
        tools=[rxllm.Tool(name="get_time"), rxllm.Tool(name="get_weather")],
        **fields,
    )


async def _cancelled_mid_call(server: LocalServer) -> bytes:
    stop: Subject[None] = Subject()
    turn = server.provider("openai").stream(_request("slow_drip"))
    got = []
    async for chunk in ui_message_stream(turn.pipe(cancel_on(stop, reason="user")), keepalive=None):
        got.append(chunk)
        if b"tool-input-start" in chunk:
            stop.on_next(None)
    return b"".join(got)


async def _entries(events: list[Event]) -> AsyncIterator[tuple[str, Event]]:
    for i, event in enumerate(events):
        yield f"1700000000000-{i}", event


def _edge_cases() -> dict[str, list[Event]]:
    p = "openai"
    info = ErrorInfo(kind="stream_error", message="boom", provider=p, raw="{}")
    nan = float("nan")
    return {
        "surrogates": [
            TextDelta(provider=p, text="a\ud83d"),
            TextDelta(provider=p, text="\ude00 \udc00"),
            ReasoningDelta(provider=p, text="r\ud83d"),
            rxllm.Done(provider=p, stop_reason="stop"),
        ],
        "result_without_call": [
            ServerToolResult(provider=p, call_id="s1", name="web_search", content=[{"u": 1}]),
            TextDelta(provider=p, text="ok"),
            rxllm.Done(provider=p, stop_reason="stop"),
        ],
        "error_with_pending_calls": [
            ToolStart(provider=p, call_id="c1", name="f", index=0),
            ToolStart(provider=p, call_id="c2", name="g", index=1),
            Failed(provider=p, error=info),
        ],
        "cut_without_terminal": [TextDelta(provider=p, text="half")],
        # a provider's result for a call the client holds as the app's own (static):
        # `ai` 5.x threw on a `dynamic` output for it
        "result_for_an_app_call": [
            ToolStart(provider=p, call_id="c1", name="shell_call", index=0),
            ToolRequest(provider=p, call_id="c1", name="shell_call", index=0, arguments={}),
            ServerToolResult(provider=p, call_id="c1", name="shell_call", content={"out": 1}),
            rxllm.Done(provider=p, stop_reason="stop"),
        ],
        "result_for_a_pending_app_call": [
            ToolStart(provider=p, call_id="c1", name="shell_call", index=0),
            ServerToolResult(provider=p, call_id="c1", name="shell_call", content={"out": 1}),
            Failed(provider=p, error=info),
        ],
        "non_finite_numbers": [
            ToolRequest(provider=p, call_id="c1", name="f", index=0, arguments={"x": nan}),
            ServerToolResult(provider=p, call_id="s1", name="code", content=[float("inf")]),
            rxllm.Done(provider=p, stop_reason="tool_use"),
        ],
        "cancelled": [TextDelta(provider=p, text="so far"), Cancelled(provider=p, reason="user")],
        "line_breaks": [
            TextDelta(provider=p, text="a\rb\nc\r\nd\u2028e\u2029f\x85g\n\ndata: [DONE]\n\n"),
            rxllm.Done(provider=p, stop_reason="stop"),
        ],
    }


async def _bodies(server: LocalServer) -> dict[str, bytes]:
    bodies: dict[str, bytes] = {}
    for path in BODIES:
        events = rxllm.replay(path.read_bytes(), provider=wire_of(path))
        bodies[f"capture {path.parent.name}/{path.stem}"] = (await encode(events)).raw
    for wire in WIRES:
        for story in STORIES:
            stream = await encode(server.provider(wire).stream(_request(story)), message_id="m")
            bodies[f"local {wire} {story}"] = stream.raw
    retried = server.provider("openai").stream(_request("reject_param", temperature=0.2))
    bodies["local retry, data-rxllm-retry on"] = (await encode(retried, retries=True)).raw
    bodies["local cancelled mid call"] = await _cancelled_mid_call(server)
    for name, events in _edge_cases().items():
        bodies[f"edge {name}"] = (await encode(events)).raw
        bodies[f"edge {name}, log entries"] = (await encode(_entries(events))).raw
    return bodies


# The rules the client enforces, each broken once: the checker must see every one.
_HEAD = 'data: {"type":"start"}\n\ndata: {"type":"start-step"}\n\n'
_TAIL = 'data: {"type":"finish"}\n\ndata: [DONE]\n\n'
BROKEN = {
    "a delta before its start": _HEAD
    + 'data: {"type":"text-delta","id":"t1","delta":"x"}\n\n'
    + _TAIL,
    "output for an unseen call": _HEAD
    + 'data: {"type":"tool-output-available","toolCallId":"c9","output":1}\n\n'
    + _TAIL,
    "finishReason pause": _HEAD
    + 'data: {"type":"finish","finishReason":"pause"}\n\ndata: [DONE]\n\n',
    "an unknown type": _HEAD + 'data: {"type":"text-whatever","id":"t1"}\n\n' + _TAIL,
    "NaN, which Python's JSON writes": _HEAD
    + 'data: {"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":NaN}\n\n'
    + _TAIL,
}
# What only the strict schemas (5.0.92, 6.0.0) refuse: a key they do not list.
BROKEN_FOR_STRICT = {
    "abort with a reason": _HEAD + 'data: {"type":"abort","reason":"user"}\n\ndata: [DONE]\n\n',
}


def _message_text(message: dict[str, Any]) -> str:
    return "".join(part["text"] for part in message["parts"] if part["type"] == "text")


def test_the_ai_client_reads_every_stream_without_error(node_client: Path) -> None:
    async def bodies() -> dict[str, bytes]:
        async with LocalServer(pace=0) as server:
            return await _bodies(server)

    ours = asyncio.run(bodies())
    streams: dict[str, Stream] = {name: read_sse(body) for name, body in ours.items()}
    for stream in streams.values():
        check_rules(stream)
    broken = {
        f"broken: {name}": body.encode() for name, body in {**BROKEN, **BROKEN_FOR_STRICT}.items()
    }
    out = run_client(node_client, {**ours, **broken})

    # Our headers are the package's, but the hop-by-hop `connection` its server sets.
    for version, headers in out["headers"].items():
        assert {k: v for k, v in headers.items() if k != "connection"} == dict(
            UI_MESSAGE_STREAM_HEADERS
        ), version

    results = out["results"]
    assert {r["version"] for r in results} == VERSIONS
    assert len(results) == len(VERSIONS) * (len(ours) + len(broken))
    faults = {
        (r["version"], r["name"]): [e[:400] for e in r["errors"]]
        for r in results
        if r["errors"] and not r["name"].startswith("broken: ")
    }
    assert not faults, faults
    for r in results:
        name = r["name"]
        if name.startswith("broken: "):
            if name[len("broken: ") :] in BROKEN_FOR_STRICT and "strict" not in r["version"]:
                continue  # a current client reads a key it does not know
            assert r["errors"], f"{r['version']} took {name!r}: the checker is blind to it"
            continue
        stream = streams[name]
        # no snapshot when nothing shows (an error before any content)
        message = r["message"] or {"parts": []}
        # the client's message says what we sent: the same text, every tool call
        assert _message_text(message) == stream.text(), (r["version"], name)
        tool_parts = [p for p in message["parts"] if "toolCallId" in p]
        calls = {p["toolCallId"] for p in stream.parts if "toolCallId" in p}
        assert {p["toolCallId"] for p in tool_parts} == calls, (r["version"], name)
        if "result_for_" in name:  # the provider's output on the app's call, which keeps it
            assert [p["state"] for p in tool_parts] == ["output-available"], (r["version"], name)
        assert r["chunks"] == stream.types, (r["version"], name)
        assert r["errorTexts"] == [p["errorText"] for p in stream.of("error")]
    local = [name for name in ours if name.startswith("local ")]
    assert len(local) == len(WIRES) * len(STORIES) + 2


@needs_captures
def test_the_ai_client_keeps_no_empty_reasoning_and_gemini_s_text_signature(
    node_client: Path,
) -> None:
    """What the `ai` client builds from a Gemini turn (a text part or a call signed,
    with and without thoughts before) and Anthropic's redacted thinking: a reasoning
    part has text, or is a redacted block (as the AI SDK keeps one); the signature
    rxllm puts back on a Gemini turn's text (`gemini_text_signature` of the record's
    message) is in the message: on the thoughts it closes, else on the text part."""
    names = [
        "gemini/vertex_text_flex",
        "gemini/code_execution",
        "gemini/thought_parts",
        "gemini/function_call_thought_signature",
        "anthropic/redacted_thinking",
    ]
    signatures: dict[str, str | None] = {}

    async def bodies() -> dict[str, bytes]:
        out = {}
        for name in names:
            events: list[Event] = []
            provider = "google" if name.startswith("gemini/") else "anthropic"
            rxllm.replay(capture(f"{name}.sse"), provider).subscribe(events.append)
            builder = RecordBuilder(provider)
            for event in events:
                builder.add(event)
            signatures[name] = gemini_text_signature(builder.build().to_message().content)
            out[name] = (await encode(events)).raw
        return out

    results = run_client(node_client, asyncio.run(bodies()))["results"]
    assert len(results) == len(VERSIONS) * len(names)
    for r in results:
        where = (r["version"], r["name"])
        assert not r["errors"], where
        parts = r["message"]["parts"]
        for part in parts:
            if part["type"] == "reasoning" and not part["text"]:
                assert part["providerMetadata"]["rxllm"]["redacted"] is True, where
        # the text's signature: on the thoughts it closes, else on the text part
        kept = [
            (part["type"], meta["signature"])
            for part in parts
            for meta in [part.get("providerMetadata", {}).get("rxllm", {})]
            if isinstance(meta.get("details"), dict) and meta["details"].keys() <= {"thought"}
        ]
        assert (kept[-1][1] if kept else None) == signatures[r["name"]], where
        if r["name"] == "gemini/vertex_text_flex":  # Gemini 3, no thoughts shown
            assert [kind for kind, _ in kept] == ["text"], where
    assert signatures["gemini/vertex_text_flex"] is not None


def test_a_chat_ui_knows_whether_an_error_may_pass(node_client: Path) -> None:
    """What `useChat` holds after an error, by its own class (AbstractChat): its
    status, the `error` chunk's text as its error, and the assistant's message with the
    error's kind, status and retryable in its metadata, so the UI offers "try again"
    where it may help. (Before, the message had none: `useChat` stops reading at the
    `error` chunk, so not even a `finish`'s metadata would reach it.)"""
    busy = ErrorInfo(
        kind="http",
        message="Rate limit reached for model in organization `org_SECRET`",
        provider="groq",
        status=429,
        retryable=True,
        retry_after=5.289,
    )
    refused = ErrorInfo(
        kind="rejected", message="Unsupported parameter: 'SECRET'", provider="openai", status=400
    )
    turns = {
        "busy": [TextDelta(provider="groq", text="Par"), Failed(provider="groq", error=busy)],
        "refused": [Failed(provider="openai", error=refused)],
    }

    async def bodies() -> dict[str, bytes]:
        return {name: (await encode(events)).raw for name, events in turns.items()}

    results = run_chat(node_client, asyncio.run(bodies()))
    assert {r["version"] for r in results} == VERSIONS
    assert len(results) == len(VERSIONS) * len(turns)
    for r in results:
        info = busy if r["name"] == "busy" else refused
        where = (r["version"], r["name"])
        assert (r["status"], r["error"]) == ("error", generic_error_text(info)), where
        assert r["message"]["metadata"] == {
            "rxllm": {
                "error": {
                    "kind": info.kind,
                    "status": info.status,
                    "retryable": info.retryable,
                    "retry_after": info.retry_after,
                }
            }
        }, where
        assert "SECRET" not in json.dumps(r), where
