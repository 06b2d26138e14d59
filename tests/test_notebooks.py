"""Every notebook in notebooks/ runs top to bottom in a fresh kernel of this interpreter."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient
from nbformat import NotebookNode

from tests.support import HAVE_CAPTURES, NO_CAPTURES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Notebooks that replay the real captures; the others talk to the local provider only.
NEEDS_CAPTURES = {"explore_streams.ipynb"}

# Seconds a single cell may take: the slowest streams two paced turns (about 1 s each).
CELL_TIMEOUT = 60
KERNEL = "rxllm-tests"

Run = Callable[[Path], NotebookNode]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Run a notebook once per test module and keep the executed copy. A notebook that
    replays the real captures is not run without them."""
    cache: dict[Path, NotebookNode] = {}

    def run(path: Path) -> NotebookNode:
        if path.name in NEEDS_CAPTURES and not HAVE_CAPTURES:
            pytest.skip(NO_CAPTURES)
        if path not in cache:
            cache[path] = _execute(path, tmp_path_factory.mktemp(path.stem))
        return cache[path]

    yield run


def _execute(path: Path, scratch: Path) -> NotebookNode:
    """Execute `path` in its own folder, in a kernel of `sys.executable`.

    A kernel spec with ipykernel's own argv for the running interpreter is written to
    `scratch` and found first (`JUPYTER_PATH`), so whatever `python3` kernel a
    developer has installed, the notebook runs against this checkout's environment,
    and in CI `pip install -e '.[dev]'` is all it needs. Jupyter's and IPython's state
    folders point at `scratch` too: nothing is written under the home directory.
    """
    notebook = _read(path)
    _run(notebook, path.parent, scratch)
    return notebook


def _run(notebook: NotebookNode, folder: Path, scratch: Path) -> None:
    """Execute `notebook` in place, in `folder` (see `_execute`)."""
    write_kernel_spec(scratch / "kernels" / KERNEL)
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(folder)}},
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUPYTER_PATH", str(scratch))
        env.setenv("JUPYTER_RUNTIME_DIR", str(scratch / "runtime"))
        env.setenv("JUPYTER_PLATFORM_DIRS", "1")
        env.setenv("IPYTHONDIR", str(scratch / "ipython"))
        env.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # debugpy's frozen-modules notice
        env.setenv("PYTHONPATH", str(ROOT))  # this checkout's rxllm, whatever is installed
        env.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        began = time.perf_counter()
        client.execute()  # starts the kernel, runs every cell, shuts the kernel down
        print(f"{folder.name} ran in {time.perf_counter() - began:.1f} s")


def _read(path: Path) -> NotebookNode:
    return cast(NotebookNode, nbformat.read(path, as_version=4))  # type: ignore[no-untyped-call]


def tagged(notebook: NotebookNode, tag: str) -> NotebookNode:
    cells = [c for c in notebook.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    return cells[0]


def rich(notebook: NotebookNode, tag: str, mime: str) -> list[str]:
    """What a tagged cell displayed as `mime` (image/png, text/html)."""
    return [
        out.data[mime]
        for out in tagged(notebook, tag).get("outputs", [])
        if out.output_type in ("execute_result", "display_data") and mime in out.data
    ]


def outputs(notebook: NotebookNode, tag: str) -> str:
    """The text a tagged cell printed or displayed (stderr left out)."""
    text = []
    for output in tagged(notebook, tag).get("outputs", []):
        if output.output_type == "stream" and output.name == "stdout":
            text.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            text.append(output.data.get("text/plain", ""))
    return "".join(text)


def test_a_fresh_kernel_shows_event_tables_and_timelines_as_they_are(tmp_path: Path) -> None:
    """Run in a fresh kernel, without `%matplotlib inline`, a timeline showed as
    `<Figure size 1000x300 with 1 Axes>` and `events_html(...)` as its quoted source (a
    review of the composable surface, with nbclient): each shows itself now."""
    setup = (
        "from rxllm import viz\n"
        "from rxllm.display import events_html\n"
        "from rxllm.events import Done, TextDelta\n"
        "events = [TextDelta(provider='p', text='hi'), Done(provider='p', stop_reason='stop')]"
    )
    cells = [("setup", setup), ("table", "events_html(events)"), ("plot", "viz.timeline(events)")]
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    for tag, source in cells:
        notebook.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": [tag]}))  # type: ignore[no-untyped-call]
    _run(notebook, tmp_path, tmp_path / "scratch")
    (table,) = rich(notebook, "table", "text/html")
    assert table.startswith("<table") and "hi" in table
    (png,) = rich(notebook, "plot", "image/png")
    assert base64.b64decode(png).startswith(b"\x89PNG")


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_notebooks_have_no_outputs(path: Path) -> None:
    notebook = _read(path)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_errors(path: Path, executed: Run) -> None:
    notebook = executed(path)  # a failing cell raises CellExecutionError with its traceback
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert all(out.output_type != "error" for out in cell.outputs)


EXPLORE = ROOT / "notebooks" / "explore_streams.ipynb"


@pytest.fixture(scope="module")
def explore(executed: Run) -> NotebookNode:
    return executed(EXPLORE)


def test_the_captures_are_found_beside_the_project(explore: NotebookNode) -> None:
    assert "recordings in" in outputs(explore, "setup")
    assert outputs(explore, "setup").split()[0] != "0"


def test_the_event_table_shows_the_normalized_tool_calls(explore: NotebookNode) -> None:
    lines = outputs(explore, "event-table").splitlines()
    assert lines[0].split() == ["#", "type", "provider", "attempt", "detail"]
    types = [line.split()[1] for line in lines[2:]]
    assert types.count("tool_request") == 2
    assert types[-1] == "done"
    assert "tool_use" in lines[-1]


def test_the_summary_folds_each_recording(explore: NotebookNode) -> None:
    rows = {line.split()[0]: line for line in outputs(explore, "replay-summary").splitlines()}
    assert rows["openai/chat_text_usage.sse"].endswith("done (stop)")
    assert rows["openai/chat_finish_length.sse"].endswith("done (length)")
    assert "GetWeatherArgs" in rows["openai/chat_single_tool_call.sse"]


def test_chunking_does_not_change_the_events(explore: NotebookNode) -> None:
    lines = outputs(explore, "rechunk").splitlines()
    assert len(lines) == 3 and all(line.endswith("True") for line in lines)


def test_the_local_turn_completes(explore: NotebookNode) -> None:
    text = outputs(explore, "local-complete")
    assert text.startswith("Hello from rxllm's local provider!")
    assert "terminal: done (stop)" in text


def test_the_live_stream_ends_with_done_after_a_tool_request(explore: NotebookNode) -> None:
    lines = outputs(explore, "local-astream").splitlines()
    assert lines[-1] == "final event: done"
    types = [line.split()[2] for line in lines[:-1]]
    assert types[-1] == "done"
    assert "tool_request" in types and "text" in types


def test_a_user_operator_composes_with_pipe(explore: NotebookNode) -> None:
    assert outputs(explore, "pipe").split()[1:3] == ["words:", "Hello"]


def test_the_guards_cut_what_they_should(explore: NotebookNode) -> None:
    text = outputs(explore, "guards")
    assert "dedupe_overlap: ['The forecast says ', 'rain at noon.']" in text
    assert "speaker_guard:  ['Rain at noon.']" in text
    assert "User: hi" in text  # inside a code fence: kept


def test_a_rejected_parameter_is_dropped_and_the_turn_recovers(explore: NotebookNode) -> None:
    lines = outputs(explore, "recovery").splitlines()
    assert lines[0].startswith("retry: \"HTTP 400: Unsupported parameter: 'temperature'")
    assert lines[0].endswith("-> attempt 2 without ['temperature']")
    assert lines[1] == "attempt 1 on local: status 400, dropped [], committed False"
    assert lines[2] == "attempt 2 on local: status None, dropped ['temperature'], committed True"
    assert lines[3].startswith("terminal: done, text: Hello from rxllm")


def test_an_image_rejection_recovers(explore: NotebookNode) -> None:
    assert outputs(explore, "recovery-images").strip() == "images removed: 1, terminal: done"


def test_fallback_moves_on_before_commitment(explore: NotebookNode) -> None:
    lines = outputs(explore, "fallback").splitlines()
    assert lines == ["custom (attempt 1) -> local (attempt 2)", "answered by local: done"]


def _notebook(name: str) -> Callable[[Run], NotebookNode]:
    @pytest.fixture(scope="module")
    def fixture(executed: Run) -> NotebookNode:
        return executed(ROOT / "notebooks" / name)

    return fixture


first = _notebook("01_first_stream.ipynb")
side_by_side = _notebook("02_providers_side_by_side.ipynb")
recovery = _notebook("03_recovery.ipynb")
custom = _notebook("04_custom_operators.ipynb")


def test_first_stream_completes_streams_and_calls_a_tool(first: NotebookNode) -> None:
    complete = outputs(first, "complete")
    assert complete.startswith("Hello from rxllm's local provider!")
    assert "terminal: done stop" in complete
    assert ">done</span>" in rich(first, "complete", "text/html")[0]  # the record's own HTML
    counts = outputs(first, "astream").splitlines()[-1]
    assert counts.startswith("{'reasoning':") and "'done': 1" in counts
    assert outputs(first, "tool").startswith("get_weather({'city': 'Paris'")
    assert ">tool_request</span>" in rich(first, "tool", "text/html")[0]
    assert outputs(first, "observable").split()[1:4] == ["words,", "first:", "Hello"]


def test_every_wire_gives_the_same_normalized_turn(side_by_side: NotebookNode) -> None:
    lines = outputs(side_by_side, "table").splitlines()
    assert lines[0].split() == [
        "wire",
        "text",
        "reasoning",
        "tool",
        "request",
        "tokens",
        "terminal",
    ]
    rows = [line.split("  ", 1) for line in lines[1:]]
    assert [name for name, _ in rows] == ["openai", "openai-responses", "anthropic", "google"]
    assert len({rest.strip() for _, rest in rows}) == 1  # identical after the wire's name
    assert "get_weather({'city': 'Paris'" in lines[1] and "done (tool_use)" in lines[1]
    assert outputs(side_by_side, "shape").startswith("same shape on every wire: True")


def test_recovery_timelines(recovery: NotebookNode) -> None:
    for tag in ("param", "images", "committed", "deadline"):
        assert len(rich(recovery, tag, "image/png")) == 1, tag
    assert outputs(recovery, "param").splitlines()[:2] == [
        "retry: attempt 1 -> 2, dropped ['temperature'], images removed 0",
        "terminal: done",
    ]
    assert outputs(recovery, "images").splitlines()[:2] == [
        "retry: attempt 1 -> 2, dropped [], images removed 1",
        "terminal: done",
    ]
    committed = outputs(recovery, "committed").splitlines()
    assert committed[0] == "terminal: error" and committed[1].startswith("stream_error - ")
    assert outputs(recovery, "deadline").startswith("idle_timeout expired")
    assert outputs(recovery, "record").splitlines()[:2] == [
        "attempt 1: status 400, dropped [], committed False",
        "attempt 2: status None, dropped ['temperature'], committed True",
    ]


def test_custom_operators_pass_their_marble_tests_and_run_live(custom: NotebookNode) -> None:
    assert outputs(custom, "marbles-sentences").strip() == "sentences(): marble test passed"
    assert outputs(custom, "marbles-cost").strip() == "cost_meter(): marble test passed"
    lines = outputs(custom, "live").splitlines()
    assert lines[0] == "say: Hello from rxllm's local provider!"
    assert len(lines) >= 3 and all(line.startswith("say: ") for line in lines[:-1])
    assert lines[-1].startswith("cost: $0.0")
