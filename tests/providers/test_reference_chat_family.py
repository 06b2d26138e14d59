"""Chat-completions stream shapes from the compatible providers' references that no other
test holds, each body built by hand from the reference (ids and opaque values made up)
and checked whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation
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
