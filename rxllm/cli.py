"""`rxllm stream|replay|serve|bench`: the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import rxllm
from rxllm.errors import RxllmError
from rxllm.events import (
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
from rxllm.pipeline.record import RecordBuilder
from rxllm.pipeline.sniff import MAX_BYTES, sniff_provider
from rxllm.providers import PROVIDER_NAMES, wire_for

__all__ = ["main"]

DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "local": "rxllm-local"}
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


class Printer:
    """Prints events as a person reads them: text live, the rest on lines of their own."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self.mid_line = False
        self.in_reasoning = False

    def __call__(self, event: Event) -> None:
        if self.as_json:
            self.out.write(event.model_dump_json() + "\n")
            self.out.flush()
            return
        if isinstance(event, TextDelta | ReasoningDelta):
            reasoning = isinstance(event, ReasoningDelta)
            if reasoning != self.in_reasoning:
                self._newline()
                self.out.write("[reasoning] " if reasoning else "")
                self.in_reasoning = reasoning
            self.out.write(event.text)
            self.mid_line = True
        elif isinstance(event, ToolStart):
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
        elif isinstance(event, Refusal):
            self._line(f"[refusal] {event.text}")
        elif isinstance(event, Citation):
            self._line(f"[citation] {event.title or ''} {event.url}".replace("  ", " "))
        elif isinstance(event, ServerToolCall):
            self._line(f"[server_tool_call] {event.name}({event.arguments}) call {event.call_id}")
        elif isinstance(event, ServerToolResult):
            self._line(f"[server_tool_result] {event.name} call {event.call_id}")
        elif isinstance(event, Retry):
            self._line(f"[retry] {describe_retry(event)}")
        elif isinstance(event, Done):
            self._line(f"[done] {event.stop_reason} (raw {event.raw_stop_reason})")
        elif isinstance(event, Failed):
            self._line(f"[error] {event.error.kind}: {event.error.message}")
        elif isinstance(event, Cancelled):
            self._line(f"[cancelled] {event.reason}")
        self.out.flush()

    def _newline(self) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.mid_line = False

    def _line(self, text: str) -> None:
        self._newline()
        self.in_reasoning = False
        self.out.write(text + "\n")


def describe_retry(event: Retry) -> str:
    """One line on a retry: what was refused, and what the next attempt changes."""
    changes = [f"without {', '.join(event.dropped)}"] if event.dropped else []
    if event.images_removed:
        changes.append(f"{event.images_removed} image(s) replaced by a notice")
    if event.delay:
        changes.append(f"after {event.delay:g} s")
    if event.next_provider != event.provider:
        changes.append(f"on {event.next_provider}")
    return (
        f"attempt {event.attempt} on {event.provider} failed before any output "
        f"({event.reason.message}); attempt {event.next_attempt}"
        + (f": {'; '.join(changes)}" if changes else ": the same request")
    )


def _param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value  # a bare word is a string


def summary(record: StreamRecord) -> str:
    terminal = record.terminal
    outcome = (
        terminal.stop_reason
        if isinstance(terminal, Done)
        else f"error {terminal.error.kind}"
        if isinstance(terminal, Failed)
        else "cancelled"
    )
    ttfe = f"{record.time_to_first_event:.2f}s" if record.time_to_first_event else "-"
    tokens = record.usage.total_tokens if record.usage else "?"
    attempts = f"{len(record.attempts)} attempts; " if len(record.attempts) > 1 else ""
    return (
        f"-- {record.provider} ({record.model or record.requested_model}): {outcome}; "
        f"{len(record.text)} chars, {len(record.tool_calls)} tool calls, {tokens} tokens; "
        f"{attempts}first event {ttfe}, total {record.duration:.2f}s"
    )


async def _stream(args: argparse.Namespace) -> int:
    name = args.provider
    wire = wire_for(name)
    api_key = os.environ.get(wire.api_key_env) if wire.api_key_env else None
    if name != "local" and wire.requires_api_key and not api_key and not args.base_url:
        print(
            f"(no {wire.api_key_env} set: using the embedded local provider instead of {name})",
            file=sys.stderr,
        )
        name = "local"
    if name == "local" and not args.json:
        print("(streaming from rxllm's embedded local provider)", file=sys.stderr)
    options: dict[str, Any] = {}
    if args.allow_private_network:
        options["allow_private_network"] = True
    provider = rxllm.provider(name, base_url=args.base_url, **options)
    model = args.model or DEFAULT_MODELS.get(name) or "default"
    request = rxllm.ChatRequest(
        model=model,
        messages=[rxllm.Message.user(args.prompt, images=args.images)],
        tools=[DEMO_TOOL] if args.tools else [],
        params=dict(args.params),
    )
    printer = Printer(sys.stdout, args.json)
    builder = RecordBuilder(provider.name, model)
    async for event in provider.astream(request):
        printer(event)
        builder.add(event)
    record = builder.build()
    if not args.json:
        print(summary(record))
    return 0 if isinstance(record.terminal, Done) else 1


def _replay(args: argparse.Namespace) -> int:
    printer = Printer(sys.stdout, args.json)
    events: list[Event] = []

    def show(event: Event) -> None:
        events.append(event)
        printer(event)

    path = Path(args.file)
    provider = args.provider
    if provider is None:
        with path.open("rb") as file:
            provider = sniff_provider(file.read(MAX_BYTES))
        if provider is None:
            print(
                f"rxllm: cannot tell which provider wrote {args.file}; pass --provider",
                file=sys.stderr,
            )
            return 2
        print(f"rxllm: replaying as {provider} (read from its first events)", file=sys.stderr)
    rxllm.replay(path, provider=provider).subscribe(show)
    return 0 if events and isinstance(events[-1], Done) else 1


def _bench(args: list[str]) -> int:
    # The benchmarks live beside the package in a checkout; they are not installed.
    root = Path(__file__).resolve().parents[1]
    if not (root / "benchmarks" / "__main__.py").is_file():
        print("rxllm: `rxllm bench` runs from a checkout of the rxllm repository", file=sys.stderr)
        return 2
    return subprocess.call([sys.executable, "-m", "benchmarks", *args], cwd=root)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rxllm", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    stream = commands.add_parser("stream", help="stream one chat turn and print its events")
    stream.add_argument("prompt", nargs="?", default="What's the weather in Paris?")
    stream.add_argument("--provider", default="local", choices=PROVIDER_NAMES)
    stream.add_argument("--model", default=None)
    stream.add_argument("--base-url", default=None)
    stream.add_argument("--json", action="store_true", help="one event per line, as JSON")
    stream.add_argument(
        "--allow-private-network",
        action="store_true",
        help="let the SSRF guard (on for custom) reach loopback and private addresses",
    )
    stream.add_argument("--no-tools", dest="tools", action="store_false", help="offer no demo tool")
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
        "--image", dest="images", action="append", default=[], help="an image URL to attach"
    )

    replay = commands.add_parser("replay", help="print the normalized events of a capture")
    replay.add_argument("file")
    replay.add_argument(
        "--provider",
        default=None,
        choices=PROVIDER_NAMES,
        help="the provider that wrote FILE (default: read from its first events)",
    )
    replay.add_argument("--json", action="store_true")

    serve = commands.add_parser("serve", help="run the embedded local provider")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--pace", type=float, default=0.02, help="seconds between frames")

    bench = commands.add_parser("bench", help="run the benchmarks against the raw floor")
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
            from rxllm.local.server import main as serve

            serve(args.host, args.port, args.pace)
            return 0
        return _bench(args.args)
    except RxllmError as exc:
        print(f"rxllm: {exc}", file=sys.stderr)
        return 2
    except (OSError, KeyboardInterrupt) as exc:
        print(f"rxllm: {exc or 'interrupted'}", file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else 2


if __name__ == "__main__":
    sys.exit(main())
