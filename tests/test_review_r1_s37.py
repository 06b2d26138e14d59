"""Session 37's review: readings a commit of this session broke, each beside the case the
commit meant, which still reads as it decided."""

from __future__ import annotations

import pytest

from tests.rejection_rounds import openai_error
from tests.test_probe_rejections_7 import body, frame, response

# -- storage said full where the server says a wait helps (6411bed) ------------------------

# 6411bed surfaces the caller's own storage said full ("Your file storage is full. Delete
# files ..."): it frees only as the caller deletes. It read storage before anything else,
# so a store said full or at its limit that a wait frees, in the server's own words, lost
# the backoff it had at a2ae8b1.


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "Storage capacity reached, try again in 30 seconds"),
        (503, "Server storage is full, please try again later"),
        (429, "Your request was rate limited: storage requests limit exceeded, retry after 2s"),
        (503, "Upstream object storage capacity exceeded, retry later"),
    ],
)
def test_storage_full_that_a_wait_frees_backs_off(status: int, message: str) -> None:
    assert response(status, openai_error(message), body(temperature=0.5)).action == "backoff"
    assert frame({"message": message}, body(temperature=0.5)).action == "backoff"


@pytest.mark.parametrize(
    "message",
    [
        "Your file storage is full. Delete files to free up space.",
        # (a retry once the caller deleted: no wait said)
        "Vector store is full. Delete some files and retry.",
        "File storage limit reached. Try again after deleting files.",
    ],
)
def test_the_callers_storage_full_still_surfaces(message: str) -> None:
    assert response(429, openai_error(message), body(temperature=0.5)).action == "surface"
