"""The Redis log benchmark at a tiny size: it runs end to end and measures every target
(never a time: those are for benchmarks/)."""

from __future__ import annotations

import math

from benchmarks.redis_log import run
from tests.serving.redis_server import require_redis


async def test_the_redis_benchmark_runs_tiny() -> None:
    require_redis()
    result = await run(events=40, size=40, repeat=3, pace=0)
    assert set(result["tee_cpu"]) == {"tee_us", "xadd_sequential_us", "xadd_pipelined_16_us"}
    cpu = result["tee_cpu"]
    assert cpu["xadd_sequential_us"] > 0 and cpu["xadd_pipelined_16_us"] > 0
    # The tee's figure is a difference of two process_time() readings (with the log,
    # without), which count every thread of the process: a thread busy during the
    # bare feed makes it 0 or less (it did, under a load test's GIL-holding thread).
    # A number, then, not its sign.
    assert math.isfinite(cpu["tee_us"])
    assert result["live_latency"]["live_p99_ms"] > 0
    log = result["log"]
    for key in ("first_resumed_entry_p99_ms", "follow_p99_ms", "cancel_to_upstream_closed_p99_ms"):
        assert log[key] > 0
    assert log["dead_producer_to_terminal_s"] > 0
    assert len(result["targets"]) == 6
