"""Review of session 34's library changes: what the commits' own tests left unguarded.

- 525f200 made a status envelope (a nonzero `error_code`, MiniMax's `base_resp`) an error
  body, so a `200 OK` answering one whole in place of the stream reaches the HTTP source's
  reading of an error object (`sources/raw.py`). Baidu Qianfan's v1 error,
  `{"error_code": 110, "error_msg": "Access token invalid or no longer valid"}`, has its
  words under a key no envelope reads: it read as an error with no message at all, where
  the same object as a frame (or through `rxllm.replay`) shows what the server sent, and
  where before the commit the `protocol` error quoted it.
"""

from __future__ import annotations

import json

import pytest

import rxllm
from tests.support import ServeBody, replay

ASK = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])

# (Baidu's `error_msg` is read as the words of its status envelope since
# test_probe_rejections_48: its bodies are no longer wordless, `test_baidus_words_are_shown`.)
WORDLESS = [
    {"error": {"code": 400, "detail_text": "the request has no model"}},
    {"error_code": 110, "error_detail": "Access token invalid or no longer valid"},
]


@pytest.mark.parametrize("body", WORDLESS, ids=["error-no-message", "status-no-words"])
async def test_a_whole_error_body_without_words_shows_what_was_sent(
    serve_body: ServeBody, body: dict[str, object]
) -> None:
    text = json.dumps(body)
    url = await serve_body(text.encode())
    async with rxllm.provider("openai", api_key="k", base_url=url, max_attempts=1) as p:
        over_http = await p.complete(ASK)
    terminal = over_http.terminal
    assert terminal.type == "error"
    assert terminal.error.kind == "stream_error"
    assert terminal.error.message == text
    # as the same bytes read without the HTTP source say it
    replayed = replay(text.encode(), "openai")[-1]
    assert replayed.type == "error" and replayed.error.message == terminal.error.message


@pytest.mark.parametrize(
    "body",
    [
        {"error_code": 110, "error_msg": "Access token invalid or no longer valid"},
        {"error_code": 18, "error_msg": "Open api qps request limit reached"},
    ],
    ids=["baidu-110", "baidu-18"],
)
async def test_baidus_words_are_shown(serve_body: ServeBody, body: dict[str, object]) -> None:
    url = await serve_body(json.dumps(body).encode())
    async with rxllm.provider("openai", api_key="k", base_url=url, max_attempts=1) as p:
        over_http = await p.complete(ASK)
    terminal = over_http.terminal
    assert terminal.type == "error"
    assert terminal.error.message == body["error_msg"]
    assert terminal.error.code == str(body["error_code"])
    replayed = replay(json.dumps(body).encode(), "openai")[-1]
    assert replayed.type == "error" and replayed.error.message == terminal.error.message


async def test_a_wordless_error_body_quoted_whole_never_shows_the_key(
    serve_body: ServeBody,
) -> None:
    key = "sk-review-s34-0123456789abcdef"
    body = {"error_code": 110, "error_msg": f"Access token {key} invalid or no longer valid"}
    url = await serve_body(json.dumps(body).encode())
    async with rxllm.provider("openai", api_key=key, base_url=url, max_attempts=1) as p:
        record = await p.complete(ASK)
    error = record.terminal.error  # type: ignore[union-attr]
    assert "Access token" in error.message and "invalid or no longer valid" in error.message
    assert key not in error.message and key[:12] not in error.message
