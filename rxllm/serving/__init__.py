"""rxllm.serving (extra `rxllm[serving]`): serve a turn to a browser, resumably.

The UI message stream encoder needs only rxllm's core; the Redis log needs the extra,
so it is imported when first asked for (`from rxllm.serving import RedisLog`)."""

from typing import TYPE_CHECKING, Any

from rxllm.serving.ui_message_stream import (
    UI_MESSAGE_STREAM_HEADERS,
    UIMessageEncoder,
    generic_error_text,
    ui_message_stream,
)

if TYPE_CHECKING:
    from rxllm.serving.redis_log import RedisLog, UnknownStream

__all__ = [
    "UI_MESSAGE_STREAM_HEADERS",
    "RedisLog",
    "UIMessageEncoder",
    "UnknownStream",
    "generic_error_text",
    "ui_message_stream",
]


def __getattr__(name: str) -> Any:
    if name in ("RedisLog", "UnknownStream"):
        try:
            from rxllm.serving import redis_log
        except ModuleNotFoundError as exc:
            raise ImportError(
                f"rxllm.serving.{name} needs the redis client: pip install 'rxllm[serving]'"
            ) from exc
        return getattr(redis_log, name)
    raise AttributeError(f"module 'rxllm.serving' has no attribute {name!r}")
