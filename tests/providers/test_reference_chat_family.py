"""Chat-completions stream shapes from the compatible providers' references that no other
test holds, each body built by hand from the reference (ids and opaque values made up)
and checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation, ServerToolCall, ServerToolResult
from tests.support import Expect, check, log_messages, replay, replay_every_way, summarize


def sse(*payloads: dict[str, Any]) -> bytes:
    body = b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in payloads)
    return body + b"data: [DONE]\n\n"


# ------------------------------------------ Azure OpenAI On Your Data: retrieved citations

_DOC = "https://contoso.blob.core.windows.net/docs/handbook.pdf"


def _on_your_data(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A chunk of Azure OpenAI On Your Data (`data_sources` in the request): `end_turn`
    beside the finish on the choice (learn.microsoft.com, Azure OpenAI On Your Data API
    reference; the chunks of Azure-Samples/chat-with-your-data-solution-accelerator's
    functional tests)."""
    choice = {"index": 0, "delta": delta, "end_turn": finish is not None, "finish_reason": finish}
    return {
        "id": "92f715be",
        "object": "extensions.chat.completion.chunk",
        "created": 1712077271,
        "model": "gpt-4o",
        "choices": [choice],
    }


def _retrieved(*citations: dict[str, Any]) -> dict[str, Any]:
    """The first delta: the assistant's role and the `context` of what the search
    retrieved (`Context`: `citations`, each `{content, title, url, filepath, chunk_id}`,
    `content` the only required field; `intent`, the queries it ran, as a JSON string)."""
    context = {"citations": list(citations), "intent": '["leave policy"]'}
    return _on_your_data({"role": "assistant", "context": context})


def test_azure_on_your_data_citations_are_citations() -> None:
    """The documents the answer's `[docN]` markers point to come in the first delta's
    `context.citations`; one with a URL is a citation (its content the cited text), one
    without (a document indexed without a URL field) has nothing to cite by and is
    logged. Before, the whole `context` was logged as a field with no event: the
    answer's sources were lost."""
    data = sse(
        _retrieved(
            {
                "content": "Employees get 25 days of leave.",
                "title": "Handbook",
                "url": _DOC,
                "filepath": "handbook.pdf",
                "chunk_id": "0",
            },
            {
                "content": "Leave carries over.",
                "title": "/docs/memo.txt",
                "url": None,
                "filepath": None,
                "chunk_id": "1",
            },
        ),
        _on_your_data({"content": "You get 25 days [doc1]."}),
        _on_your_data({}, "stop"),
    )
    events = replay_every_way(data, "azure-openai")
    cited = [event for event in events if isinstance(event, Citation)]
    assert [(c.url, c.title, c.cited_text) for c in cited] == [
        (_DOC, "Handbook", "Employees get 25 days of leave.")
    ]
    check(summarize(events), Expect(text="You get 25 days [doc1].", model="gpt-4o"))
    with log_messages() as logged:
        replay(data, "azure-openai")
    assert any("/docs/memo.txt" in line and "no URL" in line for line in logged), logged
    assert not any("'context'" in line for line in logged), logged


# --------------------------------- Perplexity's reasoning steps: the tools it ran itself

_PAGE = {"title": "Seattle weather", "url": "https://weather.example/sea", "date": None}


def _pplx_reasoning(*steps: dict[str, Any]) -> dict[str, Any]:
    """A `chat.reasoning` chunk of `stream_mode: "concise"` (docs.perplexity.ai, "Stream
    Mode: Concise vs Full"), its steps as the Chat Completions reference types them:
    `{thought, type, web_search: {search_keywords, search_results}, fetch_url_content:
    {contents}, execute_python: {code, result}}`, the payload under the step's type."""
    choice = {
        "index": 0,
        "finish_reason": None,
        "message": {"role": "assistant", "content": ""},
        "delta": {"role": "assistant", "content": "", "reasoning_steps": list(steps)},
    }
    return {"id": "cfa38f9d", "model": "sonar-pro", "created": 1, "object": "chat.reasoning",
            "choices": [choice]}  # fmt: skip


def _pplx_answer(delta: dict[str, Any], kind: str, **extra: Any) -> dict[str, Any]:
    finish = "stop" if kind == "chat.completion.done" else None
    choice = {"index": 0, "finish_reason": finish, "delta": {"role": "assistant"} | delta}
    return {"id": "cfa38f9d", "model": "sonar-pro", "created": 1, "object": kind,
            "choices": [choice]} | extra  # fmt: skip


def test_perplexity_steps_are_the_tools_it_ran() -> None:
    """A reasoning step's `thought` is reasoning, and the tool it ran (the payload under
    its type: a search's keywords and results, the pages fetched, the Python run and
    what it printed) is a server tool call and its result, as Groq's `executed_tools`
    are. Before, only the thought was read: the code Perplexity ran and its result were
    dropped unsaid."""
    data = sse(
        _pplx_reasoning(
            {
                "thought": "Searching the web.",
                "type": "web_search",
                "web_search": {"search_keywords": ["Seattle weather"], "search_results": [_PAGE]},
            }
        ),
        _pplx_reasoning(
            {
                "thought": "Reading the forecast.",
                "type": "fetch_url_content",
                "fetch_url_content": {"contents": [_PAGE | {"snippet": "Sunny, 61F"}]},
            },
            {
                "thought": "Converting to Celsius.",
                "type": "execute_python",
                "execute_python": {"code": "print(round((61 - 32) / 1.8))", "result": "16\n"},
            },
        ),
        _pplx_answer({"content": ""}, "chat.reasoning.done", search_results=[_PAGE]),
        _pplx_answer({"content": "Sunny, 16°C."}, "chat.completion.chunk"),
        _pplx_answer(
            {"content": ""},
            "chat.completion.done",
            search_results=[_PAGE],
            usage={"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
        ),
    )
    events = replay_every_way(data, "custom")
    ran = [
        (event.type, event.name, getattr(event, "arguments", None), getattr(event, "content", None))
        for event in events
        if isinstance(event, ServerToolCall | ServerToolResult)
    ]
    assert ran == [
        ("server_tool_call", "web_search", {"search_keywords": ["Seattle weather"]}, None),
        ("server_tool_result", "web_search", None, {"search_results": [_PAGE]}),
        ("server_tool_call", "fetch_url_content", {}, None),
        ("server_tool_result", "fetch_url_content", None,
         {"contents": [_PAGE | {"snippet": "Sunny, 61F"}]}),
        ("server_tool_call", "execute_python", {"code": "print(round((61 - 32) / 1.8))"}, None),
        ("server_tool_result", "execute_python", None, {"result": "16\n"}),
    ]  # fmt: skip
    calls = [event for event in events if isinstance(event, ServerToolCall)]
    results = [event for event in events if isinstance(event, ServerToolResult)]
    assert [c.call_id for c in calls] == [r.call_id for r in results]
    assert len({c.call_id for c in calls}) == 3
    summary = summarize(events)
    assert summary.reasoning == (
        "Searching the web.\nReading the forecast.\nConverting to Celsius.\n"
    )
    assert summary.text == "Sunny, 16°C."
