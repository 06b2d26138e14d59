"""A request's number fields at their edges (session 40, helper E): a bool or a str is
refused where pydantic would read it as a number; a whole float is the int it is."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from rxllm import ChatRequest, Message, ToolCall
from rxllm.providers import wire_for

HI = [Message.user("hi")]
NUMBERS = ("temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty")


@pytest.mark.parametrize("field", NUMBERS)
@pytest.mark.parametrize("value", [True, False, "1", "0.5"])
def test_a_bool_or_a_str_in_a_number_field_is_refused(field: str, value: Any) -> None:
    # was read as a number: max_tokens=True asked for one token, seed=False was seed 0,
    # temperature=True was 1.0, and "0.5" went out as 0.5 (an SDK sends it as a string)
    with pytest.raises(pydantic.ValidationError, match=rf"{field}\n.*should be a number, got"):
        ChatRequest(model="m", messages=HI, **{field: value})


def test_a_bool_as_a_calls_place_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"after\n.*should be a number, got bool"):
        ToolCall(id="c1", name="get_time", after=True)
    assert ToolCall(id="c1", name="get_time", after=0).after == 0


def test_numbers_are_still_taken_and_a_whole_float_is_an_int() -> None:
    request = ChatRequest(model="m", messages=HI, max_tokens=3.0, temperature=0, top_p=1)
    body = wire_for("anthropic").build_body(request)
    assert body["max_tokens"] == 3 and isinstance(body["max_tokens"], int)
    assert body["temperature"] == 0 and body["top_p"] == 1
    with pytest.raises(pydantic.ValidationError, match="fractional part"):
        ChatRequest(model="m", messages=HI, max_tokens=3.5)
