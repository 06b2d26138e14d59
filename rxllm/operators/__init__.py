"""Stream operators, one per module, each `Observable -> Observable` in RxPY's style."""

from rxllm.operators.accumulate_tool_arguments import accumulate_tool_arguments
from rxllm.operators.cancel_on import cancel_on
from rxllm.operators.cap_events import cap_events
from rxllm.operators.deadlines import deadlines
from rxllm.operators.dedupe_overlap import dedupe_overlap
from rxllm.operators.normalize import normalize
from rxllm.operators.retry_before_commit import retry_before_commit
from rxllm.operators.settle_once import settle_once
from rxllm.operators.speaker_guard import speaker_guard
from rxllm.operators.telemetry import telemetry
from rxllm.operators.track_commitment import track_commitment

__all__ = [
    "accumulate_tool_arguments",
    "cancel_on",
    "cap_events",
    "deadlines",
    "dedupe_overlap",
    "normalize",
    "retry_before_commit",
    "settle_once",
    "speaker_guard",
    "telemetry",
    "track_commitment",
]
