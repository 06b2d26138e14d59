"""MiniMax's `reasoning_details` (with `reasoning_split`) as growing snapshots: its OpenAI
API reference streams each `reasoning.text` fragment as the detail's whole text so far and
keeps only the part past what it has (platform.minimax.io/docs/api-reference/
text-openai-api), while MiniMax-M2.7 has been seen sending increments
(MiniMax-AI/MiniMax-M2#95, whose two fragments are used below). Either way the reasoning
comes out once. Bodies written by hand from those sources.
"""

from __future__ import annotations

from typing import Any

from tests.providers.test_probe_openai_chat import _chunk, _sse
from tests.providers.test_probe_openai_chat_3 import _record
from tests.support import ServeBody, replay_every_way, summarize


def _detail(text: str) -> dict[str, Any]:
    detail = {"type": "reasoning.text", "id": "reasoning-text-1", "index": 0, "text": text}
    return {"content": "", "reasoning_details": [detail | {"format": "MiniMax-response-v1"}]}


def _body(*fragments: str) -> bytes:
    deltas = [_chunk(_detail(text), model="MiniMax-M2") for text in fragments]
    return _sse(*deltas, _chunk({"content": "Hello!"}), _chunk({"content": ""}, "stop"))


_SNAPSHOTS = _body("The user", "The user says hi.", "The user says hi. Greet back.")


def test_snapshots_give_each_part_of_the_reasoning_once() -> None:
    # Before: 'The userThe user says hi.The user says hi. Greet back.'
    events = replay_every_way(_SNAPSHOTS, "custom")
    pieces = [e.text for e in events if e.type == "reasoning" and e.text]
    assert pieces == ["The user", " says hi.", " Greet back."]
    assert summarize(events).text == "Hello!"


def test_increments_are_taken_as_they_come() -> None:
    body = _body("The user", " is asking how I am, which is a simple greeting.")
    summary = summarize(replay_every_way(body, "custom"))
    assert summary.reasoning == "The user is asking how I am, which is a simple greeting."


def test_once_increments_came_a_fragment_that_repeats_the_start_is_kept() -> None:
    # The text so far is compared only while fragments have been snapshots: after an
    # increment, a fragment that happens to start with the whole text is still new text.
    body = _body("Hi", " there", "Hi there, again")
    assert summarize(replay_every_way(body, "custom")).reasoning == "Hi thereHi there, again"


async def test_snapshots_over_http_keep_the_detail_whole(serve_body: ServeBody) -> None:
    record = await _record(serve_body, _SNAPSHOTS, "custom")
    assert record.reasoning == "The user says hi. Greet back."
    (part,) = record.reasoning_parts
    assert part.text == "The user says hi. Greet back."
    assert part.details is not None and part.details["format"] == "MiniMax-response-v1"
