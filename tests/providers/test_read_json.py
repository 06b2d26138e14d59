"""`read_json` reads every chunk with pydantic-core's parser first, for speed: it must
read exactly what `json.loads` reads, values and errors alike, or a chunk would mean
something else than it did with the standard library."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxllm.providers.base import read_json
from tests.hypothesis_support import examples, json_values


def reading(read: Any, text: str) -> tuple[str, str]:
    """What `read` makes of `text`: the value written back exactly (floats by `repr`,
    so that -0.0 and 0.0 differ), or the error's type and message."""
    try:
        return "value", repr(read(text))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def assert_reads_as_stdlib(text: str) -> None:
    assert reading(read_json, text) == reading(json.loads, text), text


# The corners where two JSON parsers disagree: what JSON lacks but the standard library
# reads (NaN, Infinity, numbers past a float, integers past 64 bits), surrogates, lone
# and paired, escaped and not, whitespace JSON has and has not, nesting past pydantic-
# core's depth and past Python's recursion, and almost-JSON.
CORNERS = [
    "NaN",
    "[-Infinity, Infinity]",
    "1e400",
    "-1e400",
    "1e-400",
    "123456789012345678901234567890",
    "-123456789012345678901234567890.5",
    "1.7976931348623157e308",
    "5e-324",
    "-0.0",
    "0.30000000000000004",
    '"\\ud83d\\ude00"',
    '"\\ud83d"',
    '"\\udc00\\ud83d"',
    '"\ud800"',
    '"\U0001f600 é \u2028"',
    '"a\x00b"',
    '"\\u0000"',
    '"a\nb"',
    '"\t"',
    " \t\n\r1\r\n",
    "\f1",
    "\u00a01",
    "\ufeff1",
    "[" * 300 + "]" * 300,
    "[" * 5000 + "]" * 5000,
    '{"a": 1, "a": 2}',
    '{"a":1,}',
    "[1,]",
    '{"a":1} x',
    '{"a":1}{"b":2}',
    "1 2",
    "+1",
    "01",
    "1.",
    ".5",
    "1e",
    "0x1",
    "tru",
    "nul",
    '"\\x"',
    '"\\u12"',
    "",
    " ",
    "[DONE]",
    " [DONE]",
]


@pytest.mark.parametrize("text", CORNERS)
def test_the_corners_read_as_the_standard_library_reads_them(text: str) -> None:
    assert_reads_as_stdlib(text)


@settings(max_examples=examples(300))
@given(json_values, st.booleans())
def test_any_json_document_reads_as_the_standard_library_reads_it(
    value: Any, ensure_ascii: bool
) -> None:
    assert_reads_as_stdlib(json.dumps(value, ensure_ascii=ensure_ascii))


_DEBRIS = st.text(alphabet='{}[]",:.eE+-0123456789 \\ntrufalsNIy\t\x00\u2028u', max_size=3)


@settings(max_examples=examples(300))
@given(json_values, st.data())
def test_damaged_json_reads_as_the_standard_library_reads_it(value: Any, data: Any) -> None:
    text = json.dumps(value)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 3)))
    assert_reads_as_stdlib(text[:start] + data.draw(_DEBRIS) + text[end:])
