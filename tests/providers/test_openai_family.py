"""The OpenAI-compatible family: every chat capture replayed with its own preset.

One core (`rxllm.providers.openai_chat`) reads them all; the presets differ only by
declared `ChatOptions`. Each capture is replayed whole and re-chunked (see
`replay_every_way`), and its text, reasoning, tool calls, usage, stop reason and
terminal are the values read from the capture's bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import rxllm
from rxllm.events import Failed, ReasoningDelta
from rxllm.pipeline.record import RecordBuilder
from rxllm.providers import wire_for
from rxllm.providers.openai_chat import OPENAI_TOOL_NAMES, ChatOptions, OpenAIChat
from rxllm.providers.think_tags import ThinkTagSplitter
from rxllm.request import ChatRequest, ImagePart, Message, TextPart, ToolCall
from tests.support import (
    Expect,
    capture,
    captures_of,
    check,
    kinds,
    needs_captures,
    rechunk,
    replay,
    replay_every_way,
    summarize,
)

# Captures of other wires that sit in these folders; they are tested with their wire.
RESPONSES_WIRE = {
    "deepseek/responses_api_reasoning_function_call.sse",
    "openrouter/responses_api_reasoning_text.sse",
}

FAMILY = (
    "azure-openai",
    "deepseek",
    "groq",
    "llamacpp",
    "mistral",
    "ollama",
    "openrouter",
    "snowflake",
    "together",
    "vllm",
    "xai",
    "zai",
)

SF = "San Francisco"

CAPTURES: dict[str, Expect] = {
    # Model router: the first chunk is a prompt-filter chunk (choices [], model ""); the
    # served model comes with the content. gpt-5-nano reasons (64 tokens) but sends none.
    "azure-openai/chat_model_router_prompt_filter.sse": Expect(
        text="Capital of Denmark.",
        usage=(15, 78, 64, 0, 93),
        model="gpt-5-nano-2025-08-07",
    ),
    # Usage rides the finish chunk; 320 of the 339 prompt tokens were cache hits.
    "deepseek/reasoner_tool_call.sse": Expect(
        text="",
        reasoning="The user is asking for the weather in San Francisco. I need to use the "
        "weather tool to get this information. Let me invoke the weather tool with the "
        'location parameter set to "San Francisco".',
        tools=(("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", {"location": SF}),),
        usage=(19, 83, 39, 320, 422),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model="deepseek-reasoner",
    ),
    "deepseek/reasoning_content.sse": Expect(
        text="Hello there! 😊 How can I help you today?",
        reasoning=None,
        reasoning_has=(
            'Hmm, the user just said "Hello". It\'s a simple greeting',
            "If they're just being polite, they might not reply further - and that's okay too.",
        ),
        reasoning_len=882,
        usage=(6, 212, 198, 0, 218),
        model="deepseek-reasoner",
    ),
    # One whole tool call in one delta; usage both at the top level and in x_groq.usage.
    "groq/reasoning_tool_call_x_groq_usage.sse": Expect(
        text="",
        reasoning='We need to call the function with correct parameter "name". Provide a name, '
        'e.g., "example".',
        tools=(
            (
                "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
                "get_something_by_name",
                {"name": "example"},
            ),
        ),
        usage=(304, 49, 23, 0, 353),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model="openai/gpt-oss-120b",
    ),
    # Reasoning, then `event: error` (tool_use_failed, status 400): no finish, no [DONE].
    "groq/tool_use_failed_error_event.sse": Expect(
        text="",
        reasoning="We need to call the tool with invalid parameters first, then second call "
        "with valid args. The user wants us to test error handling. So first call should have "
        'wrong parameters (e.g., missing required "name" or extra param). The tool expects '
        'only "name". If we send extra property, that might cause error. Or missing "name". '
        'We\'ll do a call with missing name: {}. Then second call with name: "test". '
        "Let's do that.",
        terminal="error",
        error_kind="stream_error",
    ),
    # No reasoning parser: gpt-oss's Harmony tokens are the content, and stay text.
    # The served model is llama-server's default alias, not gpt-oss.
    "llamacpp/gptoss_raw_harmony_timings.sse": Expect(
        text='<|channel|>analysis<|message|>User says "test". Likely wants a test response. '
        "We'll respond acknowledging.<|start|>assistant<|channel|>final<|message|>Got it! "
        "If you have any questions or need assistance, just let me know.",
        usage=(82, 43, 0, 0, 125),
        model="gpt-3.5-turbo",
    ),
    # Thinking as content lists, the answer as strings. Mistral reports no reasoning
    # token count, so reasoning_tokens is 0 although the 232 output tokens include it.
    "mistral/magistral_thinking_content_list.sse": Expect(
        text=None,
        text_has=(
            "To cross the street safely, follow these steps:\n\n1. Look both ways",
            "```markdown\nTo cross the street safely",
            "By following these steps, you can ensure a safe crossing.",
        ),
        text_len=607,
        reasoning=None,
        reasoning_has=(
            "Okay, the user is asking how to cross the street. I know that crossing the "
            "street safely involves a",
            "Let me compile this information into a clear and concise response.",
        ),
        reasoning_len=421,
        usage=(10, 232, 0, 0, 242),
        model="magistral-medium-latest",
    ),
    # One delta: a whole call with no index and no type, the finish and the usage.
    "mistral/tool_call_single_chunk_no_index.sse": Expect(
        text="",
        tools=(("gSIMJiOkT", "weather", {"location": SF}),),
        usage=(124, 22, 0, 0, 146),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model="mistral-small-latest",
    ),
    # Two whole calls, one per chunk; no usage (stream_options was not sent).
    "ollama/parallel_tool_calls_whole_chunks.sse": Expect(
        text="",
        tools=(
            ("call_wteop8bt", "run_command", {"command": "ls"}),
            ("call_rk2xye1l", "run_command", {"command": "ls -l"}),
        ),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model="qwen2.5-coder:7b-instruct-q8_0",
    ),
    # Requested google/gemini-2.0-flash-exp:free; served by the x-ai/grok-4 fallback.
    # Reasoning is one encrypted blob: no text, one signature. OpenRouter's cost checks
    # out against grok-4's prices with 187 output tokens, so completion_tokens already
    # includes the 118 reasoning tokens.
    "openrouter/fallback_model_grok4_encrypted_reasoning.sse": Expect(
        text="I'm Grok, an AI built by xAI. I'm designed to be helpful, maximally truthful, "
        "and a bit witty—think a mix of the Hitchhiker's Guide to the Galaxy and JARVIS "
        "from Iron Man. My goal is to help you understand the universe (and maybe crack a "
        "few jokes along the way). What's on your mind?",
        signatures=1,
        usage=(8, 187, 118, 679, 874),
        cost=0.00333825,
        model="x-ai/grok-4",
    ),
    # delta.reasoning and reasoning_details carry the same text: it appears once.
    # finish_reason=length twice, then an error object (code 400, "Token limit reached")
    # with usage: the usage is kept, the provider's error ends the stream. OpenRouter's
    # numbers disagree with themselves: 11 reasoning tokens within 10 completion tokens.
    "openrouter/midstream_error_with_usage.sse": Expect(
        text="",
        reasoning="We need to respond to a greeting. The user",
        usage=(43, 10, 11, 0, 53),
        cost=0.0,
        terminal="error",
        error_kind="stream_error",
    ),
    # Text in both reasoning fields (once here), then a signature-only detail.
    "openrouter/reasoning_anthropic_signature.sse": Expect(
        text="2 + 2 = 4",
        reasoning="This is a simple arithmetic question. 2+2 equals 4.",
        signatures=1,
        usage=(43, 36, 13, 0, 79),
        cost=0.000669,
        model="anthropic/claude-sonnet-4.5",
    ),
    # o3's reasoning is an encrypted blob only; OpenRouter reports 0 reasoning tokens
    # for it (its own number, kept).
    "openrouter/reasoning_openai_o3.sse": Expect(
        text=None,
        text_has=(
            "I’m ChatGPT, a large-language-model assistant created by OpenAI.",  # noqa: RUF001
            "If there’s something specific you’d like help with, just let me know!",  # noqa: RUF001
        ),
        text_len=446,
        signatures=1,
        usage=(9, 104, 0, 0, 113),
        cost=0.00085,
        model="openai/o3",
    ),
    # finish_reason=stop on two chunks; the second carries the usage.
    "openrouter/usage_after_finish_web_search.sse": Expect(
        text="https://github.com/pydantic/pydantic-ai ",
        usage=(8174, 30, 0, 0, 8204),
        cost=0.0133176,
        model="openai/gpt-4.1-mini",
    ),
    # No finish_reason key ever: [DONE] after the usage chunk ends the turn (raw None).
    # Snowflake reports 0 reasoning tokens although reasoning text was streamed.
    "snowflake/cortex_claude_thinking.sse": Expect(
        text="15 × 27 = **405**\n\nHere's the breakdown:\n- 15 × 20 = 300\n- 15 × 7 = 105\n"  # noqa: RUF001
        "- 300 + 105 = **405**",
        reasoning="15 * 27 = 405",
        usage=(45, 73, 0, 0, 118),
        raw_stop_reason=None,
        model="claude-sonnet-4-6",
    ),
    # <think>...</think> inside content, split out by the together preset (see below for
    # the exact reconstruction). Together reports no reasoning token count.
    "together/deepseek_r1_think_tags.sse": Expect(
        text=None,
        text_has=("Crossing the street safely requires attention", "could save your life! 🌟"),
        text_len=2556,
        reasoning=None,
        reasoning_has=(
            'Okay, the user asked "How do I cross the street?"',
            "Safety first, but don't sound like a paranoid robot.\n",
        ),
        reasoning_len=1429,
        usage=(10, 955, 0, 0, 965),
        model="deepseek-ai/DeepSeek-R1",
    ),
    "vllm/crusoe_text_usage.sse": Expect(
        text="1, 2, 3, 4, 5",
        usage=(46, 14, 0, 0, 60),
        model="meta-llama/Llama-3.3-70B-Instruct",
    ),
    # model "" on every chunk (the client sent none): no served model to report.
    "vllm/qwen_tool_call_fragments.sse": Expect(
        text="",
        tools=(
            ("chatcmpl-tool-ca99dda515524c6abe47d1ea22813507", "run_command", {"command": "ls"}),
        ),
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model=None,
    ),
    # completion_tokens (26) excludes the 196 reasoning tokens: 291 + 26 + 196 = 513.
    # 290 prompt tokens were cached. Cost: 1,330,500 ticks of 1e-10 USD.
    "xai/grok_reasoning_tool_call.sse": Expect(
        text="",
        reasoning="First, the user is",
        tools=(("call_55117580", "weather", {"location": SF}),),
        usage=(1, 222, 196, 290, 513),
        cost=0.00013305,
        stop_reason="tool_use",
        raw_stop_reason="tool_calls",
        model="grok-3-mini",
    ),
    "zai/glm_reasoning_content.sse": Expect(
        text="4",
        reasoning=None,
        reasoning_has=(
            "\n1.  **Analyze the User's Request:** The user is asking a very simple",
            '7.  **Draft the final response:** "4".',
        ),
        reasoning_len=2173,
        usage=(13, 564, 561, 0, 577),
        model="glm-4.7",
    ),
}


@needs_captures
def test_every_family_chat_capture_is_checked() -> None:
    on_disk = {f"{folder}/{path.name}" for folder in FAMILY for path in captures_of(folder)}
    assert on_disk - RESPONSES_WIRE == set(CAPTURES)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_family_capture(name: str) -> None:
    provider = name.split("/")[0]
    events = replay_every_way(capture(name), provider)
    check(summarize(events), CAPTURES[name])
    assert {event.provider for event in events} == {provider}


# ----------------------------------------------------------------- per-capture details


def _error(name: str) -> Failed:
    terminal = replay(capture(name), name.split("/")[0])[-1]
    assert isinstance(terminal, Failed)
    return terminal


def test_groq_error_event_names_the_failure() -> None:
    error = _error("groq/tool_use_failed_error_event.sse").error
    assert error.message.startswith("Tool call validation failed")
    assert (error.status, error.provider, error.retryable) == (400, "groq", False)
    assert error.raw is not None and "failed_generation" in json.loads(error.raw)["error"]


@pytest.mark.parametrize(
    ("status", "retryable"), [(503, True), (400, False)], ids=["overloaded", "context"]
)
def test_an_error_chunk_keeps_the_status_beside_its_error(status: int, retryable: bool) -> None:
    """Cerebras's `ErrorChunkResponse` (cerebras-cloud-sdk-python's types: `error` and
    `status_code` beside it) sent after text: the status is the error's, as in an HTTP
    body of that shape, and the raw body is the whole chunk. Before, the chunk's `error`
    object alone was read: no status, and a 503 not known for one."""
    frame = {
        "error": {"message": "m", "type": "server_error", "code": "internal_error", "param": None},
        "status_code": status,
    }
    data = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    data += f"data: {json.dumps(frame)}\n\n".encode()
    terminal = replay(data, "openai")[-1]
    assert isinstance(terminal, Failed)
    error = terminal.error
    assert (error.kind, error.status, error.code) == ("stream_error", status, "internal_error")
    assert error.retryable is retryable
    assert error.raw is not None and json.loads(error.raw) == frame


def test_error_frame_in_plain_words() -> None:
    data = (
        b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
        b"event: error\ndata: Service Unavailable\n\n"
    )
    events = replay(data, "groq")
    assert kinds(events) == ["text", "error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.message) == ("stream_error", "Service Unavailable")


def test_openrouter_error_inside_a_data_chunk() -> None:
    events = replay(capture("openrouter/midstream_error_with_usage.sse"), "openrouter")
    assert kinds(events) == ["reasoning", "usage", "error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.message, error.error.status) == ("Token limit reached", 400)


def test_openrouter_signatures_and_encrypted_reasoning() -> None:
    signed = replay(capture("openrouter/reasoning_anthropic_signature.sse"), "openrouter")
    [signature] = [e for e in signed if isinstance(e, ReasoningDelta) and e.signature]
    assert signature.signature is not None and signature.signature.startswith("Et0BCkgIChAC")
    assert (signature.text, signature.redacted) == ("", False)
    assert kinds(signed) == ["reasoning", "text", "usage", "done"]

    encrypted = replay(capture("openrouter/reasoning_openai_o3.sse"), "openrouter")
    [blob] = [e for e in encrypted if isinstance(e, ReasoningDelta)]
    assert blob.signature is not None and blob.signature.startswith("gAAAAABpCCSI")
    assert len(blob.signature) == 1164
    assert (blob.text, blob.redacted) == ("", True)


def test_usage_after_the_finish_is_part_of_the_turn() -> None:
    for name in (
        "openrouter/usage_after_finish_web_search.sse",
        "openrouter/reasoning_openai_o3.sse",
        "azure-openai/chat_model_router_prompt_filter.sse",
    ):
        events = replay(capture(name), name.split("/")[0])
        assert kinds(events)[-2:] == ["usage", "done"], name


def test_tool_calls_come_before_the_usage_and_done() -> None:
    events = replay(capture("xai/grok_reasoning_tool_call.sse"), "xai")
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "usage", "done"]


def _content_of(name: str) -> str:
    """The concatenated delta.content of a capture, read independently of rxllm."""
    text = ""
    for line in capture(name).decode("utf-8").splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                text += choice["delta"].get("content") or ""
    return text


def test_together_think_tags_become_reasoning_exactly() -> None:
    name = "together/deepseek_r1_think_tags.sse"
    summary = summarize(replay(capture(name), "together"))
    # The content was "<think>\n" + reasoning + "</think>\n" + answer: nothing lost,
    # nothing added, the newline after each tag dropped.
    assert _content_of(name) == f"<think>\n{summary.reasoning}</think>\n{summary.text}"
    assert "<think>" not in summary.text and "</think>" not in summary.reasoning


def test_without_the_think_tags_option_the_tags_stay_text() -> None:
    # The same bytes through a preset without the option: the content is left alone.
    name = "together/deepseek_r1_think_tags.sse"
    summary = summarize(replay(capture(name), "vllm"))
    assert summary.text == _content_of(name)
    assert summary.reasoning == ""


# ------------------------------------------------------------------------ think tags


def _split(pieces: list[str]) -> tuple[list[tuple[str, str]], str, str]:
    out: list[tuple[str, str]] = []
    splitter = ThinkTagSplitter(
        lambda t: out.append(("text", t)), lambda t: out.append(("reasoning", t))
    )
    for piece in pieces:
        splitter.feed(piece)
    splitter.flush()
    text = "".join(t for kind, t in out if kind == "text")
    reasoning = "".join(t for kind, t in out if kind == "reasoning")
    assert all(t for _, t in out), "no empty deltas"
    return out, reasoning, text


@pytest.mark.parametrize(
    ("content", "reasoning", "text"),
    [
        ("<think>\nI ponder.\n</think>\n\nThe answer.", "I ponder.\n", "The answer."),
        ("<think>a</think>b", "a", "b"),
        ("  \n<think>a < b </thin k></think>c", "a < b </thin k>", "c"),
        ("<think></think>answer", "", "answer"),
        ("no tags here", "", "no tags here"),
        ("\n\nleading newlines are text", "", "\n\nleading newlines are text"),
        ("text then <think>not reasoning</think>", "", "text then <think>not reasoning</think>"),
        ("<think>cut off by max_tokens", "cut off by max_tokens", ""),
        ("<think>unfinished close </thi", "unfinished close </thi", ""),
        ("<thi", "", "<thi"),
        ("<think>a</think>b</think>c", "a", "b</think>c"),
        ("", "", ""),
    ],
)
def test_think_tags_at_every_split(content: str, reasoning: str, text: str) -> None:
    _, whole_reasoning, whole_text = _split([content])
    assert (whole_reasoning, whole_text) == (reasoning, text)
    for cut in range(len(content) + 1):
        assert _split([content[:cut], content[cut:]])[1:] == (reasoning, text), cut
    # and one character at a time
    assert _split(list(content))[1:] == (reasoning, text)


def test_think_tags_hold_back_only_a_possible_tag() -> None:
    out: list[tuple[str, str]] = []
    splitter = ThinkTagSplitter(
        lambda t: out.append(("text", t)), lambda t: out.append(("reasoning", t))
    )
    splitter.feed("<think>abc</")
    assert out == [("reasoning", "abc")]
    splitter.feed("think>Hi")
    assert out == [("reasoning", "abc"), ("text", "Hi")]
    splitter.feed(" there")  # once answering, text passes straight through
    assert out[-1] == ("text", " there")


def test_think_tags_end_each_block_that_said_something() -> None:
    """`end_reasoning` comes where a block ends: its close tag, or a flush that finds it
    open (a call, the end of the turn); never for a block that said nothing."""
    out: list[tuple[str, str]] = []

    def splitter() -> ThinkTagSplitter:
        out.clear()
        return ThinkTagSplitter(
            lambda t: out.append(("text", t)),
            lambda t: out.append(("reasoning", t)),
            lambda: out.append(("end", "")),
        )

    think = splitter()
    think.feed("<think>a</th")
    think.feed("ink>b")
    think.flush()
    assert out == [("reasoning", "a"), ("end", ""), ("text", "b")]
    think = splitter()
    think.feed("<think>plan</thi")
    think.flush()  # a call comes
    think.flush()  # and the end: the block was ended already
    assert out == [("reasoning", "plan"), ("reasoning", "</thi"), ("end", "")]
    think = splitter()
    think.feed("<think>\n</think>answer")
    think.flush()
    assert out == [("text", "answer")]


def _sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _delta(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]} | (
        extra
    )


def test_held_think_text_is_released_before_a_tool_call_and_at_a_cut() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}
    events = replay(
        _sse(
            _delta({"content": "<think>plan</thi"}),
            _delta({"tool_calls": [call]}),
            _delta({}, "tool_calls"),
        ),
        "together",
    )
    assert kinds(events) == ["reasoning", "tool_start", "tool_request", "done"]
    assert summarize(events).reasoning == "plan</thi"

    cut = replay(_sse(_delta({"content": "Hello <"}), done=False), "together")
    summary = summarize(cut)
    assert (summary.text, summary.error_kind) == ("Hello <", "truncated")

    held = replay(_sse(_delta({"content": "<thi"}), done=False), "together")
    assert summarize(held).text == "<thi"


def test_think_tags_split_across_network_chunks_and_deltas() -> None:
    pieces = ["<", "thi", "nk>\n", "deep ", "thought</", "think", ">\n", "Answer ", "😊"]
    data = _sse(*[_delta({"content": p}) for p in pieces], _delta({}, "stop"))
    whole = summarize(replay(data, "together"))
    assert (whole.reasoning, whole.text) == ("deep thought", "Answer 😊")
    for seed in range(5):
        again = summarize(replay(rechunk(data, seed, 2), "together"))
        assert (again.reasoning, again.text) == ("deep thought", "Answer 😊")


# --------------------------------------------------------------- core mechanisms


def test_groq_usage_only_under_x_groq() -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    data = _sse(_delta({"content": "hi"}), _delta({}, "stop", x_groq={"id": "r", "usage": usage}))
    summary = summarize(replay(data, "groq"))
    assert summary.usage is not None and summary.usage.total_tokens == 12
    # the option is Groq's: elsewhere x_groq is an unknown key
    assert summarize(replay(data, "openai")).usage is None


def test_reasoning_details_summary_and_encrypted_with_plain_text_beside() -> None:
    data = _sse(
        _delta(
            {
                "reasoning": "Summed up.",
                "reasoning_details": [{"type": "reasoning.summary", "summary": "Summed up."}],
            }
        ),
        # an encrypted-only detail carries no text: the plain field beside it is read
        _delta(
            {
                "reasoning": " More.",
                "reasoning_details": [{"type": "reasoning.encrypted", "data": "enc"}],
            }
        ),
        _delta({"reasoning_content": " Plain."}),
        _delta({"content": "ok"}, "stop"),
    )
    events = replay(data, "openrouter")
    summary = summarize(events)
    assert (summary.reasoning, summary.signatures, summary.text) == (
        "Summed up. More. Plain.",
        ["enc"],
        "ok",
    )


def test_mistral_content_list_with_text_chunks_and_string_thinking() -> None:
    data = _sse(
        _delta({"content": [{"type": "thinking", "thinking": "hmm"}]}),
        _delta(
            {
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": " ok"}]},
                    {"type": "text", "text": "Answer"},
                    {"type": "reference", "reference_ids": [1]},
                ]
            }
        ),
        _delta({"content": "!"}, "stop"),
    )
    summary = summarize(replay(data, "mistral"))
    assert (summary.reasoning, summary.text) == ("hmm ok", "Answer!")


def test_mistral_index_less_call_in_fragments() -> None:
    data = _sse(
        _delta({"tool_calls": [{"id": "abc", "function": {"name": "f", "arguments": '{"a"'}}]}),
        _delta({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
        _delta({"tool_calls": [{"id": "def", "function": {"name": "g", "arguments": "{}"}}]}),
        _delta({}, "tool_calls"),
    )
    summary = summarize(replay(data, "mistral"))
    assert summary.tool_calls == [("abc", "f", {"a": 1}), ("def", "g", {})]


def test_finish_reasons_of_the_family() -> None:
    for raw, stop in [("model_length", "length"), ("sensitive", "content_filter")]:
        summary = summarize(replay(_sse(_delta({"content": "x"}, raw)), "openai"))
        assert (summary.stop_reason, summary.raw_stop_reason) == (stop, raw)


def test_duplicate_finish_chunks_end_the_turn_once() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 2}
    data = _sse(
        _delta({"content": "x"}, "length"),
        _delta({}, "stop"),
        {"choices": [], "usage": usage},
    )
    events = replay(data, "openrouter")
    assert kinds(events) == ["text", "usage", "done"]
    assert summarize(events).raw_stop_reason == "length"


def test_openrouter_finish_reason_error_fails_the_turn_and_dispatches_no_call() -> None:
    # openrouter.ai/docs/api/reference/streaming, "Handling errors during streaming".
    failure = {
        "id": "cmpl-abc123",
        "object": "chat.completion.chunk",
        "created": 1234567890,
        "model": "gpt-3.5-turbo",
        "provider": "openai",
        "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }
    call = {"index": 0, "id": "call_1", "type": "function"}
    data = _sse(
        _delta({"content": "Checking."}),
        _delta({"tool_calls": [{**call, "function": {"name": "f", "arguments": '{"a": 1}'}}]}),
        failure,
        done=False,
    )
    events = replay(data, "openrouter")
    # the call's arguments were complete JSON, but the turn failed: never dispatched
    assert kinds(events) == ["text", "tool_start", "error"]
    error = events[-1]
    assert isinstance(error, Failed)
    assert (error.error.kind, error.error.message, error.error.code) == (
        "stream_error",
        "Provider disconnected unexpectedly",
        "server_error",
    )
    # the finish reason alone, no error object: a failure still, not a `done`
    alone = replay(
        _sse(_delta({"content": "Half"}), _delta({"content": ""}, "error")), "openrouter"
    )
    assert kinds(alone) == ["text", "error"]
    assert summarize(alone).error_kind == "stream_error"


# OpenRouter's chunk when the upstream failed mid-stream: the error object inside the choice
# (hotovo/aider-desk#103, tests/rejections_extra/openrouter__sse_choice_error_processing_...).
PROCESSING_STREAM = {
    "message": "Error processing stream",
    "code": 502,
    "metadata": {"provider_name": "DeepInfra", "raw": {"retryable": True}},
}


def _choice_error(error: dict[str, Any]) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "error"}
    return {"model": "m", "choices": [{**choice, "native_finish_reason": "error", "error": error}]}


def test_openrouter_error_inside_the_choice_is_the_error() -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}
    data = _sse(
        _delta({"content": "Half"}), _choice_error(PROCESSING_STREAM) | {"usage": usage}, done=False
    )
    events = replay(data, "openrouter")
    assert kinds(events) == ["text", "usage", "error"]
    error = events[-1]
    assert isinstance(error, Failed)
    # its words, the upstream's name and its 502, as an error chunk's are read
    assert error.error.message.startswith("Error processing stream")
    assert "DeepInfra" in error.error.message
    assert (error.error.kind, error.error.status) == ("stream_error", 502)
    assert error.error.raw is not None and json.loads(error.error.raw) == PROCESSING_STREAM


def test_openrouter_retryable_is_the_word_on_the_same_request() -> None:
    def said(error: dict[str, Any], where: str) -> bool | None:
        chunk = _choice_error(error) if where == "choice" else _delta({}, "error", error=error)
        terminal = replay(_sse(chunk, done=False), "openrouter")[-1]
        assert isinstance(terminal, Failed)
        return terminal.error.should_retry

    refused = {**PROCESSING_STREAM, "metadata": {"raw": {"retryable": False}}}
    silent = {"message": "Error processing stream", "code": 502}
    for where in ("choice", "chunk"):
        assert said(PROCESSING_STREAM, where) is True
        assert said(refused, where) is False
        assert said(silent, where) is None


# ------------------------------------------------------------------------- presets

PRESETS: dict[str, tuple[str, str | None, bool]] = {
    # name: (default base URL, key variable, key required)
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    "nvidia": ("https://integrate.api.nvidia.com/v1", "NVIDIA_API_KEY", True),
    "deepseek": ("https://api.deepseek.com", "DEEPSEEK_API_KEY", True),
    "azure-openai": ("", "AZURE_OPENAI_API_KEY", True),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY", True),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY", True),
    "vllm": ("http://localhost:8000/v1", "VLLM_API_KEY", False),
    "ollama": ("http://localhost:11434/v1", None, False),
    "llamacpp": ("http://localhost:8080/v1", None, False),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY", True),
    "zai": ("https://api.z.ai/api/paas/v4", "ZAI_API_KEY", True),
    "moonshot": ("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", True),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY", True),
    "snowflake": ("", "SNOWFLAKE_API_KEY", True),
    "custom": ("", "CUSTOM_API_KEY", False),
    "local": ("", None, False),
}

OPTIONS: dict[str, ChatOptions] = {
    "azure-openai": ChatOptions(
        api_key_header="api-key",
        sampling_renames={"max_tokens": "max_completion_tokens"},
        tool_names=OPENAI_TOOL_NAMES,
        max_tool_call_id=40,
    ),
    "groq": ChatOptions(
        extension="x_groq",
        call_signatures=False,
        think_tags=True,
        reasoning_back="think_tags",
        tool_names=OPENAI_TOOL_NAMES,
        pdf_input="none",
    ),
    "mistral": ChatOptions(
        stream_usage=False,
        short_tool_call_ids=True,
        call_signatures=False,
        assistant_after_tool_results=True,
        images_after_tool_results=False,
        sampling_renames={"seed": "random_seed"},
        tool_names=OPENAI_TOOL_NAMES,
        reasoning_back="thinking_chunks",
        pdf_input="document_url",
    ),
    "deepseek": ChatOptions(
        reasoning_back="reasoning_content", json_schema_output=False, dsml_tool_calls=True
    ),
    "zai": ChatOptions(reasoning_back="reasoning_content"),
    "moonshot": ChatOptions(
        reasoning_back="reasoning_content",
        thinking_refuses_forced_choice=re.compile(r"kimi-k2(?:-thinking|\.[5-7])"),
    ),
    "openrouter": ChatOptions(
        reasoning_back="reasoning_details", pdf_input="file_data_or_url", dsml_tool_calls=True
    ),
    "snowflake": ChatOptions(reasoning_back="reasoning_details"),
    "ollama": ChatOptions(reasoning_back="reasoning", image_urls=False, pdf_input="none"),
    "vllm": ChatOptions(pdf_input="none", dsml_tool_calls=True),
    "llamacpp": ChatOptions(pdf_input="none"),
    "xai": ChatOptions(reasoning_in_completion=False),
    "together": ChatOptions(think_tags=True, reasoning_back="think_tags", dsml_tool_calls=True),
    "nvidia": ChatOptions(think_tags=True, reasoning_back="think_tags", dsml_tool_calls=True),
    "custom": ChatOptions(dsml_tool_calls=True),
}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_is_the_one_core_with_declared_options(name: str) -> None:
    wire = wire_for(name)
    assert type(wire) is OpenAIChat
    base_url, key_env, key_required = PRESETS[name]
    assert (wire.name, wire.default_base_url, wire.api_key_env, wire.requires_api_key) == (
        name,
        base_url,
        key_env,
        key_required,
    )
    assert wire.options == OPTIONS.get(name, ChatOptions())


@pytest.mark.parametrize("name", sorted(set(PRESETS) - {"local"}))
def test_provider_builds_for_each_preset(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base_url, key_env, key_required = PRESETS[name]
    if key_env:
        monkeypatch.delenv(key_env, raising=False)
    if base_url:
        provider = rxllm.provider(name, api_key="x")
        assert provider.base_url == base_url
    else:  # the endpoint is the user's (Azure resource, Snowflake account, custom)
        with pytest.raises(rxllm.ConfigError, match="base_url"):
            rxllm.provider(name, api_key="x")
        provider = rxllm.provider(name, api_key="x", base_url="https://example.com/v1")
    assert provider.name == name
    if key_required:
        with pytest.raises(rxllm.ConfigError, match="API key"):
            rxllm.provider(name, base_url="https://example.com/v1")
    else:
        rxllm.provider(name, base_url="https://example.com/v1")


def test_azure_sends_the_key_in_api_key_and_keeps_the_api_version() -> None:
    provider = rxllm.provider(
        "azure-openai",
        api_key="azure-secret",
        base_url="https://res.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21",
    )
    request = ChatRequest(model="gpt-4o", messages=[Message.user("hi")])
    http = provider.http_request(request)
    assert http.url == (
        "https://res.openai.azure.com/openai/deployments/gpt/chat/completions"
        "?api-version=2024-10-21"
    )
    assert http.headers["api-key"] == "azure-secret"
    assert "Authorization" not in http.headers


def test_mistral_body_has_no_stream_options() -> None:
    request = ChatRequest(model="mistral-small-latest", messages=[Message.user("hi")])
    assert "stream_options" not in wire_for("mistral").build_body(request)
    assert wire_for("groq").build_body(request)["stream_options"] == {"include_usage": True}


def test_mistral_tool_call_ids_are_nine_alphanumerics_for_the_call_and_its_result() -> None:
    # Mistral's 400: "Tool call id was call_x but must be a-z, A-Z, 0-9, with a length of 9."
    calls = [
        ToolCall(id="call_9f3kQ2xZ", name="f", arguments={"a": 1}),  # from OpenAI (a fallback)
        ToolCall(id="aB3xK9mP2", name="g"),  # Mistral's own: kept
    ]
    messages = [
        Message.user("hi"),
        Message.assistant(tool_calls=calls),
        Message.tool("call_9f3kQ2xZ", "1"),
        Message.tool("aB3xK9mP2", "2"),
    ]
    request = ChatRequest(model="mistral-small-latest", messages=messages)
    sent = wire_for("mistral").build_body(request)["messages"]
    first, second = (call["id"] for call in sent[1]["tool_calls"])
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", first) and second == "aB3xK9mP2"
    assert [sent[2]["tool_call_id"], sent[3]["tool_call_id"]] == [first, second]
    assert wire_for("mistral").build_body(request)["messages"] == sent  # the same every time
    # every other endpoint sends the ids as they came
    assert wire_for("openai").build_body(request)["messages"][1]["tool_calls"][0]["id"] == (
        "call_9f3kQ2xZ"
    )


def test_mistral_sends_the_seed_as_random_seed() -> None:
    # Mistral's ChatCompletionRequest names it `random_seed`; `seed` is extra_forbidden (422).
    request = ChatRequest(model="mistral-small-latest", messages=[Message.user("hi")], seed=7)
    body = wire_for("mistral").build_body(request)
    assert body["random_seed"] == 7 and "seed" not in body
    assert wire_for("openai").build_body(request)["seed"] == 7
    twice = request.model_copy(update={"params": {"random_seed": 8}})
    with pytest.raises(rxllm.ConfigError, match="set twice"):
        wire_for("mistral").build_body(twice)


@pytest.mark.parametrize("name", ["deepseek", "zai", "moonshot"])
def test_deepseek_and_zai_send_the_reasoning_of_a_tool_turn_back(name: str) -> None:
    """api-docs.deepseek.com/guides/thinking_mode: the reasoning_content of every
    assistant message of a user turn that made tool calls "must be passed back to the API
    in all subsequent requests" (else a 400), the answer after the results too. Z.ai's
    interleaved thinking alike: "thinking blocks should be explicitly preserved and
    returned together with the tool results" (docs.z.ai, Thinking Mode; a review of the
    presets found Z.ai's dropped). Moonshot's Kimi with thinking on refuses the next turn
    without it ("thinking is enabled but reasoning_content is missing in assistant tool
    call message at index N"). Other presets send none."""
    thought = rxllm.ReasoningPart(text="I need the weather. ")
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant(
            "", tool_calls=[ToolCall(id="call_1", name="get_weather")], reasoning=[thought]
        ),
        Message.tool("call_1", '{"temperature": 21}'),
        Message.assistant("It is 21 degrees.", reasoning=[rxllm.ReasoningPart(text="Easy.")]),
        Message.user("Thanks."),
    ]
    request = ChatRequest(model="deepseek-v4-pro", messages=history)
    sent = wire_for(name).build_body(request)["messages"]
    assert sent[1]["reasoning_content"] == "I need the weather. "
    assert sent[3]["reasoning_content"] == "Easy."
    plain = wire_for("openai").build_body(request)["messages"]
    assert all("reasoning_content" not in message for message in plain)


@needs_captures
def test_deepseek_tool_loop_from_a_capture_carries_its_reasoning() -> None:
    """A recorded deepseek-reasoner tool call, folded into its record: `to_message()`
    puts the reasoning where the next request sends it."""
    builder = RecordBuilder("deepseek", "deepseek-reasoner")
    for event in replay(capture("deepseek/reasoner_tool_call.sse"), "deepseek"):
        builder.add(event)
    record = builder.build()
    assert record.reasoning and record.tool_calls
    (call,) = record.tool_calls
    history = [
        Message.user("go"),
        record.to_message(),
        Message.tool(call.call_id, "{}"),
    ]
    sent = wire_for("deepseek").build_body(ChatRequest(model="m", messages=history))["messages"]
    assert sent[1]["reasoning_content"] == record.reasoning
    assert sent[1]["tool_calls"][0]["id"] == call.call_id


def test_mistral_leaves_out_tool_result_images_rather_than_break_the_turn() -> None:
    """Mistral refuses a user message right after tool messages (400, code 3230): the
    images of a tool result are left out there, not sent after the results."""
    history = [
        Message.user("look"),
        Message.assistant("", tool_calls=[ToolCall(id="abcdefghi", name="snap")]),
        Message(
            role="tool",
            tool_call_id="abcdefghi",
            content=[TextPart(text="done"), ImagePart(url="data:image/png;base64,iVBORw0KGgo=")],
        ),
    ]
    body = wire_for("mistral").build_body(ChatRequest(model="m", messages=history))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]
    plain = wire_for("openai").build_body(ChatRequest(model="m", messages=history))
    assert [m["role"] for m in plain["messages"]] == ["user", "assistant", "tool", "user"]


@pytest.mark.parametrize("name", ["mistral", "groq"])
@pytest.mark.parametrize("tool", ["fs.read", "t" * 65])
def test_mistral_and_groq_refuse_tool_names_at_the_call(name: str, tool: str) -> None:
    """Mistral answers such a name 400 ("must be a-z, A-Z, 0-9, or contain underscores
    and dashes, with a maximum length of 64", quoted in Kochava-Studios/witsy#164), and
    the degraded retry then dropped every tool (a review of the presets); groq-python
    documents the same rule. A ConfigError at the call names it instead."""
    request = ChatRequest(
        model="m",
        messages=[Message.user("hi")],
        tools=[rxllm.Tool(name=tool, parameters={"type": "object"})],
    )
    with pytest.raises(rxllm.ConfigError, match="tool name"):
        wire_for(name).build_body(request)
    wire_for(name).build_body(request.model_copy(update={"tools": [rxllm.Tool(name="t_1-a")]}))


def test_moonshot_never_drops_its_thinking_switch() -> None:
    """`thinking: {"type": "disabled"}` turns kimi-k2.6's thinking off: a degraded retry
    that dropped it would turn thinking on unasked, as for DeepSeek."""
    assert "thinking" in wire_for("moonshot").mandatory_body_keys
    assert "thinking" in wire_for("deepseek").mandatory_body_keys
