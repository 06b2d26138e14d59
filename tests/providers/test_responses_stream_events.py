"""OpenAI Responses streaming events of the reference (openai-python
`types/responses/response_stream_event.py` and the events it unions) that no earlier
test read as the contract says: audio output's transcript, the progress events of the
items read at their done item, a function call named only when done, and the items of
a stream that ask nothing of the client. Bodies are made by hand from those
definitions; ids and values are made up. Each is read whatever the chunking, and over a
loopback server: the same events."""

from __future__ import annotations

from rxllm.events import TextDelta
from tests.providers.test_openai_responses_shapes import COMPLETED, CREATED
from tests.providers.test_probe_openai_responses_3 import run
from tests.support import ServeBody, summarize


# Audio output: `response.audio.transcript.delta` carries what the model says (`delta`),
# `response.audio.transcript.done` carries nothing but its type; neither names an output
# item. The chat wire reads `delta.audio.transcript` as the turn's text: so does this one.
async def test_the_audio_transcript_is_the_text_once(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.audio.delta", "delta": "UklGRg=="},
        {"type": "response.audio.transcript.delta", "delta": "Hello"},
        {"type": "response.audio.transcript.delta", "delta": " there."},
        {"type": "response.audio.done"},
        # a server that repeats the whole transcript at its end, as the Realtime API's
        # `response.audio_transcript.done` does: said once
        {"type": "response.audio.transcript.done", "transcript": "Hello there."},
        COMPLETED,
    )
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " there."]
    assert (summarize(events).text, summarize(events).stop_reason) == ("Hello there.", "stop")


async def test_a_transcript_only_at_its_done_event_is_the_text(serve_body: ServeBody) -> None:
    events = await run(
        serve_body,
        CREATED,
        {"type": "response.audio.transcript.done", "transcript": "Whole."},
        COMPLETED,
    )
    assert summarize(events).text == "Whole."
