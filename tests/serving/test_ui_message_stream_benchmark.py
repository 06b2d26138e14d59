"""The encoder benchmark at a tiny size: its runs are checked, its report is JSON; never
a time."""

from __future__ import annotations

import json

import pytest

from benchmarks.clients import HollowRun
from benchmarks.ui_message_stream import SCENARIOS, WAYS, check, events_of, main, measure


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_way_does_the_whole_work(scenario: str) -> None:
    events = events_of(scenario, 60)  # type: ignore[arg-type]
    assert events[-1].type == "done"
    for way in WAYS:
        assert measure(way, events) >= 0
    with pytest.raises(HollowRun):
        check("fold", events, [b"data: [DONE]\n\n"])


def test_main_prints_a_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--events", "200", "--repeat", "1", "--warmup", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["benchmark"] == "ui_message_stream"
    assert set(report["scenarios"]) == set(SCENARIOS)
    for result in report["scenarios"].values():
        assert set(result["cpu_s_per_event"]) == set(WAYS)
        assert result["vs_floor"]["floor"] == 1.0
