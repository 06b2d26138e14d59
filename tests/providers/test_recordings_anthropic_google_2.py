"""Shapes from public Anthropic Messages and Gemini streaming recordings that no other
test holds, each body built by hand from the recording's essential lines (ids and
opaque values shortened) and checked whatever the chunking. Both were read correctly
before these tests: they keep them so."""

from __future__ import annotations

from typing import Any

from rxllm import Message
from rxllm.events import Done, ServerToolCall, ServerToolResult, UsageUpdate
from rxllm.providers.google import gemini_contents
from tests.providers.test_google import chunk, sse
from tests.support import replay_every_way, summarize
from tests.test_reasoning_history import record_of

# Each frame's data as Anthropic wrote it: objects padded with spaces before their last
# brace (valid JSON, which a reader must not trim into another object).
_PADDED_FRAMES = (
    (
        "message_start",
        '{"type":"message_start","message":{"model":"claude-sonnet-4-6","id":"msg_011Cdc",'
        '"type":"message","role":"assistant","content":[],"stop_reason":null,'
        '"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":4518,'
        '"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":38,'
        '"service_tier":"standard","inference_geo":"global"}}       }',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use",'
        '"id":"srvtoolu_01Enk","name":"code_execution","input":{}}        }',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":""}        }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"code\\": \\"result = await web_search({\\\\\\"query\\\\\\": '
        '\\\\\\"Pydantic AI\\\\\\"})\\\\nprint(result)"}     }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":"\\\\n\\"}"}           }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0           }'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":'
        '"code_execution_tool_result","tool_use_id":"srvtoolu_01Enk","content":{"type":'
        '"encrypted_code_execution_result","encrypted_stdout":"EqoBCioI","stderr":"",'
        '"return_code":0,"content":[]}}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1    }'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}  }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":2,"delta":{"type":"text_delta",'
        '"text":"The title is **Pydantic AI**."}     }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":2         }'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,'
        '"stop_details":null,"container":{"id":"container_01Dwr","expires_at":'
        '"2026-08-01T16:56:34.509763Z"}},"usage":{"input_tokens":9168,'
        '"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":130,'
        '"server_tool_use":{"web_search_requests":1,"web_fetch_requests":0}}             }',
    ),
    ("message_stop", '{"type":"message_stop"         }'),
)


def test_padded_frames_of_an_encrypted_code_execution_turn() -> None:
    """pydantic-ai `tests/models/anthropic/cassettes/test_web_tools/
    test_anthropic_20260318_web_search_response_exclusion_streaming.yaml`
    (claude-sonnet-4-6, web search with `response_inclusion: excluded`): Claude calls
    web search from code execution, whose result comes back encrypted; every frame's
    object is padded with spaces. One call with its code, its result as sent, the answer,
    the later usage and the container."""
    data = b"".join(
        f"event: {name}\ndata: {payload}\n\n".encode() for name, payload in _PADDED_FRAMES
    )
    events = replay_every_way(data, "anthropic")
    summary = summarize(events)
    assert summary.text == "The title is **Pydantic AI**."
    (call,) = [e for e in events if isinstance(e, ServerToolCall)]
    assert (call.call_id, call.name) == ("srvtoolu_01Enk", "code_execution")
    assert call.arguments == {
        "code": 'result = await web_search({"query": "Pydantic AI"})\nprint(result)\n'
    }
    (result,) = [e for e in events if isinstance(e, ServerToolResult)]
    assert (result.call_id, result.name) == ("srvtoolu_01Enk", "code_execution")
    assert result.content == {
        "type": "encrypted_code_execution_result",
        "encrypted_stdout": "EqoBCioI",
        "stderr": "",
        "return_code": 0,
        "content": [],
    }
    (usage,) = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert (usage.input_tokens, usage.output_tokens) == (9168, 130)
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.stop_reason, done.container) == ("stop", "container_01Dwr")


def test_vertex_signature_only_parts_go_back_as_the_answer_s_signature() -> None:
    """pydantic-ai `tests/models/google/cassettes/test_agentic_video/
    test_agentic_video_processing_vertex[streaming].yaml` (Vertex, gemini-3.7-flash, a
    video read with `mediaProcessing: AGENTIC`): two chunks whose only part is a
    `thoughtSignature` (no text key), the answer, and an empty text part signed with the
    finish; the chunks before the last carry `usageMetadata: {trafficType}` alone, and
    the video's frames are `toolUsePromptTokenCount`. The signatures close the reasoning;
    the turn sent back is the answer with the last one, as pydantic-ai's next request
    sends it."""
    traffic: dict[str, Any] = {"trafficType": "ON_DEMAND"}
    usage = {
        "promptTokenCount": 261,
        "candidatesTokenCount": 42,
        "totalTokenCount": 2560,
        "trafficType": "ON_DEMAND",
        "toolUsePromptTokenCount": 2119,
        "thoughtsTokenCount": 138,
    }
    answer = "No animals appear in the video, as it is a screen recording."
    data = sse(
        chunk({"thoughtSignature": "CAIS1gQB"}, usage=traffic),
        chunk({"thoughtSignature": "CAIStwIB"}, usage=traffic),
        chunk({"text": answer[:30]}, usage=traffic),
        chunk({"text": answer[30:]}, usage=traffic),
        chunk({"text": "", "thoughtSignature": "AY89a18X"}, finish="STOP", usage=usage),
    )
    events = replay_every_way(data, "google")
    summary = summarize(events)
    assert summary.text == answer
    assert summary.signatures == ["CAIS1gQB", "CAIStwIB", "AY89a18X"]
    assert summary.usage is not None
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (261 + 2119, 42 + 138)
    assert summary.usage.total_tokens == 2560
    assert (summary.stop_reason, summary.raw_stop_reason) == ("stop", "STOP")
    turn = record_of(events, "google").to_message()
    contents, _ = gemini_contents([Message.user("Which animals appear?"), turn])
    assert contents[1] == {
        "role": "model",
        "parts": [{"text": answer, "thoughtSignature": "AY89a18X"}],
    }
