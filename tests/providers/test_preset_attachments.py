"""What the OpenAI-chat presets' endpoints cannot take as attachments is refused at the
call, naming the endpoint, rather than sent to a 400 whose degraded retries cost round
trips and send the turn on without the attachment.

- Ollama's /v1 takes an image by its data only: `decodeImageURL` (ollama/ollama,
  openai/openai.go) answers an `http(s)://` URL with 400 "image URLs are not currently
  supported, please use base64 encoded data instead".
- Some take no PDF at all, in any part: Ollama's /v1 reads `text` and `image_url`
  parts only (anything else: 400 "invalid message format", `FromChatRequest`),
  llama-server `text`, `image_url` and `input_audio` ("unsupported content[].type",
  tools/server/server-common.cpp), vLLM its own list, without `file` ("Unsupported chat
  content part type: 'file'", vllm/entrypoints/chat_utils.py), and Groq `text`,
  `image_url` and a `document` of JSON data (groq-python's
  `ChatCompletionContentPartParam`).
"""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.providers import wire_for
from tests.support import Serve

IMAGE_URL = "https://example.com/cat.png"
PNG_DATA_URL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    "DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
# Ollama's words for an image by URL (openai/openai.go, `decodeImageURL`), in the error
# envelope of its /v1 middleware (`NewError`: 400 is an `invalid_request_error`).
OLLAMA_IMAGE_URL_REFUSED = {
    "error": {
        "message": "image URLs are not currently supported, please use base64 encoded data instead",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}
PDF_DATA_URL = "data:application/pdf;base64,JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKJSVFT0YK"
REMOTE_PDF = rxllm.ImagePart(url="https://example.com/report.pdf", media_type="application/pdf")
NO_PDF_INPUT = ["ollama", "llamacpp", "vllm", "groq"]
OLLAMA_INVALID_MESSAGE_FORMAT = {
    "error": {
        "message": "invalid message format",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}
DONE = (
    b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def ollama_like(bodies: list[dict[str, Any]]) -> Any:
    """A handler that answers as Ollama's /v1 does: an image by URL and a part other
    than text or an image refused, any other body streamed "ok"; every body it receives
    kept in `bodies`."""

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        for message in body["messages"]:
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "image_url" and part["image_url"]["url"].startswith(
                    ("http://", "https://")
                ):
                    return web.json_response(OLLAMA_IMAGE_URL_REFUSED, status=400)
                if part.get("type") not in ("text", "image_url"):
                    return web.json_response(OLLAMA_INVALID_MESSAGE_FORMAT, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(DONE)
        return response

    return handler


def user_content(provider: str, part: rxllm.ImagePart) -> list[dict[str, Any]]:
    message = rxllm.Message(role="user", content=[rxllm.TextPart(text="What is it?"), part])
    body = wire_for(provider).build_body(rxllm.ChatRequest(model="m", messages=[message]))
    return list(body["messages"][0]["content"])


async def test_ollama_refuses_an_image_by_url_at_the_call_and_sends_nothing(
    serve: Serve,
) -> None:
    bodies: list[dict[str, Any]] = []
    provider = rxllm.provider("ollama", base_url=await serve(ollama_like(bodies)))
    request = rxllm.ChatRequest(
        model="llava", messages=[rxllm.Message.user("What is it?", images=[IMAGE_URL])]
    )
    try:
        with pytest.raises(rxllm.ConfigError, match=r"ollama takes an image by its data only"):
            await provider.complete(request)
    finally:
        await provider.aclose()
    assert bodies == []


async def test_ollama_takes_an_image_as_a_data_url_in_one_request(serve: Serve) -> None:
    bodies: list[dict[str, Any]] = []
    provider = rxllm.provider("ollama", base_url=await serve(ollama_like(bodies)))
    request = rxllm.ChatRequest(
        model="llava", messages=[rxllm.Message.user("What is it?", images=[PNG_DATA_URL])]
    )
    record = await provider.complete(request)
    await provider.aclose()
    assert record.terminal.type == "done" and record.text == "ok"
    assert len(bodies) == 1 and record.attempts[0].images_removed == 0
    assert bodies[0]["messages"][0]["content"][-1] == {
        "type": "image_url",
        "image_url": {"url": PNG_DATA_URL},
    }


def test_an_image_in_a_tool_result_is_refused_by_url_on_ollama_too() -> None:
    """The images of tool results go in the user message after them: the same rule."""
    call = rxllm.ToolCall(id="call_1", name="look", arguments={})
    messages = [
        rxllm.Message.user("Look."),
        rxllm.Message.assistant(tool_calls=[call]),
        rxllm.Message(
            role="tool",
            tool_call_id="call_1",
            content=[rxllm.TextPart(text="here"), rxllm.ImagePart(url=IMAGE_URL)],
        ),
    ]
    request = rxllm.ChatRequest(model="m", messages=messages)
    with pytest.raises(rxllm.ConfigError, match=r"ollama takes an image by its data only"):
        wire_for("ollama").build_body(request)
    assert wire_for("vllm").build_body(request)["messages"][-1]["content"][-1] == {
        "type": "image_url",
        "image_url": {"url": IMAGE_URL},
    }


@pytest.mark.parametrize(
    "provider", ["openai", "groq", "vllm", "llamacpp", "together", "nvidia", "xai", "zai"]
)
def test_the_other_chat_presets_still_send_an_image_by_its_url(provider: str) -> None:
    """llama-server downloads an `http` image itself (tools/server/server-common.cpp,
    `handle_media`), vLLM fetches one; the rest are unconfirmed, and keep OpenAI's way."""
    sent = user_content(provider, rxllm.ImagePart(url=IMAGE_URL))
    assert sent[-1] == {"type": "image_url", "image_url": {"url": IMAGE_URL}}


async def test_ollama_refuses_a_pdf_at_the_call_and_sends_nothing(serve: Serve) -> None:
    bodies: list[dict[str, Any]] = []
    provider = rxllm.provider("ollama", base_url=await serve(ollama_like(bodies)))
    request = rxllm.ChatRequest(
        model="qwen3", messages=[rxllm.Message.user("Summarize.", images=[PDF_DATA_URL])]
    )
    try:
        with pytest.raises(rxllm.ConfigError, match=r"^ollama takes no PDF input"):
            await provider.complete(request)
    finally:
        await provider.aclose()
    assert bodies == []


@pytest.mark.parametrize("pdf", [rxllm.ImagePart(url=PDF_DATA_URL), REMOTE_PDF])
@pytest.mark.parametrize("provider", NO_PDF_INPUT)
def test_a_pdf_is_refused_where_the_endpoint_takes_none(
    provider: str, pdf: rxllm.ImagePart
) -> None:
    assert pdf.pdf
    with pytest.raises(rxllm.ConfigError, match=rf"^{provider} takes no PDF input"):
        user_content(provider, pdf)


@pytest.mark.parametrize("provider", ["openai", "together", "nvidia", "xai", "zai", "custom"])
def test_the_other_chat_presets_still_send_a_pdf_as_openai_s_file_part(provider: str) -> None:
    """Unconfirmed either way for these: they keep OpenAI's `file` part."""
    sent = user_content(provider, rxllm.ImagePart(url=PDF_DATA_URL))
    assert sent[-1] == {
        "type": "file",
        "file": {"filename": "document.pdf", "file_data": PDF_DATA_URL},
    }
