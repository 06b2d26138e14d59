"""Text full of DSML's mark that opens no block (`<|DSML|` then anything but a block's
name) costs its length, not its length times its marks: the splitter looked at each such
mark by copying the rest of the delta, so one delta of 360,000 characters of them took
0.7 s of the event loop, and a host's 16 MB line far longer. No test here measures a
time: the copies are what made it quadratic, and they are counted in bytes."""

from __future__ import annotations

import tracemalloc

from rxllm.providers.dsml import DsmlSplitter

MARK = "<\uff5cDSML\uff5c"


def _peak_while_fed(delta: str) -> tuple[int, str]:
    """The most memory feeding `delta` held at once beyond `delta` itself, and the text
    that came out."""
    out: list[str] = []
    splitter = DsmlSplitter(out.append, len, lambda index, piece: None, lambda index, end: None)
    tracemalloc.start()
    try:
        splitter.feed(delta)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    splitter.flush()
    return peak, "".join(out)


def test_a_delta_of_marks_that_open_no_block_is_not_copied_per_mark() -> None:
    delta = f"{MARK}x " * 50_000  # 450,000 characters, two bytes each (the fullwidth bar)
    peak, text = _peak_while_fed(delta)
    assert text == delta
    assert peak < len(delta) // 4  # a copy of the rest at the first mark was the whole delta


def test_a_mark_still_arriving_at_the_end_is_still_held() -> None:
    """The guard of the same loop: a block's marker cut at the end of a delta waits for
    the next one, and prose around marks that open nothing comes out as it came."""
    out: list[str] = []
    calls: list[str] = []
    pieces: list[str] = []

    def start(name: str) -> int:
        calls.append(name)
        return 0

    splitter = DsmlSplitter(
        out.append, start, lambda index, piece: pieces.append(piece), lambda index, end: None
    )
    splitter.feed(f"a {MARK}x b {MARK}tool_ca")
    assert "".join(out) == f"a {MARK}x b "
    splitter.feed(f'lls>\n{MARK}invoke name="f">\n</{MARK[1:]}invoke>\n</{MARK[1:]}tool_calls> c')
    splitter.flush()
    assert "".join(out) == f"a {MARK}x b  c"
    assert (calls, "".join(pieces)) == (["f"], "{}")
