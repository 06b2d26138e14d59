"""Instructions a Python child runs, counted by `valgrind --tool=callgrind`: for the
changes a clock cannot tell apart. A child that waits for nothing counts alike from run
to run; one that talks to a server (`scale`'s first pass) counts what the kernel did by
then too, steady on a quiet machine only.

The child runs first outside valgrind (its bytecode cached, as an installed copy's),
then under it with the hash seed and, where `setarch` is found, the address layout
fixed, so that two runs of one tree count alike.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping

__all__ = ["instructions", "missing"]


def missing() -> str | None:
    """Why instructions cannot be counted here, or None."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed: --instructions needs it"
    return None


def instructions(args: list[str], env: Mapping[str, str] | None = None) -> int:
    """The instructions of `python *args`, the whole process's."""
    env = {**os.environ, **(env or {}), "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, *args], check=True, env=env, capture_output=True)
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if shutil.which("setarch"):
        command = ["setarch", "-R", *command]  # the same address layout in every run
    out = subprocess.run([*command, sys.executable, *args], env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind failed: {out.stderr[-2000:]}")
    return int(found.group(1))
