"""What a model says never breaks or attacks the notebook showing it.

Model output, tool arguments, server tool results, citations and error bodies are the
provider's text. Every event and record renders it as inert, valid UTF-8 HTML of a
bounded size: no markup of its own, no hidden characters that reorder what rxllm
writes around it, no math typesetting, no exception.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

import rxllm
from rxllm import display
from rxllm.display import PREVIEW_CHARS, event_html, events_html, record_html, summary
from rxllm.events import (
    Attempt,
    Cancelled,
    Citation,
    Done,
    ErrorInfo,
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
    Usage,
    UsageUpdate,
)
from rxllm.local.script import Cite, Reasoning, Say, Script, ServerTool, ToolUse
from rxllm.pipeline.record import RecordBuilder
from rxllm.testing import scripted

ROOT = Path(__file__).resolve().parents[1]

# Markup, quotes that would leave an attribute, comments, CDATA ends, template and
# math syntax: all of it must come out as the same text, never as structure.
MARKUP = (
    "<script>alert(1)</script></pre></code></td></table><img src=x onerror=alert(2)>"
    "\" onmouseover=\"alert(3)\" ' onfocus='alert(4)' <!-- --> ]]> <![CDATA[x]]> "
    "{{ 7*7 }} ${7*7} <style>body{display:none}</style> "
    '<a href="javascript:alert(5)">x</a> style="background:url(javascript:alert(6))"'
)
HIDDEN = "\u202eevil\u202c \u2066x\u2069 \x00nul \x1b[31mred \x7f \x85 zero\u200bwidth \ufeffbom"
HOSTILE = MARKUP + " " + HIDDEN
JS_URL = "javascript:alert(document.domain)//<b>"
DATA_URL = "data:text/html,<script>alert(7)</script>"

# The structure rxllm itself writes: these tags, these attributes, these styles.
TAGS = {"div", "span", "small", "code", "table", "tr", "th", "td"}
ATTRIBUTES = {"class", "style"}


class Structure(HTMLParser):
    """The tags, attributes, comments and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.comments: list[str] = []
        self.other: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_decl(self, decl: str) -> None:
        self.other.append(decl)

    def unknown_decl(self, data: str) -> None:
        self.other.append(data)

    def handle_pi(self, data: str) -> None:
        self.other.append(data)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def structure(html: str) -> Structure:
    parser = Structure()
    parser.feed(html)
    parser.close()
    return parser


def assert_inert(html: str) -> Structure:
    """Only rxllm's own tags and attributes, with rxllm's own values; valid UTF-8."""
    html.encode("utf-8")  # a lone surrogate raises here, as in Jupyter's message packer
    parsed = structure(html)
    assert not parsed.comments and not parsed.other
    for tag, attrs in parsed.tags:
        assert tag in TAGS, tag
        for name, value in attrs:
            assert name in ATTRIBUTES, (tag, name)
            assert value is not None and "alert" not in value and "url(" not in value
    return parsed


def hostile_events() -> list[Event]:
    """Every event type, each string field the provider controls set to HOSTILE."""
    info = ErrorInfo(
        kind="http",
        message=HOSTILE,
        status=500,
        provider="p",
        raw=HOSTILE,
        param=HOSTILE,
        code=HOSTILE,
        request_id=HOSTILE,
    )
    return [
        TextDelta(provider="p", text=HOSTILE),
        ReasoningDelta(provider="p", text=HOSTILE, signature=HOSTILE, details={HOSTILE: HOSTILE}),
        ToolStart(provider="p", call_id=HOSTILE, name=HOSTILE, index=0),
        ToolRequest(
            provider="p", call_id=HOSTILE, name=HOSTILE, index=0, arguments={HOSTILE: [HOSTILE]}
        ),
        Refusal(provider="p", text=HOSTILE),
        Citation(provider="p", url=JS_URL, title=HOSTILE, cited_text=HOSTILE),
        Citation(provider="p", url=DATA_URL),
        ServerToolCall(provider="p", call_id=HOSTILE, name=HOSTILE, arguments={"q": HOSTILE}),
        ServerToolResult(provider="p", call_id=HOSTILE, name=HOSTILE, content={HOSTILE: HOSTILE}),
        UsageUpdate(provider="p", usage=Usage.of(input_tokens=1)),
        Retry(provider="p", reason=info, next_attempt=2, next_provider="p", dropped=[HOSTILE]),
        Done(provider="p", stop_reason="other", raw_stop_reason=HOSTILE, model=HOSTILE),
        Failed(provider="p", error=info),
        Cancelled(provider="p", reason=HOSTILE),
    ]


def hostile_record(terminal: Done | Failed | Cancelled, text: str = HOSTILE) -> StreamRecord:
    events = hostile_events()
    return StreamRecord(
        provider="p",
        requested_model=HOSTILE,
        model=HOSTILE,
        text=text,
        reasoning=text,
        refusal=text,
        tool_calls=[e for e in events if isinstance(e, ToolRequest)],
        citations=[e for e in events if isinstance(e, Citation)],
        server_tools=[e for e in events if isinstance(e, ServerToolCall | ServerToolResult)],
        usage=Usage.of(input_tokens=3, output_tokens=4),
        terminal=terminal,
        attempts=[
            Attempt(number=1, provider="p", dropped=[HOSTILE], status=400, error=HOSTILE),
            Attempt(number=2, provider="p", committed=True, duration=0.5),
        ],
        time_to_first_event=0.25,
        duration=1.0,
    )


TERMINALS = [e for e in hostile_events() if isinstance(e, Done | Failed | Cancelled)]


@pytest.mark.parametrize("event", hostile_events(), ids=lambda e: e.type)
def test_every_event_renders_hostile_text_as_text(event: Event) -> None:
    html = event._repr_html_()
    parsed = assert_inert(html)
    shown = "".join(parsed.text)
    assert f">{event.type}</span>" in html
    if event.type not in ("usage", "citation"):  # the others show a field holding MARKUP
        assert "<script>alert(1)</script>" in shown  # the text, as it was written


@pytest.mark.parametrize("terminal", TERMINALS, ids=lambda e: e.type)
def test_a_record_with_each_terminal_renders_hostile_text_as_text(
    terminal: Done | Failed | Cancelled,
) -> None:
    record = hostile_record(terminal)
    html = record._repr_html_()
    parsed = assert_inert(html)
    assert f">{terminal.type}</span>" in html
    assert MARKUP[:200] in "".join(parsed.text)  # the record's text, shown as written


def test_the_events_table_renders_hostile_text_as_text() -> None:
    events = hostile_events()
    html = events_html(events)
    parsed = assert_inert(html)
    assert sum(tag == "tr" for tag, _ in parsed.tags) == len(events) + 1


def test_a_citation_url_is_never_a_link() -> None:
    for url in (JS_URL, DATA_URL, "https://example.com/?a=1&b=<2>"):
        html = Citation(provider="p", url=url, title="t")._repr_html_()
        parsed = assert_inert(html)
        assert all(tag != "a" for tag, _ in parsed.tags) and "href" not in html
        assert url in "".join(parsed.text)


def test_a_surrogate_pair_the_provider_split_renders_as_one_character() -> None:
    # A provider splits a UTF-16 pair over two JSON deltas ("\ud83d", then "\ude00"):
    # each event holds half a character; the record joins the halves.
    halves = [TextDelta(provider="p", text="smile \ud83d"), TextDelta(provider="p", text="\ude00!")]
    record = StreamRecord(
        provider="p", text="smile \ud83d\ude00!", terminal=Done(provider="p", stop_reason="stop")
    )
    html = record_html(record)
    assert "smile \N{GRINNING FACE}!" in html
    html.encode("utf-8")
    for event in halves:
        event_html(event).encode("utf-8")
    events_html(halves).encode("utf-8")


def test_a_lone_surrogate_in_any_field_renders_as_a_replacement_character() -> None:
    lone = "half \ud83d of it"
    events: list[Event] = [
        ToolStart(provider="p", call_id=lone, name=lone, index=0),
        Citation(provider="p", url=lone, title=lone),
        Failed(provider="p", error=ErrorInfo(kind="http", message=lone, provider="p")),
        Cancelled(provider="p", reason=lone),
    ]
    for event in events:
        html = event_html(event)
        html.encode("utf-8")
        assert "half \N{REPLACEMENT CHARACTER} of it" in html
    record = StreamRecord(
        provider="p",
        model=lone,
        text=lone,
        terminal=events[2],  # type: ignore[arg-type]
        attempts=[Attempt(number=1, provider="p", error=lone)],
    )
    record_html(record).encode("utf-8")


def test_hidden_characters_are_shown_not_obeyed() -> None:
    # A right-to-left override in a tool name would make rxllm's own words around it
    # read backwards; a NUL, an escape or a zero-width space would hide in plain sight.
    html = ToolStart(provider="p", call_id="c1", name="get_weather" + HIDDEN, index=0)._repr_html_()
    for char in ("\u202e", "\u202c", "\u2066", "\u2069", "\x00", "\x1b", "\x7f", "\x85"):
        assert char not in html, repr(char)
    assert "\u200b" not in html and "\ufeff" not in html
    for shown in ("\\u202e", "\\x00", "\\x1b", "\\u200b", "\\ufeff"):
        assert shown in html
    record = StreamRecord(
        provider="p",
        text="line one\n\tline two \u202eevil",
        terminal=Done(provider="p", stop_reason="stop"),
    )
    html = record_html(record)
    assert "line one\n\tline two \\u202eevil" in html  # newlines and tabs stay prose


def test_emoji_and_scripts_keep_their_joiners() -> None:
    family = "\N{MAN}\u200d\N{WOMAN}\u200d\N{GIRL}"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # a ZWNJ inside the word
    record = StreamRecord(
        provider="p", text=f"{family} {persian}", terminal=Done(provider="p", stop_reason="stop")
    )
    assert f"{family} {persian}" in record_html(record)


def test_math_delimiters_in_the_text_are_not_typeset() -> None:
    # Jupyter typesets $...$ and \(...\) in HTML outputs with MathJax: "$5 and $10"
    # would show as math. Both MathJax 2's and 3's ignore classes are on every root.
    record = StreamRecord(
        provider="p", text="It costs $5 and $10.", terminal=Done(provider="p", stop_reason="stop")
    )
    roots = [
        record_html(record),
        event_html(TextDelta(provider="p", text="$5 and $10")),
        events_html([TextDelta(provider="p", text="$5 and $10")]),
    ]
    for html in roots:
        tag, attrs = structure(html).tags[0]
        classes = (dict(attrs)["class"] or "").split()
        assert {"tex2jax_ignore", "mathjax_ignore"} <= set(classes), (tag, classes)


def test_a_long_unbroken_line_wraps_instead_of_widening_the_output() -> None:
    token = "A" * 1500  # base64, a URL, minified JSON: no space to break at
    for html in (
        event_html(TextDelta(provider="p", text=token)),
        events_html([TextDelta(provider="p", text=token)]),
        record_html(
            StreamRecord(provider="p", text=token, terminal=Done(provider="p", stop_reason="stop"))
        ),
    ):
        _, attrs = structure(html).tags[0]
        assert "overflow-wrap:anywhere" in (dict(attrs)["style"] or "")


TEN_MB = 10_000_000


def test_ten_megabytes_of_text_render_as_a_bounded_preview() -> None:
    big = "x" * TEN_MB
    info = ErrorInfo(kind="http", message=big, provider="p", raw=big)
    events: list[Event] = [
        TextDelta(provider="p", text=big),
        ToolRequest(provider="p", call_id="c", name="f", index=0, arguments={"a": big}),
        Citation(provider="p", url=big, title=big),
        Failed(provider="p", error=info),
        Cancelled(provider="p", reason=big),
    ]
    for event in events:
        assert len(event_html(event)) < 4 * PREVIEW_CHARS, event.type
    assert len(events_html(events * 20)) < 100 * 4 * PREVIEW_CHARS
    record = StreamRecord(
        provider="p",
        text=big,
        reasoning=big,
        terminal=events[3],  # type: ignore[arg-type]
        tool_calls=[events[1]] * 3,  # type: ignore[list-item]
        attempts=[Attempt(number=1, provider="p", error=big)],
    )
    html = record_html(record)
    assert len(html) < 30 * PREVIEW_CHARS
    assert f"{TEN_MB:,} characters" in html  # the cut says how much there was


def test_a_preview_cut_never_splits_a_surrogate_pair() -> None:
    text = "x" * (PREVIEW_CHARS - 1) + "\ud83d\ude00" + "y" * 10
    record = StreamRecord(provider="p", text=text, terminal=Done(provider="p", stop_reason="stop"))
    html = record_html(record)
    assert "x\N{GRINNING FACE}…" in html and "\N{REPLACEMENT CHARACTER}" not in html


def nested(depth: int) -> dict[str, Any]:
    """A JSON object nested as deep as the JSON reader accepts (the wire's text)."""
    value: dict[str, Any] = json.loads('{"a":' * depth + "1" + "}" * depth)
    return value


def deep_in_the_stack(frames: int, render: Any) -> Any:
    """Call `render` with `frames` frames below it, as IPython's formatters do."""
    if frames:
        return deep_in_the_stack(frames - 1, render)
    return render()


def test_deeply_nested_arguments_render_even_deep_in_a_call_stack() -> None:
    arguments = nested(950)
    events: list[Event] = [
        ToolRequest(provider="p", call_id="c", name="f", index=0, arguments=arguments),
        ServerToolCall(provider="p", call_id="c", name="f", arguments=arguments),
    ]
    for event in events:
        html = deep_in_the_stack(120, lambda event=event: event_html(event))
        assert_inert(html)
        assert "{&#x27;a&#x27;: {&#x27;a&#x27;: " in html and "..." in html
    record = StreamRecord(
        provider="p",
        tool_calls=[events[0]],  # type: ignore[list-item]
        terminal=Done(provider="p", stop_reason="tool_use"),
    )
    deep_in_the_stack(120, lambda: record_html(record))


def test_arguments_are_shown_in_their_own_order_as_python_writes_them() -> None:
    call = ToolRequest(
        provider="p",
        call_id="c1",
        name="get_weather",
        index=0,
        arguments={"unit": "celsius", "city": "Paris", "days": [1, 2], "ok": True, "n": None},
    )
    expected = f"get_weather({call.arguments}) call c1"
    assert summary(call) == expected
    assert summary(TextDelta(provider="p", text="it's")) == repr("it's")


def test_nan_and_infinity_render() -> None:
    events: list[Event] = [
        ToolRequest(provider="p", call_id="c", name="f", index=0, arguments={"x": float("nan")}),
        ServerToolResult(provider="p", call_id="c", name="f", content=[float("inf")]),
        UsageUpdate(provider="p", usage=Usage(cost_usd=float("nan"))),
    ]
    for event in events:
        assert_inert(event_html(event))
    record = StreamRecord(
        provider="p",
        usage=Usage(cost_usd=float("inf")),
        terminal=Done(provider="p", stop_reason="stop"),
        attempts=[Attempt(number=1, provider="p", duration=float("nan"))],
        time_to_first_event=float("inf"),
        duration=float("nan"),
    )
    assert_inert(record_html(record))


def test_a_record_whose_first_output_came_at_once_says_so() -> None:
    record = StreamRecord(
        provider="p",
        terminal=Done(provider="p", stop_reason="stop"),
        time_to_first_event=0.0,
        duration=0.0,
    )
    assert "first output 0.00 s, total 0.00 s" in record_html(record)
    record = record.model_copy(update={"time_to_first_event": None})
    assert "first output -, total 0.00 s" in record_html(record)


def test_plain_text_is_bounded_and_never_raises() -> None:
    # `plain` is the text/plain an event or record can give IPython: what repr says,
    # with long strings cut and deep nesting elided.
    big = "x" * TEN_MB
    event = TextDelta(provider="p", text=big + "\ud83d")
    assert display.plain(event).startswith(
        "TextDelta(provider='p', attempt=1, type='text', text='xxx"
    )
    assert len(display.plain(event)) < 2 * PREVIEW_CHARS
    call = ToolRequest(provider="p", call_id="c", name="f", index=0, arguments=nested(950))
    shown = deep_in_the_stack(120, lambda: display.plain(call))
    assert shown.startswith("ToolRequest(provider='p', attempt=1, type='tool_request'")
    record = StreamRecord(provider="p", text=big, tool_calls=[call], terminal=failed_with(big))
    text = deep_in_the_stack(120, lambda: display.plain(record))
    assert len(text) < 10 * PREVIEW_CHARS and text.startswith("StreamRecord(provider='p'")
    small = TextDelta(provider="p", text="hi")
    assert display.plain(small) == repr(small)  # what fits is exactly repr


def failed_with(message: str) -> Failed:
    return Failed(provider="p", error=ErrorInfo(kind="http", message=message, provider="p"))


async def test_a_hostile_live_stream_renders_every_event_and_its_record() -> None:
    # The local provider plays the hostile text over the real wire: lone surrogates
    # travel as JSON escapes, as a provider splitting a UTF-16 pair sends them.
    text = MARKUP + " \u202e \x00 \ud83d and \ude00 $x$"
    script = Script(
        steps=(
            Reasoning(text),
            Say(text, citations=(Cite(url=JS_URL, title=text, cited_text=text),)),
            ServerTool("srv_1", "web_search", text, text, url=DATA_URL),
            ToolUse("call_1", "lookup", json.dumps({"q": text, "deep": nested(200)})),
        ),
        stop="tool_use",
    )
    failing = Script(steps=(Say("partial"),), error=text)
    async with scripted(script, failing) as llm:
        request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
        events = [event async for event in llm.provider.astream(request)]
        record = await llm.provider.complete(request)
    types = {event.type for event in events}
    assert {"citation", "server_tool_call", "server_tool_result", "tool_request"} <= types
    for event in events:
        assert_inert(event_html(event))
    assert_inert(events_html(events))
    assert record.terminal.type == "error"
    html = record_html(record)
    assert_inert(html)
    assert ">error</span>" in html and "\\u202e" in html and "\N{REPLACEMENT CHARACTER}" in html


def test_hostile_displays_run_in_a_real_kernel_and_the_notebook_saves(tmp_path: Path) -> None:
    # Jupyter packs every display as UTF-8 JSON: a lone surrogate in the HTML made the
    # cell fail with UnicodeEncodeError (and the notebook could not be saved).
    code = (
        "import rxllm\n"
        "done = rxllm.Done(provider='p', stop_reason='stop')\n"
        "text = 'a \\ud83d\\ude00 b \\ud83d <script>x</script>'\n"
        "record = rxllm.StreamRecord(provider='p', text=text, terminal=done)\n"
        "display(record)\n"
        "display(rxllm.ToolStart(provider='p', call_id='c', name='f\\ud83d\\u202e', index=0))\n"
        "print('shown')"
    )
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells = [nbformat.v4.new_code_cell(code)]  # type: ignore[no-untyped-call]
    write_kernel_spec(tmp_path / "kernels" / "rxllm-hostile")
    client = NotebookClient(notebook, kernel_name="rxllm-hostile", timeout=60, allow_errors=True)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUPYTER_PATH", str(tmp_path))
        env.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
        env.setenv("JUPYTER_PLATFORM_DIRS", "1")
        env.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
        env.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        env.setenv("PYTHONPATH", str(ROOT))
        client.execute()
    outputs = notebook.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data", "display_data", "stream"]
    html = outputs[0].data["text/html"]
    assert "a \N{GRINNING FACE} b \N{REPLACEMENT CHARACTER} &lt;script&gt;" in html
    assert "#0 f\N{REPLACEMENT CHARACTER}\\u202e (call c)" in outputs[1].data["text/html"]
    nbformat.write(notebook, str(tmp_path / "saved.ipynb"))  # type: ignore[no-untyped-call]


def test_ipython_plain_text_of_an_event_and_a_record_is_bounded() -> None:
    """Jupyter's text/plain comes from IPython's pretty printer, which used pydantic's
    repr: a RecursionError at nesting depth 960, 50 MB for a record of 10 MB of text."""
    from IPython.lib.pretty import pretty

    nested: Any = {}
    for _ in range(960):
        nested = {"a": nested}
    call = ToolRequest(provider="openai", call_id="c", name="f", index=0, arguments=nested)
    assert len(pretty(call)) < 5000
    builder = RecordBuilder("openai", "m")
    builder.add(TextDelta(provider="openai", text="x" * 10_000_000))
    builder.add(Done(provider="openai", stop_reason="stop", raw_stop_reason="stop"))
    assert len(pretty(builder.build())) < 10_000
