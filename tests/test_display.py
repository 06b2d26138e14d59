"""Events and records render as compact, escaped HTML in notebooks."""

from __future__ import annotations

import rxllm
from rxllm.display import events_html
from rxllm.events import Failed, TextDelta, ToolRequest, failed
from rxllm.local import LocalServer

HOSTILE = '<script>alert("x")</script> & <b>'


def test_every_event_escapes_what_the_provider_said() -> None:
    events = [
        TextDelta(provider="p<i>", text=HOSTILE),
        ToolRequest(provider="p", call_id="c1", name="<f>", index=0, arguments={"q": HOSTILE}),
        failed("p", "http", HOSTILE, status=500),
    ]
    for event in events:
        html = event._repr_html_()
        assert "<script>" not in html and "<b>" not in html and "<i>" not in html
        assert "&lt;script&gt;" in html or "&lt;f&gt;" in html
        assert f">{event.type}</span>" in html
    table = events_html(events)
    assert table.count("<tr>") == 4 and "<script>" not in table


async def test_a_real_record_shows_its_attempts_and_outcome(local_server: LocalServer) -> None:
    async with rxllm.provider("local", base_url=local_server.url) as p:
        record = await p.complete(
            rxllm.ChatRequest(
                model="fault/reject_param",
                messages=[rxllm.Message.user("hi")],
                params={"temperature": 0.2},
            )
        )
    html = record._repr_html_()
    assert ">done</span> <code>stop (raw stop)</code>" in html
    assert "Hello from rxllm&#x27;s local provider!" in html
    assert "attempt 1</th>" in html and "nothing committed" in html
    assert "attempt 2</th>" in html and "without temperature; committed" in html


def test_a_record_of_an_error_names_it() -> None:
    error = failed("p", "stalled", "idle_timeout expired <now>")
    assert isinstance(error, Failed)
    record = rxllm.StreamRecord(provider="p", terminal=error, text=HOSTILE)
    html = record._repr_html_()
    assert ">error</span>" in html and "idle_timeout expired &lt;now&gt;" in html
    assert "<script>" not in html
