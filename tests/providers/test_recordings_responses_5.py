"""OpenAI Responses-shaped streams from public recordings that a fifth sweep replayed and
found read right, for shapes no earlier test holds. Bodies are built by hand from the
sources' essential events, each naming its source; ids and values are the sources' own."""

from __future__ import annotations

from typing import Any

from rxllm.events import ReasoningDelta
from tests.providers.test_openai_responses_shapes import added, done
from tests.providers.test_probe_openai_responses_3 import run
from tests.providers.test_recordings_responses_2 import data_only
from tests.support import ServeBody, summarize


def usage(reasoning_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": 2,
    }


def incomplete(reason: str, reasoning_tokens: int) -> dict[str, Any]:
    """The fixtures' terminal: no `id`, no `output`, only the reason and the usage."""
    response = {
        "status": "incomplete",
        "incomplete_details": {"reason": reason},
        "usage": usage(reasoning_tokens),
    }
    return {"type": "response.incomplete", "response": response}


# vercel/ai packages/open-responses/src/responses/__fixtures__/issue-18872-truncated-
# reasoning.chunks.txt: the token limit cuts a reasoning item before any part or its done
# item, and the terminal response lists no output. vercel's test ("should close
# unfinished reasoning items with their original ids") expects the item ended under its
# own id and the turn finished by length. The item is kept (its id is what the API
# takes back) and nothing is invented for its text.
async def test_a_reasoning_item_cut_before_its_done_item_is_kept_by_its_id(
    serve_body: ServeBody,
) -> None:
    item = {"id": "rs_actual_reasoning_id", "type": "reasoning", "status": "in_progress"}
    item["summary"] = []
    events = await run(
        serve_body, added(0, item), incomplete("max_output_tokens", 1), frame=data_only
    )
    kept = [e for e in events if isinstance(e, ReasoningDelta) and e.details]
    assert [(e.text, (e.details or {}).get("id")) for e in kept] == [("", "rs_actual_reasoning_id")]
    summary = summarize(events)
    assert (summary.reasoning, summary.stop_reason, summary.raw_stop_reason) == (
        "",
        "length",
        "max_output_tokens",
    )
    assert summary.usage is not None and summary.usage.reasoning_tokens == 1


# vercel/ai packages/open-responses/src/responses/__fixtures__/issue-18872-unknown-
# incomplete-reason.chunks.txt: a whole call (arguments only in their done event), then a
# `response.incomplete` whose reason no mapping knows (`server_timeout`). The call is
# requested once; the turn ends as `other` with the raw reason kept, as vercel's
# `mapOpenResponsesFinishReason` maps any reason it does not know.
async def test_an_unknown_incomplete_reason_after_a_whole_call_is_other(
    serve_body: ServeBody,
) -> None:
    call = {
        "id": "fc_weather",
        "type": "function_call",
        "status": "in_progress",
        "call_id": "call_weather",
        "name": "get_weather",
        "arguments": "",
    }
    arguments = '{"location":"San Francisco"}'
    events = await run(
        serve_body,
        added(0, call),
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_weather",
            "output_index": 0,
            "arguments": arguments,
        },
        done(0, {**call, "status": "completed", "arguments": arguments}),
        incomplete("server_timeout", 0),
        frame=data_only,
    )
    summary = summarize(events)
    assert summary.tool_calls == [("call_weather", "get_weather", {"location": "San Francisco"})]
    assert (summary.terminal, summary.stop_reason, summary.raw_stop_reason) == (
        "done",
        "other",
        "server_timeout",
    )
