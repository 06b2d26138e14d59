"""Users' type checkers see rxllm's types: `py.typed` is installed with the package,
and piping events through the helper operators keeps their types.

A user's file is checked by mypy --strict in a subprocess against rxllm as setuptools
installs it (built from pyproject's package data into a bare virtualenv's
site-packages, with the shared dependencies reachable through a .pth file)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_CODE = """
from reactivex import Observable

import rxllm
from rxllm.operators import dedupe_overlap, of_type, speaker_guard, texts, tool_requests


def app(p: rxllm.Provider) -> None:
    req = rxllm.ChatRequest(
        model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.2
    )
    events: Observable[rxllm.Event] = p.stream(req)
    words: Observable[str] = events.pipe(texts())
    calls: Observable[rxllm.ToolRequest] = events.pipe(tool_requests())
    usage: Observable[rxllm.UsageUpdate] = events.pipe(of_type(rxllm.UsageUpdate))
    guarded = events.pipe(speaker_guard(), dedupe_overlap())
    guarded_words = events.pipe(speaker_guard(), dedupe_overlap(), texts())
    wrong: Observable[rxllm.TextDelta] = events.pipe(texts())  # type: ignore[arg-type]
    calls.subscribe(lambda call: print(call.name, call.arguments["city"]))
    usage.subscribe(lambda update: print(update.usage.input_tokens + 1))
    words.subscribe(lambda text: print(text.upper()))
    reveal_type(guarded)
    reveal_type(guarded_words)


async def record(p: rxllm.Provider, req: rxllm.ChatRequest) -> str:
    try:
        return (await p.complete(req)).raise_for_error().text
    except rxllm.RateLimitError as error:
        return str(error.info.retry_after)
"""


COMPOSED_CODE = """
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

import rxllm
from rxllm.operators import (
    cancel_on,
    cap_events,
    deadlines,
    dedupe_overlap,
    of_type,
    settle_once,
    speaker_guard,
    texts,
    tool_requests,
)


def app(events: Observable[rxllm.Event], stop: Subject[None]) -> None:
    patient: Observable[rxllm.Event] = events.pipe(ops.timeout(600.0))
    bounded: Observable[rxllm.Event] = patient.pipe(
        cap_events(1000),
        cancel_on(stop, "openai"),
        deadlines(idle=30.0, total=120.0),
        settle_once("openai"),
        speaker_guard(["Bob"]),
        dedupe_overlap(),
        ops.share(),
    )
    first_words: Observable[list[str]] = bounded.pipe(
        texts(), ops.take(30), ops.buffer_with_count(3)
    )
    calls: Observable[rxllm.ToolRequest] = bounded.pipe(ops.take_until(stop), tool_requests())
    usage = bounded.pipe(of_type(rxllm.UsageUpdate), ops.publish())
    timed = bounded.pipe(deadlines(first_event=5.0), texts())
    reveal_type(usage)
    reveal_type(timed)
    wrong: Observable[str] = events.pipe(cap_events(10))  # type: ignore[arg-type]
    cap_events("10")  # type: ignore[arg-type]
    deadlines(idle="5")  # type: ignore[arg-type]
    calls.subscribe(lambda call: print(call.name, call.arguments))
    first_words.subscribe(lambda words: print(" ".join(words)))
    usage.subscribe(lambda update: print(update.usage.input_tokens + 1))
    print(wrong)
"""
"""rxllm's operators composed with RxPY's, before and after them, as a user types it:
every factory is `Callable[[Observable[A]], Observable[B]]`, so `pipe` infers each
step's type."""


def installed(site: Path) -> None:
    """rxllm's files as setuptools installs them (package data included), into `site`."""
    build = site.parent / "build"
    subprocess.run(
        [
            *(sys.executable, "-c", "import setuptools; setuptools.setup()", "-q"),
            *("egg_info", "--egg-base", str(site.parent)),
            *("build_py", "--build-lib", str(build)),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    shutil.copytree(build / "rxllm", site / "rxllm")


@pytest.fixture(scope="module")
def user_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare virtualenv whose site-packages holds the installed rxllm and reaches the
    test environment's dependencies (reactivex, pydantic, ...) through a .pth file."""
    home = tmp_path_factory.mktemp("user")
    venv.create(home / "venv", with_pip=False)
    python = home / "venv" / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    installed(site)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def mypy(python: Path, code: str, tmp_path: Path) -> str:
    user = tmp_path / "app.py"
    user.write_text(textwrap.dedent(code))
    run = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--no-incremental"),
            *("--python-executable", str(python), str(user)),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    return run.stdout + run.stderr


def test_the_installed_package_has_its_marker(user_python: Path) -> None:
    site = subprocess.check_output(
        [user_python, "-c", "import rxllm; print(rxllm.__file__)"], text=True
    )
    assert (Path(site.strip()).parent / "py.typed").is_file()


def test_users_type_check_against_rxllm_and_keep_event_types(
    user_python: Path, tmp_path: Path
) -> None:
    out = mypy(user_python, USER_CODE, tmp_path)
    assert "missing library stubs or py.typed marker" not in out
    # No error: strict mode would also report the `type: ignore` of the wrong use
    # above as unused if texts() had not been caught returning strings.
    assert "error:" not in out, out
    guarded, guarded_words = (line for line in out.splitlines() if "Revealed type" in line)
    assert "Observable[rxllm.events.TextDelta | rxllm.events.ReasoningDelta" in guarded
    assert guarded.endswith('rxllm.events.Cancelled]"')  # every event kind, still
    assert guarded_words.endswith('Observable[str]"')


def test_rxllm_and_rxpy_operators_compose_with_their_types(
    user_python: Path, tmp_path: Path
) -> None:
    """(RxPY's own `ops.timeout()` inside a longer `pipe` is a case mypy cannot infer,
    with or without rxllm: it is piped alone here.)"""
    out = mypy(user_python, COMPOSED_CODE, tmp_path)
    # No error: strict mode also reports each `type: ignore` above as unused if the
    # wrong use it marks had type-checked.
    assert "error:" not in out, out
    usage, timed = (line for line in out.splitlines() if "Revealed type" in line)
    assert usage.endswith('ConnectableObservable[rxllm.events.UsageUpdate]"')
    assert timed.endswith('Observable[str]"')
