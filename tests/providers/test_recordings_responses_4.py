"""OpenAI Responses-shaped streams from public recordings that a fourth sweep replayed,
for a shape no earlier test holds. Bodies are built by hand from the sources' essential
events, each naming its source; ids and values are the sources' own, long ones shortened."""

from __future__ import annotations

from typing import Any

from tests.providers.test_openai_responses_shapes import added, done, on
from tests.providers.test_probe_openai_responses_7 import server_tools
from tests.providers.test_probe_openai_responses_8 import (
    completed,
    created,
    message,
    streamed_message,
    usage_of,
)
from tests.providers.test_recordings_responses import run
from tests.support import ServeBody, summarize

# -- vercel/ai packages/azure/src/__fixtures__/azure-web-search-preview-tool.1.chunks.txt -----
# Azure (gpt-4.1-mini, `web_search_preview`): the search's done item still says
# `status: "searching"`, the query only there, and no `web_search_call.completed` event
# ever comes; the completed response lists it so too. It is the provider's finished search
# all the same: shown once, its result the done item, then the answer and its citation.
WS = "ws_0dcf1a118189f28100691daa56c6488194b41c751d5cb3b4c3"
MID = "msg_0dcf1a118189f28100691daa5a28488194b14fd6fa1d2895be"
RID = "resp_0dcf1a118189f28100691daa5591108194a7dc13f2d6faa80c"
URL = "https://www.straitstimes.com/world/while-you-were-sleeping-5-stories-you-might-have-missed-nov-19-2025"
TITLE = "While You Were Sleeping: 5 stories you might have missed, Nov 19, 2025"
DELTAS = [
    "Here are three major news stories from today, November 19, 2025:\n\n",
    "1. Spain announced a €817 million military and aid package for Ukraine ",
    f"[Straits Times]({URL}).",
]


async def test_a_search_left_searching_at_its_done_item_is_shown_once_with_its_result(
    serve_body: ServeBody,
) -> None:
    searched = {"id": WS, "type": "web_search_call", "status": "searching"}
    searched["action"] = {"type": "search", "query": "top news stories November 19, 2025"}
    whole = "".join(DELTAS)
    start = whole.index("[Straits")
    cite: dict[str, Any] = {"type": "url_citation", "start_index": start, "end_index": len(whole)}
    cite = {**cite, "title": TITLE, "url": URL}
    answer = message(MID, whole)
    answer["content"][0]["annotations"] = [cite]
    streamed = streamed_message(1, MID, DELTAS)
    streamed[-3:-3] = [
        on(
            "response.output_text.annotation.added",
            1,
            MID,
            content_index=0,
            annotation_index=0,
            annotation=cite,
        )
    ]
    streamed[-2]["part"] = answer["content"][0]
    streamed[-1] = done(1, answer)
    events = await run(
        serve_body,
        created(RID, "gpt-4.1-mini"),
        added(0, {"id": WS, "type": "web_search_call", "status": "in_progress"}),
        on("response.web_search_call.in_progress", 0, WS),
        on("response.web_search_call.searching", 0, WS),
        done(0, searched),
        *streamed,
        completed(RID, "gpt-4.1-mini", usage_of(5093, 0, 369, 0), searched, answer),
    )
    assert server_tools(events) == [
        ("server_tool_call", WS, "web_search_call"),
        ("server_tool_result", WS, "web_search_call"),
    ]
    result = next(e for e in events if e.type == "server_tool_result")
    assert result.content == {k: v for k, v in searched.items() if k not in ("id", "type")}
    summary = summarize(events)
    assert summary.text == whole
    assert [(e.url, e.title) for e in events if e.type == "citation"] == [(URL, TITLE)]
    assert (summary.terminal, summary.stop_reason) == ("done", "stop")
