"""Streams from the other repositories the captures came from (g0t4/ask-openai.nvim's
llama-server, Ollama and vLLM notes; wavetermdev/waveterm's copies of the providers'
streaming docs; openai/openai-python's inline snapshots) in shapes no capture has.

Each body is built by hand from the recording named beside it (its essential lines),
replayed through the endpoint's preset whole and cut at arbitrary byte boundaries
(`replay_every_way`), and checked against what the recording's own test expects.
"""

from __future__ import annotations

import json
from typing import Any

from rxllm.events import Failed
from tests.support import replay, replay_every_way, summarize


def _ndjson(*payloads: dict[str, Any]) -> bytes:
    """The chunks one JSON document a line, as a capture script that strips `data: `
    (and the `[DONE]` line) writes them."""
    return "".join(json.dumps(p, separators=(",", ":")) + "\n" for p in payloads).encode()


def _sse(*payloads: dict[str, Any]) -> bytes:
    return ("".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + "data: [DONE]\n\n").encode()


def _llama(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}]} | extra


def test_llama_server_markup_leaked_before_a_call_stays_text_and_the_call_comes_once() -> None:
    """g0t4/ask-openai.nvim lua/ask-openai/tools/tests/captures/
    weather-mixed-content-toolcall-sses.json (llama-server, qwen3-coder): one JSON chunk a
    line, no `data:`, no id or model, no `[DONE]`. The tool-call parser let the start of
    the call's markup (`<tool_call>\\n<function=get_current_weather`) out as content before
    it recognized the call, then sent an empty delta and the call itself. The repository's
    own test ("llama-server qwen3coder30b leaking <tool_call>...") expects the content as
    sent, markup included, and the call with its arguments; rxllm keeps what the server
    said as text (as the llamacpp preset keeps raw Harmony tokens) and dispatches the call
    once."""
    pieces = ["Let me check", ".", "\n", "<tool_call>\n", "<function=get", "_current", "_weather"]
    opener = {
        "index": 0,
        "id": "emGvNsMhrq1M2MOwwmEiS9MHA7L1XNrE",
        "type": "function",
        "function": {"name": "get_current_weather", "arguments": '{"'},
    }
    fragments = ["location", '":', '"', "Washington", " DC", '"}']
    body = _ndjson(
        _llama({"role": "assistant", "content": None}),
        *(_llama({"content": piece}) for piece in pieces),
        _llama({}),
        _llama({"tool_calls": [opener]}),
        *(_llama({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments),
        _llama({}, "tool_calls", timings={"cache_n": 314, "prompt_n": 15, "predicted_n": 35}),
    )
    summary = summarize(replay_every_way(body, "llamacpp"))
    assert summary.text == "Let me check.\n<tool_call>\n<function=get_current_weather"
    assert summary.tool_calls == [
        ("emGvNsMhrq1M2MOwwmEiS9MHA7L1XNrE", "get_current_weather", {"location": "Washington DC"})
    ]
    assert (summary.terminal, summary.stop_reason, summary.usage) == ("done", "tool_use", None)


def test_legacy_completions_chunks_text_is_the_answer() -> None:
    """g0t4/ask-openai.nvim lua/ask-openai/backends/vllm/notes/sses.md (also
    oai_completions.notes.md): vLLM's /v1/completions stream, `object: text_completion`,
    each choice's `text` the next piece and no `delta`; the last says `length`. The
    OpenAI-compatible servers rxllm's presets name (vLLM, llama.cpp, Ollama) all serve
    this legacy wire beside chat; a recording of it replayed through the preset must
    not end as a successful turn that said nothing."""

    def chunk(text: str, finish: str | None, chunk_id: str) -> dict[str, Any]:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return {
            "id": chunk_id,
            "object": "text_completion",
            "created": 1741824039,
            "model": "Qwen/Qwen2.5-Coder-3B",
            "choices": [choice | {"stop_reason": None}],
            "usage": None,
        }

    body = _sse(
        chunk("ob", None, "cmpl-eec6b2c11daf423282bbc9b64acc8144"),
        chunk(" and", "length", "cmpl-eec6b2c11daf423282bbc9b64acc8144"),
    )
    summary = summarize(replay_every_way(body, "vllm"))
    assert summary.text == "ob and"
    assert (summary.terminal, summary.stop_reason, summary.model) == (
        "done",
        "length",
        "Qwen/Qwen2.5-Coder-3B",
    )


def test_llama_cpp_native_completion_stream_says_what_it_is() -> None:
    """g0t4/ask-openai.nvim lua/ask-openai/backends/llama_cpp/notes/sses-v1-completions.txt:
    llama-server's own /completion stream, one JSON document a line
    (`{index, content, tokens, stop: false, id_slot, tokens_predicted, ...}`, the last
    with `stop: true`, `stop_type`, `timings`). It is not the OpenAI wire; an Ollama
    native stream (`/api/generate`) already ends in a protocol error saying so and
    what to record instead. This one ends as `truncated`, which says the network cut a
    stream rxllm could read."""
    body = _ndjson(
        {"index": 0, "content": "/json", "tokens": [8931], "stop": False, "id_slot": -1,
         "tokens_predicted": 9, "tokens_evaluated": 1963},
        {"index": 0, "content": '",\n', "tokens": [756], "stop": False, "id_slot": -1,
         "tokens_predicted": 10, "tokens_evaluated": 1963},
        {"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": True,
         "model": "qwen2.5-coder:7b-base-q8_0", "tokens_predicted": 15,
         "tokens_evaluated": 1963, "stop_type": "eos", "stopping_word": "",
         "timings": {"prompt_n": 1955, "predicted_n": 15}},
    )  # fmt: skip
    events = replay(body, "llamacpp")
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert (len(events), failed.error.kind) == (1, "protocol")
    assert "llama" in failed.error.message
