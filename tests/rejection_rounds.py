"""What each round of unseen rejections (tests/test_probe_rejections_*.py) checks the same
way: a case of tests/rejections_extra read as its file says, and a message read over HTTP
and in a frame after `200 OK`, as `sources.http` and the chat wire read them."""

from __future__ import annotations

import json
from typing import Any

from rxllm.degradation import RecoveryPolicy
from tests.test_probe_rejections_7 import DEGRADES, frame, response
from tests.test_probe_rejections_9 import EXTRA, original
from tests.test_probe_rejections_16 import reading

__all__ = [
    "assert_reads_as_its_file_says",
    "both_ways",
    "in_band",
    "openai_error",
    "over_http",
    "verdict",
]

# The verdict each expected action is (the replay accepts a backoff that surfaces; `classify`
# is held to the backoff itself).
_VERDICT = {"none": "surface"}


def assert_reads_as_its_file_says(case_name: str) -> None:
    case = json.loads((EXTRA / f"{case_name}.json").read_text())
    expected = case["expected"]
    action = _VERDICT.get(expected["action"], expected["action"])
    read = original(case)
    assert reading(read)[:2] == (action, set(expected.get("drop", ())))
    if "retry_after_s" in expected:
        assert read.delay == expected["retry_after_s"]


def openai_error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    """OpenAI's envelope of an `invalid_request_error` saying `message`."""
    error = {"message": message, "type": "invalid_request_error", "param": param}
    if code is not None:
        error["code"] = code
    return {"error": error}


def verdict(
    payload: Any, sent: dict[str, Any], status: int = 400, policy: RecoveryPolicy = DEGRADES
) -> tuple[str, tuple[str, ...]]:
    """The action and the keys dropped for `payload` rejected over HTTP with `status`."""
    read = response(status, payload, sent, policy)
    return read.action, read.drop


def both_ways(message: str, sent: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """The reading of `message` over HTTP at 400 and in a frame after `200 OK`."""
    in_band = frame({"message": message}, sent)
    return [verdict(openai_error(message), sent), (in_band.action, in_band.drop)]


def over_http(message: str, sent: dict[str, Any], status: int) -> tuple[str, tuple[str, ...]]:
    """The action and keys of OpenAI's error envelope holding `message`, at `status`."""
    return verdict(openai_error(message), sent, status)


def in_band(payload: dict[str, Any], sent: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The action and keys of `payload` sent as a frame after `200 OK` (`frame`)."""
    read = frame(payload, sent)
    return read.action, read.drop
