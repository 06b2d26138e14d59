"""Streams of cloud platforms' model endpoints, from their SDKs' and integrations' code,
tests and docs: Databricks Model Serving (as LiteLLM's Databricks transformation and
its tests read it), IBM watsonx.ai's chat stream (its Java SDK's tests), Cloudflare
Workers AI (cloudflare/ai's workers-ai-provider), the Hugging Face router's Responses
endpoint (vercel/ai's huggingface provider tests, and huggingface/responses.js that
writes it), Fireworks AI's repeated call fields (a SillyTavern thread), Amazon Bedrock
(Claude's stream stopped by a guardrail as relays pass it on, the Mantle Responses
stream's type-less error frame, from vercel/ai's amazon-bedrock tests), and Anthropic on
Vertex AI (its `vertex_event`), in shapes no other test replays.

Each body is written by hand from the source named beside it (its essential chunks or
events, ids and long text shortened), replayed whole and cut at arbitrary byte
boundaries (`replay_every_way`), and checked against what a client of that endpoint
should get.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Citation
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    """`data:` frames of the payloads (a string is written as it is), then `[DONE]`."""
    frames = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    body = "".join(f"data: {frame}\n\n" for frame in frames)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


# -- Databricks Model Serving -------------------------------------------------------------


def _databricks(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Any:
    """A chunk of a Databricks serving endpoint's chat stream."""
    return {
        "id": "chatcmpl_6f1d0c2a",
        "object": "chat.completion.chunk",
        "created": 1744000000,
        "model": "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _summary(text: str, **signature: str) -> dict[str, Any]:
    """Databricks' reasoning content part: `{"type": "reasoning", "summary": [...]}`."""
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text, **signature}]}


def test_databricks_reasoning_parts_in_the_content_list_are_the_reasoning() -> None:
    """Databricks serves Claude's thinking (and gpt-oss's reasoning) as a `reasoning` part
    of a content list, `{"type": "reasoning", "summary": [{"type": "summary_text", "text",
    "signature"}]}`, beside `{"type": "text", "text"}` parts: the response BerriAI/litellm#9700
    quotes, and LiteLLM's `DatabricksChatResponseIterator.chunk_parser` reads each streamed
    delta's `content` list so (`extract_reasoning_content`: every summary's text is
    reasoning, its signature the thinking block's; tests/test_litellm/llms/databricks/chat/
    test_databricks_chat_transformation.py, gpt-oss's summaries without a signature). The
    reasoning, signed once where a signature came, then the text. Before: the reasoning
    part was logged as a content chunk with no event, and the reasoning lost."""
    signature = "EqoBCkgIAhABGAIiQN6qnTjZq/CmpMmmjLoEKOpi+IB+7AH0zyUh4sQva4vTcn"
    usage = {"prompt_tokens": 41, "completion_tokens": 96, "total_tokens": 137}
    body = _sse(
        _databricks({"role": "assistant", "content": [_summary("I need five ")]}),
        _databricks({"role": "assistant", "content": [_summary("question pairs.")]}),
        _databricks({"role": "assistant", "content": [_summary("", signature=signature)]}),
        _databricks({"role": "assistant", "content": [{"type": "text", "text": "# 5 Question"}]}),
        _databricks({"role": "assistant", "content": " and Answer Pairs"}),
        _databricks({"role": "assistant", "content": ""}, "stop", usage=usage),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="# 5 Question and Answer Pairs",
            reasoning="I need five question pairs.",
            signatures=1,
            usage=(41, 96, 0, 0, 137),
            model="us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]
    assert events[2].signature == signature  # type: ignore[union-attr]

    # gpt-oss on Databricks: summaries without a signature.
    body = _sse(
        _databricks({"role": "assistant", "content": [_summary("The user greets.")]}),
        _databricks({"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]}, "stop"),
    )
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(
            text="Hi!",
            reasoning="The user greets.",
            model="us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        ),
    )


# -- IBM watsonx.ai -----------------------------------------------------------------------


def _watsonx(number: int, choices: list[Any], **extra: Any) -> str:
    """One frame of watsonx.ai's `/ml/v1/text/chat_stream`: an `id:` and `event: message`
    line before each `data:`, the chunk naming its model twice (`model_id`, `model`)."""
    chunk = {
        "id": "chatcmpl-cc34b5ea3120fa9e",
        "object": "chat.completion.chunk",
        "model_id": "ibm/granite-3-3-8b-instruct",
        "model": "ibm/granite-3-3-8b-instruct",
        "choices": choices,
        "created": 1749764735,
        "model_version": "3.3.0",
        "created_at": "2025-06-12T21:45:35.150Z",
        **extra,
    }
    return f"id: {number}\nevent: message\ndata: {json.dumps(chunk)}\n\n"


def _choice(delta: dict[str, Any], finish: str | None = None) -> list[Any]:
    return [{"index": 0, "finish_reason": finish, "delta": delta}]


def test_watsonx_chat_stream_ends_with_its_usage_chunk_and_no_done() -> None:
    """IBM/watsonx-ai-java-sdk's ChatService streaming tests (the wire mocked from
    `/ml/v1/text/chat_stream`): each frame has an `id:` and `event: message`; the role
    chunk carries `system.warnings` (a limit the service set); each call opens with its id,
    name and `""` arguments, its arguments come whole in one continuation fragment that
    names the call `""`; the `tool_calls` finish rides on the last fragment; a chunk with
    no choices carries the usage; then the body ends: no `[DONE]`. Its
    SseEventProcessorTest: `moderations` and `detections` (watsonx's PII guardrail) beside
    the text, the finish in a chunk of its own. Both calls once, the usage, `tool_use`;
    the text once, whatever the guardrail flagged in it."""
    add = json.dumps({"firstNumber": 2, "secondNumber": 2})
    warning = {
        "message": "The value of 'max_completion_tokens' for this model was set to value 1024",
        "id": "unspecified_max_completion_tokens",
    }
    body = "".join(
        (
            _watsonx(
                1, _choice({"role": "assistant", "content": ""}), system={"warnings": [warning]}
            ),
            _watsonx(2, _choice({"content": ""})),
            _watsonx(
                3,
                _choice(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "chatcmpl-tool-af37",
                                "type": "function",
                                "function": {"name": "sum", "arguments": ""},
                            }
                        ]
                    }
                ),
            ),
            _watsonx(
                4,
                _choice({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": add}}]}),
            ),
            _watsonx(
                5,
                _choice(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "chatcmpl-tool-f762",
                                "type": "function",
                                "function": {"name": "subtraction", "arguments": ""},
                            }
                        ]
                    }
                ),
            ),
            _watsonx(
                6,
                _choice(
                    {"tool_calls": [{"index": 1, "function": {"name": "", "arguments": add}}]},
                    "tool_calls",
                ),
            ),
            _watsonx(
                7, [], usage={"completion_tokens": 49, "prompt_tokens": 319, "total_tokens": 368}
            ),
        )
    ).encode()
    events = replay_every_way(body, "custom")
    numbers = {"firstNumber": 2, "secondNumber": 2}
    check(
        summarize(events),
        Expect(
            text="",
            tools=(
                ("chatcmpl-tool-af37", "sum", numbers),
                ("chatcmpl-tool-f762", "subtraction", numbers),
            ),
            usage=(319, 49, 0, 0, 368),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="ibm/granite-3-3-8b-instruct",
        ),
    )

    text = "Sure, your phone numbers are 3572865321."
    pii = {
        "score": 0.8,
        "input": False,
        "position": {"start": 29, "end": 39},
        "entity": "PhoneNumber",
        "word": "3572865321",
    }
    detection = {
        "detector_id": "en_syntax_rbr_pii",
        "detection_type": "pii",
        "detection": "PhoneNumber",
        "score": 0.8,
        "text": "3572865321",
    }
    body = "".join(
        (
            _watsonx(
                1,
                _choice({"role": "assistant", "content": text}),
                moderations={"pii": [pii]},
                detections={"output": [{"choice_index": 0, "results": [detection]}]},
            ),
            _watsonx(2, _choice({"role": "assistant"}, "stop")),
            _watsonx(
                3, [], usage={"completion_tokens": 19, "prompt_tokens": 49, "total_tokens": 68}
            ),
        )
    ).encode()
    check(
        summarize(replay_every_way(body, "custom")),
        Expect(text=text, usage=(49, 19, 0, 0, 68), model="ibm/granite-3-3-8b-instruct"),
    )


# -- Cloudflare Workers AI ------------------------------------------------------------------


def test_workers_ai_openai_shaped_run_stream_changes_its_id_and_counts_on_every_chunk() -> None:
    """cloudflare/ai packages/workers-ai-provider test/stream-text.test.ts ("content and
    reasoning_content"): Workers AI's `/ai/run` stream of a reasoning model in OpenAI's
    shape carries a running `usage` on every chunk, changes the chunk `id` between the
    reasoning and the answer (`chatcmpl-edc8...` then `chatcmpl-7047...`), sends no
    finish reason, and closes with a chunk of no choices holding the final count. One
    turn: the reasoning, then the text, the last count, `done` at `[DONE]`."""
    model = "@cf/qwen/qwq-32b"

    def chunk(chunk_id: str, delta: dict[str, Any] | None, completion: int) -> dict[str, Any]:
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]
        )
        usage = {
            "prompt_tokens": 13,
            "total_tokens": 13 + completion,
            "completion_tokens": completion,
        }
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": 1751570976,
            "model": model,
            "choices": choices,
            "usage": usage,
        }

    body = _sse(
        chunk("chatcmpl-edc8406714f7", {"role": "assistant", "content": ""}, 0),
        chunk("chatcmpl-edc8406714f7", {"reasoning_content": "Okay"}, 3),
        chunk("chatcmpl-edc8406714f7", {"reasoning_content": ", the user is asking"}, 6),
        chunk("chatcmpl-7047b0aace8d", {"content": "A"}, 448),
        chunk("chatcmpl-7047b0aace8d", {"content": " **cow is cool"}, 450),
        chunk("chatcmpl-7047b0aace8d", None, 1022),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="A **cow is cool",
            reasoning="Okay, the user is asking",
            usage=(13, 1022, 0, 0, 1035),
            raw_stop_reason=None,
            model=model,
        ),
    )


def test_workers_ai_call_closed_by_a_null_finalization_entry() -> None:
    """cloudflare/ai packages/workers-ai-provider src/streaming.ts (`emitToolCallDeltas`,
    `isNullFinalizationChunk`): Workers AI streams a call as a start `{id, type, index,
    function: {name}}` with no arguments, argument fragments `{index, function:
    {arguments}}`, then a finalizing entry `{id: null, type: null, function: {name: null}}`
    with no index and no arguments, which its reader skips. One call, its arguments
    whole; the finalizing entry is no second call and adds nothing."""
    model = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-9b1e",
            "object": "chat.completion.chunk",
            "created": 1751570976,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def calls(*entries: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": list(entries)}

    start = {
        "id": "chatcmpl-tool-4c2a",
        "type": "function",
        "index": 0,
        "function": {"name": "get_weather"},
    }
    body = _sse(
        chunk({"role": "assistant", "content": ""}),
        chunk(calls(start)),
        chunk(calls({"index": 0, "function": {"arguments": '{"location": '}})),
        chunk(calls({"index": 0, "function": {"arguments": '"London"}'}})),
        chunk(calls({"id": None, "type": None, "function": {"name": None}})),
        chunk({}, "tool_calls"),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("chatcmpl-tool-4c2a", "get_weather", {"location": "London"}),),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model=model,
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "done"]


# -- Hugging Face Inference Providers ---------------------------------------------------------


def test_hugging_face_router_responses_stream_as_the_ai_sdk_provider_reads_it() -> None:
    """vercel/ai packages/huggingface (its Responses model, `router.huggingface.co/v1/
    responses`) doStream tests: `data:` with no space and no `event:` lines, events with a
    `sequence_number`; the message's `output_item.done` repeats its whole text (or carries
    no content at all), and `response.completed` holds the usage, or `usage: null` with
    only the id and status. The text once; the usage where counted; `done(stop)`."""
    model = "deepseek-ai/DeepSeek-V3-0324"
    message = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello, World!"}],
    }

    def frames(*events: dict[str, Any]) -> bytes:
        return "".join(f"data:{json.dumps(event)}\n\n" for event in events).encode()

    def delta(text: str, number: int) -> dict[str, Any]:
        return {
            "type": "response.output_text.delta",
            "item_id": "msg_test",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
            "sequence_number": number,
        }

    opened = {"id": "msg_test", "type": "message", "role": "assistant", "status": "in_progress"}
    body = frames(
        {
            "type": "response.created",
            "response": {
                "id": "resp_test",
                "object": "response",
                "created_at": 1741269019,
                "status": "in_progress",
                "model": model,
            },
        },
        {"type": "response.in_progress", "response": {"id": "resp_test", "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**opened, "content": []},
            "sequence_number": 1,
        },
        delta("Hello,", 2),
        delta(" World!", 3),
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": message,
            "sequence_number": 4,
        },
        {
            "type": "response.completed",
            "sequence_number": 5,
            "response": {
                "id": "resp_test",
                "model": model,
                "object": "response",
                "status": "completed",
                "incomplete_details": None,
                "output": [message],
                "usage": {"input_tokens": 12, "output_tokens": 25, "total_tokens": 37},
            },
        },
    )
    check(
        summarize(replay_every_way(body, "openai-responses")),
        Expect(
            text="Hello, World!", usage=(12, 25, 0, 0, 37), raw_stop_reason="completed", model=model
        ),
    )

    body = frames(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": opened,
            "sequence_number": 1,
        },
        delta("Hi!", 2),
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**opened, "status": "completed"},
            "sequence_number": 3,
        },
        {
            "type": "response.completed",
            "sequence_number": 4,
            "response": {
                "id": "resp_test",
                "status": "completed",
                "incomplete_details": None,
                "usage": None,
            },
        },
    )
    check(
        summarize(replay_every_way(body, "openai-responses")),
        Expect(text="Hi!", raw_stop_reason="completed"),
    )


def test_databricks_text_part_citations_are_cited_or_logged() -> None:
    """BerriAI/litellm tests/test_litellm/llms/databricks/chat/
    test_databricks_chat_transformation.py (`test_chunk_parser_with_citation`): Databricks
    serving Claude passes Anthropic's citations on in a text part of the streamed content
    list, `{"type": "text", "text": "", "citations": [{"type": "char_location",
    "cited_text", "document_index", "document_title", ...}]}`. A document's citation names
    no URL (an index into documents the client sent): logged, as the Anthropic wire logs it;
    one with a `url` (Anthropic's `web_search_result_location`) is a citation. The text
    once. Before: the citations were dropped unsaid."""
    document = {
        "type": "char_location",
        "cited_text": "The sky is blue.",
        "document_index": 0,
        "document_title": "My Document",
        "start_char_index": 0,
        "end_char_index": 50,
    }
    page = {
        "type": "web_search_result_location",
        "url": "https://example.com/sky",
        "title": "Sky",
        "cited_text": "The sky is blue.",
        "encrypted_index": "Eo8B",
    }
    body = _sse(
        _databricks(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Blue", "citations": [document]}],
            }
        ),
        _databricks(
            {"role": "assistant", "content": [{"type": "text", "text": ".", "citations": [page]}]}
        ),
        _databricks({"role": "assistant", "content": ""}, "stop"),
    )
    with log_messages() as logs:
        events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="Blue.", model="us.anthropic.claude-3-7-sonnet-20250219-v1:0"),
    )
    cited = [event for event in events if isinstance(event, Citation)]
    assert [(c.url, c.title, c.cited_text) for c in cited] == [
        ("https://example.com/sky", "Sky", "The sky is blue.")
    ]
    assert any("char_location" in message and "no url" in message for message in logs)


# -- Fireworks AI ---------------------------------------------------------------------------


def test_fireworks_repeats_a_calls_id_type_and_name_on_every_fragment() -> None:
    """SillyTavern/SillyTavern#5948 (the raw chunks of Fireworks AI serving GLM,
    `accounts/fireworks/models/glm-5p2`): every fragment of a call repeats its `index`,
    `id`, `type` and `function.name` beside the next piece of `arguments`, with a stray
    `"name": null` on the call and `"raw_output": null` on the choice; clients that
    concatenate what repeats doubled the id and the name. One call, its id and name
    once, its arguments whole."""

    def fragment(arguments: str) -> dict[str, Any]:
        call = {
            "index": 0,
            "id": "chatcmpl-tool-aa62",
            "type": "function",
            "name": None,
            "function": {"name": "debug_tool", "arguments": arguments},
        }
        return {"tool_calls": [call]}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-b7de",
            "object": "chat.completion.chunk",
            "created": 1783459695,
            "model": "accounts/fireworks/models/glm-5p2",
            "usage": None,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "raw_output": None}],
            **extra,
        }

    usage = {"prompt_tokens": 812, "completion_tokens": 24, "total_tokens": 836}
    body = _sse(
        chunk({"role": "assistant", "content": None}),
        chunk(fragment("")),
        chunk(fragment('{"level": ')),
        chunk(fragment('"verbose"}')),
        chunk({}, "tool_calls", usage=usage),
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="",
            tools=(("chatcmpl-tool-aa62", "debug_tool", {"level": "verbose"}),),
            usage=(812, 24, 0, 0, 836),
            stop_reason="tool_use",
            raw_stop_reason="tool_calls",
            model="accounts/fireworks/models/glm-5p2",
        ),
    )
    assert kinds(events) == ["tool_start", "tool_request", "usage", "done"]


# -- Amazon Bedrock -------------------------------------------------------------------------


def test_bedrock_claude_stopped_by_a_guardrail_is_a_content_filter() -> None:
    """Claude on Bedrock's InvokeModelWithResponseStream, as relays pass its events on in
    the Messages wire: where a Bedrock guardrail blocks the answer, the text is the
    guardrail's configured message (vercel/ai#2968: "Sorry, the model cannot answer this
    question.") and the `message_delta` says `{"stop_reason": "guardrail_intervened",
    "stopSequences": null}` with no `stop_sequence` (langchain-ai/langchain-aws#176, whose
    reader failed on the missing key, and #937); `message_stop` carries
    `amazon-bedrock-invocationMetrics`. The turn was blocked: `done(content_filter)`, the
    raw reason kept, as the chat wire reads Bedrock's word. Before: `done(other)`."""
    notice = "Sorry, the model cannot answer this question."
    events_in = (
        {
            "type": "message_start",
            "message": {
                "id": "msg_bdrk_01XzBqJ",
                "type": "message",
                "role": "assistant",
                "model": "claude-3-5-sonnet-20240620",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 23, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": notice},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "guardrail_intervened", "stopSequences": None},
            "usage": {"output_tokens": 11},
        },
        {
            "type": "message_stop",
            "amazon-bedrock-invocationMetrics": {
                "inputTokenCount": 23,
                "outputTokenCount": 11,
                "invocationLatency": 612,
                "firstByteLatency": 590,
            },
        },
    )
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events_in).encode()
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text=notice,
            usage=(23, 11, 0, 0, 34),
            stop_reason="content_filter",
            raw_stop_reason="guardrail_intervened",
            model="claude-3-5-sonnet-20240620",
        ),
    )


def test_bedrock_mantle_responses_typeless_error_frame_ends_the_turn_with_its_words() -> None:
    """vercel/ai packages/amazon-bedrock/src/mantle/normalize-responses-error-frames.test.ts:
    Bedrock Mantle's OpenAI-Responses-compatible stream (`openai.gpt-5.6-sol`) sometimes
    ends, after output, on a typeless AWS error object, `{"message": "The system encountered
    an unexpected error during processing. Try your request again."}`: no `type`, no
    `sequence_number`. The turn failed with those words (`stream_error`), the text before
    kept. Before: the frame was logged as an event of unknown type and the turn ended
    `truncated`, the provider's words lost."""
    words = "The system encountered an unexpected error during processing. Try your request again."
    created = {
        "type": "response.created",
        "sequence_number": 0,
        "response": {
            "id": "resp_1",
            "created_at": 1788359294,
            "model": "openai.gpt-5.6-sol",
            "object": "response",
            "output": [],
            "status": "in_progress",
            "error": None,
        },
    }
    delta = {
        "type": "response.output_text.delta",
        "sequence_number": 1,
        "content_index": 0,
        "delta": "DONE",
        "item_id": "msg_1",
        "output_index": 0,
    }
    body = _sse(created, delta, {"message": words}, done=False)
    events = replay_every_way(body, "openai-responses")
    check(summarize(events), Expect(text="DONE", terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert error.message == words
    assert error.raw is not None and words in error.raw


def test_bedrock_mantle_responses_error_event_with_its_error_as_json_text() -> None:
    """vercel/ai packages/amazon-bedrock/src/mantle/normalize-responses-error-frames.test.ts
    ("lifts the message out of an error event with a stringified JSON payload"): Bedrock
    Mantle's Responses stream may end on `{"type": "error", "error": "{\\"message\\":
    \\"Too many requests, please wait before trying again.\\"}"}`, the error object written
    as JSON text. The turn failed with the words inside it. Before: the message was that
    JSON text, braces and escapes and all."""
    words = "Too many requests, please wait before trying again."
    delta = {
        "type": "response.output_text.delta",
        "sequence_number": 5,
        "content_index": 0,
        "delta": "DO",
        "item_id": "msg_1",
        "output_index": 0,
    }
    frame = {"type": "error", "error": json.dumps({"message": words})}
    events = replay_every_way(_sse(delta, frame, done=False), "openai-responses")
    check(summarize(events), Expect(text="DO", terminal="error", error_kind="stream_error"))
    error = events[-1].error  # type: ignore[union-attr]
    assert error.message == words
    assert error.raw is not None and "Too many requests" in error.raw


# -- Anthropic on Vertex AI -----------------------------------------------------------------


def test_vertex_claude_stream_with_its_vertex_event_reads_as_the_messages_events_say() -> None:
    """vercel/ai#11309 and #13436 (Claude served by Vertex AI's `streamRawPredict`, passed
    on by proxies that present the Anthropic API): Vertex adds an SSE event of its own,
    `{"type": "vertex_event", "usage": {...}}`, its usage with null cache counts, a
    `cache_creation` split and the same counts again per pricing tier (`tiers:
    {"0-to-200000": {...}}`); @ai-sdk/anthropic failed the stream on it, Anthropic's SDK
    does not. Its place is not quoted: here after `message_start`, whose counts it
    repeats. The text once, the usage of the Messages events (9 in, 5 out, not the vertex
    event's again), `end_turn`."""
    counts = {
        "input_tokens": 9,
        "output_tokens": 1,
        "cache_creation_input_tokens": None,
        "cache_read_input_tokens": None,
        "web_search_requests": None,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    }
    events_in = (
        {
            "type": "message_start",
            "message": {
                "id": "msg_vrtx_01Hd2",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5@20250929",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 9, "output_tokens": 1},
            },
        },
        {"type": "vertex_event", "usage": {**counts, "tiers": {"0-to-200000": counts}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi!"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    )
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events_in).encode()
    check(
        summarize(replay_every_way(body, "anthropic")),
        Expect(
            text="Hi!",
            usage=(9, 5, 0, 0, 14),
            raw_stop_reason="end_turn",
            model="claude-sonnet-4-5@20250929",
        ),
    )


# -- Hugging Face's responses.js -------------------------------------------------------------


def _numbered(*events: dict[str, Any]) -> bytes:
    """responses.js's frames: `data:` lines only, each event numbered in turn."""
    frames = (json.dumps({**event, "sequence_number": n}) for n, event in enumerate(events))
    return "".join(f"data: {frame}\n\n" for frame in frames).encode()


def test_hugging_face_responses_js_items_added_at_index_0_then_said_at_their_own() -> None:
    """huggingface/responses.js src/routes/responses.ts (the Responses endpoint the
    Hugging Face router serves, over a chat completions stream): a message or reasoning
    item is always announced with `output_index: 0` (`response.output_item.added`), its
    parts, deltas and done events then at its real index (`output.length - 1`); reasoning
    is a `reasoning_text` part; an MCP tool it runs itself is an `mcp_call` item whose
    `response.mcp_call.completed` names no item; the response starts with usage of
    zeros, overwritten only where the chat stream counted (it asks for no usage). The
    reasoning, the text once, the MCP call and its result as a server tool; the counted
    usage read; zeros read as zeros, as OpenAI's own all-zero usage of a turn is (its
    programmatic tool calling's next turn: tests/providers/test_probe_openai_responses_7),
    since nothing on the wire tells this placeholder from a count."""
    model = "openai/gpt-oss-120b"
    zeros = {
        "input_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    }
    opened = {
        "id": "resp_7a1c",
        "object": "response",
        "created_at": 1754000000,
        "status": "in_progress",
        "model": model,
        "output": [],
        "error": None,
        "usage": zeros,
    }
    counted = {**zeros, "input_tokens": 24, "output_tokens": 9, "total_tokens": 33}

    def part_events(item_id: str, index: int, kind: str, text: str) -> list[dict[str, Any]]:
        part = (
            {"type": kind, "text": ""}
            if kind == "reasoning_text"
            else {"type": kind, "text": "", "annotations": []}
        )
        done = {**part, "text": text}
        delta = "response.reasoning_text" if kind == "reasoning_text" else "response.output_text"
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        return [
            {"type": "response.content_part.added", **where, "part": part},
            {"type": f"{delta}.delta", **where, "delta": text},
            {"type": f"{delta}.done", **where, "text": text},
            {"type": "response.content_part.done", **where, "part": done},
        ]

    reasoning = {
        "id": "rs_1",
        "type": "reasoning",
        "status": "in_progress",
        "content": [],
        "summary": [],
    }
    thought = {
        **reasoning,
        "status": "completed",
        "content": [{"type": "reasoning_text", "text": "A greeting."}],
    }
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    said = {
        **message,
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello!", "annotations": []}],
    }
    body = _numbered(
        {"type": "response.created", "response": opened},
        {"type": "response.in_progress", "response": opened},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        *part_events("rs_1", 0, "reasoning_text", "A greeting."),
        {"type": "response.output_item.done", "output_index": 0, "item": thought},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        *part_events("msg_1", 1, "output_text", "Hello!"),
        {"type": "response.output_item.done", "output_index": 1, "item": said},
        {
            "type": "response.completed",
            "response": {
                **opened,
                "status": "completed",
                "output": [thought, said],
                "usage": counted,
            },
        },
    )
    check(
        summarize(replay_every_way(body, "openai-responses")),
        Expect(
            text="Hello!",
            reasoning="A greeting.",
            usage=(24, 9, 0, 0, 33),
            raw_stop_reason="completed",
            model=model,
        ),
    )

    call = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "search",
        "server_label": "hf",
        "arguments": "",
    }
    ran = {**call, "arguments": '{"q": "llama"}', "output": "3 models found"}
    answer = {**message, "id": "msg_2"}
    answered = {
        **said,
        "id": "msg_2",
        "content": [{"type": "output_text", "text": "Three.", "annotations": []}],
    }
    where = {"item_id": "mcp_1", "output_index": 0}
    body = _numbered(
        {"type": "response.created", "response": opened},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.mcp_call.in_progress", **where},
        {"type": "response.mcp_call_arguments.delta", **where, "delta": '{"q": "llama"}'},
        {"type": "response.mcp_call_arguments.done", **where, "arguments": '{"q": "llama"}'},
        {"type": "response.mcp_call.completed"},
        {"type": "response.output_item.done", "output_index": 0, "item": ran},
        {"type": "response.output_item.added", "output_index": 0, "item": answer},
        *part_events("msg_2", 1, "output_text", "Three."),
        {"type": "response.output_item.done", "output_index": 1, "item": answered},
        {
            "type": "response.completed",
            "response": {**opened, "status": "completed", "output": [ran, answered]},
        },
    )
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(text="Three.", usage=(0, 0, 0, 0, 0), raw_stop_reason="completed", model=model),
    )
    assert kinds(events) == ["server_tool_call", "server_tool_result", "text", "usage", "done"]
