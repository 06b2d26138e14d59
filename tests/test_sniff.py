"""`sniff_provider` on every capture, the hint a replay with the wrong provider gives,
and hand-made edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

import rxllm
from rxllm.events import Event, Failed
from rxllm.pipeline.replay import wire_family
from rxllm.pipeline.sniff import sniff_provider
from rxllm.providers import PROVIDER_NAMES, wire_for
from tests.support import CAPTURES, needs_captures

# The wire each capture folder records (the folder names the provider; every one but
# these speaks the OpenAI chat wire). Two files record a Responses API endpoint of an
# OpenAI-compatible provider, as their names and source notes say.
FOLDER_WIRES = {
    "anthropic": "anthropic",
    "gemini": "google",
    "openai-responses": "openai-responses",
}
RESPONSES_API = {
    "deepseek/responses_api_reasoning_function_call.sse",
    "openrouter/responses_api_reasoning_text.sse",
}

ALL = sorted(CAPTURES.glob("*/*.sse")) if CAPTURES.is_dir() else []


def _expected(path: Path) -> str:
    name = f"{path.parent.name}/{path.name}"
    if name in RESPONSES_API:
        return "openai-responses"
    return FOLDER_WIRES.get(path.parent.name, "openai")


@needs_captures
def test_every_capture_folder_is_covered() -> None:
    folders = {path.parent.name for path in ALL}
    assert len(folders) >= 15 and {"anthropic", "gemini", "openai", "groq"} <= folders


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sniff_every_capture(path: Path) -> None:
    assert sniff_provider(path.read_bytes()) == _expected(path)


def test_sniff_says_none_when_the_events_do_not_tell() -> None:
    assert sniff_provider(b"") is None
    assert sniff_provider(b": OPENROUTER PROCESSING\n\ndata: [DONE]\n\n") is None
    assert sniff_provider(b'data: {"type": "error", "code": "x", "message": "m"}\n\n') is None
    assert sniff_provider(b"not sse at all") is None


def test_sniff_reads_event_names_crlf_and_a_bom() -> None:
    assert sniff_provider(b"\xef\xbb\xbfevent: message_start\r\ndata: {}\r\n\r\n") == "anthropic"
    assert sniff_provider(b"event: response.created\rdata: {}\r\r") == "openai-responses"
    # a comment and a keepalive first: the first event that says decides
    data = b': ping\n\ndata:\n\ndata: {"candidates": []}\n\n'
    assert sniff_provider(data) == "google"


def test_every_provider_has_a_wire_family() -> None:
    for name in PROVIDER_NAMES:
        assert wire_family(wire_for(name)) is not None, name


def _events(path: Path, provider: str) -> list[Event]:
    events: list[Event] = []
    rxllm.replay(path, provider=provider).subscribe(events.append)
    return events


@needs_captures
@pytest.mark.parametrize(
    ("name", "wrong", "looks_like"),
    [
        ("anthropic/text_ping.sse", "openai", "anthropic"),
        ("gemini/text.sse", "anthropic", "google"),
        ("openai/chat_text_usage.sse", "google", "openai"),
        ("openai-responses/text.sse", "groq", "openai-responses"),
    ],
)
def test_replay_with_the_wrong_provider_says_what_the_bytes_look_like(
    name: str, wrong: str, looks_like: str
) -> None:
    end = _events(CAPTURES / name, wrong)[-1]
    assert isinstance(end, Failed)
    assert f"the bytes look like the {looks_like} wire, not {wrong}'s" in end.error.message
    assert f"provider={looks_like!r}" in end.error.message


@needs_captures
def test_a_compatible_preset_gets_no_hint() -> None:
    # Groq's own error capture ends in a stream error; its bytes are the openai wire
    end = _events(CAPTURES / "groq" / "tool_use_failed_error_event.sse", "groq")[-1]
    assert isinstance(end, Failed) and "look like" not in end.error.message


def test_sniff_of_json_nested_past_the_parser_depth_is_none() -> None:
    assert sniff_provider(b"data: " + b"[" * 100_000 + b"\n\n") is None


def test_an_error_event_names_anthropic_only_in_anthropic_s_shape() -> None:
    """The Responses API's error event nests its error too, with a `code` and a
    `sequence_number` (vercel/ai's `openai-error-null-code` fixture): it was taken for
    Anthropic's, and a replay of it as openai-responses said the bytes looked like the
    anthropic wire."""
    anthropic = b'data: {"type": "error", "error": {"type": "api_error", "message": "x"}}\n\n'
    assert sniff_provider(anthropic) == "anthropic"
    responses = (
        b'event: error\ndata: {"type": "error", "error": {"type": "server_error", "code": null,'
        b' "message": "x", "param": null}, "sequence_number": 2}\n\n'
    )
    assert sniff_provider(responses) == "openai-responses"
    unnumbered = b'data: {"type": "error", "error": {"type": "server_error", "code": null}}\n\n'
    assert sniff_provider(unnumbered) is None
    end = list[Event]()
    rxllm.replay(responses, provider="openai-responses").subscribe(end.append)
    assert isinstance(end[-1], Failed) and "look like" not in end[-1].error.message
