"""rxllm.serving (extra `rxllm[serving]`): serve a turn to a browser, resumably."""

from rxllm.serving.ui_message_stream import UI_MESSAGE_STREAM_HEADERS, ui_message_stream

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "ui_message_stream"]
