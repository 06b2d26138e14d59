from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex.testing.marbles import marbles_testing

from rxllm.events import Done, Failed, ToolRequest
from rxllm.fragments import ToolArgs, ToolEnd
from rxllm.operators import accumulate_tool_arguments
from tests.operators.marbles import EVENTS, P


def request(call_id: str, name: str, index: int, arguments: dict[str, Any]) -> ToolRequest:
    return ToolRequest(provider=P, call_id=call_id, name=name, index=index, arguments=arguments)


def run(*items: Any) -> list[Any]:
    out: list[Any] = []
    reactivex.from_iterable(items).pipe(accumulate_tool_arguments()).subscribe(out.append)
    return out


def test_fragments_become_one_request_at_the_end_of_the_call() -> None:
    lookup = {**EVENTS, "r": request("call_1", "f", 0, {"x": 1})}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-s-m-a-n-e-d-|", lookup).pipe(accumulate_tool_arguments()))
        assert results == exp("-s---a---r-d-|", lookup)


def test_done_flushes_open_calls_in_index_order() -> None:
    lookup = {
        **EVENTS,
        "r": request("call_1", "f", 0, {"x": 1}),
        "Q": request("call_2", "g", 1, {"y": [1, 2]}),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-s-t-o-m-p-n-u-(D,|)", lookup)
        results = start(source.pipe(accumulate_tool_arguments()))
        assert results == exp("-s-t---------u-(r,Q,D,|)", lookup)


def test_truncated_arguments_are_an_error_naming_call_and_tool() -> None:
    out = run(EVENTS["s"], EVENTS["z"], EVENTS["D"])
    assert out[0] == EVENTS["s"]
    assert len(out) == 2 and isinstance(out[1], Failed)
    error = out[1].error
    assert error.kind == "malformed_tool_arguments" and error.provider == P
    assert "call_1" in error.message and "'f'" in error.message
    assert error.raw == '{"x": '


def test_nothing_after_a_malformed_call() -> None:
    out = run(EVENTS["s"], EVENTS["z"], EVENTS["e"], EVENTS["a"], EVENTS["d"])
    assert [e.type for e in out] == ["tool_start", "error"]


def test_a_call_completed_without_arguments_has_no_parameters() -> None:
    ended = run(EVENTS["s"], EVENTS["e"], EVENTS["D"])
    assert ended == [EVENTS["s"], request("call_1", "f", 0, {}), EVENTS["D"]]


def test_a_call_still_open_and_empty_at_the_end_is_missing_not_invented() -> None:
    out = run(EVENTS["s"], EVENTS["D"])
    assert out[-1].type == "error" and "missing" in out[-1].error.message


def test_a_call_cut_off_before_its_completion_is_never_dispatched() -> None:
    out = run(EVENTS["s"], EVENTS["z"])
    assert [e.type for e in out] == ["tool_start"]


def test_explicit_empty_object_is_kept() -> None:
    out = run(EVENTS["s"], ToolArgs(0, "{}"), EVENTS["D"])
    assert out[1] == request("call_1", "f", 0, {}) and out[-1] == EVENTS["D"]


def test_json_that_is_not_an_object_is_malformed() -> None:
    out = run(EVENTS["s"], ToolArgs(0, "[1, 2]"), EVENTS["D"])
    assert out[-1].type == "error" and "JSON list" in out[-1].error.message


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(value: str) -> None:
    # json.loads reads them; JSON has no such values, and a browser refuses them
    out = run(EVENTS["s"], ToolArgs(0, f'{{"x": {value}}}'), EVENTS["D"])
    assert [e.type for e in out] == ["tool_start", "error"]
    assert out[-1].error.kind == "malformed_tool_arguments"
    assert f"{value} is not a JSON value" in out[-1].error.message


@pytest.mark.parametrize("value", ["1e400", "-1E999", "1" + "0" * 400 + ".5"])
def test_a_number_beyond_a_float_is_not_read_as_an_infinity(value: str) -> None:
    # json.loads reads it as inf, which no JSON writer can write back
    out = run(EVENTS["s"], ToolArgs(0, f'{{"x": {value}}}'), EVENTS["D"])
    assert [e.type for e in out] == ["tool_start", "error"]
    assert out[-1].error.kind == "malformed_tool_arguments"
    assert "beyond a float's range" in out[-1].error.message


def test_a_large_finite_float_and_a_huge_integer_are_read_exactly() -> None:
    out = run(EVENTS["s"], ToolArgs(0, '{"x": 1.5e308, "n": 1' + "0" * 30 + "}"), EVENTS["D"])
    assert out[1] == request("call_1", "f", 0, {"x": 1.5e308, "n": 10**30})


def test_authoritative_final_text_replaces_the_pieces() -> None:
    out = run(EVENTS["s"], ToolArgs(0, '{"x": 9'), ToolEnd(0, '{"x": 1}'), EVENTS["D"])
    assert out[1] == request("call_1", "f", 0, {"x": 1})


def test_an_error_drops_open_calls() -> None:
    out = run(EVENTS["s"], EVENTS["z"], EVENTS["x"])
    assert [e.type for e in out] == ["tool_start", "error"]
    assert out[1].error.kind == "stream_error"


def test_fragment_without_a_start_is_a_bug_in_the_normalizer() -> None:
    # The operator raises it in `on_next`. Where it goes next is the source's choice:
    # rxllm's sources report it with `on_error`; RxPY's `from_iterable` did so up to
    # 6.1.0 and lets it propagate since 6.1.1. Re-raised from `on_error`, it reaches
    # the caller either way.
    def reraise(error: Exception) -> None:
        raise error

    with pytest.raises(ValueError, match="arguments for tool call 0 before its start"):
        reactivex.from_iterable([EVENTS["m"]]).pipe(accumulate_tool_arguments()).subscribe(
            on_error=reraise
        )


def test_many_small_fragments_are_joined_once() -> None:
    big = {"items": [{"n": i, "s": "é" * 3} for i in range(2000)]}
    import json

    text = json.dumps(big, ensure_ascii=False)
    pieces = [ToolArgs(0, text[i : i + 3]) for i in range(0, len(text), 3)]
    out = run(EVENTS["s"], *pieces, EVENTS["D"])
    assert out[1].arguments == big


def test_state_is_per_subscription() -> None:
    source = reactivex.from_iterable([EVENTS["s"], EVENTS["m"], EVENTS["n"], EVENTS["D"]])
    stream = source.pipe(accumulate_tool_arguments())
    first: list[Any] = []
    second: list[Any] = []
    stream.subscribe(first.append)
    stream.subscribe(second.append)
    assert first == second and first[1] == request("call_1", "f", 0, {"x": 1})


def test_arguments_over_the_limit_end_the_stream_with_a_limit_error() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-s-m-n-e-D-|", EVENTS).pipe(accumulate_tool_arguments(6)))
    values = [r.value.value for r in results if r.value.kind == "N"]
    assert values[0] == EVENTS["s"]
    error = values[1].error
    assert error.kind == "limit" and "call_1" in error.message
    assert "max_tool_argument_bytes (6)" in error.message
    assert len(values) == 2  # nothing after the error: the call is not dispatched


def test_arguments_at_the_limit_pass() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-s-m-n-e-D-|", EVENTS).pipe(accumulate_tool_arguments(8)))
    types = [r.value.value.type for r in results if r.value.kind == "N"]
    assert types == ["tool_start", "tool_request", "done"]


@pytest.mark.parametrize("limit", [-1, "64", 1.5, True])
def test_bad_limits_are_refused_at_the_call(limit: Any) -> None:
    """`-1` made every argument fragment a limit error; the others raised at the first
    fragment."""
    with pytest.raises((TypeError, ValueError), match="max_argument_bytes"):
        accumulate_tool_arguments(limit)


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    """Providers send non-ASCII arguments unescaped: 112 characters of them are 312
    bytes, which passed a cap of 200 (a review of the hostile network), while the same
    bytes of ASCII were refused."""
    wide = '{"city": "' + "\u6771\u4eac" * 50 + '"}'  # 3 bytes a character
    assert len(wide) == 112 and len(wide.encode()) == 312
    for limit, ends in [(200, "error"), (312, "done")]:
        out: list[Any] = []
        reactivex.from_iterable([EVENTS["s"], ToolArgs(0, wide), ToolEnd(0), EVENTS["D"]]).pipe(
            accumulate_tool_arguments(limit)
        ).subscribe(out.append)
        assert out[-1].type == ends, (limit, out[-1])
        if ends == "error":
            assert out[-1].error.kind == "limit"


@pytest.mark.parametrize(
    ("stop_reason", "raw"),
    [("length", "max_tokens"), ("content_filter", "content_filter"), ("length", None)],
)
def test_a_call_cut_off_by_an_early_stop_names_the_stop(stop_reason: Any, raw: Any) -> None:
    """A refusal or a token limit that cuts a call off read as a model that wrote bad
    JSON (a review built these stops from the providers' references): the error names
    the stop, and carries it as its code."""
    done = Done(provider=P, stop_reason=stop_reason, raw_stop_reason=raw)
    (_, failure) = run(EVENTS["s"], EVENTS["z"], done)
    assert failure.error.kind == "malformed_tool_arguments"
    stop = raw or stop_reason
    assert f"the turn stopped ({stop}) before the call was complete" in failure.error.message
    assert failure.error.code == stop


def test_a_call_malformed_at_a_normal_end_names_no_stop() -> None:
    (_, failure) = run(EVENTS["s"], EVENTS["z"], EVENTS["D"])
    assert "stopped" not in failure.error.message and failure.error.code is None


def test_a_malformed_call_ends_the_turn_at_its_end_with_the_usage_before() -> None:
    """A call marked complete with malformed arguments fails the turn where it ends, so
    the usage sent after the call is reported (it was dropped with everything after the
    call), and a stop that cut the call short is named, as for a call still open then."""
    cut = Done(provider=P, stop_reason="length", raw_stop_reason="max_tokens")
    lookup = {**EVENTS, "L": cut}
    with marbles_testing() as (start, cold, _hot, _exp):
        source = cold("-s-z-e-a-t-o-u-L-|", lookup)
        results = start(source.pipe(accumulate_tool_arguments()))
    values = [r.value.value for r in results if r.value.kind == "N"]
    assert values[:2] == [EVENTS["s"], EVENTS["u"]] and len(values) == 3
    error = values[2].error
    assert error.kind == "malformed_tool_arguments" and error.code == "max_tokens"
    assert "the turn stopped (max_tokens) before the call was complete" in error.message
    assert results[-1].value.kind == "C"


@pytest.mark.parametrize(
    ("after", "types"),
    [
        ("ud", ["tool_start", "usage", "error"]),  # a natural end: no stop named
        ("fx", ["tool_start", "FailureUsage", "error"]),  # an error after it: the call's
        ("c", ["tool_start", "error"]),
        ("", ["tool_start", "error"]),  # a source that completes without a terminal
    ],
)
def test_a_malformed_call_s_error_is_the_first_failure_of_its_turn(
    after: str, types: list[str]
) -> None:
    out = run(EVENTS["s"], EVENTS["z"], EVENTS["e"], *(EVENTS[key] for key in after))
    assert [getattr(event, "type", type(event).__name__) for event in out] == types
    error = out[-1].error
    assert error.kind == "malformed_tool_arguments" and error.code is None
    assert "stopped" not in error.message
