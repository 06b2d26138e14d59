"""A PDF on every wire, as each API takes a document: Anthropic's `document` block,
OpenAI's `file` part (Chat Completions) and `input_file` (Responses: platform.openai.com,
"File inputs": "Chat Completions accepts only PDF files as file content parts"), Gemini's
PDF data. Sent as an image, OpenAI refuses it ("Invalid MIME type. Only image types are
supported."), and a degraded retry took that for an endpoint without image input: the
turn went on without the document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.providers import wire_for
from tests.support import Serve

PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"
PDF_DATA = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0Y="
DATA_URL = f"data:application/pdf;base64,{PDF_DATA}"


def user_parts(provider: str, pdf: rxllm.ImagePart) -> list[dict[str, Any]]:
    message = rxllm.Message(role="user", content=[rxllm.TextPart(text="Summarize."), pdf])
    body = wire_for(provider).build_body(rxllm.ChatRequest(model="m", messages=[message]))
    if provider == "openai-responses":
        return list(body["input"][0]["content"])
    if provider == "google":
        return list(body["contents"][0]["parts"])
    return list(body["messages"][0]["content"])


@pytest.mark.parametrize(
    "pdf",
    [
        rxllm.ImagePart(url=DATA_URL),
        rxllm.ImagePart(url=PDF_BYTES),  # read into a data URL: the bytes say PDF
        rxllm.ImagePart(url=PDF_BYTES, media_type="application/pdf"),
    ],
)
@pytest.mark.parametrize(
    ("provider", "sent"),
    [
        (
            "openai",
            {"type": "file", "file": {"filename": "document.pdf", "file_data": DATA_URL}},
        ),
        (
            "openrouter",
            {"type": "file", "file": {"filename": "document.pdf", "file_data": DATA_URL}},
        ),
        # Mistral's `DocumentURLChunk` (its OCR takes this data URL in the same chunk); its
        # strict validation refuses OpenAI's `file` part, which it has no shape for.
        ("mistral", {"type": "document_url", "document_url": DATA_URL}),
        (
            "openai-responses",
            {"type": "input_file", "filename": "document.pdf", "file_data": DATA_URL},
        ),
        (
            "anthropic",
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_DATA},
            },
        ),
        ("google", {"inlineData": {"mimeType": "application/pdf", "data": PDF_DATA}}),
    ],
)
def test_a_pdf_goes_as_each_wire_takes_a_document(
    provider: str, sent: dict[str, Any], pdf: rxllm.ImagePart
) -> None:
    assert pdf.pdf
    assert user_parts(provider, pdf)[-1] == sent


def test_a_pdf_file_is_read_by_its_suffix_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(PDF_BYTES)
    assert rxllm.ImagePart(url=path).url == DATA_URL


REMOTE_PDF = rxllm.ImagePart(url="https://example.com/report.pdf", media_type="application/pdf")


@pytest.mark.parametrize(
    ("provider", "sent"),
    [
        ("openai-responses", {"type": "input_file", "file_url": "https://example.com/report.pdf"}),
        (
            # "PDFs can be sent as direct URLs or base64-encoded data URLs ... via the file
            # content type" (openrouter.ai/docs/features/multimodal/pdfs)
            "openrouter",
            {
                "type": "file",
                "file": {"filename": "document.pdf", "file_data": "https://example.com/report.pdf"},
            },
        ),
        # docs.mistral.ai, Document QnA: `{"type": "document_url", "document_url": url}`
        ("mistral", {"type": "document_url", "document_url": "https://example.com/report.pdf"}),
    ],
)
def test_a_remote_pdf_goes_by_url_where_the_api_fetches_one(
    provider: str, sent: dict[str, Any]
) -> None:
    assert user_parts(provider, REMOTE_PDF)[-1] == sent


@pytest.mark.parametrize("provider", ["openai", "azure-openai", "deepseek", "custom"])
def test_a_remote_pdf_is_refused_where_chat_completions_takes_its_data_only(
    provider: str,
) -> None:
    """OpenAI's Chat Completions: "External file URL (file_url): Not supported"."""
    with pytest.raises(rxllm.ConfigError, match="Chat Completions takes a PDF by its data"):
        user_parts(provider, REMOTE_PDF)


async def test_a_pdf_reaches_the_endpoint_as_a_file_never_removed_as_an_image(
    serve: Serve,
) -> None:
    """The endpoint refuses any part it takes for an image that is not one, as OpenAI
    does: the PDF must reach it as a file, in the one request."""
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        for part in body["messages"][0]["content"]:
            if part["type"] == "image_url" and "image/" not in part["image_url"]["url"]:
                error = {"message": "Invalid MIME type. Only image types are supported."}
                return web.json_response({"error": error}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = '{"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}'
        await response.write(f"data: {chunk}\n\ndata: [DONE]\n\n".encode())
        return response

    pdf = rxllm.ImagePart(url=PDF_BYTES)
    message = rxllm.Message(role="user", content=[rxllm.TextPart(text="Summarize."), pdf])
    provider = rxllm.provider("openai", api_key="sk-test-0123456789", base_url=await serve(handler))
    record = await provider.complete(rxllm.ChatRequest(model="gpt-4.1", messages=[message]))
    await provider.aclose()
    assert record.terminal.type == "done" and len(bodies) == 1
    assert record.attempts[0].images_removed == 0
    assert bodies[0]["messages"][0]["content"][1]["type"] == "file"
