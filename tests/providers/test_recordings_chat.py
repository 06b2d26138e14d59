"""Chat-completions shapes from public recordings that the captures lack.

Each body is built by hand from the recording named beside it (its essential lines,
quoted), replayed through the endpoint's preset whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what the recording's own test
expects: every call once, with its own arguments, and one terminal.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "kimi-k2.5"} | {
        "choices": [choice]
    }


def _opener(call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_index_less_parallel_calls_are_known_by_their_place_in_the_list() -> None:
    """vercel/ai packages/moonshotai/src/__fixtures__/
    moonshotai-stream-indexless-tool-calls.chunks.txt: two calls opened in one delta with
    no `index`, then their arguments in one delta, again by place alone. vercel/ai's test
    ("should assemble tool calls without explicit indices") expects each call with its
    own arguments. Before: both fragments went to the last call opened, whose arguments
    became `{"location": ...}{"zone": ...}`, a malformed-arguments error."""
    body = _sse(
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"tool_calls": [_opener("weather_0", "weather"), _opener("time_1", "time")]}),
        _chunk(
            {
                "tool_calls": [
                    {"function": {"arguments": '{"location":"San Francisco"}'}},
                    {"function": {"arguments": '{"zone":"UTC"}'}},
                ]
            }
        ),
        _chunk({}, "tool_calls"),
    )
    summary = summarize(replay_every_way(body, "custom"))
    assert summary.tool_calls == [
        ("weather_0", "weather", {"location": "San Francisco"}),
        ("time_1", "time", {"zone": "UTC"}),
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def test_explicit_indices_after_index_less_openers_name_the_same_calls() -> None:
    """vercel/ai moonshotai-stream-tool-calls.chunks.txt: two calls opened by place (no
    `index`), their arguments then sent with `index` 1 and 0, in that order; the test
    expects get_weather with `{"city":"Paris"}` and get_time with `{"zone":"UTC"}`.
    Before: the indices named no known call, so two new nameless calls began and the
    openers' arguments stayed cut (`{"city":"`)."""
    body = _sse(
        _chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    _opener("call-weather", "get_weather", '{"city":"'),
                    _opener("call-time", "get_time", '{"zone":"'),
                ],
            }
        ),
        _chunk(
            {
                "tool_calls": [
                    {"index": 1, "function": {"arguments": 'UTC"}'}},
                    {"index": 0, "function": {"arguments": 'Paris"}'}},
                ]
            }
        ),
        _chunk({}, "tool_calls"),
    )
    summary = summarize(replay_every_way(body, "custom"))
    assert summary.tool_calls == [
        ("call-weather", "get_weather", {"city": "Paris"}),
        ("call-time", "get_time", {"zone": "UTC"}),
    ]
    assert (summary.terminal, summary.raw_stop_reason) == ("done", "tool_calls")


def test_empty_ids_on_continuation_fragments_name_no_new_call() -> None:
    """vercel/ai packages/alibaba/src/__fixtures__/alibaba-tool-call.chunks.txt (qwen3-max
    on DashScope): every fragment after the opener repeats `"id": ""` and the type, and a
    last fragment with empty arguments comes in a choice without `finish_reason`."""
    fragment = {"index": 0, "id": "", "type": "function", "function": {"arguments": '"}'}}
    body = _sse(
        _chunk(
            {
                "content": None,
                "role": "assistant",
                "tool_calls": [
                    {"index": 0} | _opener("call_eee11723464a4b9eb8cee71d", "weather"),
                ],
            }
        ),
        _chunk({"tool_calls": [fragment | {"function": {"arguments": '{"location": "SF'}}]}),
        _chunk({"tool_calls": [fragment]}),
        {"choices": [{"index": 0, "delta": {"tool_calls": [fragment | {"function": {}}]}}]},
        _chunk({}, "tool_calls"),
    )
    summary = summarize(replay_every_way(body, "custom"))
    assert summary.tool_calls == [("call_eee11723464a4b9eb8cee71d", "weather", {"location": "SF"})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")


def test_a_moderation_chunk_after_the_usage_leaves_the_turn_as_it_was() -> None:
    """pydantic-ai tests/models/cassettes/test_openai/test_openai_moderation_stream.yaml
    (gpt-5 with `moderation`): after the usage chunk comes one more, `choices: []`, with
    the input and output `moderation` results and `"usage": null`. The turn ended at the
    usage; the moderation chunk is logged, not an event."""
    results = {"type": "moderation_results", "model": "omni-moderation-latest", "results": []}
    usage = {"prompt_tokens": 13, "completion_tokens": 11, "total_tokens": 24}
    body = _sse(
        _chunk({"role": "assistant", "content": "", "refusal": None}),
        _chunk({"content": "Paris."}),
        _chunk({}, "stop") | {"usage": None},
        {"id": "chatcmpl-1", "choices": [], "usage": usage},
        {"id": "chatcmpl-1", "choices": [], "moderation": {"input": results, "output": results}},
    )
    with log_messages() as messages:
        events = replay_every_way(body, "openai")
    summary = summarize(events)
    assert (summary.text, summary.terminal, summary.stop_reason) == ("Paris.", "done", "stop")
    assert summary.usage is not None and summary.usage.total_tokens == 24
    assert any("after the terminal event" in message for message in messages)
