"""`rxllm stream|replay|serve|bench`: the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any, TextIO

from aiohttp import web
from pydantic import ValidationError
from yarl import URL

import rxllm
from rxllm.display import visible
from rxllm.errors import RxllmError
from rxllm.events import (
    IS_TERMINAL,
    Cancelled,
    Citation,
    Done,
    Event,
    Failed,
    ReasoningDelta,
    Refusal,
    Retry,
    ServerToolCall,
    ServerToolResult,
    StreamRecord,
    TextDelta,
    ToolRequest,
    ToolStart,
    UsageUpdate,
)
from rxllm.fragments import is_high_half
from rxllm.pipeline.record import RecordBuilder
from rxllm.pipeline.sniff import MAX_BYTES, sniff_not_a_stream, sniff_provider
from rxllm.providers import PROVIDER_NAMES, wire_for
from rxllm.request import ImagePart, forces_a_call, is_image_url, schema_name
from rxllm.secrets import RedactedLines, redact
from rxllm.serving.event_json import dump_event
from rxllm.sources.http import raw_tap
from rxllm.sources.replay import read_recording, retry_marker

__all__ = ["main"]

EXAMPLES = """\
examples:
  rxllm stream "What's the weather in Paris?"           the local provider, no key needed
  rxllm stream --provider openai --api-key sk-... "hi"   or set OPENAI_API_KEY
  rxllm stream --json "hi" | head -3                     one event per line, as JSON
  rxllm stream --model fault/reject_param --param temperature=0.2 --no-tools "hi"
                                                         a rejected parameter, recovered
  rxllm stream --tool-choice none "What's the weather in Paris?"
                                                         an answer in text, no tool call
  rxllm stream --provider google --json-schema weather.json --no-tools "Paris today?"
                                                         an answer following the schema
  rxllm stream "hi" --record turn.json --raw turn.sse --plot turn.png
                                                         keep the record, the wire bytes, a plot
  rxllm replay turn.sse --plot replay.png                the events of recorded wire bytes
  rxllm serve --port 8765                                the local provider, for any client
  rxllm bench -- --scenario text                         the benchmarks, with their own options

Colors show when printing to a terminal; NO_COLOR=1 turns them off.
"""

# ANSI styles by event type; the text itself stays the terminal's own color.
STYLES = {
    "reasoning": "\033[2m",  # dim
    "tool_start": "\033[36m",  # cyan
    "tool_request": "\033[1;36m",
    "server_tool_call": "\033[34m",
    "server_tool_result": "\033[34m",
    "citation": "\033[34m",
    "usage": "\033[2m",
    "refusal": "\033[35m",
    "retry": "\033[33m",  # yellow
    "done": "\033[32m",  # green
    "error": "\033[1;31m",  # bold red
    "cancelled": "\033[33m",
}
RESET = "\033[0m"


def wants_color(out: IO[str]) -> bool:
    """Color only for a person at a terminal, and never when NO_COLOR is set
    (https://no-color.org: any non-empty value)."""
    return out.isatty() and not os.environ.get("NO_COLOR")


DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "local": "rxllm-local"}
# Why a turn ended when the reader of its output left (`| head`).
OUTPUT_CLOSED = "the output was closed (its reader left)"
# The local fault that redirects to http://10.0.0.1, a real address on many networks:
# the CLI plays it only with the SSRF guard on, the local server's loopback allowed.
PRIVATE_REDIRECT_FAULT = "redirect_private"
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")
DEMO_TOOL = rxllm.Tool(
    name="get_weather",
    description="Current weather and a short forecast for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
    },
)


_LONE_CR = re.compile(r"\r(?!\n)")


def terminal_text(text: str) -> str:
    """`text` as a terminal may print it: `rxllm.display.visible`, and a carriage return
    that ends no line shown as `\\r`, since a terminal obeys it by going back to the
    line's start, and what follows prints over (hides) what came before."""
    return _LONE_CR.sub(r"\\r", visible(text))


class Printer:
    """Prints events as a person reads them: text live, the rest on lines of their own.

    What a provider wrote (text, names, ids, messages) is untrusted: its control and
    format characters (terminal escapes, bidirectional overrides, a lone carriage
    return) are printed as their escapes (`terminal_text`), so a stream cannot drive
    the terminal."""

    def __init__(self, out: TextIO, as_json: bool, color: bool = False) -> None:
        self.out = out
        self.as_json = as_json
        self.color = color and not as_json
        self.mid_line = False
        self.live: str | None = None  # the kind of live text being printed (text, ...)
        self.style = ""
        # the end of a delta that the next one completes: a UTF-16 high surrogate (its
        # pair), or a carriage return (the \n of a line end)
        self.held = ""

    def __call__(self, event: Event) -> None:
        if self.as_json:  # a lone surrogate as its JSON escape: model_dump_json refuses it
            self.out.write(dump_event(event) + "\n")
            self.out.flush()
            return
        if isinstance(event, TextDelta | ReasoningDelta | Refusal):
            if event.type != self.live:  # text runs on; reasoning and refusal are marked
                self._newline()
                self._paint("" if event.type == "text" else event.type)
                self.out.write("" if event.type == "text" else f"[{event.type}] ")
                self.live = event.type
            redacted = isinstance(event, ReasoningDelta) and event.redacted
            self.out.write("(redacted)" if redacted else self._printable(event.text))
            self.mid_line = True
            self.out.flush()
            return
        self._newline()
        self._paint(event.type)
        if isinstance(event, ToolStart):
            self._line(f"[tool_start] {event.name} (call {event.call_id})")
        elif isinstance(event, ToolRequest):
            self._line(f"[tool_request] {event.name}({event.arguments}) call {event.call_id}")
        elif isinstance(event, UsageUpdate):
            u = event.usage
            self._line(
                f"[usage] input {u.input_tokens}, output {u.output_tokens} "
                f"(reasoning {u.reasoning_tokens}), cache read {u.cache_read_tokens}, "
                f"total {u.total_tokens}"
            )
        elif isinstance(event, Citation):
            self._line(f"[citation] {event.title or ''} {event.url}".replace("  ", " "))
        elif isinstance(event, ServerToolCall):
            self._line(f"[server_tool_call] {event.name}({event.arguments}) call {event.call_id}")
        elif isinstance(event, ServerToolResult):
            failed = " failed" if event.is_error else ""
            self._line(f"[server_tool_result] {event.name} call {event.call_id}{failed}")
        elif isinstance(event, Retry):
            self._line(f"[retry] {describe_retry(event)}")
        elif isinstance(event, Done):
            self._line(f"[done] {event.stop_reason} (raw {event.raw_stop_reason})")
        elif isinstance(event, Failed):
            self._line(f"[error] {event.error.kind}: {event.error.message}")
        elif isinstance(event, Cancelled):
            self._line(f"[cancelled] {event.reason}")
        self._paint("")
        self.out.flush()

    def _paint(self, kind: str) -> None:
        style = STYLES.get(kind, "")
        if self.color and style != self.style:
            self.out.write(RESET + style if self.style else style)
            self.style = style

    def _printable(self, text: str) -> str:
        """`text` as a terminal can take it: a provider's UTF-16 pair split across two
        deltas joined, a half never paired replaced by U+FFFD (stdout refuses both),
        a `\\r\\n` split likewise kept a line end, control characters shown as escapes."""
        text, self.held = self.held + text, ""
        if text and (is_high_half(text[-1]) or text[-1] == "\r"):
            text, self.held = text[:-1], text[-1]
        return terminal_text(text)

    def _newline(self) -> None:
        if self.held:  # the live text ended on half a pair, or on a lone \r
            self.out.write(terminal_text(self.held))
            self.held = ""
        if self.mid_line:
            self.out.write("\n")
            self.mid_line = False

    def _line(self, text: str) -> None:
        self._newline()
        self.live = None
        self.out.write(terminal_text(text) + "\n")


def describe_retry(event: Retry) -> str:
    """One line on a retry: what was refused, and what the next attempt changes."""
    changes = [f"without {', '.join(event.dropped)}"] if event.dropped else []
    if event.images_removed:
        changes.append(f"{event.images_removed} image(s) replaced by a notice")
    if event.delay:
        changes.append(f"after {round(event.delay, 2):g} s")
    if event.next_provider != event.provider:
        changes.append(f"on {event.next_provider}")
    return (
        f"attempt {event.attempt} on {event.provider} failed before any output "
        f"({event.reason.message}); attempt {event.next_attempt}"
        + (f": {'; '.join(changes)}" if changes else ": the same request")
    )


def _utf8(text: str) -> str:
    """An argument as text. Bytes that are not UTF-8 reach Python as lone surrogates,
    which no request body can carry: refused here, not by the JSON encoder mid-turn."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown: object = text
        with contextlib.suppress(UnicodeEncodeError):  # the bytes as given, b'hi \xff'
            shown = text.encode("utf-8", "surrogateescape")
        raise argparse.ArgumentTypeError(f"not UTF-8 text: {shown!r}") from None
    return text


def _model(text: str) -> str:
    """--model NAME. An empty one (`--model "$MODEL"` with MODEL unset) is refused: read
    as no --model, it sent the default model, one the user never chose (and may pay for)."""
    if not _utf8(text).strip():
        raise argparse.ArgumentTypeError(f"expected a model name, got {text!r}")
    return text


def _api_key(text: str) -> str:
    """--api-key KEY. An empty one (`--api-key "$KEY"` with KEY unset) is refused: read
    as no --api-key, it sent the env var's key, or none, which the user did not give."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a key, got {text!r}: leave --api-key out to use the provider's env var"
        )
    return text


def _tool_choice(text: str) -> str:
    """--tool-choice CHOICE. An empty one (`--tool-choice "$CHOICE"` with CHOICE unset)
    is refused: read as a tool's name, it was said to be no tool offered."""
    if not _utf8(text).strip():
        raise argparse.ArgumentTypeError(
            f"expected auto, required, none or a tool's name, got {text!r}"
        )
    return text


def _param(text: str) -> tuple[str, object]:
    key, sep, value = _utf8(text).partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")

    def number(literal: str) -> float:
        if not math.isfinite(parsed := float(literal)):  # 1e999, NaN, Infinity
            raise argparse.ArgumentTypeError(
                f"{key}={value}: JSON cannot carry {literal} (quoted, it is a string)"
            )
        return parsed

    try:
        return key, json.loads(value, parse_float=number, parse_constant=number)
    except RecursionError:
        raise argparse.ArgumentTypeError(
            f"{key}=...: the JSON value is nested too deeply"
        ) from None
    except ValueError as exc:
        if value.lstrip().startswith(("{", "[")):  # meant as JSON: not sent as a string
            raise argparse.ArgumentTypeError(
                f"{key}={value[:80]}: not valid JSON ({exc}); "
                f"""for the string, quote it: {key}='"{value[:80]}"'"""
            ) from None
        return key, value  # a bare word is a string


def _base_url(text: str) -> str:
    """--base-url parsed as the transport will parse it, so a typo is said at once,
    not raised from inside the stream."""
    shown = redact(text, ())  # a password or key written into it
    try:
        url = URL(_utf8(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{shown!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// URL with a host, got {shown!r}"
        )
    return text


def _image(text: str) -> str:
    """--image as the wires can send it: a URL as given, an image file read into a
    `data:` URL (a bare path sent as a URL would be refused by the provider, or
    replaced by the image notice of a retry), as `rxllm.ImagePart` reads one."""
    if is_image_url(text):  # https://, data:, gs://
        return text
    if not text.strip():  # `--image "$IMAGE"` with IMAGE unset: Path("") is the directory "."
        raise argparse.ArgumentTypeError(f"expected an image URL or an image file, got {text!r}")
    try:
        return ImagePart(url=Path(text)).url
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise argparse.ArgumentTypeError(
            f"expected an image URL (https://..., data:...) or an image file: {reason}"
        ) from None


# The `type`s of the SDKs' output format dicts that ask for JSON, which
# `ChatRequest.response_format` reads; a file's object of another type is a bare JSON
# Schema (and `{"type": "text"}`, plain text, is refused: the flag asks for JSON).
_FORMAT_TYPES = ("json_object", "json_schema")


def _json_schema(path: str) -> dict[str, Any]:
    """--json-schema FILE: a JSON Schema, named after the file (`weather.json`: weather),
    or a dict as `ChatRequest.response_format` reads it (an SDK's `response_format`, a
    `JsonSchema`'s `name` and `schema`), which the request validates."""
    if not path.strip():  # Path("") is the directory "."
        raise argparse.ArgumentTypeError(f"expected a JSON Schema's file, got {path!r}")
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        if path.lstrip().startswith(("{", "[")):  # the schema itself, written inline
            shown = path if len(path) <= 40 else path[:37] + "..."
            raise argparse.ArgumentTypeError(
                f"takes a FILE's path, and {shown} looks like inline JSON: save the "
                "schema to a file (weather.json names it weather)"
            ) from None
        raise argparse.ArgumentTypeError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{path}: not JSON ({exc})") from None
    if not isinstance(given, dict):
        raise argparse.ArgumentTypeError(f"{path}: a JSON Schema is an object")
    if given.get("type") == "text":
        raise argparse.ArgumentTypeError(
            f"{path}: {{'type': 'text'}} asks for plain text, not JSON: leave --json-schema out"
        )
    if given.get("type") in _FORMAT_TYPES or "schema" in given:
        return given
    return {"name": schema_name(Path(path).stem), "schema": given}


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free one), got {port}")
    return port


def _host(text: str) -> str:
    """serve --host. An empty one (`--host "$HOST"` with HOST unset) is refused: aiohttp
    reads it as every interface, which put the local server on the network."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a host to listen on (127.0.0.1; 0.0.0.0 for every interface), got {text!r}"
        )
    return text


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected seconds (0 or more), got {text!r}")
    return seconds


def summary_outcome(record: StreamRecord) -> str:
    terminal = record.terminal
    if isinstance(terminal, Done):
        return terminal.stop_reason
    return f"error {terminal.error.kind}" if isinstance(terminal, Failed) else "cancelled"


def summary(record: StreamRecord) -> str:
    outcome = summary_outcome(record)
    ttfe = f"{record.time_to_first_event:.2f}s" if record.time_to_first_event else "-"
    tokens = record.usage.total_tokens if record.usage else "?"
    attempts = f"{len(record.attempts)} attempts; " if len(record.attempts) > 1 else ""
    return (
        f"-- {record.provider} ({record.model or record.requested_model}): {outcome}; "
        f"{len(record.text)} chars, {_count(len(record.tool_calls), 'tool call')}, "
        f"{tokens} tokens; "
        f"{attempts}first event {ttfe}, total {record.duration:.2f}s"
    )


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


class UsageError(Exception):
    """A command line that cannot run as given: printed as `rxllm: ...`, exit status 2."""


def _plotter(path: str | None) -> Callable[[Any, str], None] | None:
    """Save a timeline to `path`, or None without --plot; checked before streaming, so
    a missing matplotlib or a format it cannot write is said at once, not after the turn."""
    if path is None:
        return None
    try:
        from rxllm import viz
    except ModuleNotFoundError as exc:  # viz's own message says what to install, if that helps
        raise UsageError(f"--plot: {exc}") from exc
    from matplotlib.backend_bases import FigureCanvasBase  # there: viz imported it

    # The format is the suffix's, PNG without one: said to savefig, which would otherwise
    # add `.png` to a bare name and save where the message below does not say.
    suffix = Path(path).suffix.removeprefix(".").lower() or "png"
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if suffix not in formats:
        raise UsageError(
            f"--plot {path}: matplotlib cannot write .{suffix} files ({', '.join(formats)})"
        )

    def plot(events: Any, title: str) -> None:
        viz.timeline(events, title=title).savefig(path, dpi=100, format=suffix)
        print(f"rxllm: timeline saved to {path}", file=sys.stderr)

    return plot


def _stdout(as_json: bool) -> TextIO:
    """stdout, made ready for events: JSON lines in UTF-8 whatever the locale (RFC 8259
    section 8.1: JSON between systems is UTF-8), and text the terminal's encoding lacks
    written as its escape (`\\xe9`), as Python writes stderr, not raised mid-turn."""
    out = sys.stdout
    if out is None:  # started with its stdout closed (`>&-`): Python sets it to None
        raise UsageError("stdout is closed: nowhere to print the events (>/dev/null discards them)")
    if isinstance(out, io.TextIOWrapper):
        if as_json:
            out.reconfigure(encoding="utf-8")
        else:
            out.reconfigure(errors="backslashreplace")
    return out


def _writable(path: str | None, flag: str) -> None:
    """Say before the turn, not after it (its output spent), that `path` cannot be written."""
    if path is None:
        return
    if not path.strip():  # `--record "$OUT"` with OUT unset: Path("") is the directory "."
        raise UsageError(f"{flag}: expected a file to write, got {path!r}")
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{flag} {path}: is a directory")
    if not target.parent.is_dir():
        raise UsageError(f"{flag} {path}: no directory {str(target.parent)!r}")


@contextlib.contextmanager
def _raw_file(path: str | None, secrets: tuple[str, ...]) -> Iterator[Callable[[Retry], None]]:
    """With --raw, every byte of every streamed body goes to `path` as it arrived, and
    each `retry` event given to the function yielded as a comment line between the
    bodies (`retry_marker`), so that a replay plays the attempts as the turn did.
    Every byte but a credential (`secrets`, or one written into a URL) that a server
    echoed: the file is for a bug report. Each line is written once it has ended, a
    key split between two reads being whole then (`RedactedLines`)."""
    if path is None:
        yield lambda _: None
        return
    with open(path, "wb") as file:
        lines = RedactedLines(secrets)
        reading: tuple[str, int] | None = None  # the body's provider and attempt

        def tap(provider: str, attempt: int, data: bytes) -> None:
            nonlocal reading
            if reading != (provider, attempt):  # another body: the last one has ended
                file.write(lines.flush())
                reading = (provider, attempt)
            file.write(lines.feed(data))

        def mark(retry: Retry) -> None:
            file.write(lines.flush())
            file.write(retry_marker(retry))

        token = raw_tap.set(tap)
        try:
            yield mark
        finally:
            raw_tap.reset(token)
            file.write(lines.flush())


def _check_tool_choice(choice: str | None, tools: bool) -> None:
    """--tool-choice as `ChatRequest.tool_choice` takes it, with the demo tool offered
    (`tools`): a forced choice needs it, and a name can only be its own."""
    if not forces_a_call(choice):
        return
    if not tools:
        raise UsageError(f"--tool-choice {choice}: no tool to call, as --no-tools offers none")
    if choice not in ("required", DEMO_TOOL.name):
        raise UsageError(
            f"--tool-choice {choice}: the tool offered is {DEMO_TOOL.name}; or auto, required, none"
        )


async def _stream(args: argparse.Namespace) -> int:
    name = args.provider
    wire = wire_for(name)
    if not args.prompt.strip() and not args.images:
        raise UsageError("the prompt is empty: pass the text to send")
    if any(key == "model" for key, _ in args.params):
        raise UsageError("--param model=...: the model is set with --model NAME")
    keys = [key for key, _ in args.params]
    if twice := next((key for key in keys if keys.count(key) > 1), None):
        # one would be lost: the request's params hold each key once
        values = ", ".join(json.dumps(value) for key, value in args.params if key == twice)
        raise UsageError(f"--param {twice}=... is given more than once ({values}): give it once")
    _check_tool_choice(args.tool_choice, args.tools)
    env_key = os.environ.get(wire.api_key_env) if wire.api_key_env else None
    api_key = args.api_key or env_key
    if name != "local" and wire.requires_api_key and not api_key:
        if args.base_url:
            env = f" or set {wire.api_key_env}" if wire.api_key_env else ""
            raise UsageError(f"--provider {name} needs an API key: pass --api-key KEY{env}")
        unset = f"{wire.api_key_env} is empty" if env_key == "" else f"no {wire.api_key_env} set"
        print(
            f"({unset}: using the embedded local provider instead of {name})",
            file=sys.stderr,
        )
        name, api_key = "local", None
    if name != "local" and not (args.base_url or wire.default_base_url):
        raise UsageError(f"--provider {name} needs --base-url URL (the endpoint's base URL)")
    if api_key and any(ord(c) < 32 or ord(c) == 127 for c in api_key):  # a pasted line end
        source = "--api-key" if args.api_key else wire.api_key_env
        raise UsageError(f"the API key from {source} holds a line break or control character")
    outputs = {"--record": args.record, "--raw": args.raw, "--plot": args.plot}
    written: dict[Path, str] = {}
    for flag, path in outputs.items():
        _writable(path, flag)
        if path is None:
            continue
        if (same := written.setdefault(Path(path).resolve(), flag)) != flag:
            # the later one would overwrite the other's file, which is then lost unsaid
            raise UsageError(f"{same} and {flag} name the same file ({path}): give each its own")
    plot = _plotter(args.plot)
    printer = Printer(out := _stdout(args.json), args.json, wants_color(out))
    secrets = (api_key,) if api_key else ()
    if name == "local" and not args.json:
        where = "rxllm's embedded local provider"
        if args.base_url:  # `local` is the OpenAI chat wire, at the URL given
            # shown as `Provider`'s repr shows it: a password or key in it redacted
            where = f"the OpenAI-compatible server at {redact(args.base_url, secrets)}"
        print(f"(streaming from {where})", file=sys.stderr)
    options: dict[str, Any] = {}
    if args.allow_private_network:
        options["allow_private_network"] = True
    guarded_fault = name == "local" and args.model == f"fault/{PRIVATE_REDIRECT_FAULT}"
    if guarded_fault:  # played as rxllm.testing plays it: the guard refuses the hop
        options.update(ssrf_guard=True, allow_private_network=list(LOOPBACK_NETWORKS))
    provider = rxllm.provider(name, api_key=api_key, base_url=args.base_url, **options)
    model = args.model or DEFAULT_MODELS.get(name) or "default"
    try:
        request = rxllm.ChatRequest(
            model=model,
            messages=[rxllm.Message.user(args.prompt, images=args.images)],
            tools=[DEMO_TOOL] if args.tools else [],
            tool_choice=args.tool_choice,
            response_format="json" if args.json_mode else args.json_schema,
            params=dict(args.params),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["loc"][:1] != ("response_format",):
            raise
        reason = error["msg"].removeprefix("Value error, ")
        raise UsageError(f"--json-schema: {reason}") from None
    builder = RecordBuilder(provider.name, model)
    timed: list[tuple[float, Event]] = []
    started = time.monotonic()
    with _raw_file(args.raw, secrets) as mark_retry:
        events = provider.astream(request)
        try:
            async for event in events:
                timed.append((time.monotonic() - started, event))
                if isinstance(event, Retry):  # before the next body: astream reads it only
                    mark_retry(event)  # once this event is taken
                builder.add(event)  # kept before it is shown: the output may be gone
                printer(event)
        except (asyncio.CancelledError, BrokenPipeError) as stop:
            # Ctrl-C, or the reader left (`| head`): the turn ends cancelled, its last event
            interrupted = isinstance(stop, asyncio.CancelledError)
            last = timed[-1][1] if timed else None
            if last is None or not IS_TERMINAL[type(last)]:
                cancelled = Cancelled(
                    provider=last.provider if last else provider.name,
                    attempt=last.attempt if last else 1,
                    reason="interrupted (Ctrl-C)" if interrupted else OUTPUT_CLOSED,
                )
                if interrupted:  # --json readers too see exactly one terminal
                    printer(cancelled)
                builder.add(cancelled)
            if args.record:  # what came is kept, ended as the user ended it
                Path(args.record).write_text(builder.build().model_dump_json(indent=2) + "\n")
            raise
        finally:
            await events.aclose()
            await provider.aclose()
    record = builder.build()
    # kept before anything more is printed: a reader may leave before the summary
    if args.record:
        Path(args.record).write_text(record.model_dump_json(indent=2) + "\n")
    if plot is not None:
        plot(timed, f"{record.provider} ({model}): {summary_outcome(record)}")
    if not args.json:
        print(terminal_text(summary(record)))
    terminal = record.terminal
    refused = isinstance(terminal, Failed) and terminal.error.kind == "policy"
    # the guard names the Python option; the fault's own guard needs no advice to open it
    if refused and not (args.allow_private_network or guarded_fault):
        print(
            "rxllm: --allow-private-network lets the SSRF guard reach loopback and "
            "private addresses (cloud metadata addresses stay refused)",
            file=sys.stderr,
        )
    return 0 if isinstance(record.terminal, Done) else 1


MAX_REPLAY_BYTES = 256 * 1024 * 1024
"""The most `rxllm replay` reads: a live response's `max_response_bytes`."""


def _capture(name: str) -> bytes:
    """The bytes of FILE (`-`: stdin), read once, so that sniffing and replaying see the
    same bytes from a pipe too; a file past MAX_REPLAY_BYTES (`/dev/zero`) is refused."""
    if not name.strip():
        raise UsageError(f"expected a recording's file (-: stdin), got {name!r}")
    chunks: list[bytes] = []
    size = 0
    with contextlib.nullcontext(sys.stdin.buffer) if name == "-" else open(name, "rb") as file:
        while chunk := file.read(1 << 20):
            size += len(chunk)
            if size > MAX_REPLAY_BYTES:
                raise UsageError(
                    f"{name} is larger than {MAX_REPLAY_BYTES >> 20} MiB: not a recorded response"
                )
            chunks.append(chunk)
    if not size:
        raise UsageError(f"{name} is empty: nothing to replay")
    return b"".join(chunks)


def _replay(args: argparse.Namespace) -> int:
    _writable(args.plot, "--plot")
    if (
        args.plot is not None
        and args.file != "-"
        and Path(args.plot).resolve() == Path(args.file).resolve()
    ):
        raise UsageError(f"--plot {args.plot} is the recording replayed: it would be overwritten")
    plot = _plotter(args.plot)
    printer = Printer(out := _stdout(args.json), args.json, wants_color(out))
    events: list[Event] = []

    def show(event: Event) -> None:
        events.append(event)
        printer(event)

    data = _capture(args.file)
    provider = args.provider
    if provider is None:
        provider = sniff_provider(data[:MAX_BYTES])
        if provider is None:
            if (what := sniff_not_a_stream(data[:MAX_BYTES])) is not None:
                raise UsageError(f"{args.file}: {what}")
            recording = read_recording(data)  # bytes that say no wire: a cut or broken gzip?
            why = recording.problem[1] if recording.problem else recording.cut
            if why is not None:
                raise UsageError(f"{args.file}: {why}")
            raise UsageError(f"cannot tell which provider wrote {args.file}; pass --provider")
        print(f"rxllm: replaying as {provider} (read from its first events)", file=sys.stderr)
    rxllm.replay(data, provider=provider).subscribe(show)
    if plot is not None and events:
        title = "stdin" if args.file == "-" else Path(args.file).name
        plot(events, f"{title} replayed as {provider}")  # a replay has no clock: in order
    return 0 if events and isinstance(events[-1], Done) else 1


def _serve(host: str, port: int, pace: float) -> None:
    """Run the local provider, logging each request to stderr as it ends."""
    from rxllm.local.rejections import REJECTIONS
    from rxllm.local.script import FAULTS, HTTP_FAULTS
    from rxllm.local.server import LocalServer

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

    @web.middleware
    async def log_request(request: web.Request, handler: Handler) -> web.StreamResponse:
        model: object = request.match_info.get("model")  # Google names it in the path
        with contextlib.suppress(ValueError):  # not JSON: the handler says so itself
            body = await request.json()  # aiohttp keeps the bytes for the handler
            if isinstance(body, dict) and "model" in body:
                model = body["model"]
        began = time.monotonic()
        status: int | str = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        except (asyncio.CancelledError, ConnectionResetError):
            status = "client hung up"
            raise
        finally:
            print(  # what the client sent, its escapes shown: not the terminal's to obey
                terminal_text(
                    f"{request.method} {request.path} model={model} -> {status} "
                    f"({time.monotonic() - began:.2f} s)"
                ),
                file=sys.stderr,
                flush=True,
            )

    async def serve() -> None:
        server = LocalServer(pace=pace, host=host, port=port)
        server.app.middlewares.append(log_request)
        async with server:
            print(
                f"rxllm local provider on {server.url} (OpenAI chat: {server.url}/chat/completions)"
            )
            faults = sorted(FAULTS) + sorted(HTTP_FAULTS)
            print(json.dumps({"faults": faults, "rejections": sorted(REJECTIONS)}), flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:  # Ctrl-C is how a server is meant to end
        print("rxllm: server stopped", file=sys.stderr)


def _bench(args: list[str]) -> int:
    # The benchmarks live beside the package in a checkout; they are not installed.
    root = Path(__file__).resolve().parents[1]
    if not (root / "benchmarks" / "__main__.py").is_file():
        raise UsageError("`rxllm bench` runs from a checkout of the rxllm repository")
    if args[:1] == ["--"]:  # `rxllm bench -- --help`: everything after -- is theirs
        args = args[1:]
    return subprocess.call([sys.executable, "-m", "benchmarks", *args], cwd=root)


def _version() -> str:
    try:
        return version("rxllm")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


class _CommandParser(argparse.ArgumentParser):
    """A command's parser, which refuses an argument it does not know itself: argparse
    hands a command's leftovers to the top parser, whose error shows `rxllm`'s usage,
    not the command's."""

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        namespace, extras = super().parse_known_args(*args, **kwargs)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rxllm",
        description="Stream LLM provider responses as one normalized event stream.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rxllm {_version()}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser
    )

    stream = commands.add_parser(
        "stream",
        help="stream one chat turn and print its events",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stream.add_argument("prompt", nargs="?", type=_utf8, default="What's the weather in Paris?")
    stream.add_argument(
        "--provider",
        default="local",
        choices=PROVIDER_NAMES,
        metavar="NAME",
        help="one of: " + ", ".join(PROVIDER_NAMES) + " (default: local)",
    )
    stream.add_argument(
        "--model", type=_model, default=None, help="local: fault/NAME plays a fault"
    )
    stream.add_argument("--base-url", type=_base_url, default=None)
    stream.add_argument(
        "--api-key",
        type=_api_key,
        default=None,
        metavar="KEY",
        help="the key (default: the provider's env var)",
    )
    stream.add_argument("--json", action="store_true", help="one event per line, as JSON")
    stream.add_argument(
        "--allow-private-network",
        action="store_true",
        help="let the SSRF guard (on for custom) reach loopback and private addresses",
    )
    stream.add_argument("--no-tools", dest="tools", action="store_false", help="offer no demo tool")
    stream.add_argument(
        "--tool-choice",
        type=_tool_choice,
        default=None,
        metavar="CHOICE",
        help="auto, required, none, or a tool's name (get_weather): ChatRequest.tool_choice",
    )
    output = stream.add_mutually_exclusive_group()
    output.add_argument(
        "--json-mode", action="store_true", help="ask for a JSON object: response_format='json'"
    )
    output.add_argument(
        "--json-schema",
        type=_json_schema,
        default=None,
        metavar="FILE",
        help="ask for JSON following the JSON Schema in FILE, named after it (or an SDK's "
        "response_format dict): ChatRequest.response_format",
    )
    stream.add_argument(
        "--param",
        dest="params",
        action="append",
        type=_param,
        default=[],
        metavar="KEY=VALUE",
        help="an extra body key (VALUE is JSON, or a plain string); repeatable",
    )
    stream.add_argument(
        "--image",
        dest="images",
        action="append",
        type=_image,
        default=[],
        metavar="URL",
        help="an image to attach: a URL, or an image file (sent as a data: URL)",
    )
    stream.add_argument("--record", metavar="FILE", help="save the StreamRecord as JSON")
    stream.add_argument(
        "--raw",
        metavar="FILE",
        help="save the wire bytes as received, an echoed key redacted (for a bug report)",
    )
    stream.add_argument(
        "--plot", metavar="PNG", help="save a timeline of the turn (needs rxllm[viz])"
    )

    replay = commands.add_parser("replay", help="print the normalized events of a capture")
    replay.add_argument("file", help="the recorded body (-: stdin)")
    replay.add_argument(
        "--provider",
        default=None,
        choices=PROVIDER_NAMES,
        metavar="NAME",
        help="the provider that wrote FILE (default: read from its first events)",
    )
    replay.add_argument("--json", action="store_true", help="one event per line, as JSON")
    replay.add_argument(
        "--plot", metavar="PNG", help="save the events in order as a timeline (rxllm[viz])"
    )

    serve = commands.add_parser("serve", help="run the embedded local provider, logging requests")
    serve.add_argument("--host", type=_host, default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8765)
    serve.add_argument("--pace", type=_seconds, default=0.02, help="seconds between frames")

    bench = commands.add_parser(
        "bench",
        help="run the benchmarks against the raw floor (`rxllm bench -- --help`)",
        # the benchmarks' own options come after `--`, which argparse's `...` never says
        usage="%(prog)s [-h] [-- BENCHMARK_OPTIONS ...]",
    )
    bench.add_argument("args", nargs=argparse.REMAINDER, help="passed to python -m benchmarks")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "stream":
            return asyncio.run(_stream(args))
        if args.command == "replay":
            return _replay(args)
        if args.command == "serve":
            _serve(args.host, args.port, args.pace)
            return 0
        return _bench(args.args)
    except BrokenPipeError:
        # The reader left (`| head`): nothing is wrong, and nothing more can be said to
        # it. Point stdout at devnull so the interpreter's final flush stays quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("rxllm: cancelled", file=sys.stderr)
        return 130
    except (UsageError, RxllmError) as exc:
        print(f"rxllm: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"rxllm: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
