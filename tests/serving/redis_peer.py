"""Another process on the same log: `python -m tests.serving.redis_peer resume|produce`.

`resume URL PREFIX SID AFTER` prints one JSON line per entry, [id, event], to the end.
`produce URL PREFIX SID BASE_URL MODEL LEASE_MS` starts a stream from the local
provider at BASE_URL, prints `started`, and follows its live entries (until killed).
"""

from __future__ import annotations

import asyncio
import json
import sys

import rxllm
from rxllm.serving import RedisLog


async def resume(url: str, prefix: str, sid: str, after: str) -> None:
    async with RedisLog(url, prefix=prefix) as log:
        async for entry_id, event in log.resume(sid, after=after):
            print(json.dumps([entry_id, event.model_dump(mode="json")]), flush=True)


async def produce(url: str, prefix: str, sid: str, base_url: str, model: str, lease: str) -> None:
    provider = rxllm.provider("local", base_url=base_url)
    request = rxllm.ChatRequest(model=model, messages=[rxllm.Message.user("hi")])
    async with RedisLog(url, prefix=prefix, lease_ms=int(lease)) as log:
        live = await log.start(sid, provider.stream(request))
        print("started", flush=True)
        async for _ in live:
            pass


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    asyncio.run(resume(*args) if command == "resume" else produce(*args))
