"""Anthropic Messages request bodies, checked against bodies written from the API docs
and anthropic-sdk-python's param types (DocumentBlockParam, ToolResultBlockParam)."""

from __future__ import annotations

from typing import Any

import rxllm
from rxllm.providers.anthropic import Anthropic

Message, ToolCall = rxllm.Message, rxllm.ToolCall

PDF_DATA = "JVBERi0xLjQK"  # base64 of "%PDF-1.4\n"
PNG_DATA = "iVBORw0KGgo="
PNG_SOURCE = {"type": "base64", "media_type": "image/png", "data": PNG_DATA}


def messages(*conversation: rxllm.Message) -> list[dict[str, Any]]:
    request = rxllm.ChatRequest(model="m", messages=list(conversation))
    body: list[dict[str, Any]] = Anthropic().build_body(request)["messages"]
    return body


def call_and_result(result: rxllm.Message) -> list[dict[str, Any]]:
    """The user message of `tool_result` blocks that answers a call `toolu_1`."""
    sent = messages(
        Message.user("go"),
        Message.assistant(tool_calls=[ToolCall(id="toolu_1", name="f")]),
        result,
    )
    assert sent[1]["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]
    return sent[2:]


def test_a_pdf_data_url_is_a_document_block() -> None:
    # PDF support: {"type": "document", "source": {"type": "base64", "media_type":
    # "application/pdf", "data": ...}}; as an image the API refuses it (its base64 image
    # source takes image/jpeg, image/png, image/gif or image/webp only).
    sent = messages(Message.user("Summarize.", images=[f"data:application/pdf;base64,{PDF_DATA}"]))
    assert sent == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Summarize."},
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_DATA},
                },
            ],
        }
    ]


def test_a_remote_pdf_given_its_media_type_is_a_document_by_url() -> None:
    # URLPDFSourceParam: {"type": "url", "url": ...}; a URL says no type of its own,
    # so only the part's media_type makes it a document, and any other stays an image.
    pdf = rxllm.ImagePart(url="https://example.com/report.pdf", media_type="application/pdf")
    image = rxllm.ImagePart(url="https://example.com/a.jpg")
    sent = messages(Message(role="user", content=[rxllm.TextPart(text="Read."), pdf, image]))
    assert sent[0]["content"] == [
        {"type": "text", "text": "Read."},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
    ]


def test_a_pdf_inside_a_tool_result_is_a_document_block() -> None:
    # ToolResultBlockParam.content: str or [TextBlockParam | ImageBlockParam |
    # SearchResultBlockParam | DocumentBlockParam].
    result = Message(
        role="tool",
        tool_call_id="toolu_1",
        content=[
            rxllm.TextPart(text="The invoice and its scan:"),
            rxllm.ImagePart(url=f"data:Application/PDF;base64,{PDF_DATA}"),
            rxllm.ImagePart(url=f"data:image/png;base64,{PNG_DATA}"),
        ],
    )
    assert call_and_result(result) == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {"type": "text", "text": "The invoice and its scan:"},
                        {
                            "type": "document",
                            "source": {
                                "type": "base64",
                                "media_type": "application/pdf",
                                "data": PDF_DATA,
                            },
                        },
                        {"type": "image", "source": PNG_SOURCE},
                    ],
                }
            ],
        }
    ]


def test_a_tool_result_without_text_goes_without_content() -> None:
    # A tool that printed nothing: `"content": ""` is refused ("text content blocks
    # must be non-empty"; zed-industries/zed#27130, livekit/agents#1789), and blank text
    # too ("must contain non-whitespace text"); ToolResultBlockParam's `content` is
    # optional, so the result goes with its tool_use_id alone.
    for text in ("", " \n\t"):
        assert call_and_result(Message.tool("toolu_1", text)) == [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
        ]


def test_a_tool_result_of_text_keeps_it_as_it_is() -> None:
    # The documented form: "content": "259.75 USD", whitespace included.
    assert call_and_result(Message.tool("toolu_1", " 259.75 USD\n")) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": " 259.75 USD\n"}
            ],
        }
    ]
