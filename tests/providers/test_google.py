"""The Gemini wire: every capture (whole and re-chunked), each reading decision on
synthetic chunks, the request body, and the local server over real HTTP."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from loguru import logger

import rxllm
from rxllm.errors import ConfigError
from rxllm.events import (
    Citation,
    Done,
    Event,
    Failed,
    ReasoningDelta,
    ServerToolCall,
    ServerToolResult,
    TextDelta,
    ToolRequest,
    ToolStart,
    UsageUpdate,
)
from rxllm.local import LocalServer
from rxllm.local.script import FAULTS, Prompt, script_for
from rxllm.providers.google import SKIP_SIGNATURE, Google
from rxllm.request import ChatRequest, ImagePart, Message, TextPart, Tool, ToolCall
from tests.support import capture, captures_of, needs_captures, rechunk, replay, summarize

# -- the captures -----------------------------------------------------------------------


@dataclass
class Facts:
    """What a capture truly says, read from its JSON by hand."""

    text: str = ""
    text_has: tuple[str, ...] = ()
    reasoning_start: str = ""
    reasoning_end: str = ""
    reasoning_len: int = 0
    signatures: list[tuple[str, str, int]] = field(default_factory=list)  # head, tail, length
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: tuple[int, int, int, int, int] = (
        0,
        0,
        0,
        0,
        0,
    )  # input, output, reasoning, cache, total
    stop: str = "stop"
    model: str = ""
    types: list[str] | None = None


THOUGHTS_TEXT_START = (
    "This is a great question! Safely crossing the street is all about being aware and "
    "predictable. Here is a step-by-step guide that is widely taught for safety:\n\n"
    "### 1. Find a Safe Place to Cross\n"
)

FACTS: dict[str, Facts] = {
    "text.sse": Facts(
        text="The capital of France is Paris.\n",
        usage=(13, 8, 0, 0, 21),  # the last chunk's counts win over the earlier 15s
        model="gemini-2.0-flash-exp",
        types=["text", "text", "text", "usage", "done"],
    ),
    "thought_parts.sse": Facts(
        text_has=(
            THOUGHTS_TEXT_START,
            "### 5. Walk, Don't Run",
            "Always assume a driver might not see you.",
        ),
        reasoning_start="**Clarifying User Goals**\n\nI'm currently focused on defining the user's",
        reasoning_end="regardless of specific circumstances or locations.\n\n\n",
        reasoning_len=1575,
        signatures=[("CiIB0e2Kb6Syj1a961EfbWv4", "gMKlqm/dH8k=", 6152)],
        usage=(34, 469 + 787, 787, 0, 1290),
        model="gemini-2.5-pro",
    ),
    "function_call_whole.sse": Facts(
        # responseId 1lpeaMTxIpW1nvgP-O3vwQY
        tool_calls=[("get_capital_2AZsU4w5_0", "get_capital", {"country": "France"})],
        usage=(52, 5, 0, 0, 57),
        stop="tool_use",
        model="gemini-2.0-flash",
        types=["tool_start", "tool_request", "usage", "done"],
    ),
    "function_call_thought_signature.sse": Facts(
        # the wire's explicit "args": {}; responseId QUVVadTSNJ6_qtsPvN7J8Q0
        tool_calls=[("get_country_V2ca1tmb_0", "get_country", {})],
        signatures=[("EpwICpkIAXLI2nxlU6gsWZaZ", "AXOk15QuFyU=", 1408)],
        usage=(29, 10 + 202, 202, 0, 241),
        stop="tool_use",
        model="gemini-3-pro-preview",
        types=["reasoning", "tool_start", "tool_request", "usage", "done"],
    ),
    "code_execution.sse": Facts(
        # the code and its output are server_tool_call / server_tool_result, not text
        # (test_code_execution_capture_is_a_server_tool)
        text="The result of $65465 - 6544 \\times 65464 - 6 + 1.02255$ is **-428,330,955.97745**.",
        signatures=[
            ("EqADCp0DAQw51sctaTt62vj/", "cgG5JA9FsHI=", 560),
            ("EoECCv4BAQw51segR8LGndTf", "b/zmGQyWIDQ=", 348),
        ],
        # toolUsePromptTokenCount (360) is input; 147 + 360 + 108 + 168 = Gemini's 783
        usage=(147 + 360, 108 + 168, 168, 0, 783),
        model="gemini-3-flash-preview",
    ),
    "vertex_streamed_function_call_args.sse": Facts(
        tool_calls=[
            # responseId dqHOab6xGLzWodAPkPuViA4
            ("getWeather_CbYsy0p4_0", "getWeather", {"location": "Boston"}),
            ("getWeather_CbYsy0p4_1", "getWeather", {"location": "San Francisco"}),
        ],
        signatures=[("CiMBjz1rX25KieIB4d4AwFn8", "y5Zy5VsZ0qQ=", 1032)],
        usage=(26, 23 + 132, 132, 0, 181),
        stop="tool_use",
        model="gemini-3.1-pro-preview",
        types=[
            "reasoning",
            "tool_start",
            "tool_request",
            "tool_start",
            "tool_request",
            "usage",
            "done",
        ],
    ),
    "vertex_text_flex.sse": Facts(
        text="OK",
        signatures=[("CiQBjz1rX+z7CAOCNB0aLI7y", "ym+oXYHLqxz3", 724)],
        usage=(5, 1 + 100, 100, 0, 106),
        model="gemini-3-flash-preview",
        types=["reasoning", "text", "usage", "done"],  # the signature before its part
    ),
}

CAPTURES = [path.name for path in captures_of("gemini")]
CHUNK_SIZES = (1, 2, 3, 5, 17, 64, 1024)
SEEDS = range(4)


@needs_captures
def test_every_gemini_capture_has_facts() -> None:
    assert CAPTURES, "no gemini captures found"
    assert sorted(CAPTURES) == sorted(FACTS)


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_facts(name: str) -> None:
    facts = FACTS[name]
    events = replay(capture(f"gemini/{name}"), "google")
    got = summarize(events)
    if facts.text or not facts.text_has:
        assert got.text == facts.text
    for piece in facts.text_has:
        assert piece in got.text
    if facts.text_has:
        assert got.text.startswith(facts.text_has[0])
        assert got.text.endswith(facts.text_has[-1])
    assert got.reasoning.startswith(facts.reasoning_start)
    assert got.reasoning.endswith(facts.reasoning_end)
    assert len(got.reasoning) == facts.reasoning_len
    assert [(s[:24], s[-12:], len(s)) for s in got.signatures] == facts.signatures
    assert got.tool_calls == facts.tool_calls
    usage = got.usage
    assert usage is not None
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        usage.cache_read_tokens,
        usage.total_tokens,
    ) == facts.usage
    assert (got.terminal, got.stop_reason, got.raw_stop_reason) == ("done", facts.stop, "STOP")
    assert got.model == facts.model
    assert got.providers == {"google"}
    assert sum(isinstance(ev, UsageUpdate) for ev in events) == 1
    assert isinstance(events[-2], UsageUpdate)  # usage once, right before done
    if facts.types is not None:
        assert [ev.type for ev in events] == facts.types


@pytest.mark.parametrize("max_size", CHUNK_SIZES)
@pytest.mark.parametrize("name", CAPTURES)
def test_capture_rechunked_gives_the_same_events(name: str, max_size: int) -> None:
    data = capture(f"gemini/{name}")
    whole = replay(data, "google")
    for seed in SEEDS:
        assert replay(rechunk(data, seed, max_size), "google") == whole, (seed, max_size)


@pytest.mark.parametrize("name", CAPTURES)
def test_crlf_framing_reads_like_lf_framing(name: str) -> None:
    data = capture(f"gemini/{name}")
    assert b"\r\n\r\n" in data  # the real service frames events with CRLF CRLF
    lf = data.replace(b"\r\n", b"\n")
    assert replay(lf, "google") == replay(data, "google")
    # cut between the CR and the LF of every line end
    pieces = data.replace(b"\r\n", b"\r\x00\n").split(b"\x00")
    assert replay(pieces, "google") == replay(data, "google")


def test_thought_parts_events_in_order() -> None:
    events = replay(capture("gemini/thought_parts.sse"), "google")
    kinds = [ev.type for ev in events]
    first_text = kinds.index("text")
    assert kinds[:first_text] == ["reasoning"] * first_text
    thoughts = [ev for ev in events[:first_text] if isinstance(ev, ReasoningDelta)]
    assert [bool(ev.text) for ev in thoughts] == [True, True, True, True, False]
    assert thoughts[-1].signature is not None and thoughts[-1].signature.startswith("CiIB0e2K")
    assert all(ev.signature is None for ev in thoughts[:-1])


# -- reading decisions, on synthetic chunks ------------------------------------------------


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for p in payloads)


# Gemini names each response (`responseId`, on every chunk of the captures); the ids
# rxllm gives calls that came without one are `{name}_{tag}_{index}`, the tag 8 base-62
# characters of the SHA-256 of that name (`response_tag`), here of RESPONSE_ID.
RESPONSE_ID = "rxllm-test-response"
TAG = "znJKg5aE"


def gid(name: str, index: int) -> str:
    """The id of call `index` of the synthetic response, named `name`, sent without one."""
    return f"{name}_{TAG}_{index}"


def chunk(
    *parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": "gemini-test",
        "responseId": RESPONSE_ID,
    }
    if usage is not None:
        payload["usageMetadata"] = usage
    return payload


def run(*payloads: dict[str, Any]) -> list[Event]:
    data = sse(*payloads)
    events = replay(data, "google")
    assert replay(rechunk(data, 7, 3), "google") == events
    return events


def terminal(events: list[Event]) -> Event:
    summarize(events)  # asserts exactly one terminal, last
    return events[-1]


def test_text_and_call_in_one_chunk_come_out_text_first() -> None:
    events = run(
        chunk(
            {"functionCall": {"name": "f", "args": {"a": 1}}},
            {"text": "Calling f."},
            finish="STOP",
        )
    )
    assert [ev.type for ev in events] == ["text", "tool_start", "tool_request", "done"]
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "tool_use"


def test_call_id_from_the_wire_or_synthesized_per_index() -> None:
    events = run(
        chunk({"functionCall": {"id": "abc", "name": "f", "args": {}}}),
        chunk({"functionCall": {"name": "g", "args": {"x": "y"}}}, finish="STOP"),
    )
    got = summarize(events)
    assert got.tool_calls == [("abc", "f", {}), (gid("g", 1), "g", {"x": "y"})]
    starts = [ev for ev in events if isinstance(ev, ToolStart)]
    assert [ev.index for ev in starts] == [0, 1]


def test_a_complete_call_without_args_has_no_parameters() -> None:
    """Made by hand from the Vertex reference: a `functionCall` with a name, no `args`
    and no `willContinue`, beside a streamed `partialArgs` call."""
    streamed = {"name": "find", "willContinue": True}
    piece = {"partialArgs": [{"jsonPath": "$.q", "stringValue": "rx"}]}
    events = run(
        chunk({"functionCall": {"name": "read_theme"}}),
        chunk({"functionCall": streamed}),
        chunk({"functionCall": piece}),
        chunk({"functionCall": {}}, finish="STOP"),
    )
    assert summarize(events).tool_calls == [
        (gid("read_theme", 0), "read_theme", {}),
        (gid("find", 1), "find", {"q": "rx"}),
    ]
    assert terminal(events).type == "done"


def test_explicit_empty_args_are_an_empty_object() -> None:
    events = run(chunk({"functionCall": {"name": "now", "args": {}}}, finish="STOP"))
    assert summarize(events).tool_calls == [(gid("now", 0), "now", {})]


def test_thought_part_keeps_its_signature() -> None:
    events = run(
        chunk({"text": "Thinking.", "thought": True, "thoughtSignature": "sig1"}),
        chunk({"text": "Answer."}, finish="STOP"),
    )
    first = events[0]
    assert isinstance(first, ReasoningDelta)
    assert (first.text, first.signature) == ("Thinking.", "sig1")
    assert summarize(events).text == "Answer."


def test_signature_on_a_text_part_comes_first_as_empty_reasoning() -> None:
    events = run(chunk({"text": "Hi", "thoughtSignature": "sig2"}, finish="STOP"))
    first, second = events[0], events[1]
    assert isinstance(first, ReasoningDelta) and (first.text, first.signature) == ("", "sig2")
    assert isinstance(second, TextDelta) and second.text == "Hi"


def test_streamed_arguments_nested_paths_and_types() -> None:
    def part(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
        call: dict[str, Any] = {"partialArgs": list(args)}
        if more:
            call["willContinue"] = True
        return {"functionCall": call}

    events = run(
        chunk({"functionCall": {"name": "cook", "willContinue": True}, "thoughtSignature": "s"}),
        chunk(
            part(
                {"jsonPath": "$.recipe.items[0].name", "stringValue": "Lasa", "willContinue": True}
            )
        ),
        chunk(part({"jsonPath": "$.recipe.items[0].name", "stringValue": 'gna "x"'})),
        chunk(part({"jsonPath": "$.recipe.items[1].name", "stringValue": "Beef"})),
        chunk({"functionCall": {"willContinue": True}}),  # a pause, not the end
        chunk(part({"jsonPath": "$.recipe.items[1].grams", "numberValue": 500})),
        chunk(
            part(
                {"jsonPath": "$.vegan", "boolValue": False},
                {"jsonPath": "$.note", "nullValue": None},
            )
        ),
        chunk(part({"jsonPath": "$['odd.key']", "stringValue": "ok"}, more=False)),
        chunk(
            {"text": ""}, finish="STOP", usage={"promptTokenCount": 3, "candidatesTokenCount": 4}
        ),
    )
    got = summarize(events)
    arguments = {
        "recipe": {"items": [{"name": 'Lasagna "x"'}, {"name": "Beef", "grams": 500}]},
        "vegan": False,
        "note": None,
        "odd.key": "ok",
    }
    assert got.tool_calls == [(gid("cook", 0), "cook", arguments)]
    assert got.stop_reason == "tool_use"


def test_streamed_call_still_open_at_the_finish_is_malformed() -> None:
    events = run(
        chunk({"functionCall": {"name": "f", "willContinue": True}}),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [{"jsonPath": "$.a", "stringValue": "x"}],
                    "willContinue": True,
                }
            }
        ),
        chunk({"text": ""}, finish="MAX_TOKENS"),
    )
    end = terminal(events)
    assert isinstance(end, Failed) and end.error.kind == "malformed_tool_arguments"
    assert repr(gid("f", 0)) in end.error.message and "MAX_TOKENS" in end.error.message


def test_code_execution_capture_is_a_server_tool() -> None:
    """Values read from the capture's bytes: the executableCode part (language PYTHON,
    id 8xju7mua) and its codeExecutionResult (OUTCOME_OK, the same id)."""
    events = replay(capture("gemini/code_execution.sse"), "google")
    kinds = [ev.type for ev in events]
    assert kinds == [
        "reasoning",  # the thoughtSignature on the executableCode part
        "server_tool_call",
        "server_tool_result",
        "text",
        "text",
        "text",
        "reasoning",
        "usage",
        "done",
    ]
    call, result = events[1], events[2]
    assert isinstance(call, ServerToolCall) and isinstance(result, ServerToolResult)
    assert (call.call_id, call.name) == ("8xju7mua", "code_execution")
    assert call.arguments == {
        "language": "PYTHON",
        "code": "result = 65465 - 6544 * 65464 - 6 + 1.02255\nprint(result)",
    }
    assert (result.call_id, result.name) == ("8xju7mua", "code_execution")
    assert result.content == {"outcome": "OUTCOME_OK", "output": "-428330955.97745\n"}
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "stop"  # nothing to dispatch


def test_code_execution_without_ids_gets_stable_ids() -> None:
    """Made by hand from the docs' part shapes (ai.google.dev/api/caching#ExecutableCode,
    #CodeExecutionResult), without the `id` older models omit."""
    events = run(
        chunk({"text": "Let me compute"}),
        chunk({"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
        chunk({"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "boom"}}),
        chunk({"executableCode": {"language": "PYTHON", "code": "print(2)"}}),
        chunk({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n"}}),
        chunk({"text": "Done."}, finish="STOP"),
    )
    assert summarize(events).text == "Let me computeDone."
    tools = [
        (ev.type, ev.call_id, ev.name, getattr(ev, "arguments", None), getattr(ev, "content", None))
        for ev in events
        if isinstance(ev, ServerToolCall | ServerToolResult)
    ]
    assert tools == [
        ("server_tool_call", gid("code_execution", 0), "code_execution",
         {"language": "PYTHON", "code": "print(1)"}, None),
        ("server_tool_result", gid("code_execution", 0), "code_execution", None,
         {"outcome": "OUTCOME_FAILED", "output": "boom"}),
        ("server_tool_call", gid("code_execution", 1), "code_execution",
         {"language": "PYTHON", "code": "print(2)"}, None),
        ("server_tool_result", gid("code_execution", 1), "code_execution", None,
         {"outcome": "OUTCOME_OK", "output": "2\n"}),
    ]  # fmt: skip


# Made by hand from the docs' grounding example (ai.google.dev/gemini-api/docs/google-search,
# "Understanding the grounding response"): groundingChunks[].web {uri, title}, and
# groundingSupports pointing at them by index.
_REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
_GROUNDING = {
    "webSearchQueries": ["UEFA Euro 2024 winner"],
    "groundingChunks": [
        {"web": {"uri": _REDIRECT + "1", "title": "aljazeera.com"}},
        {"web": {"uri": _REDIRECT + "2", "title": "uefa.com"}},
    ],
    "groundingSupports": [
        {
            "segment": {"startIndex": 0, "endIndex": 36, "text": "Spain won Euro 2024."},
            "groundingChunkIndices": [0, 1],
        }
    ],
}  # fmt: skip


def test_grounding_chunks_are_citations_once_per_turn() -> None:
    first = chunk({"text": "Spain won Euro 2024."})
    first["candidates"][0]["groundingMetadata"] = _GROUNDING
    again = chunk({"text": " Again."}, finish="STOP")
    more = json.loads(json.dumps(_GROUNDING))
    more["groundingChunks"].append({"web": {"uri": "https://example.com/3"}})  # no title
    again["candidates"][0]["groundingMetadata"] = more
    events = run(first, again)
    cites = [(ev.url, ev.title, ev.cited_text) for ev in events if isinstance(ev, Citation)]
    assert cites == [
        (_REDIRECT + "1", "aljazeera.com", None),
        (_REDIRECT + "2", "uefa.com", None),
        ("https://example.com/3", None, None),
    ]
    assert [ev.type for ev in events] == [
        "text", "citation", "citation", "text", "citation", "done"
    ]  # fmt: skip
    assert summarize(events).text == "Spain won Euro 2024. Again."


def test_citation_metadata_sources_are_citations() -> None:
    """Made by hand from ai.google.dev/api/rest/v1beta/CitationMetadata (citationSources[]
    {startIndex, endIndex, uri, license}) and Vertex's Candidate.citationMetadata
    (citations[] {startIndex, endIndex, uri, title, license})."""
    gemini = chunk({"text": "def quicksort(xs):"})
    gemini["candidates"][0]["citationMetadata"] = {
        "citationSources": [
            {"startIndex": 0, "endIndex": 17, "uri": "https://github.com/a/b", "license": "mit"},
            {"startIndex": 4, "endIndex": 9},  # no uri: nothing to cite
        ]
    }
    vertex = chunk({"text": " ..."}, finish="RECITATION")
    vertex["candidates"][0]["citationMetadata"] = {
        "citations": [
            {"startIndex": 0, "endIndex": 17, "uri": "https://github.com/a/b"},  # again
            {"endIndex": 4, "uri": "https://en.wikipedia.org/wiki/Q", "title": "Q"},
        ]
    }
    events = run(gemini, vertex)
    cites = [(ev.url, ev.title, ev.cited_text) for ev in events if isinstance(ev, Citation)]
    assert cites == [
        ("https://github.com/a/b", None, None),
        ("https://en.wikipedia.org/wiki/Q", "Q", None),
    ]
    assert [ev.type for ev in events] == ["text", "citation", "text", "citation", "done"]
    assert summarize(events).stop_reason == "content_filter"


def test_parts_no_event_carries_are_logged_and_the_rest_is_read() -> None:
    """Made by hand from ai.google.dev/api/caching#Part (inlineData {mimeType, data},
    fileData {mimeType, fileUri}), a thought image, and a part type not known yet."""
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="DEBUG")
    logger.enable("rxllm")
    try:
        events = run(
            chunk(
                {"text": "Here: "},
                {"inlineData": {"mimeType": "image/png", "data": PNG}, "thought": True},
                {"inlineData": {"mimeType": "image/png", "data": PNG}, "thoughtSignature": "s"},
                {"fileData": {"mimeType": "image/png", "fileUri": "https://x/y.png"}},
                {"futurePart": {"x": 1}},
                {"text": "done."},
                finish="STOP",
            )
        )
    finally:
        logger.disable("rxllm")
        logger.remove(sink)
    assert summarize(events).text == "Here: done."
    assert summarize(events).signatures == ["s"]
    unread = [m for m in messages if m.startswith("no event carries a part")]
    assert len(unread) == 2 * 4  # every part, in the whole and in the re-chunked replay
    assert "'inlineData'" in unread[0] and "'fileData'" in unread[2]
    assert "'futurePart'" in unread[3]
    assert all(PNG not in m for m in messages)


@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("OTHER", "other"),
        ("SOMETHING_NEW", "other"),
    ],
)
def test_finish_reasons(raw: str, stop: str) -> None:
    done = terminal(run(chunk({"text": "x"}, finish=raw)))
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason, done.model) == (stop, raw, "gemini-test")


def test_usage_latest_wins_once_before_done_with_cache_apart() -> None:
    events = run(
        chunk({"text": "a"}, usage={"promptTokenCount": 100, "totalTokenCount": 100}),
        chunk(
            {"text": "b"},
            finish="STOP",
            usage={
                "promptTokenCount": 100,
                "cachedContentTokenCount": 60,
                "candidatesTokenCount": 7,
                "thoughtsTokenCount": 5,
                "totalTokenCount": 112,
            },
        ),
        {"usageMetadata": {"trafficType": "ON_DEMAND"}},  # no counts: does not replace them
    )
    assert [ev.type for ev in events] == ["text", "text", "usage", "done"]
    usage = summarize(events).usage
    assert usage == rxllm.Usage.of(
        input_tokens=40, output_tokens=12, reasoning_tokens=5, cache_read_tokens=60
    )
    assert usage is not None and usage.total_tokens == 112


def test_usage_only_chunk_after_the_finish_updates_usage_and_late_parts_are_ignored() -> None:
    events = run(
        chunk({"text": "Hello."}, finish="STOP", usage={"promptTokenCount": 2}),
        chunk({"text": " LATE"}, usage={"promptTokenCount": 2, "candidatesTokenCount": 3}),
    )
    got = summarize(events)
    assert got.text == "Hello."
    assert got.usage is not None and (got.usage.input_tokens, got.usage.output_tokens) == (2, 3)


def test_prompt_block_is_a_content_filter_finish() -> None:
    events = run(
        {
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
            "modelVersion": "gemini-3.7-flash",
        }
    )
    assert [ev.type for ev in events] == ["usage", "done"]
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.raw_stop_reason) == ("content_filter", "PROHIBITED_CONTENT")


def test_unspecified_block_reason_is_not_a_block() -> None:
    events = run(
        {"promptFeedback": {"blockReason": "BLOCK_REASON_UNSPECIFIED"}},
        chunk({"text": "Fine."}, finish="STOP"),
    )
    got = summarize(events)
    assert (got.text, got.stop_reason) == ("Fine.", "stop")


def test_error_object_is_a_stream_error() -> None:
    error = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    events = run(chunk({"text": "Par"}), {"error": error})
    end = terminal(events)
    assert isinstance(end, Failed)
    assert end.error.kind == "stream_error"
    assert (end.error.status, end.error.retryable) == (503, True)
    assert end.error.message == "The model is overloaded."
    assert end.error.raw is not None and json.loads(end.error.raw) == error


def test_an_error_object_keeps_its_retry_info_and_request_id() -> None:
    """google.rpc details in an error chunk mean what they mean in an HTTP body."""
    error = {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"},
            {"@type": "type.googleapis.com/google.rpc.RequestInfo", "requestId": "abc123"},
        ],
    }
    end = terminal(run({"error": error}))
    assert isinstance(end, Failed)
    assert (end.error.retry_after, end.error.request_id) == (26.0, "abc123")


def test_grounding_after_the_finish_chunk_is_still_cited() -> None:
    """Grounding sent in a chunk of its own after the finish reason (a candidate with
    only groundingMetadata, as litellm#29167 saw mid-stream): its sources are cited;
    parts after the finish are still ignored."""
    late = {
        "candidates": [
            {
                "index": 0,
                "content": {"parts": [{"text": "ignored"}], "role": "model"},
                "groundingMetadata": {
                    "groundingChunks": [{"web": {"uri": "https://uefa.com/x", "title": "UEFA"}}]
                },
            }
        ]
    }
    events = run(chunk({"text": "Spain won."}, finish="STOP"), late)
    got = summarize(events)
    assert got.text == "Spain won." and got.stop_reason == "stop"
    cites = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cites == [("https://uefa.com/x", "UEFA")]


def test_an_error_without_a_message_says_so_in_words() -> None:
    end = terminal(run({"error": {"code": 503}}))
    assert isinstance(end, Failed) and end.error.status == 503
    assert end.error.message == "the server reported an error"  # not the dict's repr
    assert end.error.raw == '{"code": 503}'


def test_fields_no_event_carries_are_logged_once_per_turn() -> None:
    """Made by hand from ai.google.dev/gemini-api/docs/google-search (groundingMetadata:
    webSearchQueries, searchEntryPoint.renderedContent, groundingChunks) and
    .../url-context (urlContextMetadata.urlMetadata)."""
    grounding = {
        "webSearchQueries": ["who won euro 2024"],
        "searchEntryPoint": {"renderedContent": "<style>...</style><div>...</div>"},
        "groundingChunks": [{"web": {"uri": "https://uefa.com/x", "title": "uefa.com"}}],
    }
    url_context = {
        "urlMetadata": [
            {
                "retrievedUrl": "https://uefa.com/x",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
            }
        ]
    }
    first = chunk({"text": "Spain won."})
    last = chunk({"text": " Again."}, finish="STOP")
    for payload in (first, last):
        payload["candidates"][0]["groundingMetadata"] = grounding
        payload["candidates"][0]["urlContextMetadata"] = url_context
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="DEBUG")
    logger.enable("rxllm")
    try:
        events = replay(sse(first, last), "google")
    finally:
        logger.disable("rxllm")
        logger.remove(sink)
    assert summarize(events).text == "Spain won. Again."
    assert [e.type for e in events].count("citation") == 1
    unread = [m for m in messages if m.startswith("no event carries the")]
    assert unread == [
        "no event carries the grounding fields ['searchEntryPoint', 'webSearchQueries']",
        "no event carries the candidate fields ['urlContextMetadata']",
    ]
    assert all("<style>" not in m for m in messages)


def test_a_bad_request_error_is_not_retryable() -> None:
    error = {"code": 400, "message": "Bad.", "status": "INVALID_ARGUMENT"}
    end = terminal(run({"error": error}))
    assert isinstance(end, Failed) and (end.error.status, end.error.retryable) == (400, False)


def test_no_finish_reason_is_truncated() -> None:
    end = terminal(run(chunk({"text": "The capital"}, usage={"promptTokenCount": 3})))
    assert isinstance(end, Failed) and end.error.kind == "truncated"


def test_a_chunk_that_is_not_json_is_a_protocol_error() -> None:
    end = terminal(replay(b"data: {not json\r\n\r\n", "google"))
    assert isinstance(end, Failed) and end.error.kind == "protocol"


def test_empty_parts_do_not_make_events() -> None:
    events = run(chunk({"text": ""}), chunk({"text": "", "thought": True}), chunk(finish="STOP"))
    assert [ev.type for ev in events] == ["done"]


# -- the request ---------------------------------------------------------------------------

PNG = "iVBORw0KGgo="


def body_of(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("model", "gemini-2.5-flash")
    kwargs.setdefault("messages", [Message.user("hi")])
    return Google().build_body(ChatRequest(**kwargs))


def test_body_roles_and_system() -> None:
    body = body_of(
        messages=[
            Message.system("Be brief."),
            Message.user("Hello"),
            Message.assistant("Hi there."),
            Message.system("Answer in French."),
            Message.user("Capital of France?"),
        ],
    )
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hello"}]},
            {"role": "model", "parts": [{"text": "Hi there."}]},
            {"role": "user", "parts": [{"text": "Capital of France?"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Answer in French."}]},
    }


def test_body_images_inline_and_by_uri() -> None:
    message = Message(
        role="user",
        content=[
            TextPart(text="What is this?"),
            ImagePart(url=f"data:image/png;base64,{PNG}"),
            ImagePart(url="https://example.com/cat.jpg?size=2"),
            ImagePart(url="https://example.com/image", media_type="image/webp"),
            ImagePart(url="gs://bucket/clip.mp4"),
        ],
    )
    assert body_of(messages=[message])["contents"][0]["parts"] == [
        {"text": "What is this?"},
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"fileData": {"fileUri": "https://example.com/cat.jpg?size=2", "mimeType": "image/jpeg"}},
        {"fileData": {"fileUri": "https://example.com/image", "mimeType": "image/webp"}},
        {"fileData": {"fileUri": "gs://bucket/clip.mp4", "mimeType": "video/mp4"}},
    ]


@pytest.mark.parametrize("url", ["https://example.com/img?id=42", "gs://bucket/photo"])
def test_an_image_url_that_says_no_type_goes_as_a_jpeg(url: str) -> None:
    """Vertex AI requires `fileData.mimeType` ("Unable to submit request because it has an
    empty mimeType parameter in fileData", GoogleCloudPlatform/generative-ai#1390): an
    image whose URL says no type goes as the AI SDK's google provider sends one."""
    message = Message.user("What is this?", images=[url])
    assert body_of(messages=[message])["contents"][0]["parts"][1] == {
        "fileData": {"fileUri": url, "mimeType": "image/jpeg"}
    }


def test_a_gemini_files_api_file_goes_without_a_type_unless_given() -> None:
    """The Files API has the type of each file it holds (a video, a PDF): none is guessed."""
    uri = "https://generativelanguage.googleapis.com/v1beta/files/abc-123"
    message = Message(
        role="user",
        content=[ImagePart(url=uri), ImagePart(url=uri, media_type="video/mp4")],
    )
    assert body_of(messages=[message])["contents"][0]["parts"] == [
        {"fileData": {"fileUri": uri}},
        {"fileData": {"fileUri": uri, "mimeType": "video/mp4"}},
    ]


def test_body_tool_calls_and_results() -> None:
    calls = [
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="c2", name="get_time", arguments={}),
    ]
    body = body_of(
        messages=[
            Message.user("Weather and time in Paris?"),
            Message.assistant("Checking.", tool_calls=calls),
            Message.tool("c2", "12:00"),
            Message.tool("c1", '{"temp": 21, "unit": "C"}'),
            Message.user("Thanks"),
        ]
    )
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Checking."},
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                    "thoughtSignature": SKIP_SIGNATURE,
                },
                {"functionCall": {"name": "get_time", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [  # in the order of the calls, not of the results
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"temp": 21, "unit": "C"},
                    }
                },
                {"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}},
            ],
        },
        {"role": "user", "parts": [{"text": "Thanks"}]},
    ]


def test_body_tool_result_without_its_call_is_refused() -> None:
    with pytest.raises(ConfigError, match="'nope'"):
        body_of(messages=[Message.user("hi"), Message.tool("nope", "x")])


def test_body_tools_as_function_declarations() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = body_of(
        tools=[
            Tool(name="get_weather", description="Weather by city", parameters=schema),
            Tool(name="now"),
        ]
    )
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather by city",
                    "parametersJsonSchema": schema,
                },
                {
                    "name": "now",
                    "description": "",
                    "parametersJsonSchema": {"type": "object", "properties": {}},
                },
            ]
        }
    ]


def test_body_params_into_generation_config_or_top_level() -> None:
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    body = body_of(
        params={
            "temperature": 0.2,
            "max_tokens": 256,
            "top_p": 0.9,
            "topK": 40,
            "stop": "END",
            "seed": 7,
            "presence_penalty": 0.1,
            "thinking_config": {"thinkingBudget": 128, "includeThoughts": True},
            "generationConfig": {"responseMimeType": "application/json"},
            "safetySettings": safety,
            "cachedContent": "cachedContents/abc",
        }
    )
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "maxOutputTokens": 256,
        "topP": 0.9,
        "topK": 40,
        "stopSequences": ["END"],
        "seed": 7,
        "presencePenalty": 0.1,
        "thinkingConfig": {"thinkingBudget": 128, "includeThoughts": True},
        "responseMimeType": "application/json",
    }
    assert body["safetySettings"] == safety
    assert body["cachedContent"] == "cachedContents/abc"
    assert "model" not in body and "stream" not in body


def test_body_images_of_a_tool_result_follow_the_function_responses() -> None:
    # Part is a union (functionResponse | inlineData | fileData); nested
    # functionResponse.parts are Gemini 3 only ("Multimodal function responses are not
    # supported for this model"), so the images are parts of the same user turn.
    calls = [ToolCall(id="c1", name="screenshot"), ToolCall(id="c2", name="get_time")]
    shot = Message(
        role="tool",
        tool_call_id="c1",
        content=[TextPart(text="the page"), ImagePart(url=f"data:image/png;base64,{PNG}")],
    )
    body = body_of(
        messages=[
            Message.user("Look"),
            Message.assistant(tool_calls=calls),
            shot,
            Message.tool("c2", "12:00"),
        ]
    )
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "screenshot", "response": {"output": "the page"}}},
            {"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
        ],
    }


@pytest.mark.parametrize(
    ("field", "params"),
    [
        ({"temperature": 0.2}, {"generationConfig": {"temperature": 0.9}}),
        ({}, {"topK": 40, "generation_config": {"topK": 7}}),
        ({"max_tokens": 64}, {"generationConfig": {"max_output_tokens": 128}}),
    ],
)
def test_body_a_generation_setting_given_twice_is_refused(
    field: dict[str, Any], params: dict[str, Any]
) -> None:
    # GenerationConfig holds one value per field: the other would be lost unsaid.
    with pytest.raises(ConfigError, match="set twice"):
        body_of(params=params, **field)


@pytest.mark.parametrize(
    ("model", "path"),
    [
        ("gemini-2.5-flash", "models/gemini-2.5-flash"),
        ("models/gemini-2.5-flash", "models/gemini-2.5-flash"),
        ("tunedModels/my-model", "tunedModels/my-model"),
        ("fault/error_event", "models/fault%2Ferror_event"),
        ("../x?y", "models/..%2Fx%3Fy"),
    ],
)
def test_url(model: str, path: str) -> None:
    request = ChatRequest(model=model, messages=[Message.user("hi")])
    base = "https://generativelanguage.googleapis.com/v1beta/"
    url = Google().url(base, request)
    assert (
        url
        == f"https://generativelanguage.googleapis.com/v1beta/{path}:streamGenerateContent?alt=sse"
    )


def test_headers_carry_the_key_in_x_goog_api_key() -> None:
    headers = Google().headers("k-123")
    assert headers["x-goog-api-key"] == "k-123"
    assert "Authorization" not in headers


def test_api_key_from_gemini_or_google_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        rxllm.provider("google")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    request = ChatRequest(model="gemini-2.5-flash", messages=[Message.user("hi")])
    p = rxllm.provider("google")
    assert p.http_request(request).headers["x-goog-api-key"] == "from-google"
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    p = rxllm.provider("google")
    assert p.http_request(request).headers["x-goog-api-key"] == "from-gemini"
    assert "from-gemini" not in repr(p)


# -- the local server, over real HTTP ---------------------------------------------------------

WEATHER = Tool(
    name="get_weather",
    description="Weather by city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def local(server: LocalServer) -> rxllm.Provider:
    return rxllm.provider("google", api_key="test", base_url=server.root + "/v1beta")


async def events_over_http(
    server: LocalServer, model: str, text: str = "Say hello", tools: list[Tool] | None = None
) -> list[Event]:
    request = ChatRequest(model=model, messages=[Message.user(text)], tools=tools or [])
    return [ev async for ev in local(server).astream(request)]


async def test_local_text_turn_with_reasoning(local_server: LocalServer) -> None:
    events = await events_over_http(local_server, "gemini-local")
    got = summarize(events)
    script = script_for(Prompt("gemini-local", "Say hello"))
    assert got.reasoning == "The user wants a short greeting about streams. Keep it brief."
    assert got.text.startswith("Hello from rxllm's local provider!")
    assert got.text.endswith("so you can try rxllm with no API key.")
    signature = base64.b64encode(b"rxllm-local thought signature 1").decode()
    assert got.signatures == [signature]
    assert got.usage == rxllm.Usage.of(
        input_tokens=script.input_tokens,
        output_tokens=script.output_tokens,
        reasoning_tokens=script.reasoning_tokens,
    )
    assert (got.terminal, got.stop_reason, got.raw_stop_reason) == ("done", "stop", "STOP")
    assert got.model == "gemini-local"
    sent = local_server.requests[-1]
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "Say hello"}]}]
    assert "stream" not in sent and sent["model"] == "gemini-local"  # model from the URL


async def test_local_tool_call(local_server: LocalServer) -> None:
    events = await events_over_http(
        local_server, "gemini-local", "What's the weather in Paris?", [WEATHER]
    )
    got = summarize(events)
    assert got.text == "Let me check the weather."
    assert got.tool_calls == [
        ("call_local_weather_1", "get_weather", {"city": "Paris", "unit": "celsius", "days": 3})
    ]
    assert (got.terminal, got.stop_reason) == ("done", "tool_use")
    kinds = [ev.type for ev in events]
    assert kinds.index("tool_start") > max(i for i, k in enumerate(kinds) if k == "text")
    assert local_server.requests[-1]["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"


async def test_local_parallel_tools(local_server: LocalServer) -> None:
    got = summarize(await events_over_http(local_server, "fault/parallel_tools"))
    assert got.tool_calls == [
        ("call_local_1", "get_weather", {"city": "Paris"}),
        ("call_local_2", "get_time", {"timezone": "Europe/Paris"}),
    ]
    assert got.stop_reason == "tool_use"


async def test_local_error_event(local_server: LocalServer) -> None:
    events = await events_over_http(local_server, "fault/error_event")
    end = terminal(events)
    assert isinstance(end, Failed)
    assert end.error.kind == "stream_error"
    assert end.error.message == FAULTS["error_event"].error
    assert (end.error.status, end.error.retryable, end.error.provider) == (503, True, "google")
    assert summarize(events).text.startswith("Hello from rxllm")


async def test_local_truncated(local_server: LocalServer) -> None:
    events = await events_over_http(local_server, "fault/truncated")
    end = terminal(events)
    assert isinstance(end, Failed) and end.error.kind == "truncated"
    assert "API key." in summarize(events).text  # everything but the finish arrived


async def test_local_late_text_is_ignored(local_server: LocalServer) -> None:
    got = summarize(await events_over_http(local_server, "fault/late_event"))
    assert got.terminal == "done" and "LATE" not in got.text


@pytest.mark.parametrize("fault", ["malformed_tool", "length_cut_tool"])
async def test_local_unfinished_tool_call_is_malformed(
    local_server: LocalServer, fault: str
) -> None:
    end = terminal(await events_over_http(local_server, f"fault/{fault}"))
    assert isinstance(end, Failed) and end.error.kind == "malformed_tool_arguments"
    assert "get_weather" in end.error.message


async def test_local_http_error(local_server: LocalServer) -> None:
    end = terminal(await events_over_http(local_server, "fault/http_500"))
    assert isinstance(end, Failed) and (end.error.kind, end.error.status) == ("http", 500)


def test_a_call_signature_comes_back_in_the_next_request() -> None:
    data = capture("gemini/function_call_thought_signature.sse")
    part = json.loads(data.split(b"data: ", 1)[1].split(b"\r\n")[0])["candidates"][0]
    wire_signature = part["content"]["parts"][0]["thoughtSignature"]
    (request,) = [e for e in replay(data, "google") if isinstance(e, ToolRequest)]
    assert request.signature == wire_signature and len(wire_signature) > 100
    body = body_of(
        messages=[
            Message.user("Which country?"),
            Message.assistant(tool_calls=[request.to_call()]),
            Message.tool(request.call_id, "France"),
        ]
    )
    (call_part,) = body["contents"][1]["parts"]
    assert call_part["thoughtSignature"] == wire_signature  # the real one, not the placeholder
    assert call_part["functionCall"] == {"name": "get_country", "args": {}}
