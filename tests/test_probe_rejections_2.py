"""More real rejections (tests/rejections_extra), replayed exactly as the shared ones.

Each file is one rejection from a public issue, PR or log, in the shared cases' shape
(../shared/rejections/INDEX.md): its `source` names where the body comes from and `notes`
how it was rebuilt. They were collected to test that recovery generalizes to wordings
the shared cases do not hold: keys named in prose ("Frequency penalty"), against
Chinese text ("max_tokens参数非法"), by JSON pointers ("#/store"), a capability's own
name ("Json Output"), image parts the deserializer does not know ("unknown variant
`image_url`"), and rejections whose words merely contain a body key (`metadata`,
`user`) that a careless matcher would drop. A case's `trap_params` are such keys; they
ride in `params`, so every retry must keep them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_rejections import rejecting
from tests.test_rejections import test_rejection as replay

__all__ = ["rejecting"]  # the loopback server fixture, shared with the replayed cases

EXTRA = Path(__file__).parent / "rejections_extra"
CASES = sorted(EXTRA.glob("*.json"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
async def test_extra_rejection(path: Path, rejecting: Any) -> None:
    await replay(path, rejecting)
