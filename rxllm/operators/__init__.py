"""Stream operators, one per module, each `Observable -> Observable` in RxPY's style.

For your own pipelines, on `Observable[Event]` (what `Provider.stream` returns), each
keeping its types for a type checker:

- `texts()`: the answer's text as `str`; `tool_requests()`: the `ToolRequest`s;
  `of_type(cls)`: the events of one class, typed as it.
- `speaker_guard()` and `dedupe_overlap()`: the opt-in text guards (also run inside
  the pipeline, per attempt, by the provider options of the same names).
- `cap_events(n)`, `cancel_on(signal, provider)`, `deadlines(...)`: bounds on a turn.
- `telemetry(...)`: OpenTelemetry GenAI spans and metrics of a turn (`rxllm[otel]`).

The pipeline's own stages, which a provider assembles (`rxllm.pipeline.provider`):
`normalize` (raw chunks to fragments), `accumulate_tool_arguments` (fragments to
events), `track_commitment`, `retry_before_commit` and `settle_once`. They are exported
for tests and for building a pipeline by hand, not for piping a finished stream.
"""

from rxllm.operators.accumulate_tool_arguments import accumulate_tool_arguments
from rxllm.operators.cancel_on import cancel_on
from rxllm.operators.cap_events import cap_events
from rxllm.operators.deadlines import deadlines
from rxllm.operators.dedupe_overlap import dedupe_overlap
from rxllm.operators.normalize import normalize
from rxllm.operators.of_type import of_type
from rxllm.operators.retry_before_commit import retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.operators.speaker_guard import speaker_guard
from rxllm.operators.telemetry import telemetry
from rxllm.operators.texts import texts
from rxllm.operators.tool_requests import tool_requests
from rxllm.operators.track_commitment import track_commitment

__all__ = [
    "accumulate_tool_arguments",
    "cancel_on",
    "cap_events",
    "deadlines",
    "dedupe_overlap",
    "normalize",
    "of_type",
    "retry_before_commit",
    "settle_once",
    "speaker_guard",
    "telemetry",
    "texts",
    "tool_requests",
    "track_commitment",
]
