"""A real redis-server process on a free loopback port, for the serving tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from types import TracebackType

import pytest

REDIS_SERVER = shutil.which("redis-server")
NO_REDIS = (
    "needs redis-server (Debian: apt-get install -y redis-server; .ci/run installs it); "
    "under CI=true its absence fails"
)


def require_redis() -> str:
    """The redis-server binary; skip without it, except in CI where it must be there."""
    if REDIS_SERVER is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but redis-server is missing: .ci/run should install it")
        pytest.skip(NO_REDIS)
    return REDIS_SERVER


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """`with RedisServer(binary) as server:` then connect to `server.url`."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> RedisServer:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.process.stderr!r}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
