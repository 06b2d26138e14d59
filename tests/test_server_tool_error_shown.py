"""A provider-run tool that failed (`ServerToolResult.is_error`) says so where a person
reads events: `rxllm.display.summary` (notebooks, the viz) and the CLI's printer. A
result that worked reads as before."""

from __future__ import annotations

import io

from rxllm.cli import Printer
from rxllm.display import summary
from rxllm.events import ServerToolResult

FAILED = ServerToolResult(
    provider="p",
    call_id="srvtoolu_1",
    name="web_search",
    content={"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    is_error=True,
)
WORKED = ServerToolResult(provider="p", call_id="srvtoolu_2", name="web_search", content=[])


def test_the_summary_says_the_tool_failed() -> None:
    assert summary(FAILED) == "web_search call srvtoolu_1 failed"
    assert summary(WORKED) == "web_search call srvtoolu_2"


def test_the_cli_says_the_tool_failed() -> None:
    out = io.StringIO()
    printer = Printer(out, as_json=False)
    printer(FAILED)
    printer(WORKED)
    assert out.getvalue().splitlines() == [
        "[server_tool_result] web_search call srvtoolu_1 failed",
        "[server_tool_result] web_search call srvtoolu_2",
    ]
