"""Checks of what users pass the operator factories: a clear error at the call.

Without them a bad argument is accepted, and fails later, deep inside a stream: at
subscription, at the first event, or never visibly (`cap_events(-1)` dropped every
event and never completed). Each check runs once, when the factory is called; nothing
here runs per item.
"""

from __future__ import annotations

import math
from typing import Any

from reactivex import Observable, abc

__all__ = [
    "check_callable",
    "check_count",
    "check_observable",
    "check_scheduler",
    "check_seconds",
    "check_str",
]


def check_count(name: str, value: Any, minimum: int) -> int:
    """An `int` (not a `bool`) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_seconds(name: str, value: Any, *, zero: bool = False) -> float:
    """A finite number of seconds, above zero (or at least zero, with `zero`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        bound = "zero or more" if zero else "more than zero"
        raise ValueError(f"{name} must be a finite number of seconds, {bound}, got {value}")
    return float(value)


def check_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def check_callable(name: str, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")


def check_observable(name: str, value: Any) -> None:
    if not isinstance(value, Observable):
        raise TypeError(f"{name} must be an Observable, got {type(value).__name__}")


def check_scheduler(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, abc.SchedulerBase):
        raise TypeError(f"{name} must be a reactivex scheduler, got {type(value).__name__}")
