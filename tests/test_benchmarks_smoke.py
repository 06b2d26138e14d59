"""The benchmark machinery at a tiny size: correctness only, never a time."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.__main__ import main
from benchmarks.bytecodes import main as bytecodes_main
from benchmarks.clients import (
    HollowRun,
    check_floor,
    check_record,
    floor,
    measure,
    rxllm_client,
    rxllm_otel_client,
    target,
)
from benchmarks.hot_path import feed_floor, feed_normalizer, feed_rxllm, frames_for
from benchmarks.hot_path import main as hot_path_main
from benchmarks.scale import _CollectorPasses
from benchmarks.scale import main as scale_main
from benchmarks.server import ARGUMENT_CHARS_PER_FRAGMENT, Scenario, ServerProcess, stream_of
from benchmarks.telemetry import sdk

CHUNKS = 200


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with ServerProcess() as running:
        yield running


def test_streams_carry_the_requested_chunks() -> None:
    text = stream_of("text", CHUNKS)
    # role chunk, the deltas, finish, usage; then [DONE]
    assert text.json_chunks == CHUNKS + 3
    assert len(text.frames) == CHUNKS + 4
    assert text.frames[-1] == b"data: [DONE]\n\n"
    assert all(frame.startswith(b"data: ") and frame.endswith(b"\n\n") for frame in text.frames)

    tool = stream_of("tool", CHUNKS)
    assert abs(len(tool.arguments_json) - CHUNKS * ARGUMENT_CHARS_PER_FRAGMENT) < 200
    pieces = [
        json.loads(frame[6:])["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for frame in tool.frames[1 : CHUNKS + 1]
    ]
    assert len(pieces) == CHUNKS and all(pieces)
    assert "".join(pieces) == tool.arguments_json
    assert set(tool.arguments) == {"path", "mode", "content"}


async def test_both_clients_read_the_whole_text(server: ServerProcess) -> None:
    t = target(server, "text", CHUNKS)
    assert await floor(t) == t.stream.json_chunks
    record = await rxllm_client(t)
    assert record.text == t.stream.text
    assert len(record.text) > CHUNKS
    assert record.terminal.type == "done"
    check_record(t, record)


async def test_both_clients_read_the_whole_tool_call(server: ServerProcess) -> None:
    t = target(server, "tool", CHUNKS)
    assert await floor(t) == t.stream.json_chunks
    record = await rxllm_client(t)
    assert len(record.tool_calls) == 1
    call = record.tool_calls[0]
    assert call.name == "write_file"
    assert call.arguments == t.stream.arguments
    assert call.arguments["content"].count("\n") > 10
    check_record(t, record)


async def test_measurements_are_checked(server: ServerProcess) -> None:
    t = target(server, "tool", CHUNKS)
    for client in ("floor", "rxllm"):
        run = await measure(client, t)
        assert run.chunks == t.stream.json_chunks
        assert run.cpu >= 0 and run.wall > 0
    with pytest.raises(HollowRun):
        check_floor(t, t.stream.json_chunks - 1)
    other = await rxllm_client(target(server, "text", CHUNKS))
    with pytest.raises(HollowRun):
        check_record(t, other)


def test_main_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--chunks", str(CHUNKS), "--repeat", "2", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    for needle in ("text", "tool", "floor", "rxllm", "CPU s/chunk", "rxllm / floor"):
        assert needle in out
    assert main(["--chunks", str(CHUNKS), "--repeat", "1", "--scenario", "text"]) == 0
    assert "tool " not in capsys.readouterr().out


async def test_the_telemetry_client_is_checked_by_its_span(server: ServerProcess) -> None:
    t = target(server, "text", CHUNKS)
    run = await measure("rxllm+otel", t)
    assert run.chunks == t.stream.json_chunks
    record = await rxllm_otel_client(t)
    check_record(t, record)
    span = sdk().exporter.get_finished_spans()[-1]  # this turn's, exported as it ended
    assert (span.attributes or {})["gen_ai.usage.output_tokens"] == CHUNKS


def test_main_reports_the_telemetry_cost(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--chunks", str(CHUNKS), "--repeat", "1", "--warmup", "0", "--scenario", "text"]
    assert main([*argv, "--telemetry"]) == 0
    out = capsys.readouterr().out
    assert "rxllm+otel" in out and "telemetry on / off: text" in out


def test_scale_runs_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The scale scenarios at a few streams: every stream completes, its socket reads
    and the collector's passes before the median first text are counted (here with
    `gc.freeze()` after the warm-up), the floor's
    `readline` is reported unable to read a 1 MB line, both clients' first passes are
    timed, the import scenario's fresh processes run their turns, and the report is
    written."""
    out = tmp_path / "scale.json"
    argv = ["--streams", "3", "--deltas", "5", "--pace", "200", "--repeat", "1"]
    argv += ["--tool-mb", "1", "2", "--turns", "2", "--gc-freeze", "--json", str(out)]
    argv += ["--scenario", "streams", "tool", "connection", "first_pass", "subscribe", "import"]
    assert scale_main(argv) == 0
    report = json.loads(out.read_text())
    for client in ("floor", "rxllm"):
        (run,) = report["streams"]["runs"][client]
        assert run["completed"] == 3 and run["ttft_p99_s"] > 0
        # each of a stream's 8 JSON chunks in a read of its own at most, and three reads
        # more (the response's head, `[DONE]`, the end of the body)
        assert 0 < run["socket_reads_per_chunk"] * 3 * 8 <= 3 * (8 + 3)
        passes = run["collector_to_p50"]
        assert set(passes) == {"gen0", "gen1", "gen2", "seconds"} and passes["seconds"] >= 0
    assert len(report["streams"]["cpu_ratio_by_pair"]) == 1
    assert report["streams"]["gc_freeze"] is True
    assert "LineTooLong" in report["tool"]["median"]["1"]["floor"]
    assert set(report["connection"]["median"]) == {
        "floor reused",
        "floor new",
        "rxllm reused",
        "rxllm new",
    }
    for client in ("floor", "rxllm"):
        (run,) = report["first_pass"]["runs"][client]
        assert run["streams"] == 3 and run["cpu_s"] > 0 and run["wall_s"] > 0
    assert report["subscribe"] > 0
    assert report["import"]["ratio"] > 0
    turns = report["import"]["first_turns"]["median_cpu_s"]
    assert set(turns) == {"import", "first_turn", "second_turn"}
    assert "concurrent streams" in capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["text", "tool"])
def test_the_hot_path_feeds_the_whole_body_to_both(scenario: Scenario) -> None:
    frames = frames_for(scenario, 50, also_built=150)
    assert len(frames) == 50 + 4
    assert feed_floor(frames)() == 50 + 3  # the role chunk, the deltas, finish, usage
    events = feed_rxllm(frames)()
    # text: a delta per frame, usage, done; tool: start, request, usage, done
    assert events == (50 + 2 if scenario == "text" else 4)
    # the normalizer alone: text, a delta per frame; tool, a start and a fragment per
    # frame, the end; both, the usage and the done
    assert feed_normalizer(frames)() == (50 + 2 if scenario == "text" else 50 + 4)


def test_the_hot_path_refuses_a_hollow_run() -> None:
    cut = frames_for("text", 20)[:-3]  # no finish, usage or [DONE]: truncated
    with pytest.raises(RuntimeError, match="did not end done"):
        feed_rxllm(cut)()


def test_the_hot_path_command_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert hot_path_main(["--events", "50", "--repeat", "1", "--normalizer"]) == 0
    out = capsys.readouterr().out
    assert "floor" in out and "rxllm" in out and "normalizer" in out and "ratio" in out


def test_a_first_pass_child_runs_without_the_collector(server: ServerProcess) -> None:
    """What `--instructions` counts twice, with the collector and without: the child's
    fourth argument "off" turns it off, and the pass is still timed."""
    url = server.base_url("text", 5, rate=200)
    for collect in ("on", "off"):
        args = ["-m", "benchmarks.scale", "--child", "first_pass", "rxllm", url, "3", collect]
        out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True)
        run = json.loads(out.stdout.strip().splitlines()[-1])
        assert run["streams"] == 3 and run["cpu_s"] > 0
        assert run["collector"] is (collect == "on")


def test_instructions_without_valgrind_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind on it
    assert scale_main(["--scenario", "first_pass", "--instructions"]) == 2
    assert "valgrind is not installed" in capsys.readouterr().err
    assert hot_path_main(["--instructions"]) == 2
    assert "valgrind is not installed" in capsys.readouterr().err


def test_bytecodes_are_counted_in_each_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`benchmarks.bytecodes` at a few streams: each phase counted for both clients,
    rxllm's own code in rxllm's count only, the floor's parse (`json`) in the floor's,
    the chat normalizer among what rxllm ran before its first text, and the socket
    reads in the event window (how many an event depends on the machine's load)."""
    out = tmp_path / "bytecodes.json"
    argv = ["--streams", "3", "--event-streams", "2", "--events", "20", "--deltas", "30"]
    argv += ["--pace", "50", "--first-pace", "5", "--top", "5", "--json", str(out)]
    assert bytecodes_main(argv) == 0
    counts = json.loads(out.read_text())
    assert list(counts) == ["first_pass", "first_text", "event"]
    for phase, clients in counts.items():
        floor, rx = clients["floor"], clients["rxllm"]
        assert floor["per"] == rx["per"] == ("event" if phase == "event" else "stream")
        assert floor["bytecodes"] > 0 and rx["libraries"]["rxllm"] > 0
        assert "rxllm" not in floor["libraries"]
        assert rx["bytecodes"] == pytest.approx(sum(rx["libraries"].values()))
    assert counts["first_text"]["floor"]["libraries"]["json"] > 0
    normalizer = "rxllm/providers/openai_chat.py"
    assert any(
        name.startswith(normalizer) for name, _ in counts["first_text"]["rxllm"]["functions"]
    )
    assert all(client["reads"] > 0 for client in counts["event"].values())
    report = capsys.readouterr().out
    assert "first_pass" in report and "first_text" in report and "rxllm own" in report


def test_bytecodes_refuse_a_window_the_streams_cannot_fill() -> None:
    argv = ["--phase", "event", "--event-streams", "2", "--deltas", "5", "--events", "100"]
    with pytest.raises(SystemExit, match="cannot give 100 events"):
        bytecodes_main(argv)


def test_bytecodes_count_another_trees_rxllm_beside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--against TREE`: a third client, rxllm's, imports `TREE/rxllm` (here a copy of
    this one), and the report puts its count beside this tree's."""
    root = Path(__file__).resolve().parents[1]
    tree = tmp_path / "tree"
    shutil.copytree(root / "rxllm", tree / "rxllm", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "counts.json"
    argv = ["--phase", "first_pass", "--streams", "3", "--first-pace", "20", "--against", str(tree)]
    argv += ["--json", str(out)]
    assert bytecodes_main(argv) == 0
    (clients,) = json.loads(out.read_text()).values()
    assert clients["rxllm"]["rxllm_from"] == str(root / "rxllm")
    assert clients["against"]["rxllm_from"] == str((tree / "rxllm").resolve())
    assert clients["against"]["libraries"]["rxllm"] > 0
    assert f"against: rxllm from {(tree / 'rxllm').resolve()}" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no rxllm package there"):
        bytecodes_main(["--phase", "first_pass", "--against", str(tmp_path / "nothing")])


def test_the_collector_passes_are_counted_between_two_moments() -> None:
    """What `scale` says of the collector before the median first text: the passes
    inside the window by generation, none made after it."""
    collector = _CollectorPasses()
    try:
        start = time.perf_counter()
        gc.collect(0)
        gc.collect(2)
        end = time.perf_counter()
        gc.collect(1)  # after the window
        passes = collector.between(start, end)
        assert (passes["gen0"], passes["gen1"], passes["gen2"]) == (1, 0, 1)
        assert 0 < passes["seconds"] <= end - start
        assert collector.between(end, time.perf_counter())["gen1"] == 1
    finally:
        gc.callbacks.remove(collector._seen)
