"""Every Python example in README.md and docs/*.md runs as written (docs/serving.md is
tested by tests/serving/).

How the ```python blocks run, one test per block:

- The blocks of a page run in order in one namespace, as a reader pastes them one
  after the other. A block with top-level `await` runs inside an event loop, as in a
  notebook or `python -m asyncio`, and the tasks it leaves running (a
  `.subscribe(print)`) must end without error; a block without runs as a script does,
  with no loop running (so `asyncio.run(main())` works). The `async def test_*`
  functions a block defines are awaited too (given `rxllm_scripted` as the pytest
  fixture gives it). A block that raises fails its test, and the page stops there.
- All pages run in one fresh interpreter (a subprocess: nothing a page sets, such as
  OpenTelemetry's global providers, reaches the other tests), each page in a working
  directory of its own that holds `turn.sse`, written by `rxllm stream "hi" --raw
  turn.sse` as the docs show, beside `../shared` (the captures, when they are here).
- `rxllm.provider(name)` with no `base_url` plays the embedded local provider in that
  provider's wire (its OpenAI chat, Responses, Anthropic and Gemini endpoints), with a
  placeholder key: "openai" or "groq" run without a key or a network. The local
  provider streams without pauses here.

The one marker, an HTML comment on the line before a block, for a fragment that cannot
run (a signature, a name the reader supplies): `<!-- not-run: why -->`. Such a block is
only compiled. A block that names `shared/captures` is skipped, with the reason every
captures test gives, when they are not beside the project.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.support import CAPTURES, HAVE_CAPTURES, NO_CAPTURES, REJECTIONS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted(page for page in (ROOT / "docs").glob("*.md") if page.name != "serving.md"),
]
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.*?)\s*-->")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
TOP_LEVEL_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

# Seconds: one block (the slowest, telemetry's, takes well under one), and the whole run.
BLOCK_TIMEOUT = 30
RUN_TIMEOUT = 180
# How many lines of the examples' printed output a failure shows.
OUTPUT_TAIL = 40


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its source, and its not-run reason if marked."""

    page: str
    line: int
    source: str
    not_run: str | None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def needs_captures(self) -> bool:
        return "shared/captures" in self.source


def python_blocks(path: Path) -> list[Block]:
    """The page's ```python blocks, each with the line its code starts on."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    previous = ""  # the last non-blank line before the current one
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if opening is None:
            if lines[number].strip():
                previous = lines[number]
            number += 1
            continue
        fence, info = opening.groups()
        start = number + 1
        end = start
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if info == "python":
            marker = NOT_RUN.search(previous)
            source = "\n".join(lines[start:end]) + "\n"
            blocks.append(Block(page, start + 1, source, marker.group(1) if marker else None))
        previous = ""
        number = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in python_blocks(page)]


@pytest.fixture(scope="module")
def failures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    """Run every runnable block once, in one subprocess; each block's failure or None.
    A block the run did not reach has a failure that says why."""
    runnable = [
        block
        for block in BLOCKS
        if block.not_run is None and (HAVE_CAPTURES or not block.needs_captures)
    ]
    scratch = tmp_path_factory.mktemp("doc_examples")
    shared = scratch / "shared"  # `../shared` from each page's working directory
    shared.mkdir()
    for folder in (CAPTURES, REJECTIONS):
        if folder.is_dir():
            (shared / folder.name).symlink_to(folder, target_is_directory=True)
    results = scratch / "results.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "MPLBACKEND": "Agg",
        "NO_COLOR": "1",
    }
    blocks = [asdict(block) for block in runnable]
    payload = json.dumps({"scratch": str(scratch), "results": str(results), "blocks": blocks})
    try:
        run = subprocess.run(
            [sys.executable, "-m", "tests.test_doc_examples"],
            input=payload,
            capture_output=True,
            text=True,
            cwd=scratch,
            env=env,
            timeout=RUN_TIMEOUT,
        )
        output, ended = run.stdout + run.stderr, f"the run exited with status {run.returncode}"
    except subprocess.TimeoutExpired as expired:
        output = _text(expired.stdout) + _text(expired.stderr)
        ended = f"the run took more than {RUN_TIMEOUT} s"
    found: dict[str, str | None] = json.loads(results.read_text()) if results.exists() else {}
    tail = "\n".join(output.splitlines()[-OUTPUT_TAIL:])
    for block in runnable:
        if block.name not in found:
            found[block.name] = f"not reached: {ended}\n--- output ---\n{tail}"
    return found


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_example_runs(block: Block, failures: dict[str, str | None]) -> None:
    compile(block.source, block.name, "exec", flags=TOP_LEVEL_AWAIT)  # a fragment too
    if block.not_run is not None:
        pytest.skip(f"not-run: {block.not_run}")
    if block.needs_captures and not HAVE_CAPTURES:
        pytest.skip(NO_CAPTURES)
    failure = failures[block.name]
    if failure is not None:
        pytest.fail(f"{block.name} failed:\n{failure}", pytrace=False)


def test_every_page_is_read() -> None:
    """The parser finds the blocks (a fence it misread would hide every example)."""
    pages = {block.page for block in BLOCKS}
    assert {"README.md", "docs/index.md", "docs/testing.md"} <= pages
    assert all(block.source.strip() for block in BLOCKS)


# --- the subprocess: runs the blocks, page by page -------------------------------------


def _child() -> None:
    """Started in the scratch folder with the job on stdin; writes each block's failure
    (a traceback) or None to the results file as it goes."""
    job = json.load(sys.stdin)
    scratch, results_path = Path(job["scratch"]), Path(job["results"])
    _stand_in_providers()
    from rxllm.cli import main as rxllm_cli

    if rxllm_cli(["stream", "hi", "--raw", "turn.sse"]) != 0:
        raise SystemExit("rxllm stream --raw turn.sse failed")
    signal.signal(signal.SIGALRM, _timed_out)
    results: dict[str, str | None] = {}
    pages: dict[str, list[dict[str, Any]]] = {}
    for block in job["blocks"]:
        pages.setdefault(block["page"], []).append(block)
    for page, blocks in pages.items():
        workdir = scratch / Path(page).stem
        workdir.mkdir()
        shutil.copy(scratch / "turn.sse", workdir)
        os.chdir(workdir)
        _run_page(page, blocks, results, results_path)
        sys.stdout.flush()


def _run_page(
    page: str, blocks: list[dict[str, Any]], results: dict[str, str | None], path: Path
) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    loop = asyncio.new_event_loop()
    try:
        for block in blocks:
            name = f"{page}:{block['line']}"
            print(f"--- {name}", flush=True)
            signal.alarm(BLOCK_TIMEOUT)
            try:
                _run_block(block["source"], name, namespace, loop)
                results[name] = None
            except BaseException:
                results[name] = traceback.format_exc()
            finally:
                signal.alarm(0)
            path.write_text(json.dumps(results))
            if results[name] is not None:
                break  # the next blocks read what this one defines
    finally:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _run_block(
    source: str, name: str, namespace: dict[str, Any], loop: asyncio.AbstractEventLoop
) -> None:
    code = compile(source, name, "exec", flags=TOP_LEVEL_AWAIT)
    before = set(namespace)
    if code.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(_awaited(eval(code, namespace)))
    else:
        exec(code, namespace)
    for defined in [key for key in namespace if key not in before]:
        test = namespace[defined]
        if defined.startswith("test_") and inspect.iscoroutinefunction(test):
            loop.run_until_complete(_run_test(test))
        elif defined.startswith("test_") and callable(test):
            test()
    loop.run_until_complete(_settle())


async def _awaited(result: Awaitable[Any]) -> None:
    await result


async def _settle() -> None:
    """Wait for the tasks a block left running (a subscription printing as text comes)."""
    current = asyncio.current_task()
    while pending := {task for task in asyncio.all_tasks() if task is not current}:
        done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error


async def _run_test(test: Callable[..., Awaitable[None]]) -> None:
    fixtures = {"rxllm_scripted": _rxllm_scripted}
    wanted = list(inspect.signature(test).parameters)
    unknown = [name for name in wanted if name not in fixtures]
    if unknown:
        raise TypeError(f"{test.__name__} asks for fixtures this test has not: {unknown}")
    async with contextlib.AsyncExitStack() as stack:
        given = {name: await stack.enter_async_context(fixtures[name]()) for name in wanted}
        await test(**given)


@contextlib.asynccontextmanager
async def _rxllm_scripted() -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    """What the `rxllm_scripted` fixture (rxllm.testing.pytest_plugin) gives a test."""
    from rxllm.testing import Scripted, scripted

    started: list[Scripted] = []

    async def start(*turns: Any, **options: Any) -> Scripted:
        llm = await scripted(*turns, **options).start()
        started.append(llm)
        return llm

    try:
        yield start
    finally:
        for llm in started:
            await llm.close()


def _stand_in_providers() -> None:
    """`rxllm.provider(name)` without a base_url talks to the local provider, in the
    wire of `name`, with a placeholder key (never one from the environment)."""
    from aiohttp import ClientSession

    import rxllm
    from rxllm.local.server import shared_server_url
    from rxllm.pipeline.provider import Provider, provider

    url = shared_server_url(pace=0)  # first: the server every block shares

    def stand_in(
        name: str,
        api_key: str | None = None,
        base_url: str | None = None,
        session: ClientSession | None = None,
        **options: Any,
    ) -> Provider:
        if name != "local" and base_url is None:
            base_url = url.removesuffix("/v1") + "/v1beta" if name == "google" else url
            api_key = api_key or "doc-example-key"
        return provider(name, api_key, base_url, session, **options)

    rxllm.provider = stand_in


def _timed_out(signum: int, frame: FrameType | None) -> None:
    raise TimeoutError(f"the block ran for more than {BLOCK_TIMEOUT} s")


if __name__ == "__main__":
    _child()
