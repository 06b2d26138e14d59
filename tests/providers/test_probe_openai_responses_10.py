"""OpenAI Responses streams whose call input arrives by other events than its item's type
streams, or before any item was announced. Bodies are made by hand; LiteLLM's from its
chat-to-Responses bridge (`litellm/responses/litellm_completion_transformation/
streaming_iterator.py` and `custom_tools.py`: a custom tool is offered to the chat model as
a function with one `content` parameter; the stream announces a `custom_tool_call` item
with input "" and id = call id, streams the model's JSON arguments as
`function_call_arguments.delta` in 10-character pieces, `.done` with them whole, then the
done item with the unwrapped text as its `input`). Ids and values are made up."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxllm.events import ToolStart
from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_5 import completed, run
from tests.providers.test_probe_openai_responses_8 import answered
from tests.support import ServeBody, summarize

PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}


async def test_a_custom_call_whose_input_streams_as_function_arguments_is_its_done_input(
    serve_body: ServeBody,
) -> None:
    """The bridge's argument events are about a custom tool call: they do not make it a
    function call. It was requested with `{"content": PATCH}` (the function arguments the
    chat model wrote), and went back without its `input`."""
    call_id = "call_abc"
    item = {"type": "custom_tool_call", "id": call_id, "call_id": call_id, "name": "apply_patch"}
    wrapped = json.dumps({"content": PATCH})
    arguments = "response.function_call_arguments"
    whole = {**item, "status": "completed", "input": PATCH}
    events = await run(
        serve_body,
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        added(1, {**item, "status": "in_progress", "input": ""}),
        *(
            on(f"{arguments}.delta", 1, call_id, delta=wrapped[i : i + 10])
            for i in range(0, len(wrapped), 10)
        ),
        on(f"{arguments}.done", 1, call_id, arguments=wrapped),
        done(1, whole),
        completed(whole),
    )
    summary = summarize(events)
    assert summary.tool_calls == [(call_id, "apply_patch", {"input": PATCH})]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
    call_item, _ = answered(events, "Done.", tools=[APPLY_PATCH])
    assert call_item == {
        "type": "custom_tool_call",
        "call_id": call_id,
        "name": "apply_patch",
        "input": PATCH,
    }


# A function call's argument events with no `output_item.added` before them: a background
# response streamed again with `starting_after` past the added event (`GET
# /responses/{id}?stream=true&starting_after=N`: no `response.created` either), or a
# server that never sends one. The done item, else the terminal's output, is the call.
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather"}
CALL = {**CALL, "arguments": '{"city":"Paris"}', "status": "completed"}
ARGUMENT_EVENTS = [
    on("response.function_call_arguments.delta", 0, "fc_1", delta='{"city":'),
    on("response.function_call_arguments.delta", 0, "fc_1", delta='"Paris"}'),
    on("response.function_call_arguments.done", 0, "fc_1", arguments=CALL["arguments"]),
]
CREATED = {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            [
                *({**event, "sequence_number": n} for n, event in enumerate(ARGUMENT_EVENTS, 6)),
                {**done(0, CALL), "sequence_number": 9},
                {**completed(CALL), "sequence_number": 10},
            ],
            id="resumed-mid-call",
        ),
        pytest.param([CREATED, ARGUMENT_EVENTS[-1], done(0, CALL), completed(CALL)], id="no-added"),
        pytest.param([CREATED, *ARGUMENT_EVENTS, completed(CALL)], id="terminal-only"),
    ],
)
async def test_arguments_of_a_call_never_announced_are_read_from_what_says_it_whole(
    serve_body: ServeBody, body: list[dict[str, Any]]
) -> None:
    """The argument events failed the stream: error(protocol) "arguments for output item
    0, which is not a function call", where the call was whole in the events after."""
    events = await run(serve_body, *body)
    summary = summarize(events)
    assert summary.tool_calls == [("call_1", "get_weather", {"city": "Paris"})]
    assert [(e.call_id, e.name) for e in events if isinstance(e, ToolStart)] == [
        ("call_1", "get_weather")
    ]
    assert (summary.terminal, summary.stop_reason) == ("done", "tool_use")
