"""Streams from the recordings and fixtures of client libraries in other languages, in
shapes no other test replays: Ruby (crmne/ruby_llm's VCR cassettes, recorded from
Perplexity, GPUStack and xAI; patterns-ai-core/langchainrb's Anthropic stream fixtures;
joshleblanc/venice_client's word on Venice's citations), Swift
(google-gemini/generative-ai-swift's streaming responses), Go (googleapis/go-genai's
stream tests; tinfoilsh/tinfoil-go's web search stream), .NET (achappey/aihappey-ai's
Venice stream test), and the mock responses Firebase's Swift, Kotlin, Dart and
JavaScript SDKs share (FirebaseExtended/vertexai-sdk-test-data, recorded from the Gemini
API). Two misread: Tinfoil's web search frames and search reasoning, Venice's
citations (both only logged before).

Each body is written by hand from the source named beside it (its essential events or
chunks, ids, signatures and long text shortened), replayed whole and cut at arbitrary
byte boundaries (`replay_every_way`), and checked against what a client of that endpoint
should get.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import (
    Citation,
    Done,
    Failed,
    ReasoningDelta,
    ServerToolCall,
    ServerToolResult,
    ToolStart,
)
from tests.support import Expect, check, kinds, log_messages, replay_every_way, summarize


def _sse(*payloads: dict[str, Any], done: bool = True, crlf: bool = False) -> bytes:
    """`data:` frames of the payloads, then `[DONE]` where `done`; CRLF line ends where
    `crlf`."""
    end = "\r\n\r\n" if crlf else "\n\n"
    body = "".join(f"data: {json.dumps(p, ensure_ascii=False)}{end}" for p in payloads)
    return (body + (f"data: [DONE]{end}" if done else "")).encode()


def _named(*payloads: dict[str, Any]) -> bytes:
    """SSE events each named by its payload's `type`."""
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


# -- chat completions family --------------------------------------------------------------


def test_perplexity_sonar_writes_the_whole_message_so_far_beside_each_delta() -> None:
    """crmne/ruby_llm spec/fixtures/vcr_cassettes/chat_streaming_responses_perplexity_sonar_
    supports_streaming_responses.yml (api.perplexity.ai, `sonar`, "Count from 1 to 3",
    recorded 2026-04): every chunk's choice carries `message`, the answer so far ("**",
    "**1", "**1,", ...), beside `delta`, the new piece; every chunk repeats `citations`,
    `search_results` (title, url, date, last_updated, snippet, source) and a usage whose
    `cost` is an object; lines end in CRLF; the last chunk is `chat.completion.done` with
    an empty delta, the whole answer in `message` and `finish_reason: stop`, and no
    `[DONE]` follows. The answer is the deltas, once (not the running message added to
    them), each source one citation, the cost its `total_cost`."""

    def chunk(message: str, delta: str, n: int, done: bool = False) -> dict[str, Any]:
        cost = {"input_tokens_cost": 0, "output_tokens_cost": 0, "total_cost": 0}
        if done:
            cost = {"input_tokens_cost": 1e-05, "output_tokens_cost": 0.00013,
                    "request_cost": 0.005, "total_cost": 0.00514}  # fmt: skip
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": message},
            "delta": {"role": "assistant", "content": delta},
        }
        if done:
            choice["finish_reason"] = "stop"
        return {
            "id": "78d93c1f-06fe-47c0-bd77-16eb2f71bdfd",
            "model": "sonar",
            "created": 1775129007,
            "usage": {"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n,
                      "search_context_size": "low", "cost": cost},
            "citations": ["https://www.mathshelflearning.com/articles/numbersto3",
                          "https://numbergenerator.org/randomnumbergenerator/1-3"],
            "search_results": [
                {"title": "Teach Numbers 1 to 3", "date": "2022-09-12",
                 "url": "https://www.mathshelflearning.com/articles/numbersto3",
                 "last_updated": "2026-02-04", "snippet": "Teaching only 1-to-3 ...",
                 "source": "web"},
                {"title": "Random Number Between 1 And 3",
                 "url": "https://numbergenerator.org/randomnumbergenerator/1-3",
                 "last_updated": "2026-03-28", "snippet": "Pick a number ...",
                 "source": "web"},
            ],
            "object": "chat.completion.done" if done else "chat.completion.chunk",
            "choices": [choice],
        }  # fmt: skip

    answer = "**1, 2, 3.**\n\nCounting is a skill.[1]"
    pieces = ["**", "1", ",", " 2, 3.**", "\n\nCounting is a skill.", "[1]"]
    so_far = ["".join(pieces[: n + 1]) for n in range(len(pieces))]
    body = _sse(
        *(chunk(so_far[n], piece, n + 1) for n, piece in enumerate(pieces)),
        chunk(answer, "", 129, done=True),
        done=False,
        crlf=True,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text=answer, usage=(8, 129, 0, 0, 137), cost=0.00514, model="sonar"),
    )
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [
        ("https://www.mathshelflearning.com/articles/numbersto3", "Teach Numbers 1 to 3"),
        ("https://numbergenerator.org/randomnumbergenerator/1-3", "Random Number Between 1 And 3"),
    ]


def test_gpustack_llama_box_usage_null_on_each_chunk_and_draft_counts_at_the_finish() -> None:
    """crmne/ruby_llm chat_streaming_responses_gpustack_qwen3_supports_streaming_responses.yml
    (GPUStack, `Server: llama-box/v0.0.171`, qwen3, recorded 2026-04): every chunk says
    `usage: null`; the thinking comes as `reasoning_content`, starting and ending with an
    empty piece; the answer begins with "\\n\\n"; the last chunk holds the finish and the
    usage, with llama-box's own counts beside OpenAI's (`draft_tokens`,
    `draft_tokens_acceptance`, tokens per second, time to first token) and 2 of the 15
    prompt tokens cached; no `[DONE]` follows. 188 of the 198 completion tokens are
    reasoning; 13 uncached input tokens, 2 cached."""

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> Any:
        return {
            "choices": [{"delta": delta, "finish_reason": finish, "index": 0}],
            "created": 1775130095,
            "id": "chatcmpl-o3GXMXivkHIu4FuR9YGrlkLFFxgkgJVX",
            "model": "qwen3",
            "object": "chat.completion.chunk",
            "usage": usage,
        }

    usage = {
        "completion_tokens": 198,
        "completion_tokens_details": {"accepted_prediction_tokens": 0, "reasoning_tokens": 188,
                                      "rejected_prediction_tokens": 0},
        "draft_tokens": 0,
        "draft_tokens_acceptance": 0.0,
        "prompt_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 2},
        "prompt_tokens_per_second": 699.4311293481301,
        "time_per_output_token_ms": 13.619727272727273,
        "time_to_first_token_ms": 21.446,
        "tokens_per_second": 73.42290928265818,
        "total_tokens": 213,
    }  # fmt: skip
    thought = ["\n", "Okay", ", the user wants me to count from 1 to 3.", "\n"]
    answer = ["\n\n", "1", ",", " ", "2", ",", " ", "3"]
    body = _sse(
        chunk({"reasoning_content": ""}),
        *(chunk({"reasoning_content": piece}) for piece in thought),
        chunk({"reasoning_content": ""}),
        *(chunk({"content": piece}) for piece in answer),
        chunk({"content": ""}, "stop", usage),
        done=False,
    )
    events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(
            text="".join(answer),
            reasoning="".join(thought),
            usage=(13, 198, 188, 2, 213),
            model="qwen3",
        ),
    )
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


# -- Gemini ---------------------------------------------------------------------------------


def test_gemini_code_execution_with_stop_on_every_chunk_is_one_turn() -> None:
    """google-gemini/generative-ai-swift Tests/GoogleAITests/GenerateContentResponses/
    streaming-success-code-execution.txt (also FirebaseExtended/vertexai-sdk-test-data
    mock-responses/googleai/streaming-success-code-execution.txt): `finishReason: STOP` on
    the first text chunk and on nearly every chunk after it, the `executableCode` chunk
    included; the `codeExecutionResult` chunk has none; the usage's candidate count goes
    29, then back to 1, 17 and 19. The turn does not end at the first STOP: the code and
    its output are a server tool call and result between the texts, and the usage is the
    last one sent."""

    def chunk(part: dict[str, Any], candidates: int, stop: bool = True) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if stop:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 21, "candidatesTokenCount": candidates,
                 "totalTokenCount": 21 + candidates}  # fmt: skip
        return {"candidates": [candidate], "usageMetadata": usage}

    code = {"language": "PYTHON", "code": '\nprint("Hello, world!")\n'}
    output = {"outcome": "OUTCOME_OK", "output": "Hello, world!\n"}
    body = _sse(
        chunk({"text": "Thoughts"}, 1),
        chunk({"text": ": I can use the `print()` function in Python to print strings. "}, 16),
        chunk({"text": "\n\n"}, 16),
        chunk({"executableCode": code}, 29),
        chunk({"codeExecutionResult": output}, 29, stop=False),
        chunk({"text": "OK"}, 1),
        chunk({"text": '. I have printed "Hello, world!" using the `print()` function in'}, 17),
        chunk({"text": " Python. \n"}, 19),
        done=False,
    )
    events = replay_every_way(body, "google")
    before = "Thoughts: I can use the `print()` function in Python to print strings. \n\n"
    after = 'OK. I have printed "Hello, world!" using the `print()` function in Python. \n'
    check(
        summarize(events),
        Expect(text=before + after, usage=(21, 19, 0, 0, 40), raw_stop_reason="STOP"),
    )
    served = ["server_tool_call", "server_tool_result"]
    assert kinds(events) == ["text", *served, "text", "usage", "done"]
    call = next(e for e in events if isinstance(e, ServerToolCall))
    result = next(e for e in events if isinstance(e, ServerToolResult))
    assert (call.name, call.arguments, result.call_id) == ("code_execution", code, call.call_id)
    assert result.content == output


def test_gemini_recitation_after_streamed_text_cites_each_source_once() -> None:
    """FirebaseExtended/vertexai-sdk-test-data mock-responses/googleai/
    streaming-failure-recitation-no-content.txt (gemini-3.1-flash-lite): eight text chunks
    with no finish, the later ones each with `citationMetadata.citationSources` (start and
    end index, uri), the same uri again and again; then a candidate with no content at all,
    `finishReason: RECITATION` and one more source. The text streamed stays; the turn ends
    as filtered (`content_filter`, RECITATION); each uri is one citation."""
    model = "gemini-3.1-flash-lite"
    google = "https://www.google.com/"
    tidy = "https://uc-r.github.io/tidy_text"

    def chunk(text: str, *sources: tuple[int, int, str]) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if sources:
            cited = [{"startIndex": s, "endIndex": e, "uri": u} for s, e, u in sources]
            candidate["citationMetadata"] = {"citationSources": cited}
        usage = {"promptTokenCount": 9, "totalTokenCount": 9,
                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 9}]}  # fmt: skip
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}

    last = {
        "candidates": [
            {
                "finishReason": "RECITATION",
                "citationMetadata": {
                    "citationSources": [{"startIndex": 793, "endIndex": 1341, "uri": google}]
                },
            }
        ],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 261,
                          "totalTokenCount": 270},
        "modelVersion": model,
    }  # fmt: skip
    body = _sse(
        chunk("text1"),
        chunk("text2"),
        chunk("text3"),
        chunk("text4", (110, 239, google)),
        chunk("text5", (118, 262, tidy), (146, 401, google)),
        chunk("text6", (164, 401, google), (373, 588, google)),
        chunk("text7", (395, 685, google), (699, 826, google)),
        chunk("text8", (712, 869, google), (757, 1096, google)),
        last,
        done=False,
    )
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(
            text="".join(f"text{n}" for n in range(1, 9)),
            usage=(9, 261, 0, 0, 270),
            stop_reason="content_filter",
            raw_stop_reason="RECITATION",
            model=model,
        ),
    )
    assert [e.url for e in events if isinstance(e, Citation)] == [google, tidy]


def test_gemini_thought_summaries_then_a_signed_call_without_arguments() -> None:
    """FirebaseExtended/vertexai-sdk-test-data mock-responses/googleai/streaming-success-
    thinking-function-call-thought-summary-signature.txt (gemini-2.5-flash, "how many days
    until New Year's Eve"): two chunks of thought summaries (`thought: true`, no
    signature) with `thoughtsTokenCount` and no candidate count; then a `functionCall`
    `now` with `args: {}` and a `thoughtSignature`, finished with STOP. The thoughts are
    reasoning; the call is a tool request with no arguments, its signature on it; the turn
    stops for the tool (raw STOP); 168 thought tokens are part of the output."""
    model = "gemini-2.5-flash"
    response_id = "48SHaPHpHKbG-8YPtZCawAk"
    signature = "CiIBVKhc7vB+vaaq6rA/KC79Ts7iXagIOA4EBOyBFDpl+pxPCmcBVKhc7gYyIw6X0Ils=="
    thoughts = [
        "**Calculating the Days**\n\nI need the current date and New Year's Eve.\n\n\n",
        "**Determining the Approach**\n\nI'll get today's date with `now()`.\n\n\n",
    ]

    def chunk(part: dict[str, Any], usage: dict[str, int], stop: bool = False) -> Any:
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if stop:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 38, **usage}
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model,
                "responseId": response_id}  # fmt: skip

    body = _sse(
        chunk({"text": thoughts[0], "thought": True},
              {"totalTokenCount": 106, "thoughtsTokenCount": 68}),
        chunk({"text": thoughts[1], "thought": True},
              {"totalTokenCount": 206, "thoughtsTokenCount": 168}),
        chunk({"functionCall": {"name": "now", "args": {}}, "thoughtSignature": signature},
              {"candidatesTokenCount": 6, "totalTokenCount": 212, "thoughtsTokenCount": 168},
              stop=True),
        done=False,
    )  # fmt: skip
    events = replay_every_way(body, "google")
    summary = summarize(events)
    (call_id, name, arguments), *more = summary.tool_calls
    assert (name, arguments, more) == ("now", {}, [])
    check(
        summary,
        Expect(
            reasoning="".join(thoughts),
            signatures=1,
            tools=((call_id, "now", {}),),
            usage=(38, 174, 168, 0, 212),
            stop_reason="tool_use",
            raw_stop_reason="STOP",
            model=model,
        ),
    )
    assert summary.signatures == [signature]
    start = next(e for e in events if isinstance(e, ToolStart))
    assert start.signature == signature


def test_gemini_image_model_sends_a_contentless_candidate_then_the_image_at_stop() -> None:
    """FirebaseExtended/vertexai-sdk-test-data mock-responses/googleai/streaming-success-
    empty-parts.txt (gemini-2.5-flash-image-preview, "a cute cartoon kitten"): five text
    chunks with no finish; a candidate whose content has a role and no `parts`; then the
    image as `inlineData` (image/png, base64) with STOP and a usage counting 1290 image
    tokens. The text stays whole, the candidate without parts is nothing, and the image,
    which no event carries, is said in the log, not dropped unsaid."""
    model = "gemini-2.5-flash-image-preview"
    pieces = ["Here's a", " cute cartoon kitten playing", " with a ball of", " yarn for",
              " you! "]  # fmt: skip

    def chunk(content: dict[str, Any], candidates: int, stop: bool = False) -> Any:
        candidate: dict[str, Any] = {"content": {**content, "role": "model"}}
        if stop:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 16, "candidatesTokenCount": candidates,
                 "totalTokenCount": 16 + candidates}  # fmt: skip
        if stop:
            usage["candidatesTokensDetails"] = [{"modality": "IMAGE", "tokenCount": 1290}]
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model,
                "responseId": "kLewaKa5ONqI-8YP-c_NuAQ"}  # fmt: skip

    image = {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1Pe"}
    body = _sse(
        *(chunk({"parts": [{"text": piece}]}, 4 * (n + 1)) for n, piece in enumerate(pieces)),
        chunk({}, 17),
        chunk({"parts": [{"inlineData": image}]}, 1307, stop=True),
        done=False,
    )
    with log_messages() as messages:
        events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(text="".join(pieces), usage=(16, 1307, 0, 0, 1323), raw_stop_reason="STOP",
               model=model),
    )  # fmt: skip
    assert kinds(events) == ["text", "usage", "done"]
    assert any("inlineData" in message for message in messages)


# -- OpenAI Responses -----------------------------------------------------------------------


def test_xai_responses_reasoning_summary_signed_by_its_encrypted_content() -> None:
    """crmne/ruby_llm chat_streaming_responses_xai_grok-4-1-fast-non-reasoning_supports_
    streaming_responses.yml (api.x.ai/v1/responses, grok-4.3, `include:
    ["reasoning.encrypted_content"]`, recorded 2026-08): ids are bare UUIDs (the
    response's) or `rs_`/`msg_` and the same UUID; a reasoning item streams its summary
    (`reasoning_summary_part.added`, text deltas, `.done`s) and its `output_item.done`
    brings the `encrypted_content` the `added` item had not; the usage adds xAI's
    `num_sources_used`, `num_server_side_tools_used`, `cost_in_usd_ticks` (5,143,500 ticks
    of 1e-10 USD) and `context_details`. The summary is reasoning, signed once by the
    encrypted content, then the answer; 152 of the 160 output tokens are reasoning; 128 of
    the 199 input tokens cached."""
    rid = "006cb394-e479-972b-b41e-422dbefebb96"
    rs, msg = f"rs_{rid}", f"msg_{rid}"
    summary_text = 'The user said: "Count from 1 to 3"\n'
    encrypted = "4WwEQ2SDCDDvfg0EGRUbarTbyCW5casxK7y52cPuw+MzDZkVY+jpq27xQrKzxYaeiT2kuRSL=="
    response = {"id": rid, "object": "response", "model": "grok-4.3", "output": [],
                "status": "in_progress", "usage": None,
                "metadata": {"system_fingerprint": "fp_eb3c003fc66c14ed"}}  # fmt: skip
    reasoning = {
        "id": rs,
        "summary": [{"text": summary_text, "type": "summary_text"}],
        "type": "reasoning",
        "status": "completed",
        "encrypted_content": encrypted,
    }
    part = {"type": "output_text", "text": "1, 2, 3.", "logprobs": [], "annotations": []}
    message = {"content": [part], "id": msg, "role": "assistant", "type": "message",
               "status": "completed"}  # fmt: skip
    usage = {
        "input_tokens": 199,
        "input_tokens_details": {"cached_tokens": 128},
        "output_tokens": 160,
        "output_tokens_details": {"reasoning_tokens": 152},
        "total_tokens": 359,
        "num_sources_used": 0,
        "num_server_side_tools_used": 0,
        "cost_in_usd_ticks": 5143500,
        "context_details": {"input_tokens": 199, "output_tokens": 160},
    }
    on_rs = {"item_id": rs, "output_index": 0, "summary_index": 0}
    on_msg = {"item_id": msg, "output_index": 1, "content_index": 0}
    events_in: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": rs, "summary": [], "type": "reasoning", "status": "in_progress"}},
        {"type": "response.reasoning_summary_part.added", **on_rs,
         "part": {"text": "", "type": "summary_text"}},
        {"type": "response.reasoning_summary_text.delta", **on_rs, "delta": "The user said:"},
        {"type": "response.reasoning_summary_text.delta", **on_rs,
         "delta": ' "Count from 1 to 3"\n'},
        {"type": "response.reasoning_summary_text.done", **on_rs, "text": summary_text},
        {"type": "response.reasoning_summary_part.done", **on_rs,
         "part": {"text": summary_text, "type": "summary_text"}},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**message, "content": [], "status": "in_progress"}},
        {"type": "response.content_part.added", **on_msg, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **on_msg, "delta": "1, 2,", "logprobs": []},
        {"type": "response.output_text.delta", **on_msg, "delta": " 3.", "logprobs": []},
        {"type": "response.output_text.done", **on_msg, "text": "1, 2, 3.", "logprobs": []},
        {"type": "response.content_part.done", **on_msg, "part": part},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed",
         "response": {**response, "status": "completed", "output": [reasoning, message],
                      "usage": usage}},
    ]  # fmt: skip
    body = _named(*({"sequence_number": n, **e} for n, e in enumerate(events_in)))
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            text="1, 2, 3.",
            reasoning=summary_text,
            signatures=1,
            usage=(71, 160, 152, 128, 359),
            cost=0.00051435,
            raw_stop_reason="completed",
            model="grok-4.3",
        ),
    )
    signed = [e for e in events if isinstance(e, ReasoningDelta) and e.signature]
    assert [e.signature for e in signed] == [encrypted]
    assert kinds(events) == ["reasoning", "text", "usage", "done"]


# -- Anthropic Messages ---------------------------------------------------------------------


def test_anthropic_tool_use_with_empty_input_and_one_empty_json_piece() -> None:
    """patterns-ai-core/langchainrb spec/fixtures/llm/anthropic/
    chat_stream_with_empty_tool_input.json (claude-3-haiku-20240307): `message_start`'s
    message has no `usage` at all; a text block; then a `tool_use` block started with
    `input: {}` whose only delta is an `input_json_delta` with an empty `partial_json`,
    and `stop_reason: tool_use` with 10 output tokens. The call has no parameters: one
    tool request with `{}` (not a malformed call, not a call lost), after the text."""
    call_id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    message = {"id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant",
               "model": "claude-3-haiku-20240307", "content": [], "stop_reason": None}  # fmt: skip
    body = _named(
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "I'll check the weather for you:"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": call_id, "name": "get_weather",
                           "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 10}},
        {"type": "message_stop"},
    )  # fmt: skip
    events = replay_every_way(body, "anthropic")
    check(
        summarize(events),
        Expect(
            text="I'll check the weather for you:",
            tools=((call_id, "get_weather", {}),),
            usage=(0, 10, 0, 0, 10),
            stop_reason="tool_use",
            raw_stop_reason="tool_use",
            model="claude-3-haiku-20240307",
        ),
    )
    assert kinds(events) == ["text", "tool_start", "tool_request", "usage", "done"]


def test_gemini_maps_grounding_cites_each_place_once() -> None:
    """FirebaseExtended/vertexai-sdk-test-data mock-responses/googleai/
    unary-success-google-maps-grounding.json (gemini-2.5-flash, "pizza near me", with the
    `google_maps` tool): the last candidate's `groundingMetadata` holds `maps` chunks
    (uri, title, `placeId`) and supports pointing at some of them, beside
    `webSearchQueries`; the usage counts `toolUsePromptTokenCount` 59 and
    `thoughtsTokenCount` 87. Here the same candidate closes a stream. Each place is one
    citation, with its title, in the order given; the tool's prompt tokens are input and
    the thoughts output."""
    model = "gemini-2.5-flash"
    places = [
        ("10332424901773702701", "Joe\u2019s Pizza", "ChIJqdNaaBVbwokRLTafYrQlZI8"),
        ("4220952323027039852", "Little Italy Pizza", "ChIJuXASOB9awokRbPbiM8bVkzo"),
        ("2701502875049963870", "Stage Door Pizzeria", "ChIJV4zXcCVbwokRXrEMO42qfSU"),
    ]
    chunks = [
        {"maps": {"uri": f"https://maps.google.com/?cid={cid}", "title": title,
                  "placeId": f"places/{place}"}}
        for cid, title, place in places
    ]  # fmt: skip
    first = "Here are a few pizza places near you:\n\n*   **Joe\u2019s Pizza** is highly rated."
    last = " They offer takeout, delivery, and dine-in."
    support = {"segment": {"startIndex": 75, "endIndex": 117, "text": last.strip()},
               "groundingChunkIndices": [0]}  # fmt: skip
    grounding = {"groundingChunks": chunks, "groundingSupports": [support],
                 "webSearchQueries": ["pizza near me"]}  # fmt: skip
    body = _sse(
        {"candidates": [{"content": {"parts": [{"text": first}], "role": "model"}, "index": 0}],
         "modelVersion": model},
        {"candidates": [{"content": {"parts": [{"text": last}], "role": "model"},
                         "finishReason": "STOP", "index": 0, "groundingMetadata": grounding}],
         "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 288,
                           "totalTokenCount": 443, "toolUsePromptTokenCount": 59,
                           "thoughtsTokenCount": 87},
         "modelVersion": model, "responseId": "oNt4adaNNIrQjMcPqMfQ0A8"},
        done=False,
    )  # fmt: skip
    events = replay_every_way(body, "google")
    check(
        summarize(events),
        Expect(text=first + last, usage=(68, 375, 87, 0, 443), raw_stop_reason="STOP",
               model=model),
    )  # fmt: skip
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [(f"https://maps.google.com/?cid={cid}", title) for cid, title, _ in places]


def test_gemini_200_whose_whole_body_is_one_error_line_or_an_error_field() -> None:
    """googleapis/go-genai api_client_test.go, TestSendStreamRequest: "Error Response with
    status ok but error stream chunk" (a `200 OK` whose body is one line of JSON, the
    error object with `code` 500 and `status` INTERNAL_SERVER_ERROR, no SSE framing at
    all) and "Stream with Non-Data Prefix" (a `data:` chunk, then an `error:` line, a field
    the SSE rules ignore, which go-genai raises as an invalid chunk). Both end the turn in
    an error that keeps the status and the code, the text before it kept; neither is a
    success nor a bare `truncated`."""
    error = {"code": 500, "message": "internal server error", "status": "INTERNAL_SERVER_ERROR"}
    whole = (json.dumps({"error": error}) + "\n").encode()
    events = replay_every_way(whole, "google")
    check(summarize(events), Expect(text="", terminal="error", error_kind="stream_error"))
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.status, failure.error.code) == (500, "INTERNAL_SERVER_ERROR")
    assert failure.error.message == "internal server error"

    overloaded = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    text = {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}}]}
    field = _sse(text, done=False) + f"error:{json.dumps({'error': overloaded})}\n\n".encode()
    events = replay_every_way(field, "google")
    check(summarize(events), Expect(text="Hi", terminal="error", error_kind="stream_error"))
    failure = events[-1]
    assert isinstance(failure, Failed)
    assert (failure.error.status, failure.error.code) == (503, "UNAVAILABLE")


def test_xai_responses_function_call_with_dashed_call_id_and_whole_arguments() -> None:
    """crmne/ruby_llm chat_function_calling_xai_grok-4-1-fast-non-reasoning_can_use_tools_
    without_parameters_in_multi-turn_streaming_conversations.yml (api.x.ai/v1/responses,
    grok-4.3, recorded 2026-08): after a signed reasoning summary, a `function_call` item
    whose id is `fc_<response uuid>_0` and whose `call_id` is `call-<uuid>-0`; its
    arguments come whole in one delta (`{}`) and again in `.done` and the done item; the
    response completes (`status: completed`, no finish reason of its own). One tool
    request under the call id with no arguments, the turn stopped for it (tool_use),
    priced from its ticks."""
    rid = "edc2154d-3567-97eb-8e5a-48f4f7c715f6"
    rs, fc = f"rs_{rid}", f"fc_{rid}_0"
    call_id = "call-e90191c4-4a4c-44c2-92f5-98caf16932b6-0"
    summary_text = 'The question is: "What\'s the best language to learn?"\n'
    reasoning = {
        "id": rs,
        "summary": [{"text": summary_text, "type": "summary_text"}],
        "type": "reasoning",
        "status": "completed",
        "encrypted_content": "m/Nx6AJDTYMzQ/Uz4DOQtkug/fCyuCPmtVu0ieVCyByCItYoWoNxnJFD5iZu2I==",
    }
    call = {"arguments": "{}", "call_id": call_id, "name": "best_language_to_learn",
            "type": "function_call", "id": fc, "status": "completed"}  # fmt: skip
    response = {"id": rid, "object": "response", "model": "grok-4.3", "output": [],
                "status": "in_progress", "usage": None}  # fmt: skip
    usage = {"input_tokens": 289, "input_tokens_details": {"cached_tokens": 128},
             "output_tokens": 171, "output_tokens_details": {"reasoning_tokens": 163},
             "total_tokens": 460, "num_sources_used": 0, "num_server_side_tools_used": 0,
             "cost_in_usd_ticks": 6543500}  # fmt: skip
    on_rs = {"item_id": rs, "output_index": 0, "summary_index": 0}
    events_in: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": rs, "summary": [], "type": "reasoning", "status": "in_progress"}},
        {"type": "response.reasoning_summary_part.added", **on_rs,
         "part": {"text": "", "type": "summary_text"}},
        {"type": "response.reasoning_summary_text.delta", **on_rs, "delta": summary_text},
        {"type": "response.reasoning_summary_text.done", **on_rs, "text": summary_text},
        {"type": "response.reasoning_summary_part.done", **on_rs,
         "part": {"text": summary_text, "type": "summary_text"}},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**call, "arguments": "", "status": "in_progress"}},
        {"type": "response.function_call_arguments.delta", "delta": "{}", "item_id": fc,
         "output_index": 1},
        {"type": "response.function_call_arguments.done", "arguments": "{}", "item_id": fc,
         "output_index": 1},
        {"type": "response.output_item.done", "output_index": 1, "item": call},
        {"type": "response.completed",
         "response": {**response, "status": "completed", "output": [reasoning, call],
                      "usage": usage}},
    ]  # fmt: skip
    body = _named(*({"sequence_number": n, **e} for n, e in enumerate(events_in)))
    events = replay_every_way(body, "openai-responses")
    check(
        summarize(events),
        Expect(
            reasoning=summary_text,
            text="",
            signatures=1,
            tools=((call_id, "best_language_to_learn", {}),),
            usage=(161, 171, 163, 128, 460),
            cost=0.00065435,
            stop_reason="tool_use",
            raw_stop_reason="completed",
            model="grok-4.3",
        ),
    )


def test_tinfoil_web_search_frames_between_the_chunks_are_server_tools() -> None:
    """tinfoilsh/tinfoil-go websearch_test.go (`TestWebSearchCallParsing`,
    `TestWebSearchBlockedEvent`: its client's reading of Tinfoil's web search stream) and
    the server that writes it, tinfoilsh/confidential-websearch (api/streaming.go,
    engine/service.go): between the chat chunks, each state of a tool it ran is a frame
    of its own in the Responses wire's item shape, `{"type": "web_search_call", "id",
    "status", "action"}`, wrapped in a chunk's envelope (`object`, `created`, `model`,
    `choices: []`) "so SDKs don't fail parsing": `in_progress` with the action (a search's
    query, or `open_page` and the URL a fetch reads), then `completed`, or `blocked` with
    the `reason` (a query that would leak a person's data). Then a chunk whose delta holds
    the answer's `annotations` and `search_reasoning` (what the model thought while it
    searched), the answer, `stop` and `[DONE]`. The tools the provider ran are server tool
    calls and results, under their ids, as the Responses wire reads these items (a call
    once its input is known, a result once its status is final); the search reasoning is
    reasoning; the response's id is the chunks', not the first tool's. Before: each frame
    only logged ("chunk field 'type' has no event"), the reasoning too, and the response
    id was `call_1`."""
    model = "gpt-oss-120b"
    envelope = {"object": "chat.completion.chunk", "created": 1767225600, "model": model,
                "choices": []}  # fmt: skip
    search = {"type": "search", "query": "latest quantum computing news 2026"}
    page = {"type": "open_page", "url": "https://example.com/quantum"}
    leak = {"type": "search", "query": "john.smith@gmail.com"}

    def ran(call_id: str, status: str, action: dict[str, Any], **more: str) -> dict[str, Any]:
        return {"type": "web_search_call", "id": call_id, "status": status, "action": action,
                **more, **envelope}  # fmt: skip

    chunk_id = "chatcmpl_1a2b3c4d"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {**envelope, "id": chunk_id, "choices": [choice]}

    cite = {"type": "url_citation",
            "url_citation": {"start_index": 25, "end_index": 28, "title": "Quantum News",
                             "url": "https://example.com/quantum"}}  # fmt: skip
    thought = "The user wants this year's news: search, then read the best page."
    answer = "Here are the latest news 【1】."
    body = _sse(
        ran("call_1", "in_progress", search),
        ran("call_1", "completed", search),
        ran("call_2", "in_progress", page),
        ran("call_2", "completed", page),
        ran("call_3", "in_progress", leak),
        ran("call_3", "blocked", leak, reason="email identifies individual"),
        chunk({"annotations": [cite], "search_reasoning": thought}),
        chunk({"role": "assistant"}),
        chunk({"content": answer}),
        chunk({}, "stop"),
    )
    with log_messages() as messages:
        events = replay_every_way(body, "custom")
    check(summarize(events), Expect(text=answer, reasoning=thought, model=model))
    assert kinds(events) == [
        *("server_tool_call", "server_tool_result") * 3,
        "reasoning",
        "citation",
        "text",
        "done",
    ]
    calls = [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ServerToolCall)]
    assert calls == [
        ("call_1", "web_search_call", {"action": search}),
        ("call_2", "web_search_call", {"action": page}),
        ("call_3", "web_search_call", {"action": leak}),
    ]
    results = [(e.call_id, e.content) for e in events if isinstance(e, ServerToolResult)]
    assert results == [
        ("call_1", {"status": "completed", "action": search}),
        ("call_2", {"status": "completed", "action": page}),
        ("call_3", {"status": "blocked", "action": leak,
                    "reason": "email identifies individual"}),
    ]  # fmt: skip
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response_id == chunk_id
    assert not [m for m in messages if "has no event" in m]


def test_venice_web_search_citations_ride_in_venice_parameters() -> None:
    """Venice's chat stream with web search (`venice_parameters.enable_web_search`): the
    sources the search found come in the chunk's own `venice_parameters`, beside the
    request's flags echoed, as `web_search_citations` (`{content, date, title, url}`):
    "Citations will be returned either in the first chunk of a streaming result, or in
    the non streaming response" (Venice's API spec, as joshleblanc/venice_client's Ruby
    docs quote it, ChatCompletionRequestVeniceParameters.md); the entries as
    achappey/aihappey-ai's .NET Venice provider test replays them (VeniceProviderStreamTests:
    a second entry for the same URL, an entry with no URL, a later chunk with more).
    Each URL is one citation, with its title, as the other top-level source lists are
    read; the entry without a URL is none. Before: the whole object was logged, unread
    ("chunk field 'venice_parameters' has no event"), and the user saw no source."""
    model = "venice/kimi-k2-6"
    flags = {"enable_web_search": "on", "enable_web_citations": True,
             "include_search_results_in_stream": True}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "chatcmpl-venice-1", "object": "chat.completion.chunk",
                "created": 1778768574, "model": model, "choices": [choice], **more}  # fmt: skip

    first = [
        {"content": "First source snippet", "date": "", "title": "Source One",
         "url": "https://example.com/one"},
        {"content": "Duplicate source snippet", "date": "", "title": "Source One Duplicate",
         "url": "https://example.com/one"},
    ]  # fmt: skip
    later = [
        {"content": "Second source snippet", "date": "2026-05-14", "title": "Source Two",
         "url": "https://example.com/two"},
        {"content": "Ignored missing url", "date": "", "title": "No Url"},
    ]  # fmt: skip
    body = _sse(
        chunk({"role": "assistant", "content": "Venice answer"},
              venice_parameters={**flags, "web_search_citations": first}),
        chunk({"content": " [REF]1[/REF]"},
              venice_parameters={**flags, "web_search_citations": later}),
        chunk({"content": ""}, "stop"),
        {"id": "chatcmpl-venice-1", "object": "chat.completion.chunk", "created": 1778768574,
         "model": model, "choices": [],
         "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}},
    )  # fmt: skip
    with log_messages() as messages:
        events = replay_every_way(body, "custom")
    check(
        summarize(events),
        Expect(text="Venice answer [REF]1[/REF]", usage=(12, 3, 0, 0, 15), model=model),
    )
    cited = [(e.url, e.title) for e in events if isinstance(e, Citation)]
    assert cited == [
        ("https://example.com/one", "Source One"),
        ("https://example.com/two", "Source Two"),
    ]
    assert kinds(events)[:2] == ["text", "citation"]  # the sources with the first chunk
    assert not [m for m in messages if "venice_parameters" in m]
