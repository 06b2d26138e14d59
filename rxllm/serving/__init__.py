"""rxllm.serving (extra `rxllm[serving]`): serve a turn to a browser, resumably."""

from rxllm.serving.redis_log import RedisLog, UnknownStream

__all__ = ["RedisLog", "UnknownStream"]
