"""A lone UTF-16 half in what a provider said outside text: a citation's title, a
provider-run tool's input or result. Text's halves are joined or U+FFFD (f147657); these
fields were passed on as lone surrogates, so the event's JSON, the record's and the next
turn (which sends the search result back) could not be written as UTF-8."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, ServerToolCall, ServerToolResult
from tests.support import replay_every_way

_HALF = "\\ud83d"  # a high half written as its own JSON escape, no partner after it


def _anthropic(*events: dict[str, Any]) -> bytes:
    start = {
        "type": "message_start",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                    "content": [], "usage": {"input_tokens": 3, "output_tokens": 0}},
    }  # fmt: skip
    end = [
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]  # fmt: skip
    frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in (start, *events, *end)]
    # json.dumps writes the marker's backslash twice: make it the one escape it stands for
    return "".join(frames).replace("\\\\ud83d", _HALF).encode()


def test_a_lone_half_in_a_search_and_its_citation_is_the_replacement_character() -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
              "input": {"query": "x\\ud83d"}}  # fmt: skip
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": [{"type": "web_search_result", "url": "https://a.example/",
                           "title": "a\\ud83d", "encrypted_content": "e"}]}  # fmt: skip
    cited = {"type": "citations_delta", "citation": {
        "type": "web_search_result_location", "url": "https://a.example/",
        "title": "t\\ud83d", "cited_text": "c", "encrypted_index": "i"}}  # fmt: skip
    body = _anthropic(
        {"type": "content_block_start", "index": 0, "content_block": search},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": cited},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 2},
    )  # fmt: skip
    assert _HALF.encode() in body  # the escape reaches the wire as one escape
    events = replay_every_way(body, "anthropic")
    for event in events:
        event.model_dump_json()  # raised UnicodeEncodeError with a lone surrogate
    [call] = [e for e in events if isinstance(e, ServerToolCall)]
    [result_event] = [e for e in events if isinstance(e, ServerToolResult)]
    [citation] = [e for e in events if isinstance(e, Citation)]
    assert call.arguments == {"query": "x\ufffd"}
    assert result_event.content[0]["title"] == "a\ufffd"
    assert result_event.raw is not None  # the block the next turn sends back
    assert result_event.raw["content"][0]["title"] == "a\ufffd"
    assert citation.title == "t\ufffd"
    assert events[-1].type == "done"


def test_a_pair_in_a_citation_title_is_kept() -> None:
    """The guard: a pair escaped whole is its character, untouched."""
    cited = {"type": "citations_delta", "citation": {
        "type": "web_search_result_location", "url": "https://a.example/",
        "title": "t\U0001f600", "cited_text": "c", "encrypted_index": "i"}}  # fmt: skip
    body = _anthropic(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": cited},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
    )  # fmt: skip
    [citation] = [e for e in replay_every_way(body, "anthropic") if isinstance(e, Citation)]
    assert citation.title == "t\U0001f600"
