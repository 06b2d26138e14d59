"""OpenAI Chat Completions streaming: the wire most of the field speaks.

Request: `POST {base}/chat/completions` with `stream: true` and
`stream_options.include_usage`; tool parameters as an object schema with `properties`
(`function_parameters`), and the images of tool results in a user message after them
(`chat_messages`). Response: `data:` chunks of `chat.completion.chunk`,
ending in `data: [DONE]`. Tool calls stream keyed by `index`: id and name only on the
first delta, arguments as JSON text fragments. The finish reason arrives before the
usage chunk (whose `choices` is empty), so the finish is held until usage that comes
after the finish's own chunk, `[DONE]` or the end of the body: usage on the finish
chunk is not always the last (vLLM's `continuous_usage_stats` puts usage on every
chunk, then sends the final usage chunk, the only one with the cached tokens); the
latest usage wins. Choiceless chunks of sources right after that usage (Venice's web
search citations) are still the turn's: it ends at the first chunk that is not one
(ignored then, as any chunk after the end), `[DONE]` or the end of the body. `[DONE]`
ends the turn even when no finish reason came (Snowflake sends none), and padded with
whitespace too (`data: [DONE] `, as the SDKs read it).

Every OpenAI-compatible endpoint is this module with a few declared options
(`ChatOptions`), never a copy of the loop. What the compatible endpoints add without
contradicting OpenAI is read here for all of them, since a key that is absent costs
one dict lookup:

- reasoning as `delta.reasoning_content` (DeepSeek, xAI, Z.ai, vLLM), `delta.reasoning`
  (Groq, OpenRouter, vLLM), Perplexity's `delta.reasoning_steps` (each step's `thought`,
  a line of its own, in its concise stream mode; the tool a step ran is a server tool
  call and its result) or OpenRouter's
  `delta.reasoning_details` (also Snowflake):
  `reasoning.text` / `reasoning.summary` text, signatures, and `reasoning.encrypted`
  data kept as `ReasoningDelta.signature`; a detail's fragment that starts with its text
  so far is a snapshot (MiniMax's documented shape), and only its rest is new. When
  `reasoning_details` carries the text, the plain field beside it repeats it and is not
  read again; one detail object there is a list of one, and a string is reasoning text
  (relays pass a provider's value on as it came). A detail streams in fragments of one
  `type` and `index`; the delta that
  ends it (its signature, or an empty one when the next detail, other output or the
  finish comes) carries its other
  fields (`type`, `id`, `format`, `index`) as `details`, so that the record keeps it
  whole and OpenRouter and Snowflake get it back as it came (`ChatOptions.reasoning_back`).
- `delta.audio.transcript` (OpenAI's audio output, where `content` stays null) as the
  text; the audio bytes have no event.
- LiteLLM's `delta.thinking_blocks` (its proxy serving Claude): what
  `reasoning_content` beside them cannot carry, a thinking block's signature (an empty
  reasoning delta with it, ending the block) and a `redacted_thinking` block (a
  reasoning delta with its `data` as signature, `redacted=True`), as the Anthropic wire
  reads them (`_thinking_blocks`); so are the untyped `{"thinking", "signature"}`
  entries of `reasoning_details` that Helicone's AI Gateway writes serving Claude (all
  at the finish: entries signing several blocks whose thinking already streamed as one
  run sign none of it, as no one signature is that run's).
- GitHub Copilot's `delta.reasoning_text` (reasoning, where no field above carries it)
  and `delta.reasoning_opaque` (the thinking's opaque signature, which ends the block:
  an empty reasoning delta with it), as gateways in front of Copilot read them; NAVER
  CLOVA Studio's `delta.thinking_content` (HCX-007's reasoning) and Tinfoil's
  `delta.search_reasoning` (what its model thought while its web search ran) as
  `reasoning_text`.
- a delta of `role: "tool"` (MiniMax's built-in web search: the pages found, as JSON in
  `content`) is a `server_tool_result` and its pages citations, never the answer's text.
- TensorZero's `delta.tensorzero_extra_content[_experimental]`: a `thought` entry's
  text is reasoning and its signature kept (`_tensorzero_extra`).
- Portkey's `delta.content_blocks` (`strict_open_ai_compliance` off): the native
  stream's block events, whose `thinking` is reasoning, `signature` a block's signature
  and `data` a redacted block, as the Anthropic wire reads them (`_content_blocks`).
- `reasoning_content` as an object: AWS Bedrock's Converse reasoning delta (`text`,
  `signature` or `redactedContent`) that a gateway serving Claude on Bedrock passes
  through (envoyproxy/ai-gateway#1222), read as those blocks are
  (`_reasoning_block_delta`).
- `delta.content` as a list of typed chunks (Mistral: `text`, and `thinking` whose
  inner text chunks are reasoning; a `tool_reference` with a URL is a citation; a
  `reference`, whose ids point into sources the client sent, is logged; Databricks'
  `reasoning` part, whose `summary_text` entries are reasoning and signed thinking), or
  of parts with no type (Qwen-VL: `{text}` is text, `{image}` is logged).
- tool calls without `index` (Mistral; several in one delta are known by their place
  in the list, Kimi), or whole in one delta (Ollama, Groq, xAI); a
  call starts when its arguments begin, its name whole: a name may come in a later
  delta than its first (vercel/ai#14722, vmlx's `name: ""` opener; the arguments are
  held until then), in pieces before the arguments (Gemini's compatible endpoint:
  continuedev/continue#5849), or whole again on every fragment (MiniMax on NVIDIA NIM);
  `arguments` sent as a JSON object (TGI, llama.cpp) is read as that object's text, and
  `tool_calls` sent as one call object rather than a list (TGI before 3.2) as that call.
  A last delta that names a streamed call again with its whole arguments (Cerebras:
  elizaOS/eliza#9766) adds only what its fragments had not said. An entry with no id,
  no name and no arguments (none, or `{}`) at an index no call has used is no call
  (LiteLLM's marker where a Claude thinking block stopped, at index -1; Workers AI's
  closing entry, `{id: null, type: null, function: {name: null}}`): it is logged.
  Two calls of a turn with one id (DeepSeek, Z.ai: HKUDS/nanobot#3943) are two calls,
  the repeat renamed `{id}_2` as it starts (`CallIds`), in its events and its history.
  A call's `extra_content.google.thought_signature` (Gemini's OpenAI-compatible
  endpoint, on the call's first delta or on one of its own after it) is its
  `ToolRequest.signature`, and goes back in the history the same way; so is the
  `thoughtSignature` beside a call's `function` (Gemini on Databricks) or its
  `function.thought_signature` (Portkey serving Gemini). The same field on
  a delta (the first text delta, or a last delta of its own) is Gemini's signature of
  the turn's text: a reasoning delta with the signature, as Gemini's native wire gives
  it, back on the assistant message's `extra_content`. Its `thought: true` (with
  `include_thoughts`) makes the delta's content reasoning, the `<thought>` tags around
  a turn's thoughts left out.
  OpenAI's deprecated `delta.function_call` is a call too (never beside `tool_calls`).
  An entry with no `function`, typed after a tool the provider ran and its payload under
  that type (Zhipu's `web_search`, GLM-4-AllTools' `web_browser` and `code_interpreter`:
  `{input}`, then `{outputs}`), is a server tool call and its result (`_typed_tool`, as
  Perplexity's steps are), never a call to dispatch.
  A call named `multi_tool_use.parallel` (or `parallel`: `PARALLEL_WRAPPERS`), the
  wrapper gpt-4o sometimes sends in place of parallel calls (vercel/ai#2786; LiteLLM
  expands it, `_handle_invalid_parallel_tool_calls`), is held until the turn ends: when
  its arguments are `{"tool_uses": [{"recipient_name": "functions.<tool>",
  "parameters": {...}}, ...]}`, each wrapped call is a `tool_request` of its own (call
  id `<id>_<n>`, the wrapper's index), as the Responses wire reads it; otherwise (a
  client tool named `parallel`) the call is requested as it came. A turn cut off or
  failed starts a wrapper still held as the call it came as.
  A call under an id Anthropic gives the tools it runs (`srvtoolu_`: LiteLLM's proxy
  serving Claude writes its web search, fetch and code execution as `tool_calls`) is
  held whole, then a server tool call, never a call to dispatch; its result block
  (LiteLLM's `provider_specific_fields.web_search_results` or `tool_results`, the
  turn's list sent whole again each time) is its server tool result, once, read as
  the Anthropic wire reads it, and `provider_specific_fields.citation` a citation. A
  `tool_calls` finish that asks the client to run none of the turn's calls, the
  provider having run tools (LiteLLM writes it after any call; Zhipu's typed tools and
  MiniMax's closing frame end so too), is `stop`.
  A custom tool's call (`type: "custom"`, `custom: {name, input}`: free text, not JSON)
  is dispatched with `{"input": text}`, as the Responses wire dispatches one, and goes
  back in the history as a custom call when the request offers that custom tool.
- an `error` object inside a data chunk (OpenRouter, vLLM, llama.cpp; the chunk read
  whole, as an HTTP error body is, so a status beside it counts: Cerebras's
  `status_code`) or inside its choice (OpenRouter's, when the upstream failed
  mid-stream), a chunk that is the error itself (`{"object": "error", "message",
  ...}`, vLLM's and Mistral's shape), a chunk with no choices and the error in
  `error_type` and `error_message` (DeepInfra, Venice), a chunk whose status says the
  request failed (MiniMax's `base_resp`, FastChat's `error_code`: `status_envelope`),
  `event: error` frames (Groq;
  in plain words, or with no data, `Normalizer.error_frame`) and the `error` string of
  an endpoint's extension object (Groq's `x_groq`): the stream ends with
  `error(kind="stream_error")`, after any usage the chunk carried and any text the
  think-tag splitter held. A finish reason that says the turn failed
  (`FAILED_FINISHES`: OpenRouter's and Mistral's `error`, vLLM's `abort`, Z.ai's
  `network_error`, DeepSeek's `insufficient_system_resource`, Anthropic's error types
  that Portkey writes there: `overloaded_error`) is a failure too: it ends
  no tool call, so nothing of a failed turn is dispatched. Finish reasons are read in any
  case (`STOP`), as an object's `type` (SGLang), and from OpenRouter's
  `native_finish_reason` where `finish_reason` is missing, or where it names a failure,
  a filter or a limit behind a plain one (`stop` with `network_error`, with Claude's
  `refusal` or Gemini's `SAFETY`, with `max_tokens`); the upstream words gateways
  pass through (Gemini's, Anthropic's, Bedrock's, Cohere's) are in the tables.
- a natural finish (`stop`) after tool calls is `tool_use`, the raw reason kept: Ollama
  sent its calls, then `stop`, and so has OpenAI's gpt-4o (ollama/ollama#7963). A
  finish that cut the output short (`length`, `content_filter`) completes no call whose
  arguments had not begun, nor a custom tool's free-text input: they were cut off (an
  error at the turn's end), never `{}` or a cut input dispatched.
- usage on choice 0 rather than the chunk (Moonshot's last chunk); a usage that counts
  no token (MiniMax's placeholder on every chunk) is none; a finish reason that is the
  word `"null"` (KoboldCpp) is no finish. OpenCode Zen's last chunk before `[DONE]`
  (`"x-opencode-type": "inference-cost"`, or no type and only `cost` beside `choices: []`,
  as opencode's buildCostChunk writes it now) gives the turn's cost in USD, and its counts
  (`normalizedUsage`) where no usage came, also after a usage chunk of its own.
- a chunk of Workers AI's native `/ai/run` stream, whose choice's fields sit on the
  chunk itself (`response` for the text, `tool_calls`, `finish_reason`, then `{"response":
  "", "usage"}`), is read as that choice (`_native_choice`).
- chunks without a served model (Azure's prompt-filter chunk has `model: ""`) and
  chunks without choices; a duplicate finish chunk (OpenRouter) is ignored, except a
  later `content_filter`, which overrules the finish held (Azure's asynchronous filter
  judges the text after the model's own finish). A choice with a whole `message` and no
  `delta` (a server that streams completions) is read as its delta; after deltas that
  carried output it is the turn's summary, which repeats them (MiniMax ends its stream
  with a `chat.completion` frame: the whole message, its finish and the real usage,
  GCWing/OpenBitFun#792), so only its finish, usage and citations not seen are read.
- `annotations` of type `url_citation` (OpenRouter's web search, OpenAI's search
  models: `{url, title, content}`), on the delta or on a whole `message`, are
  `citation` events (`content` is the cited text); the same annotation repeated on a
  later chunk or on the message comes out once. So are the top-level source lists:
  `citations` (URLs: xAI in its last chunk, Perplexity on every chunk), Perplexity's
  `search_results` (`{title, url, date}`) and Z.ai's `web_search` (`{title, link,
  content, refer, ...}`: the pages its web search tool read), Hunyuan's
  `search_info.search_results`, Volcano Engine Ark's `references` (its bot API's
  pages) and Venice's `venice_parameters.web_search_citations` (its web search's
  pages, in the first chunk, beside the request's flags), each URL once; and so
  are the sources of Gemini's `groundingMetadata` that Portkey passes on beside a
  choice. So are
  the documents Azure OpenAI On Your Data retrieved, in the first delta's
  `context.citations` (`{content, title, url, filepath, chunk_id}`), those with a URL.
- Groq's `executed_tools` (compound models' built-in search, code execution,
  browsing: `{index?, type, arguments, output}`, on the delta or the message) are
  tools the provider ran: `server_tool_call` named after `type`, its `arguments` JSON
  string read as an object (anything else kept under `arguments`), when an entry is
  first seen; `server_tool_result` (the entry's other keys: `output`, and
  `search_results` where sent) once it carries an output or results that are not
  empty (`_has_result`). An entry is known by its `index`, else by its position; the
  call id is `{type}_{n}`, `n` counting them.
- A chunk that is an output item of the Responses wire for a tool the provider ran
  (Tinfoil's web search writes `{"type": "web_search_call", "id", "status", "action"}`
  frames, in a chunk's envelope, between its chat chunks) is read as that wire reads
  such an item, by its id: a `server_tool_call` when first seen, its
  `server_tool_result` once its status is final (`_server_item`). Its id is not the
  response's.
- A chunk with no choices that is an event of another API's stream (Anthropic's
  Messages events, the Responses API's `response.*`, a Gemini chunk's `candidates`,
  Mistral's Conversations API: `conversation.response.started`, `message.output.delta`,
  `tool.execution.*`, ...) ends the turn at once in a `protocol` error naming that API
  and the provider that reads it, where its text was dropped field by field (logged)
  and the turn ended `truncated`, retried as if cut (`_other_api`): a base URL or a
  relay's route that speaks another wire.

Only choice 0 is read (a choice with no index, or `index: null`, is choice 0): `n > 1`
is not one stream. Other choices are ignored, with a
warning logged once per stream (the n3 capture: choices 1 and 2 are not events). Any
other field of a chunk, a choice or a delta that is neither read nor known to say
nothing an event could carry (`_CHUNK_KEYS`, `_CHOICE_KEYS`, `_DELTA_KEYS`: ids,
timings, padding, echoes) is logged at debug, once per stream: Azure's
`content_filter_results`, OpenRouter's generated `images`, Perplexity's
`related_questions`, whatever an endpoint adds next.

A field of another JSON type than the reference gives it is read for what it can still
say. The answer's own containers (`choices`, a choice, its `delta` or `message`, the
content, a content part, `tool_calls` and an entry, its `function`) that are not what
they should be end the turn in a `protocol` error saying so in JSON's words; a `null`
entry is none. A field no event needs is logged and the turn goes on (`usage` and its
breakdowns, `annotations`, a `reasoning_details` entry, an `executed_tools` entry), and
a value no event can carry, or that keys the turn's state, is none: an id, a URL, a
title, the model, a signature that is no string; a call's or a tool's `index` that is
no number (read as no index); a choice's `index` that is no number (choice 0).

llama.cpp serving gpt-oss without a reasoning parser streams raw Harmony tokens
(`<|channel|>analysis<|message|>...<|start|>assistant<|channel|>final<|message|>...`)
as plain content; they come out as text, verbatim. Run `llama-server --jinja` with a
reasoning format to get `reasoning_content` instead, which is read as reasoning.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, ClassVar, Literal

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import status_envelope
from rxllm.errors import ConfigError
from rxllm.events import StopReason, Usage, token_count
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import (
    REQUEST_KEYS,
    Normalizer,
    ToolNames,
    WireProtocol,
    cited_source,
    endpoint,
    gemini_text_signature,
    server_result_content,
    server_result_failed,
    stop_reason_of,
    text_or_none,
    thinking_switch,
)
from rxllm.providers.call_ids import CallIds
from rxllm.providers.dsml import DsmlSplitter
from rxllm.providers.think_tags import TAGGED, ThinkTagSplitter, came_in_tags, think_tagged
from rxllm.providers.wire_signs import json_type, other_api
from rxllm.request import (
    PDF,
    ChatRequest,
    ImagePart,
    JsonSchema,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCall,
    forces_a_call,
)

__all__ = [
    "DEGRADES",
    "OPENAI",
    "OPENAI_TOOL_NAMES",
    "TOOL_RESULTS_READ",
    "ChatNormalizer",
    "ChatOptions",
    "PARALLEL_WRAPPERS",
    "OpenAIChat",
    "arguments_object",
    "chat_messages",
    "function_parameters",
    "openai_usage",
    "pdf_file",
    "usage_cost",
    "wrapped_calls",
]

FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "eos": "stop",  # Together
    "eos_token": "stop",  # text-generation-inference: the model ended its answer
    # text-generation-inference: a stop sequence matched (its `FinishReason::format` turns
    # only `eos_token` into "stop")
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "max_output_tokens": "length",  # a Responses upstream's `incomplete_details.reason`
    "model_length": "length",  # Mistral: the model's context window was reached
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "content_filter": "content_filter",
    "sensitive": "content_filter",  # Z.ai: output blocked by its safety review
    # Z.ai, after Anthropic: the context window is full (anomalyco/opencode#18813)
    "model_context_window_exceeded": "length",
    # Gateways pass their upstream's own words through: Gemini's (google-genai
    # `FinishReason`; `STOP` and `MAX_TOKENS` from a gateway, QwenLM/qwen-code#9884), Anthropic's
    # (`end_turn` from the Bedrock Access Gateway, aws-samples/bedrock-access-gateway#11),
    # Bedrock Converse's `stopReason`, Cohere's `finish_reason`.
    "safety": "content_filter",
    "recitation": "content_filter",
    "language": "content_filter",
    "blocklist": "content_filter",
    "prohibited_content": "content_filter",
    "spii": "content_filter",
    "image_safety": "content_filter",
    "image_prohibited_content": "content_filter",
    "image_recitation": "content_filter",
    "refusal": "content_filter",
    "pause_turn": "pause",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "complete": "stop",
    "completed": "stop",  # OpenRouter's `native_finish_reason` from a Responses upstream
    "tool_call": "tool_use",
    "error_toxic": "content_filter",  # Cohere v1: the output was judged toxic
    "error_limit": "length",  # Cohere v1: the model's context limit was reached
    "time_limit": "length",  # IBM watsonx.ai chat: the time limit cut the output
}
"""A finish reason, in lower case (servers write these words in any case) -> stop reason;
anything else is `other`, the raw value kept."""

_CUT_SHORT = frozenset({"length", "content_filter"})
"""Stop reasons of a finish that cut the output short: a call with no arguments yet, or
a custom tool's input, was cut off by it (`ChatNormalizer._end_calls`); an upstream's
word for one of them overrules a plain `stop` (`ChatNormalizer._choice`)."""

FAILED_FINISHES = frozenset(
    {
        "error",  # OpenRouter (beside an error object, or alone), Mistral, vLLM, Cohere
        "abort",  # vLLM: the engine aborted the request, then `[DONE]` (vllm#57082)
        "network_error",  # Z.ai: "model inference exception" (docs.bigmodel.cn)
        "insufficient_system_resource",  # DeepSeek: interrupted for lack of resources
        # Passed through by gateways: the call the model made is invalid (Gemini's
        # `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`; Bedrock's `malformed_tool_use`,
        # `malformed_model_output`), or the request was cut short (Cohere v1's `USER_CANCEL`).
        # IBM watsonx.ai's chat writes its own words: `cancelled` below, `time_limit` above.
        "malformed_function_call",
        "unexpected_tool_call",
        "malformed_tool_use",
        "malformed_model_output",
        "user_cancel",
        "cancelled",  # IBM watsonx.ai chat: the request was cancelled
        # Anthropic's error types, which Portkey writes as the finish reason of the chunk
        # it makes of a mid-stream `error` event (its Anthropic, Vertex AI and Bedrock
        # transforms of Claude), without the message.
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        "timeout_error",
        "billing_error",
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
    }
)
"""Finish reasons (in lower case) that end a turn that failed: the turn is an error, and
none of its calls is dispatched, however complete their arguments look."""


def finish_word(finish: Any) -> str | None:
    """The word a choice's finish reason says, in lower case, to look up in the tables; None
    while the turn goes on: `null`, absent, `""` (SGLang, sgl-project/sglang#3912), or the
    word "null" (KoboldCpp until LostRuins/koboldcpp@c55bb9a, as reported in
    PowerShell/AIShell#350). Servers write the words in other cases (`STOP`: a gateway in
    front of Gemini, QwenLM/qwen-code#9884), or as an object whose `type` is the word
    (SGLang's engine reason, `{"type": "stop", "matched": ...}`, sgl-project/sglang#1407)."""
    if finish.__class__ is dict:
        kind = finish.get("type")
        finish = kind if isinstance(kind, str) else json.dumps(finish)
    elif not isinstance(finish, str):
        finish = json.dumps(finish) if finish else ""  # a shape of no known kind: `other`
    word = finish.strip().lower()
    return word if word and word != "null" else None


DEGRADES = RecoveryPolicy(degrade=True)
"""The family's policy: a rejection before commitment is retried with a degraded body
(`rxllm.degradation`); a bare 502 is a gateway fault, retried as it is."""

# xAI reports cost in ticks of 1e-10 USD (`cost_in_usd_ticks`); checked against the
# xai capture: 1 input, 290 cached and 222 output tokens of grok-3-mini at $0.30,
# $0.075 and $0.50 per million cost $0.00013305 = 1,330,500 ticks.
_USD_PER_TICK = 1e-10


ReasoningBack = Literal[
    "none", "reasoning_content", "reasoning", "reasoning_details", "thinking_chunks", "think_tags"
]
"""The forms in which an endpoint takes a turn's reasoning back (`ChatOptions.reasoning_back`)."""

PdfInput = Literal["file_data", "file_data_or_url", "document_url", "none"]
"""The ways an endpoint takes a PDF in a message (`ChatOptions.pdf_input`)."""


@dataclass(frozen=True)
class ChatOptions:
    """How one OpenAI-compatible endpoint differs from OpenAI's own. Each option is off
    (OpenAI's behaviour) by default and costs nothing per chunk while off."""

    reasoning_in_completion: bool = True
    """Whether `completion_tokens` already counts the reasoning tokens, where the usage
    itself does not tell (`openai_usage`). OpenAI, and the family that copies it, say
    yes. xAI says no: its `total_tokens` is prompt + completion + reasoning (the xai
    capture: 291 + 26 + 196 = 513), so its reasoning is added to the output once."""

    stream_usage: bool = True
    """Send `stream_options.include_usage`. Mistral sends usage on its final chunk
    unasked (both mistral captures) and validates request bodies strictly, so the key
    is not sent there."""

    api_key_header: str | None = None
    """Send the key raw in this header instead of `Authorization: Bearer <key>`. Azure
    OpenAI authenticates API keys with an `api-key` header."""

    extension: str | None = None
    """A top-level object where the endpoint puts what OpenAI's chunk has no field for:
    its `usage` stands in when the chunk has no `usage` of its own, and its `error` (a
    string) ends the stream. Groq's `x_groq` (groq-python's `XGroq`): usage on the last
    chunk (newer responses repeat it at the top level too: the groq capture), and
    "an error string indicating why a stream was stopped early"."""

    think_tags: bool = False
    """Split `<think>...</think>` at the start of `content` into reasoning. Together
    serves DeepSeek-R1 with its chain of thought inside the content (the together
    capture), and so do Groq's `raw` reasoning format and NVIDIA's R1 and Nemotron
    (`rxllm.providers.presets`); see `rxllm.providers.think_tags` for the exact rules.
    Each block ends with an empty reasoning delta whose details are `{"think_tags":
    true}` (`think_tags.TAGGED`): its part is known to have come in the content."""

    dsml_tool_calls: bool = False
    """Read DeepSeek's DSML tool-call blocks in the answer's `content` as tool calls:
    DeepSeek V3.2 and V4 served by a host whose tool parser missed them
    (sgl-project/sglang#40236, cline/cline#13348) or that runs none. Only a whole block
    of DeepSeek's grammar reads so; see `rxllm.providers.dsml` for the exact rules."""

    extra_headers: dict[str, str] = field(default_factory=dict)
    """Headers every request of this endpoint carries."""

    short_tool_call_ids: bool = False
    """Send tool call ids as 9 characters of `[a-zA-Z0-9]`. Mistral rejects any other
    ("Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9."), so
    the ids of calls made elsewhere (a fallback, a history begun on another provider)
    are mapped: an id already of that form is kept, any other becomes 9 base-62
    characters of its SHA-256, the same for the call and for its result; an id an
    earlier call of the history had is another hash (`CallIds`), unique as before."""

    max_tool_call_id: int | None = None
    """The longest tool call id the endpoint takes. OpenAI's refuses a longer one
    ("Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with
    maximum length 40", opencode#12653), as ids of calls made elsewhere can be (vLLM's
    `chatcmpl-tool-...` are 46 characters; Gemini's calls, which have none, are named
    `{name}_{tag}_{index}`): a longer id becomes `call_` and 24 base-62 characters of its
    SHA-256, the same for the call and for its result (`CallIds`)."""

    reasoning_back: ReasoningBack = "none"
    """How the assistant messages of the history carry their reasoning back (the
    `ReasoningPart`s of `Message.content`), in the form the endpoint reads:

    - `"none"`: not at all (OpenAI's chat wire has no field for it).
    - `"reasoning_content"`: the text of every part as `reasoning_content`, `""` when
      there is none. DeepSeek's thinking mode requires it for every assistant message
      of a user turn that made tool calls, the answer after the results too ("must be
      passed back to the API in all subsequent requests", api-docs.deepseek.com/guides/
      thinking_mode), and checks that the field is there: 400 "Missing
      `reasoning_content` field in the assistant message at message index N" for calls
      made without reasoning (a history begun on another provider). `""` passes, and
      DeepSeek ignores the field where it needs none (continuedev/continue#11285,
      Chevey339/kelivo#966). Kimi with thinking on refuses a tool loop without it alike
      ("thinking is enabled but reasoning_content is missing in assistant tool call
      message at index N", MoonshotAI/kimi-agent-sdk#169), wherever it is served.
    - `"reasoning"`: the text of every part as `reasoning`, where there is some.
      Ollama's /v1 reads that field on an assistant message and silently ignores
      `reasoning_content` (ollama/ollama#18534); its tool-calling guide sends the
      reasoning back with the tool results.
    - `"reasoning_details"`: each part that came from a reasoning detail as that
      detail, rebuilt as it came (its type, id, format and index, its text, summary or
      data, its signature), in order; parts that came otherwise are left out.
      OpenRouter documents passing them back unmodified ("Preserving reasoning
      blocks": "the entire sequence of consecutive reasoning blocks must match the
      outputs generated by the model"), and Snowflake Cortex takes Claude's signed
      details back the same way beside tool calls (pydantic-ai's cassette
      test_snowflake_thinking.yaml), where Anthropic requires its signed thinking.
    - `"thinking_chunks"`: the text of every part as one of Mistral's `thinking` chunks
      (`{"type": "thinking", "thinking": [{"type": "text", ...}], "closed": true}`, its
      OpenAPI `ThinkChunk`), `content` then a list with the text as a `text` chunk
      after it, as Magistral streamed them and as @ai-sdk/mistral sends them back
      (vercel/ai#17991). A field Mistral does not know is refused (422
      `extra_forbidden`, charmbracelet/crush#1590).
    - `"think_tags"`: the parts that came inside `<think>` tags (`came_in_tags`) back
      in the content, as a `<think>` block before the text (`think_tagged`): what came
      in the content goes back there, whole. MiniMax-M2's interleaved thinking needs
      its previous response kept so (docs.vllm.ai, interleaved thinking; Novita's
      interleaved thinking guide), and the chat templates of the other models that
      think in tags (Qwen3, DeepSeek-R1) strip earlier turns' blocks themselves.
      Reasoning that came in a field (gpt-oss's `reasoning` on Groq, NIM's
      `reasoning_content`) is not the content's, and is left out.

    `ProviderOptions.send_reasoning` changes it for a provider
    (`OpenAIChat.sending_reasoning`)."""

    call_signatures: bool = True
    """Send a call's thought signature back as Gemini's OpenAI-compatible endpoint takes
    it (`extra_content.google.thought_signature`). Only Gemini signs calls, and an
    endpoint that validates messages strictly refuses the field in a history that
    falls back to it (Mistral's 422 `extra_forbidden` for a message field it does not
    know, charmbracelet/crush#1590; Groq's "property '...' is unsupported"): off there."""

    assistant_after_tool_results: bool = False
    """Put a short assistant message (`TOOL_RESULTS_READ`) between tool results and a
    user or system message that follows them. Mistral refuses that order ("Unexpected
    role 'user' after role 'tool'", code 3230: zed-industries/zed#37021, datapizza-labs/
    datapizza-ai#98) and an empty assistant message alike ("must have either content or
    tool_calls"), so an agent whose user speaks again after a tool run would be refused
    at its next turn."""

    images_after_tool_results: bool = True
    """Send the images of tool results (a tool message takes text only) as one user
    message after the run of results. Off for an endpoint that refuses a user message
    right after tool messages (Mistral: "Unexpected role 'user' after role 'tool'", code
    3230): the images are then left out, logged at debug."""

    image_urls: bool = True
    """Whether the endpoint takes an image by its URL (it fetches it). Ollama's /v1 takes
    one by its data only: its `decodeImageURL` (ollama/ollama, openai/openai.go) answers
    an `http(s)://` URL with 400 "image URLs are not currently supported, please use
    base64 encoded data instead", whose degraded retries cost two more requests and send
    the turn on without the image. Off there, an image by its URL is a `ConfigError` at
    the call, naming the endpoint; a data URL goes as ever."""

    pdf_input: PdfInput = "file_data"
    """How the endpoint takes a PDF (an `ImagePart` whose `pdf` is true):

    - `"file_data"`: OpenAI's `file` part, by its data only (`{"type": "file", "file":
      {"filename", "file_data": "data:application/pdf;base64,..."}}`). Chat Completions
      takes no file by its URL ("External file URL (file_url): Not supported",
      platform.openai.com, "File inputs"), so a PDF's URL is a `ConfigError`.
    - `"file_data_or_url"`: the same part, whose `file_data` is the PDF's data or its URL:
      OpenRouter ("PDFs can be sent as direct URLs or base64-encoded data URLs ... via the
      file content type", openrouter.ai/docs/features/multimodal/pdfs, whose example sends
      `"file_data": "https://bitcoin.org/bitcoin.pdf"`).
    - `"document_url"`: Mistral's `{"type": "document_url", "document_url": url}` chunk
      (`DocumentURLChunk`), the URL or the data as a `data:application/pdf;base64,...` URL.
      Its schema has no `file` part with data (`FileChunk` is `{type: "file", file_id}`),
      so OpenAI's is refused by its strict validation. Its Document QnA sends a URL in
      chat (docs.mistral.ai, document_qna), its OCR the same chunk with a data URL, and
      @ai-sdk/mistral a PDF's data as that data URL in chat.
    - `"none"`: the endpoint takes no PDF in any part, so one is a `ConfigError` at the
      call, naming the endpoint, not a 400 whose degraded retries drop unrelated keys
      first. Ollama's /v1 reads `text` and `image_url` parts only (anything else: 400
      "invalid message format", ollama/ollama openai/openai.go `FromChatRequest`),
      llama-server `text`, `image_url` and `input_audio` ("unsupported content[].type",
      ggml-org/llama.cpp tools/server/server-common.cpp), vLLM its own list without
      `file` ("Unsupported chat content part type: 'file'", vllm/entrypoints/
      chat_utils.py), Groq `text`, `image_url` and a `document` of JSON data
      (groq-python's `ChatCompletionContentPartParam`)."""

    sampling_renames: dict[str, str] = field(default_factory=dict)
    """`ChatRequest` sampling fields this endpoint names otherwise (Mistral's
    `random_seed` for `seed`: its strict validation rejects `seed`)."""

    tool_names: ToolNames | None = None
    """The tool names the endpoint takes, where it says (`WireProtocol.tool_names`)."""

    thinking_refuses_forced_choice: re.Pattern[str] | None = None
    """Set where the endpoint refuses a forced tool choice (`"required"`, a tool's name)
    while the model thinks, as Anthropic's API does: the names of the models that think
    unless told not to (matched from the start). Thinking is seen as the `thinking`
    switch of params says (`thinking_switch`: `{"type": "enabled" | "disabled"}`,
    Moonshot's, Z.ai's and Anthropic's form, on unless its type is `disabled`); without
    one, on for the models matched. A forced choice then is a `ConfigError` at the call,
    naming the endpoint and the model, not a 400 that a degraded retry answers by sending
    the turn on without the choice: Moonshot's Kimi answers "tool_choice 'required' is
    incompatible with thinking enabled" (AstrBotDevs/AstrBot#7805) and, for a name,
    "tool_choice 'specified' is incompatible with thinking enabled" (can1357/oh-my-pi#827,
    #1077: kimi-k2.6, its thinking on by default)."""

    json_schema_output: bool = True
    """Whether the endpoint takes a `response_format` of type `json_schema`. Off where its
    reference says it takes `text` and `json_object` only (DeepSeek's Chat Completions,
    api-docs.deepseek.com/guides/json_mode; a schema answers 422 "response_format.type
    `json_schema` is unavailable now", tests/rejections_extra): a `JsonSchema` is then a
    `ConfigError` at the call, naming the endpoint, not a refusal whose degraded retry
    sends the turn on without the format, the answer in prose. JSON mode (`"json"`) goes
    as ever."""


_PLAIN = ChatOptions()

OPENAI_TOOL_NAMES = ToolNames(
    re.compile(r"[A-Za-z0-9_-]{1,64}"), "letters, digits, '_' and '-', at most 64 characters"
)
"""OpenAI's function names (`FunctionDefinition.name`: "Must be a-z, A-Z, 0-9, or contain
underscores and dashes, with a maximum length of 64"), on both of its APIs."""

OPENAI = ChatOptions(
    sampling_renames={"max_tokens": "max_completion_tokens"},
    tool_names=OPENAI_TOOL_NAMES,
    max_tool_call_id=40,
)
"""OpenAI's own endpoint (and Azure's, which serves the same models): `max_tokens` is
deprecated there "in favor of `max_completion_tokens`, and is not compatible with o-series
models" (the API reference; gpt-5 refuses it alike: "Unsupported parameter: 'max_tokens'
is not supported with this model. Use 'max_completion_tokens' instead."), while every
model takes `max_completion_tokens`. The compatible servers keep `max_tokens`, the name
they all read: one that ignored an unknown key would drop the limit unsaid. Its tool
names are `OPENAI_TOOL_NAMES`, its tool call ids at most 40 characters."""


def openai_usage(raw: dict[str, Any], reasoning_in_completion: bool = True) -> Usage:
    """Normalize an OpenAI-style usage object: cached input apart, reasoning counted once.

    Reads the field's dialects too: DeepSeek's `prompt_cache_hit_tokens`, Together's
    top-level `cached_tokens`, Mistral's `num_cached_tokens` (and its
    `prompt_token_details`, as @ai-sdk/mistral reads them), OpenRouter's
    `prompt_tokens_details.cache_write_tokens` and `cost` (USD), Alibaba's (Qwen's explicit
    cache) `prompt_tokens_details.cache_creation_input_tokens`, LiteLLM's (Claude and
    other cached models through its proxy: `prompt_tokens` counts the cache reads and
    writes, Anthropic's `cache_creation_input_tokens` and `cache_read_input_tokens` beside
    it, `prompt_tokens_details.cache_creation_tokens` in newer versions), Requesty's
    `prompt_tokens_details.caching_tokens` (its Anthropic models' cache writes), xAI's
    `cost_in_usd_ticks`, Perplexity's `cost` object (its `total_cost`) and top-level
    `reasoning_tokens`. `prompt_tokens` counts cache reads
    and writes in this family, so both are taken out of `input_tokens`, and
    `completion_tokens` counts the reasoning unless `reasoning_in_completion` (or
    Perplexity's dialect) says otherwise; but the family does not agree, so
    the counts themselves decide where they can (`_disjoint`): a cache larger than the
    prompt is not inside it (xAI's grok-4-1-fast-non-reasoning, vercel/ai#12485), nor
    reasoning larger than the completion (a proxy's Gemini: `completion_tokens` 0,
    `reasoning_tokens` 60), and the wire's `total_tokens` says which reading it summed
    (xAI's 663 + 50 + 124 = 837 on Vertex; 686 + 123 = 809 for 112 of reasoning
    through a gateway). A BYOK request through OpenRouter
    (`is_byok`) was charged twice: its `cost` is OpenRouter's fee, and
    `cost_details.upstream_inference_cost` what the provider billed to the user's own
    key (openrouter.ai/docs, Usage Accounting); the turn's cost is their sum.
    """
    prompt = raw.get("prompt_tokens") or 0
    completion = raw.get("completion_tokens") or 0
    prompt_details = _details(raw, "prompt_tokens_details")
    cached = (
        prompt_details.get("cached_tokens")
        or raw.get("prompt_cache_hit_tokens")
        or raw.get("cached_tokens")
        or raw.get("num_cached_tokens")
        or _details(raw, "prompt_token_details").get("cached_tokens")
        or raw.get("cache_read_input_tokens")
        or 0
    )
    cache_write = (
        prompt_details.get("cache_write_tokens")
        or prompt_details.get("cache_creation_input_tokens")
        or prompt_details.get("cache_creation_tokens")
        or prompt_details.get("caching_tokens")
        or raw.get("cache_creation_input_tokens")
        or 0
    )
    reasoning = _details(raw, "completion_tokens_details").get("reasoning_tokens")
    total = raw.get("total_tokens")
    reasoning_apart = not reasoning_in_completion
    if reasoning is None and raw.get("reasoning_tokens"):
        # Perplexity's (sonar-deep-research): its reasoning is a step of its own, billed
        # apart from `completion_tokens`, and left out of `total_tokens` (a turn's usage:
        # prompt 19 + completion 498 = total 517, reasoning 95305), so the total cannot
        # say where it is.
        reasoning, reasoning_apart, total = raw["reasoning_tokens"], True, None
    reasoning = reasoning or 0
    cost = usage_cost(raw)
    if cost is not None and raw.get("is_byok") is True:
        upstream = _details(raw, "cost_details").get("upstream_inference_cost")
        if isinstance(upstream, int | float):
            cost += upstream
    input_tokens, output_tokens, reasoning = _disjoint(
        (prompt, cached, cache_write),
        (completion, reasoning),
        total,
        reasoning_apart=reasoning_apart,
    )
    return Usage.of(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        reasoning_tokens=reasoning,
        cache_read_tokens=cached,
        cache_write_tokens=cache_write,
        cost_usd=float(cost) if cost is not None else None,
    )


def _details(usage: dict[str, Any], key: str) -> dict[str, Any]:
    """A usage object's breakdown (`prompt_tokens_details`); one that is no object has
    none to read (the counts beside it still count)."""
    details = usage.get(key)
    return details if details.__class__ is dict else {}


def usage_cost(raw: dict[str, Any]) -> float | None:
    """A usage object's cost in USD, in its dialects: OpenRouter's `cost`, Perplexity's
    `cost` object (its `total_cost`), Charm's gateway's (its `usd`, beside the price in
    its credits), xAI's `cost_in_usd_ticks`; None without one."""
    cost = raw.get("cost")
    if isinstance(cost, dict):
        # Perplexity: the cost's parts and their total; hyper.charm.land:
        # `{"usd": ..., "hypercredits": ...}` (charmbracelet/crush's recordings)
        cost = cost.get("total_cost", cost.get("usd"))
    if isinstance(cost, int | float):
        return cost
    ticks = raw.get("cost_in_usd_ticks")
    return ticks * _USD_PER_TICK if isinstance(ticks, int | float) else None


def _disjoint(
    input_: tuple[Any, ...], output: tuple[Any, Any], total: Any, *, reasoning_apart: bool
) -> tuple[int, int, int]:
    """The uncached input, the whole output and the reasoning, from (prompt, cache reads,
    cache writes) and (completion, reasoning) counts that may each hold their part or
    not. The first reading whose sum is the wire's `total` wins, and without one, the
    first: the cache inside the prompt before apart from it, unless it is larger; the
    reasoning as `reasoning_apart` says, and apart from a smaller completion (a total that
    says it is inside one still wins: OpenRouter's counts of a turn cut by an error).
    Where no reasoning is reported and the total holds more than that first reading, the
    rest is output the completion left out: the reasoning. Gemini's OpenAI-compatible
    endpoint counts its thought tokens in `total_tokens` alone (gemini-2.5-pro: prompt 35,
    completion 12, total 126, in pydantic-ai's test_compatible_api_with_tool_calls_without_id
    cassette), and converters of Gemini's usage to this wire did alike (mozilla-ai/any-llm#1290)."""
    prompt, *caches = (token_count(count) for count in input_)
    cache = sum(caches)
    completion, reasoning = (token_count(count) for count in output)
    inputs = (prompt,) if cache > prompt else (prompt - cache, prompt)
    outputs = (completion + reasoning, completion)
    if not reasoning_apart and reasoning <= completion:
        outputs = outputs[::-1]
    if type(total) in (int, float):  # `53.0` is the same JSON number as `53`
        for uncached in inputs:
            for whole in outputs:
                if uncached + cache + whole == total:
                    return uncached, whole, reasoning
        unsaid = token_count(total) - inputs[0] - cache - outputs[0]
        if not reasoning and prompt and unsaid > 0:  # (with no prompt count, it may be the prompt)
            return inputs[0], outputs[0] + unsaid, unsaid
    return inputs[0], outputs[0], reasoning


def _content(message: Message, options: ChatOptions, endpoint: str) -> str | list[dict[str, Any]]:
    if not message.images:
        return message.text
    return _content_parts(message.content, options, endpoint)


def _content_parts(
    content: Sequence[Part], options: ChatOptions, endpoint: str
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            # An empty text part beside an image (`Message.user("", images=[...])`) says
            # nothing, and endpoints that route to Anthropic reject it ("text content
            # blocks must be non-empty"); the Responses wire leaves it out alike.
            if part.text:
                parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            if part.pdf:
                parts.append(_pdf_part(part, options.pdf_input, endpoint))
                continue
            if not options.image_urls and part.inline is None:
                raise ConfigError(
                    f"{endpoint} takes an image by its data only, not its URL "
                    f"({part.url[:80]}): pass the image as pathlib.Path(...) or its bytes, "
                    "or a data:image/...;base64,... URL"
                )
            image = {"url": part.url}
            if part.detail is not None:
                image["detail"] = part.detail
            parts.append({"type": "image_url", "image_url": image})
    return parts


def pdf_file(part: ImagePart, *, by_url: bool) -> dict[str, str]:
    """A PDF as OpenAI's file content takes it (`file` on Chat Completions, `input_file`
    on Responses: platform.openai.com, "File inputs"), by its data, or by its URL where
    the API fetches one (`by_url`: Responses' `file_url`). An image part would be refused
    ("Invalid MIME type. Only image types are supported."), and a retry would take that
    for an endpoint without image input and send the turn on without the document."""
    if part.inline is not None:
        return _file_data(part)
    if by_url:
        return {"file_url": part.url}
    raise ConfigError(
        f"Chat Completions takes a PDF by its data, not its URL ({part.url[:80]}): pass the "
        "file as pathlib.Path(...) or its bytes, or a data:application/pdf;base64,... URL"
    )


def _pdf_part(part: ImagePart, form: PdfInput, endpoint: str) -> dict[str, Any]:
    """A PDF as a content part of the endpoint's `form` (`ChatOptions.pdf_input`)."""
    if form == "document_url":
        return {"type": "document_url", "document_url": _pdf_url(part)}
    if form == "file_data_or_url":
        return {"type": "file", "file": _file_data(part)}
    if form == "none":
        raise ConfigError(
            f"{endpoint} takes no PDF input: send the document's text, or its pages as "
            "images, or send it to a provider that reads PDFs"
        )
    return {"type": "file", "file": pdf_file(part, by_url=False)}


def _file_data(part: ImagePart) -> dict[str, str]:
    """OpenAI's `file` content of a PDF, its `file_data` the PDF's data or URL."""
    return {"filename": "document.pdf", "file_data": _pdf_url(part)}


def _pdf_url(part: ImagePart) -> str:
    """A PDF's remote URL, or its data as a base64 `data:` URL of its type."""
    inline = part.inline
    return part.url if inline is None else f"data:{PDF};base64,{inline[1]}"


def function_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters as OpenAI takes them: an object schema with `properties`.
    OpenAI refuses a schema without `"type": "object"` ("schema must be a JSON Schema of
    'type: "object"', got 'type: "None"'") and an object schema without `properties`
    ("object schema missing properties", as MCP servers write a tool without
    parameters), and a degraded retry would then drop the tools: the turn would go on
    without them. Both are added, saying the same; any other schema is sent as it is."""
    if "type" not in schema:
        schema = {"type": "object", **schema}
    if schema["type"] == "object" and "properties" not in schema:
        schema = {**schema, "properties": {}}
    return schema


def chat_messages(
    messages: list[Message],
    options: ChatOptions | None = None,
    custom_tools: frozenset[str] = frozenset(),
    endpoint: str = "the endpoint",
) -> list[dict[str, Any]]:
    """Messages in the Chat Completions shape, as the endpoint's `options` want them
    (tool call ids through `CallIds`, reasoning beside tool calls). A call of one
    of `custom_tools` (the names of the custom tools offered) goes back as the custom
    call it came as, its `input` the text it was given. A tool message takes text only
    (its `content` is a string or text parts), so the images of tool results follow
    their run of tool messages as one user message, each result's images after a line
    naming its call (`ChatOptions.images_after_tool_results`): no message comes between
    a turn's calls and their results. Where the endpoint wants an assistant message
    after tool results, one comes before the next user or system message
    (`ChatOptions.assistant_after_tool_results`). An attachment the endpoint cannot
    take (`ChatOptions.image_urls`, `pdf_input`) is a `ConfigError` that names it
    (`endpoint`)."""
    options = options or _PLAIN
    # Mistral's ids are 9 base-62 characters: one made elsewhere maps to such an id, and
    # one that came back in an earlier turn (a server's `call_0`, or any two ids whose
    # hash meets) is renamed, so each result still names its own call.
    ids = (
        CallIds("a-zA-Z0-9", length=9)
        if options.short_tool_call_ids
        else CallIds(longest=options.max_tool_call_id)
    )
    bridge = options.assistant_after_tool_results
    out: list[dict[str, Any]] = []
    shown: list[dict[str, Any]] = []  # the images of the tool results just sent
    for message in messages:
        if message.role == "tool":
            call_id = ids.result(message.tool_call_id)
            out.append({"role": "tool", "tool_call_id": call_id, "content": message.text})
            if message.images and options.images_after_tool_results:
                shown.append({"type": "text", "text": f"[Images from tool call {call_id}]"})
                shown += _content_parts(message.images, options, endpoint)
            elif message.images:
                logger.debug(
                    "left out {} image(s) of the result of tool call {}: the endpoint takes "
                    "no user message after tool results",
                    len(message.images),
                    call_id,
                )
            continue
        if shown or (bridge and message.role != "assistant" and out and out[-1]["role"] == "tool"):
            out += _after_results(shown, options)
            shown = []
        if message.role == "assistant":
            if not message.text and not message.tool_calls:
                # Nothing to send: `content: null` is valid only beside tool calls (the
                # assistant message's schema), so an empty turn is left out, as in the
                # Responses wire.
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    _call_entry(
                        call,
                        ids.call(call.id),
                        custom_tools,
                        options.call_signatures,
                    )
                    for call in message.tool_calls
                ]
            if options.call_signatures:
                signature = gemini_text_signature(message.content)
                if signature is not None:  # Gemini's, back where its compatible API put it
                    entry["extra_content"] = {"google": {"thought_signature": signature}}
            if options.reasoning_back != "none":
                _reasoning_back(entry, message, options.reasoning_back)
            out.append(entry)
        else:
            out.append({"role": message.role, "content": _content(message, options, endpoint)})
    if shown:
        out += _after_results(shown, options)
    return out


def _reasoning_back(entry: dict[str, Any], message: Message, form: ReasoningBack) -> None:
    """Add an assistant message's reasoning to its `entry` in the endpoint's `form`
    (`ChatOptions.reasoning_back`)."""
    parts = [part for part in message.content if isinstance(part, ReasoningPart)]
    if form == "think_tags":
        tagged = "".join(part.text for part in parts if came_in_tags(part.details))
        entry["content"] = think_tagged(tagged, message.text) or None
        return
    if form == "reasoning_details":
        details = [detail for part in parts if (detail := _reasoning_detail(part)) is not None]
        if details:
            entry["reasoning_details"] = details
        return
    text = "".join(part.text for part in parts)
    if form == "reasoning_content":
        entry["reasoning_content"] = text  # `""` too: DeepSeek checks the field is there
    elif not text:
        return
    elif form == "reasoning":
        entry["reasoning"] = text
    elif form == "thinking_chunks":
        thought = [{"type": "text", "text": text}]
        chunks = [{"type": "thinking", "thinking": thought, "closed": True}]
        if message.text:
            chunks.append({"type": "text", "text": message.text})
        entry["content"] = chunks


TOOL_RESULTS_READ = "Tool results received."
"""The assistant's words between tool results and the next user message, where the
endpoint refuses that order (`ChatOptions.assistant_after_tool_results`): a plain
statement of what happened, never an answer the model did not give."""


def _after_results(shown: list[dict[str, Any]], options: ChatOptions) -> list[dict[str, Any]]:
    """What closes a run of tool results before a user or system message, or the end of
    the history: the assistant message the endpoint wants there, then the results'
    images as one user message (a tool message takes text alone)."""
    after: list[dict[str, Any]] = []
    if options.assistant_after_tool_results:
        after.append({"role": "assistant", "content": TOOL_RESULTS_READ})
    if shown:
        after.append({"role": "user", "content": shown})
    return after


def _call_entry(
    call: ToolCall, call_id: str, custom_tools: frozenset[str], signed: bool
) -> dict[str, Any]:
    """A call of the history: a function's, or a custom tool's (`{"input": text}`, as
    `ChatNormalizer` read it) as `{type: "custom", custom: {name, input}}`; with its
    Gemini thought signature where the endpoint takes it (`signed`)."""
    text = call.arguments.get("input")
    if call.name in custom_tools and isinstance(text, str):
        return {"id": call_id, "type": "custom", "custom": {"name": call.name, "input": text}}
    function = {"name": call.name, "arguments": call.arguments_json}
    entry: dict[str, Any] = {"id": call_id, "type": "function", "function": function}
    if signed and call.signature is not None:  # Gemini's thought signature, back where it came
        entry["extra_content"] = {"google": {"thought_signature": call.signature}}
    return entry


def _custom_tools(offered: Any) -> frozenset[str]:
    """The names of the custom tools a request offers in its params (Chat Completions
    nests each under `custom`: `{type: "custom", custom: {name, format}}`)."""
    if not isinstance(offered, list):
        return frozenset()
    return frozenset(
        str(tool["custom"].get("name"))
        for tool in offered
        if isinstance(tool, dict)
        and tool.get("type") == "custom"
        and isinstance(tool.get("custom"), dict)
    )


def _reasoning_detail(part: ReasoningPart) -> dict[str, Any] | None:
    """A reasoning part that came from an OpenRouter reasoning detail, as that detail:
    its own fields, then its text, summary or data and its signature. Any other part
    is not one (no detail `type` to send it as)."""
    details = part.details
    if not details:
        return None
    kind = details.get("type")
    if kind == "reasoning.text":
        detail = {**details, "text": part.text}
        if part.signature is not None:
            detail["signature"] = part.signature
        return detail
    if kind == "reasoning.summary":
        return {**details, "summary": part.text}
    if kind == "reasoning.encrypted" and part.signature is not None:
        return {**details, "data": part.signature}
    return None


def arguments_object(raw: Any) -> dict[str, Any]:
    """A provider-run tool's arguments as an object: a JSON object string read, an
    object as it is, nothing as `{}`, anything else kept whole under `arguments`."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"arguments": raw}


# The tags around Gemini's thoughts in `content` (its OpenAI-compatible endpoint, with
# `include_thoughts`): `_thought`.
_THOUGHT_OPEN = "<thought>"
_THOUGHT_CLOSE = "</thought>"


def _google_of(extra: Any) -> Any:
    """The `google` object of Gemini's `extra_content`, on a call or a delta, or None."""
    return extra.get("google") if extra.__class__ is dict else None


def _thought_signature(google: Any) -> str | None:
    """The thought signature in that `google` object (`{"thought_signature": ...}`), or
    None without one."""
    signature = google.get("thought_signature") if google.__class__ is dict else None
    return signature if signature.__class__ is str and signature else None


def _arguments_text(arguments: Any) -> str:
    """A call's `arguments` sent as a JSON object rather than its text (TGI, llama.cpp
    and Ollama send it so): the object's JSON text; `{}` adds nothing, as `""` does.
    Anything else is not a call's arguments, an empty one (`[]`, `0`, `false`) included:
    it is never read as a call without them."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False) if arguments else ""
    raise ValueError(f"tool call arguments must be a JSON string, got {type(arguments).__name__}")


def _empty_object(function: dict[str, Any]) -> bool:
    """Whether a call entry's arguments are the whole empty object, `"{}"` or `{}`."""
    arguments = function.get("arguments")
    if arguments.__class__ is str:
        return arguments.strip() == "{}"
    return arguments == {} and arguments.__class__ is dict


# The names a model gives the `multi_tool_use.parallel` wrapper when it sends it as a
# call of its own (gpt-4o on this wire, vercel/ai#2786; gpt-5.4 on the Responses wire as
# `parallel`, vercel/ai#19067); its wrapped calls name client functions as
# `functions.<name>`. A tuple, as every set of words a wire's value is tested against: a
# value that is no string (a list, an object) is compared, never hashed, and is none.
PARALLEL_WRAPPERS = ("parallel", "multi_tool_use.parallel")
_FUNCTIONS = "functions."


def wrapped_calls(arguments: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The (tool, parameters) calls a `multi_tool_use.parallel` wrapper's arguments hold,
    or None when they are not that wrapper (a tool the client named `parallel`)."""
    try:
        payload = json.loads(arguments)
    except ValueError:
        return None
    uses = payload.get("tool_uses") if isinstance(payload, dict) and len(payload) == 1 else None
    if not isinstance(uses, list) or not uses:
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    for use in uses:
        name = use.get("recipient_name") if isinstance(use, dict) else None
        parameters = use.get("parameters", {}) if isinstance(use, dict) else None
        tool = name.removeprefix(_FUNCTIONS) if isinstance(name, str) else ""
        if tool in ("", name) or not isinstance(parameters, dict):
            return None
        calls.append((tool, parameters))
    return calls


# A reasoning detail's content, which its fragments stream; its other fields describe it.
_DETAIL_CONTENT = frozenset({"text", "summary", "data", "signature"})


def _signs_several(details: list[dict[str, Any]]) -> bool:
    """Whether the untyped thinking blocks among `reasoning_details` carry more than one
    signature: blocks signed apart (Helicone's AI Gateway serving Claude), not one
    answer's signature repeated on each thought (serving Gemini)."""
    signatures = {
        signature
        for item in details
        if item.get("type") is None and (signature := item.get("signature")).__class__ is str
    }
    signatures.discard("")
    return len(signatures) > 1


def _detail_fields(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning detail's own fields (`type`, `id`, `format`, `index`, ...), as sent."""
    return {name: value for name, value in item.items() if name not in _DETAIL_CONTENT}


# The keys of a chunk, of a choice and of a delta that every one of them may carry: read
# on each (`usage`, `delta`, `content`...), or saying nothing an event could carry (ids,
# timing, the route taken, padding, echoes of the request, the same text again). A key
# outside them is read where it is sent (`_*_READ_WHEN_SENT`), or has no event and is
# logged at debug, once per stream.
_CHUNK_KEYS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "system_fingerprint",
        "service_tier",
        "obfuscation",  # OpenAI's padding
        "provider",  # OpenRouter: the upstream that served
        "timings",  # llama.cpp: speeds
        "__verbose",  # llama.cpp with `verbose`: the whole completion again
        "prompt_token_ids",  # vLLM's echo of the prompt (the vllm capture)
        "prompt_text",
        "p",  # Workers AI's padding
    }
)
# A choice's fields that Workers AI's native `/ai/run` stream writes on the chunk itself
# (`_native_choice`).
_NATIVE_CHOICE = frozenset({"response", "tool_calls", "finish_reason"})
# Read on every chunk that has them (a source list may grow; a status says the request
# failed only on the chunk that ends it: MiniMax's `base_resp`, 0 on every other).
_CHUNK_READ_WHEN_SENT = frozenset(
    {
        "error",
        "citations",
        "search_results",
        "web_search",
        "references",
        "search_info",
        "venice_parameters",
        "base_resp",
        "error_code",
        "x-opencode-type",  # OpenCode Zen's cost chunk (`_inference_cost`)
        *_NATIVE_CHOICE,
    }
)


@functools.cache
def _read_when_sent(extension: str | None) -> frozenset[str]:
    """The chunk keys read only where sent, with the endpoint's extension object."""
    return _CHUNK_READ_WHEN_SENT | {extension} if extension else _CHUNK_READ_WHEN_SENT


_CHOICE_KEYS = frozenset(
    {
        "index",
        "delta",
        "finish_reason",
        "logprobs",
        "native_finish_reason",  # OpenRouter: the upstream's own word for the finish
        "stop_reason",  # vLLM: the stop token id or string behind the finish
        "matched_stop",  # SGLang: the same (vercel/ai's azure-deepseek-reasoning fixture)
        "usage",  # Moonshot (Kimi): the turn's usage, on the last chunk's choice
        "token_ids",  # vLLM
        "seed",  # Together
    }
)
_DELTA_KEYS = frozenset(
    {
        "role",
        "content",
        "reasoning_content",
        "reasoning",
        "reasoning_details",
        "refusal",
        "tool_calls",
        "channel",  # Groq: the Harmony channel of the reasoning beside it
        "token_id",  # Together
    }
)
# Reasoning under the names of one endpoint each, read where neither `reasoning_content`
# nor `reasoning` carries it: GitHub Copilot's `reasoning_text`, NAVER CLOVA Studio's
# `thinking_content` (HCX-007 on its OpenAI-compatible API), Tinfoil's `search_reasoning`
# (what the model thought while its web search ran, before the answer).
_RARE_REASONING = ("reasoning_text", "thinking_content", "search_reasoning")
# A chunk's top-level source lists: Perplexity's `search_results` (before `citations`:
# it has titles), xAI's and Perplexity's `citations`, Z.ai's `web_search`, Volcano
# Engine Ark's `references` (its bot API: `{url, title, site_name, summary, ...}` for a
# page, a knowledge-base chunk without a URL).
_SOURCE_LISTS = ("search_results", "citations", "web_search", "references")
# The keys of a choiceless chunk of sources that may follow the usage chunk, the turn's
# still (Venice's `venice_parameters.web_search_citations`: achappey/aihappey-ai
# VeniceProviderStreamTests replays two such chunks after the usage).
_CITING = frozenset({*_SOURCE_LISTS, "search_info", "venice_parameters"})
# ... and of one that says what the turn cost, read as its usage: OpenCode Zen's, which
# comes last, after the usage chunk where the upstream sent one (`_inference_cost`).
_AFTER_USAGE = frozenset({*_CITING, "x-opencode-type", "cost"})
_CHOICE_READ_WHEN_SENT = frozenset({"message", "text", "error", "groundingMetadata"})
# A Gemini grounding chunk's kinds of source and the key of each one's uri (the Gemini
# wire's `_GROUNDING_SOURCES`): web pages, Vertex's retrieved contexts and places, and
# an image's page.
_GROUNDING_SOURCES = (
    ("web", "uri"),
    ("retrievedContext", "uri"),
    ("maps", "uri"),
    ("image", "sourceUri"),
)
_DELTA_READ_WHEN_SENT = frozenset(
    {
        "function_call",
        "annotations",
        "executed_tools",
        "audio",
        "reasoning_steps",
        "extra_content",
        "thinking_blocks",
        "content_blocks",
        "context",
        "reasoning_text",
        "thinking_content",
        "search_reasoning",
        "reasoning_opaque",
        "tensorzero_extra_content",
        "tensorzero_extra_content_experimental",
        "provider_specific_fields",
    }
)
# TensorZero's field for what the chat wire cannot say (its thoughts), under its names
# before and after it left its experimental stage.
_TENSORZERO_EXTRA = ("tensorzero_extra_content_experimental", "tensorzero_extra_content")
# The key of a call streamed as OpenAI's deprecated `delta.function_call`: one per turn, as
# that API allows. A tuple, which no wire's `index` can be (`ChatNormalizer._tool_call`).
_FUNCTION_CALL = ("function_call",)
# A call's types for a client to run (any other, with a payload under its name, is a tool
# the provider ran: `ChatNormalizer._tool_call`).
_CALL_TYPES = ("function", "custom")
# The id Anthropic gives a call it runs itself (a `server_tool_use` block: web search and
# fetch, code execution). LiteLLM's chat wire serving Claude writes that block as any
# `tool_calls` entry (its anthropic handler.py `chunk_parser`), and a turn with one ends
# `tool_calls` (its stream wrapper's `finish_reason_handler` turns a "stop" after any
# call into it): only the id says that the provider ran it ("only the `srvtoolu_` id
# marks them", UKGovernmentBEIS/inspect_ai's LiteLLM web search design notes).
_SERVER_CALL_ID = "srvtoolu_"
# Where LiteLLM passes on what those calls gave, in a delta's `provider_specific_fields`:
# the Anthropic `*_tool_result` blocks of the turn so far, the whole list again at each
# new one (web search and fetch results; code execution and the others).
_SERVER_RESULT_LISTS = frozenset({"web_search_results", "tool_results"})


# What a tool the provider ran gave, in a payload under the key its type names (the rest
# of the payload is its input): a Perplexity reasoning step's (its Chat Completions
# reference: a search's results, the pages fetched, what the Python printed), and a Zhipu
# tool entry's (GLM-4-AllTools' `web_browser` and `code_interpreter` `outputs`, its web
# search's `search_result`).
_STEP_RESULTS = frozenset({"search_results", "contents", "result", "outputs", "search_result"})

# What an executed tool found (groq-python's `ExecutedTool`): its `output` text, or the
# structured results beside it. A search streamed in one chunk carries `search_results`
# and no `output` (pydantic-ai's test_groq_model_web_search_tool_stream_single_chunk);
# an entry announcing a search carries `search_results: {"results": []}`, nothing yet.
_TOOL_RESULTS = ("search_results", "code_results", "browser_results")


def _without(item: dict[str, Any], keys: Collection[str]) -> dict[str, Any]:
    """The item but `keys`."""
    return {key: value for key, value in item.items() if key not in keys}


# What a Groq `executed_tools` entry's result leaves out: the call's fields.
_GROQ_CALL = ("index", "type", "arguments")
# The statuses of a provider-run item still running (the Responses wire's `in_progress`,
# a web search's `searching`, a code interpreter's `interpreting`, an image's
# `generating`); any other is final (`completed`, `failed`, `incomplete`, Tinfoil's
# `blocked`). A tuple: a status that is no string is final, not hashed.
_UNDER_WAY = ("in_progress", "searching", "interpreting", "generating")
# What a result leaves out of a provider-run item sent as a chunk: its id and type (the
# call's), and the chunk's envelope around it.
_ITEM_ENVELOPE = frozenset({"id", "type"} | _CHUNK_KEYS)
# Mistral's Conversations API (`POST /v1/conversations` and the Agents API with
# `stream: true`: the `SSETypes` of Mistral's OpenAPI spec, by their families), a
# stream no wire of rxllm reads; the other wires' streams are known by `other_api`.
_CONVERSATIONS_API = (
    "Mistral's Conversations API (/v1/conversations, agents), whose stream rxllm does not read"
)
_CONVERSATIONS_EVENTS = (
    "conversation.response.",
    "message.output.",
    "tool.execution.",
    "agent.handoff.",
    "function.call.",
)


def _other_api(payload: dict[str, Any], kind: Any) -> str | None:
    """The API whose stream a chunk with no choices belongs to, with the provider that
    reads it, when it is another one's than the chat wire's (`other_api`, or Mistral's
    Conversations API); else None."""
    other = other_api("openai", kind, payload)
    if other is not None:
        return other
    if kind.__class__ is str and kind.startswith(_CONVERSATIONS_EVENTS):
        return None if payload.get("choices") else _CONVERSATIONS_API
    return None


@functools.cache
def _responses_wire() -> ModuleType:
    """The Responses wire, whose reading of a provider-run item a chat chunk that is one
    gets (imported on first use: that module reads this one)."""
    from rxllm.providers import openai_responses

    return openai_responses


def _has_result(entry: dict[str, Any]) -> bool:
    """Whether a Groq `executed_tools` entry carries its result yet."""
    if entry.get("output") is not None:
        return True
    for key in _TOOL_RESULTS:
        found = entry.get(key)
        if found.__class__ is dict:
            found = any(found.values())
        if found:
            return True
    return False


def _flat_error_words(payload: dict[str, Any]) -> str | None:
    """The words of an error sent as two top-level fields of a chunk, `error_type` and
    `error_message` (either may be missing or null), or None where neither says a word."""
    for key in ("error_message", "error_type"):
        words = payload.get(key)
        if isinstance(words, str) and words.strip():
            return words
    return None


def _inference_cost(payload: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """The usage that OpenCode Zen's last chunk before `[DONE]` says (`{"choices": [],
    "x-opencode-type": "inference-cost", "cost": "0.00002772", "normalizedUsage": {...}}`:
    enricoros/big-AGI's openai.parser.ts reads it): the `usage` read before it with the
    request's cost in USD, a decimal string; or, where no usage came, its own counts
    (`inputTokens` apart from `cacheReadTokens` and the cache writes, `outputTokens` with
    `reasoningTokens`), written as this wire's usage."""
    counts = payload.get("normalizedUsage")
    if usage is None and counts.__class__ is dict:
        read = counts.get("cacheReadTokens") or 0
        written = (counts.get("cacheWrite5mTokens") or 0) + (counts.get("cacheWrite1hTokens") or 0)
        prompt = (counts.get("inputTokens") or 0) + read + written
        completion = counts.get("outputTokens") or 0
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": read, "cache_write_tokens": written},
            "completion_tokens_details": {"reasoning_tokens": counts.get("reasoningTokens") or 0},
        }
    if usage is None:
        return None
    cost = payload.get("cost")
    try:
        return {**usage, "cost": float(cost)} if isinstance(cost, str | int | float) else usage
    except (ValueError, OverflowError):  # a word, or an integer past any float: no cost
        return usage


def _native_choice(payload: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The choice a chunk of Workers AI's native `/ai/run` stream is, or None: that
    endpoint streams some models in OpenAI's chunks and others in its own, whose fields
    sit on the chunk itself, `{"response": "text"}`, `{"tool_calls": [...]}` (OpenAI's
    entries), `{"finish_reason": "tool_calls"}`, its last `{"response": "", "usage"}`
    (cloudflare/ai packages/workers-ai-provider src/streaming.ts reads both)."""
    text = payload.get("response")
    calls = payload.get("tool_calls")
    finish = payload.get("finish_reason")
    delta: dict[str, Any] = {}
    if text and text.__class__ is str:  # (another API's `response` is an object)
        delta["content"] = text
    if calls and calls.__class__ is list:
        delta["tool_calls"] = calls
    if not delta and finish is None:
        return None
    return [{"index": 0, "delta": delta, "finish_reason": finish}]


def _choice_number(index: Any) -> int:
    """A choice's `index` that is no int. None, or `index: null` (servers whose index is a
    nullable integer, Java's `Integer`, write it so), is the one choice there is; so is a
    value that is no number (`true`, a list), which names no other choice: its answer is
    read, not ignored as choice n's (the turn lost, or a call of it). A number written as
    a string is that number."""
    if isinstance(index, str) and index.strip().isdigit():
        return int(index)
    return 0


def _counts_tokens(usage: dict[str, Any]) -> bool:
    """Whether a usage object counts any token. MiniMax sends a placeholder on every
    chunk before the real one (`{"total_tokens": 0, "total_characters": 0}`,
    MiniMax-AI/MiniMax-M2.5#2): it says nothing. Nor does a count of -1, the word of
    servers that did not count (Xinference's chunks where its engine gave no usage:
    `{"prompt_tokens": -1, "completion_tokens": -1, "total_tokens": -1}`)."""
    return (
        _is_count(usage.get("total_tokens"))
        or _is_count(usage.get("prompt_tokens"))
        or _is_count(usage.get("completion_tokens"))
    )


def _is_count(count: Any) -> bool:
    """Whether a usage field says a number of tokens: a number above 0 (or, as before, any
    other value that is not empty)."""
    if count.__class__ is int or count.__class__ is float:
        return bool(count > 0)
    return bool(count)


def _short(value: Any) -> str:
    """A value as a log shows it: its repr, cut to a line."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


# A server that counts its chunks in the choice's index from 1
# (`ChatNormalizer._choice_index`): its ids say nothing, since no stream with `n` > 1
# begins at choice 1.
_FROM_ONE = object()


class ChatNormalizer(Normalizer):
    """Chat completion chunks -> fragments. Only choice 0 is read (n > 1 is not a
    single stream); other choices are ignored, with a warning once per stream. A server
    that numbers its chunks in the one choice's index (`_choice_index`) sends that choice."""

    __slots__ = (
        "_extension",
        "_reasoning_in_completion",
        "answer",
        "call_args",
        "call_ids",
        "calls",
        "choice_count",
        "choice_error",
        "choice_keys",
        "chunk_keys",
        "cited",
        "cited_urls",
        "content",
        "count_id",
        "custom",
        "delta_keys",
        "detail",
        "detail_key",
        "detail_said",
        "detail_text",
        "dsml",
        "finish",
        "finish_word",
        "last_call",
        "last_usage",
        "legacy_beside",
        "options",
        "ran_calls",
        "read_when_sent",
        "reasoned",
        "server_tools",
        "signatures",
        "streamed",
        "think",
        "turn_ids",
        "unnamed",
        "unread",
        "used_up",
        "warned_choices",
        "wrapped",
    )

    def __init__(
        self, emit: Emit, provider: str, attempt: int = 1, options: ChatOptions | None = None
    ) -> None:
        super().__init__(emit, provider, attempt)
        self.options = options = options or ChatOptions()
        self.finish: str | None = None  # the raw reason, as the server wrote it
        self.finish_word: str | None = None  # the word it says (`finish_word`)
        self.calls: dict[Any, int] = {}  # the wire's key of a call -> our index
        self.call_ids: dict[int, str] = {}  # each call's id as the server sent it
        self.turn_ids: CallIds | None = None  # the ids emitted, made at the first call
        self.last_call: int | None = None
        # The calls' signatures, made at the first (Gemini's OpenAI-compatible endpoint).
        self.signatures: dict[int, str] | None = None
        # calls not started: no name yet, or a name and no arguments yet (its pieces may
        # still come): index -> [whether the id came, arguments, the name so far]
        self.unnamed: dict[int, list[Any]] = {}
        # each started call's argument fragments as streamed, to tell the whole arguments
        # said again (`_restated`) from a fragment: index -> [the length of the first
        # `counted` fragments, `counted`, fragment, ...], counted only when asked
        self.call_args: dict[int, list[Any]] = {}
        # `multi_tool_use.parallel` wrappers held until the turn ends: index -> (name,
        # arguments so far); made at the first one (`_start_call`).
        self.wrapped: dict[int, tuple[str, list[str]]] | None = None
        # calls the provider ran (`_SERVER_CALL_ID`), held in `wrapped` until whole;
        # made at the first one
        self.ran_calls: set[int] | None = None
        # custom tool calls whose input is open: the input's pieces, as they came
        self.custom: dict[int, list[str]] | None = None
        # Usage came after the finish: the turn ends at the next chunk that is no
        # choiceless chunk of sources or of cost (`_AFTER_USAGE`), `[DONE]` or the end of
        # the body.
        self.used_up = False
        self.choice_error: Any = None  # an error object inside choice 0 (`_choice_rest`)
        self.think: ThinkTagSplitter | None = None
        # Whether reasoning text came in a field since the last signed thinking block
        # (`_thinking_blocks`): that block's text repeats it.
        self.reasoned = False
        # Whether a delta carried output (reasoning, content, a refusal, tool calls): a
        # whole `message` after it is the turn's summary.
        self.streamed = False
        self.dsml: DsmlSplitter | None = None
        answer: Callable[[str], None] = self.text  # where the answer's text goes
        if options.dsml_tool_calls:
            self.dsml = DsmlSplitter(self.text, self._dsml_start, self._arguments, self._dsml_end)
            answer = self._dsml_or_text
        if options.think_tags:
            self.think = ThinkTagSplitter(answer, self.reasoning, self._tagged)
            answer = self.think.feed
        self.answer = self.content = answer
        self._extension = options.extension
        self._reasoning_in_completion = options.reasoning_in_completion
        # Made at the first citation: most streams cite nothing.
        self.cited: set[tuple[str, str | None, str | None]] | None = None
        self.cited_urls: set[str] | None = None
        # The keys known in this stream, each unread one logged once, then known: a
        # superset test in C per chunk while nothing new comes. Shared until a stream
        # meets a key of its own (copied then: no set per stream otherwise). Keys read
        # only when sent (sources, errors, `message`, annotations...) are never known: a
        # chunk that has one fails the test, and what it carries is read.
        self.chunk_keys = _CHUNK_KEYS
        self.choice_keys = _CHOICE_KEYS
        self.delta_keys = _DELTA_KEYS
        self.read_when_sent = _read_when_sent(options.extension)
        self.unread: set[str] | None = None  # what has no event, logged once (`_log_once`)
        self.server_tools: dict[Any, tuple[str, str, bool]] = {}  # key -> id, name, result
        self.warned_choices = False
        # The index the next chunk's one choice has while the server numbers its chunks
        # in it (`_choice_index`); None once a chunk shows it does not.
        self.choice_count: int | None = 0
        self.count_id: Any = None  # the counted chunk's id, or `_FROM_ONE` (`_choice_index`)
        self.legacy_beside = False  # a `function_call` beside `tool_calls` was logged
        # The usage last reported: endpoints that send usage on every chunk (vLLM's
        # continuous usage stats, Perplexity) repeat it unchanged.
        self.last_usage: dict[str, Any] | None = None
        # The OpenRouter reasoning detail being streamed: its (type, index), its own
        # fields, and whether it said anything yet.
        self.detail_key: tuple[Any, Any] | None = None
        self.detail: dict[str, Any] | None = None
        self.detail_said = False
        # Its text so far while each fragment repeated it (`_detail_news`), else None.
        self.detail_text: str | None = None

    def _flush_held(self) -> None:
        """Let out the text the splitters hold back (a tag's or a marker's beginning, a
        block never closed), the think-tag splitter's first: what it lets out is the
        answer's, read by the DSML splitter after it."""
        if self.think is not None:
            self.think.flush()
        if self.dsml is not None:
            self.dsml.flush()

    def _dsml_or_text(self, text: str) -> None:
        """The answer's text, read for DeepSeek's DSML calls where the request offered
        tools the model may call (`Normalizer.calls_offered`), as vLLM reads the markup
        only then: an app that offered none gets no call. Otherwise it is text as it came."""
        dsml = self.dsml
        if dsml is not None and self.calls_offered:
            dsml.feed(text)
        else:
            self.text(text)

    def _dsml_start(self, name: str) -> int:
        """A call DeepSeek wrote in DSML in the content starts (`rxllm.providers.dsml`): a
        call of its own, after the calls before it, its id made as for a call that came
        without one. Its arguments follow as they are read, and its end (`_end_calls`
        leaves it to the splitter). Returns its index."""
        if self.unnamed:
            self._start_named()  # the calls before this one start before it
        index = len(self.call_ids)
        self.calls[("dsml", index)] = index
        self.call_ids[index] = self._call_id(index)
        self._start_call(index, name)
        return index

    def _dsml_end(self, index: int, markup: str | None) -> None:
        """A call written in DSML ends (`rxllm.providers.dsml`): with its arguments as they
        streamed, or with its `markup`, which does not read. A parallel wrapper
        (`PARALLEL_WRAPPERS`), held since its start, is whole here, so its calls come in
        their place in the turn, not at its end; one whose markup does not read ends as
        the call it came as."""
        wrapped = self.wrapped
        if wrapped and index in wrapped:
            if markup is not None:
                wrapped[index] = (wrapped[index][0], [markup])
            self._unwrap(index, None)
        else:
            self.tool_end(index, markup)

    def _tagged(self) -> None:
        """The end of a block of reasoning that came inside `<think>` tags: an empty
        delta whose details say so (`TAGGED`), as Gemini's `{"thought": true}` marks a
        thought, so the record's part is known from reasoning that came in a field."""
        self.reasoning(details={TAGGED: True})

    def on_chunk(self, chunk: RawChunk) -> None:
        data = chunk.data
        if data == "[DONE]":
            self._settle()
            return
        try:
            payload = self.read_chunk(data)
        except ValueError:  # (an error frame in plain words: see `feed`)
            if data.strip() != "[DONE]":
                raise
            # Padded (`data: [DONE] `, `data:  [DONE]`: servers send both), as the SDKs
            # read it (openai-python's `startswith("[DONE]")`), and as a chunk's JSON is
            # read, whitespace around it passing.
            self._settle()
            return
        if payload.__class__ is not dict:
            raise ValueError(f"expected a JSON object, got {json_type(payload)}")
        if self.used_up and (payload.get("choices") or not payload.keys() & _AFTER_USAGE):
            self._settle()  # the turn ended at its usage: this chunk comes after the end
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a chunk after the terminal event: {}", chunk.event
            )
            return
        model = payload.get("model")
        if model.__class__ is str and model:  # (`text_or_none`, inline: this runs per chunk)
            self.model = model
            if self.response_id is None and not self._is_server_item(payload):
                # (a chunk that is an item the provider ran has the item's id: below)
                self.response_id = text_or_none(payload.get("id"))
        finish = self.finish  # before this chunk
        usage = payload.get("usage")
        choices = payload.get("choices")
        if not (choices or _NATIVE_CHOICE.isdisjoint(payload)):
            choices = _native_choice(payload)
        if choices:
            if choices.__class__ is not list:  # (no answer to read: said in JSON's words)
                raise ValueError(f"the chunk's choices are {json_type(choices)}, not an array")
            ours = 0
            if self.choice_count is not None:  # the server may count its chunks there
                ours = self._choice_index(choices, payload.get("id"))
            for choice in choices:
                if choice.__class__ is not dict:
                    if choice is None:  # a `null` choice is none
                        continue
                    raise ValueError(f"a choice is {json_type(choice)}, not an object")
                index = choice.get("index")
                if (index if index.__class__ is int else _choice_number(index)) == ours:
                    self._choice(choice)
                    if not usage:  # Moonshot's place for it: the last chunk's choice
                        usage = choice.get("usage")
                elif not self.warned_choices:
                    self.warned_choices = True
                    logger.bind(provider=self.provider, attempt=self.attempt).warning(
                        "choice {} ignored: only choice 0 is read (n > 1 is not one stream)",
                        choice.get("index"),
                    )
        error: Any = self.choice_error
        if not self.chunk_keys.issuperset(payload):  # most chunks have nothing more
            nested_usage, beside = self._beside_choices(payload)
            if self.settled:  # the chunk is no chat chunk (`_other_api`)
                return
            if beside is not None:  # the chunk's own error first
                error = beside
            if not usage:
                usage = nested_usage
        if not (usage or error) and chunk.event != "error":
            return  # most chunks: the choice was all they said
        if usage and usage.__class__ is not dict:  # no counts to read; the answer stands
            self._log_once("usage", f"usage {_short(usage)} is no object: not read")
            usage = None
        if usage and not _counts_tokens(usage):
            usage = None  # a placeholder: neither usage nor, after the finish, the end
        failing = error or chunk.event == "error"
        if usage and usage != self.last_usage:  # the same numbers again say nothing new
            self.last_usage = usage
            counted = openai_usage(usage, self._reasoning_in_completion)
            if failing:  # what the failed request cost: it commits nothing
                self.failure_usage(counted)
            else:
                self.usage(counted)
        if failing:
            self._error(error if error is not None else payload)
        elif usage and finish is not None:
            # Usage after the finish's own chunk: the turn is over, but for the sources
            # that may follow (`_CITING`). Usage on the finish chunk may not be the last
            # word (vLLM's continuous usage stats: the final usage chunk follows, with the
            # cached tokens), so that one waits for the next chunk, `[DONE]` or the end of
            # the body.
            self.used_up = True

    def _beside_choices(self, payload: dict[str, Any]) -> tuple[Any, Any]:
        """What a chunk carries beside its choices, its usage and the keys of every
        chunk: top-level source lists, an error, the endpoint's extension object, and
        fields that have no event (each logged once, then known). Returns the usage
        the extension holds and the error, if any."""
        kind = payload.get("type")
        other = _other_api(payload, kind)
        if other is not None:
            self.another_api(
                other,
                kind,
                self.chunk_data,
                "a chat completion chunk: this wire reads /v1/chat/completions",
            )
            return None, None
        if self._server_item(payload):
            return None, None
        for key in _SOURCE_LISTS:
            sources = payload.get(key)
            if sources.__class__ is list:
                self._sources(sources)
        info = payload.get("search_info")
        if info.__class__ is dict:  # Tencent Hunyuan's, on every chunk
            sources = info.get("search_results")
            if sources.__class__ is list:
                self._sources(sources)
        venice = payload.get("venice_parameters")
        if venice.__class__ is dict:  # beside the request's flags, echoed
            sources = venice.get("web_search_citations")
            if sources.__class__ is list:
                self._sources(sources)
        error = payload.get("error")
        if error is not None:
            # The envelope, read as an HTTP error body is: what is beside its error
            # (Cerebras's `status_code`) is the error's too, and the raw body is whole.
            error = payload
        elif "error" in (payload.get("object"), payload.get("type")):
            # The chunk is the error, flat: the shape of vLLM's and Mistral's error
            # bodies (`{"object": "error", "message", "type", "code"}`), sent in place
            # of the next chunk; a gateway's `{"type": "error", "message"}` alike.
            error = payload
        elif _flat_error_words(payload) and not payload.get("choices"):
            # The error in two fields of a chunk with no choices, `error_type` and
            # `error_message` (DeepInfra, Venice on a context overflow:
            # NousResearch/hermes-agent#65631, #68451).
            error = payload
        elif status_envelope(payload) is not None:
            # A nonzero status beside the chunk's fields, the request failed: MiniMax's
            # `base_resp` (`{"status_code": 1008, "status_msg": "insufficient balance"}`,
            # 1027 where the output was judged sensitive, with no choices), FastChat's
            # worker error passed on as it came (`{"text": "**NETWORK ERROR ...**",
            # "error_code": 50002}`, then `[DONE]`). `rxllm.error_body` reads the words.
            error = payload
        usage = None
        extension = payload.get(self._extension) if self._extension else None
        if extension.__class__ is dict:
            usage = extension.get("usage")
            if error is None:
                error = extension.get("error")
        elif payload.get("x-opencode-type") == "inference-cost" or (
            payload.get("choices") == [] and "cost" in payload and "usage" not in payload
        ):  # OpenCode Zen's, with its type, or as opencode's buildCostChunk writes it now
            usage = _inference_cost(payload, self.last_usage)
            self.chunk_keys |= {"cost", "normalizedUsage"}  # read here, so not logged
        self.chunk_keys = self._unread("chunk", payload, self.chunk_keys, self.read_when_sent)
        return usage, error

    def end(self) -> None:
        if self.finish is not None:
            self._settle()
            return
        self._flush_held()  # the stream was cut: what was held is still output
        if self.unnamed:
            self._start_named()  # a call named before the cut began
        if self.wrapped:
            self._release_wrapped()

    def _choice_index(self, choices: list[Any], chunk_id: Any) -> int:
        """The index of the stream's choice in a chunk, while the server may be numbering
        its chunks in the one choice's `index` (the token's position, not the choice's
        place among `n`): TGI from 1 before huggingface/text-generation-inference#1648,
        Foundry Local from 0 (microsoft/foundry-local#263), each of its chunks under an id
        of its own. A stream that does not count repeats an index by its second chunk
        (OpenAI's without `n`); one with `n` > 1 interleaves its choices under one id
        (choice 1's first chunk after choice 0's is no count). Either is read by choice 0
        from then on."""
        expected = self.choice_count
        first = choices[0]
        index = first.get("index") if len(choices) == 1 and first.__class__ is dict else None
        if index.__class__ is int:
            if expected == 0 and index in (0, 1):  # the first chunk: TGI counts from 1
                self.choice_count = index + 1
                self.count_id = _FROM_ONE if index == 1 else chunk_id
                return index
            counted = self.count_id
            if index == expected and (counted is _FROM_ONE or chunk_id != counted):
                self.choice_count = index + 1
                if counted is not _FROM_ONE:
                    self.count_id = chunk_id
                return index
        self.choice_count = None
        return 0

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if delta:
            if delta.__class__ is not dict:
                raise ValueError(f"a choice's delta is {json_type(delta)}, not an object")
            self._delta(delta)
        if not self.choice_keys.issuperset(choice):  # most choices have nothing more
            self._choice_rest(choice)
        finish = choice.get("finish_reason")
        native = choice.get("native_finish_reason")
        if not finish:
            # OpenRouter's `native_finish_reason` (the upstream's own word) says the turn
            # ended where its normalized one is missing.
            finish = native
            if not finish:
                return
        word = finish_word(finish)
        if word is None:
            return
        if native and word not in FAILED_FINISHES:
            # OpenRouter ends a turn its upstream failed mid-stream (a network error) as
            # a plain `stop`, empty, the failure only in the upstream's word
            # (earendil-works/pi#8511): that word says the turn failed. So does a
            # plain `stop` over an upstream that declined or blocked the answer
            # (Claude's `refusal`, Gemini's `SAFETY`) or hit its token limit
            # (`max_tokens`, `MAX_TOKENS`, `max_output_tokens`): that word says it was
            # filtered or cut.
            native_word = finish_word(native)
            if native_word is not None and (
                native_word in FAILED_FINISHES
                or (
                    FINISH_REASONS.get(native_word) in _CUT_SHORT
                    and FINISH_REASONS.get(word) == "stop"
                )
            ):
                finish, word = native, native_word
        raw = finish if isinstance(finish, str) else json.dumps(finish)
        if self.finish is None:
            if self.detail is not None:
                self._end_detail()
            self.finish, self.finish_word = raw, word
            if word not in FAILED_FINISHES:  # a failed turn's calls are not complete
                # a finish ends every call: dispatch them now
                self._end_calls(cut=stop_reason_of(word, FINISH_REASONS) in _CUT_SHORT)
        elif FINISH_REASONS.get(word) == "content_filter" and self._overruled_by_filter():
            # Azure's asynchronous filter checks the text behind the stream, in annotation
            # chunks that go on after the model's own finish; a verdict that blocks comes
            # as `content_filter` in one of them (learn.microsoft.com, Azure OpenAI
            # "Content streaming"), and overrules the finish held so far.
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "finish_reason {!r} overruled by a later {!r}", self.finish, raw
            )
            self.finish, self.finish_word = raw, word

    def _overruled_by_filter(self) -> bool:
        """Whether a later filter verdict replaces the finish held: not a failed turn's
        (it stays failed), nor a verdict already given (OpenRouter repeats its finish)."""
        held = self.finish_word
        return held not in FAILED_FINISHES and FINISH_REASONS.get(held or "") != "content_filter"

    def _delta(self, delta: dict[str, Any]) -> None:
        """One delta of choice 0 (or a whole `message` sent where deltas are usual)."""
        content = delta.get("content")
        if content.__class__ is str and len(delta) == 1 and self.detail is None:
            # Most deltas: the answer's text and nothing else, read before the tests
            # every other field takes (-2,600 instructions a text event, hot_path).
            if content:
                self.streamed = True
                self.content(content)
            return
        known = self.delta_keys.issuperset(delta)  # most deltas have nothing more
        if not known:
            extra = delta.get("extra_content")
            if extra:  # Gemini's: a signature (before the text), a thought
                self._google_extra(extra, delta)
        details = delta.get("reasoning_details")
        # (None first: most deltas have none, and an identity test costs less than a class
        # check; not truthiness, which would read an empty `{}` as no detail at all)
        if details is not None and details.__class__ is dict:  # one, not a list of them
            details = [details]
        if details and details.__class__ is list:
            self.streamed = True  # output: a whole message after it is a summary
            self._reasoning_details(details, delta)
        else:
            if self.detail is not None:  # other output: the detail is complete
                self._end_detail()
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if details and not reasoning:
                reasoning = self._plain_details(details)
            if not (reasoning or known):
                for name in _RARE_REASONING:
                    reasoning = delta.get(name)
                    if reasoning:
                        break
            if reasoning:
                self.streamed = self.reasoned = True
                if reasoning.__class__ is dict:
                    self._reasoning_block_delta(reasoning)
                else:
                    self.reasoning(reasoning)
            if not known:
                opaque = delta.get("reasoning_opaque")
                # GitHub Copilot: the thinking block's opaque signature, which ends it
                self._thinking_parts(None, opaque)
        if content:
            self.streamed = True
            if not known and delta.get("role") == "tool":
                self._tool_role(delta, content)
            elif content.__class__ is str:
                self.content(content)
            elif content.__class__ is list:
                self._content_parts(content)
            elif content.__class__ is dict:  # one typed part, not a list of them
                self._content_parts([content])
            else:
                raise ValueError(f"a delta's content is {json_type(content)}, not a string")
        refusal = delta.get("refusal")
        if refusal:
            self.streamed = True
            self.refusal(refusal)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            self.streamed = True
            if tool_calls.__class__ is dict:
                # One call as an object, not a list: text-generation-inference before 3.2
                # (huggingface/text-generation-inference#2949, fixed by #3086).
                tool_calls = (tool_calls,)
            elif tool_calls.__class__ is not list:
                raise ValueError(f"a delta's tool_calls are {json_type(tool_calls)}, not an array")
            alone = len(tool_calls) == 1
            for place, call in enumerate(tool_calls):
                if call.__class__ is not dict:
                    if call is None:  # a `null` entry is none
                        continue
                    raise ValueError(f"a tool_calls entry is {json_type(call)}, not an object")
                self._tool_call(call, None if alone else place)
        if not known:
            self._delta_rest(delta, bool(tool_calls))

    def _plain_details(self, details: Any) -> str | None:
        """`reasoning_details` that is neither a list of details nor one: relays pass a
        provider's value on as it came, "objects and scalars" too (Layr-Labs/d-inference#630),
        and LobeChat reads MiniMax's field as a list, one object or a string
        (lobehub/lobehub packages/model-runtime/src/core/streams/openai/openai.ts). A string
        is the reasoning's text, as `reasoning` is; anything else has no event (logged)."""
        if details.__class__ is str:
            return details
        self._log_once("reasoning details", f"reasoning_details {_short(details)} has no event")
        return None

    def _reasoning_block_delta(self, delta: dict[str, Any]) -> None:
        """Reasoning as an object: AWS Bedrock's Converse reasoning delta
        (`ReasoningContentBlockDelta`: one of `text`, `signature`, `redactedContent`),
        which a gateway serving Claude on Bedrock passes through as `reasoning_content`
        (envoyproxy/ai-gateway#1222). Its text is reasoning; its signature ends the block
        as a `signature_delta` does on Anthropic's wire (an empty reasoning delta with
        it); redacted content is one redacted reasoning delta with the data as signature,
        as a `redacted_thinking` block is read. Any other object has no event."""
        self._thinking_parts(
            delta.get("text"), delta.get("signature"), delta.get("redactedContent")
        )
        if not delta.keys() & {"text", "signature", "redactedContent"}:
            self._log_once("reasoning object", f"a reasoning object {_short(delta)} has no event")

    def _delta_rest(self, delta: dict[str, Any], beside_tool_calls: bool) -> None:
        """What a delta carries beside reasoning, content, a refusal and tool calls:
        OpenAI's deprecated `function_call`, `annotations`, Groq's `executed_tools`,
        and fields that have no event (each logged once, then known)."""
        function_call = delta.get("function_call")
        if function_call:
            self._function_call(function_call, beside_tool_calls)
        audio = delta.get("audio")
        if audio.__class__ is dict:
            self._audio(audio)
        steps = delta.get("reasoning_steps")
        if steps.__class__ is list:
            self._reasoning_steps(steps)
        blocks = delta.get("thinking_blocks")
        if blocks.__class__ is list:
            self._thinking_blocks(
                blocks, bool(delta.get("reasoning_content") or delta.get("reasoning"))
            )
        blocks = delta.get("content_blocks")
        if blocks.__class__ is list:
            self._content_blocks(
                blocks, bool(delta.get("reasoning_content") or delta.get("reasoning"))
            )
        for key in _TENSORZERO_EXTRA:
            extra = delta.get(key)
            if extra.__class__ is list:
                self._tensorzero_extra(extra)
        fields = delta.get("provider_specific_fields")
        if fields.__class__ is dict:
            self._provider_fields(fields, delta)
        self._sources_and_tools(delta)
        self.delta_keys = self._unread("delta", delta, self.delta_keys, _DELTA_READ_WHEN_SENT)

    def _thinking_parts(self, text: Any, signature: Any = None, data: Any = None) -> None:
        """The parts of a native thinking block that gateways pass through where the chat
        wire has no field: its text is reasoning, its signature ends the block as a
        `signature_delta` does on Anthropic's wire (an empty reasoning delta with it), a
        redacted block's opaque data is one redacted reasoning delta with it as signature.
        A part that is not a non-empty string says nothing."""
        if text and text.__class__ is str:
            self.streamed = True
            self.reasoning(text)
        if signature and signature.__class__ is str:
            self.streamed = True
            self.reasoning("", signature=signature)
        if data and data.__class__ is str:
            self.streamed = True
            self.reasoning("", signature=data, redacted=True)

    def _thinking_blocks(self, blocks: list[Any], beside_text: bool) -> None:
        """LiteLLM's `thinking_blocks` (a proxy serving Claude): Anthropic's thinking,
        which `reasoning_content` beside it already streams as text, and what that field
        cannot carry: a block's signature, which comes on a block of its own at the end
        (`{"thinking": "", "signature"}`, or the block's whole text again with it in
        LiteLLM 1.83 on), and a `redacted_thinking` block's opaque `data`. A signature
        ends its block as a `signature_delta` does on Anthropic's wire (an empty
        reasoning delta with it); a redacted block is one reasoning delta with its data as
        signature, `redacted=True`, as the Anthropic wire reads one. A block's text is
        read only where no field beside it carries the reasoning (and, signed, where none
        did since the last signature): it is never said twice."""
        for block in blocks:
            if block.__class__ is not dict:
                continue
            kind = block.get("type", "thinking")
            if kind == "redacted_thinking":
                self._thinking_parts(None, None, block.get("data"))
                continue
            text = block.get("thinking")
            if kind != "thinking" or (text is not None and text.__class__ is not str):
                self._log_once(
                    f"thinking block {kind}", f"a thinking block of type {kind!r} has no event"
                )
                continue
            signature = block.get("signature")
            if signature and signature.__class__ is str:
                said = text if text and not (beside_text or self.reasoned) else ""
                self.streamed, self.reasoned = True, False
                self.reasoning(said, signature=signature)
            elif text and not beside_text:
                self.streamed = self.reasoned = True
                self.reasoning(text)

    def _content_blocks(self, blocks: list[Any], beside_text: bool) -> None:
        """Portkey's `content_blocks` (its gateway with `strict_open_ai_compliance`
        off, serving Claude on Anthropic, Vertex AI or Bedrock, or Gemini): each entry
        `{index, delta}` is a block event of the native stream, its `type` removed: a
        block's start (`{thinking: "", signature: ""}`, a redacted block's `{data}`) or
        delta (`{thinking}`, `{signature}`, `{text}`). The thinking is reasoning (unless
        a field beside it streams it), a signature ends its block as a `signature_delta`
        does (an empty reasoning delta with it), a redacted block's data is one redacted
        reasoning delta with it as signature; `text` repeats the delta's `content`."""
        for block in blocks:
            delta = block.get("delta") if block.__class__ is dict else None
            if delta.__class__ is not dict:
                continue
            thinking = None if beside_text else delta.get("thinking")
            self._thinking_parts(thinking, delta.get("signature"), delta.get("data"))
            if not delta.keys() <= {"thinking", "signature", "data", "text"}:
                self._log_once("content block", f"a content block {_short(block)} has no event")

    def _tool_role(self, delta: dict[str, Any], content: Any) -> None:
        """A delta of `role: "tool"`: MiniMax's built-in web search streams the pages it
        found so, its `tool_call_id` beside and the pages as a JSON list in `content`
        (`{no, url, title, content, web_icon}`). That is the search's result, not the
        answer: a server tool result (named `web_search`, as MiniMax's closing message
        types the call), and each page with a URL a citation."""
        call_id = text_or_none(delta.get("tool_call_id"))
        if call_id is None:
            call_id = f"web_search_{self.response_tag()}_{len(self.server_tools)}"
        result = content
        if content.__class__ is str:
            with contextlib.suppress(ValueError):  # text that is no JSON is kept as text
                result = json.loads(content)
        self.server_tool_result(call_id, "web_search", result)
        if result.__class__ is list:
            self._sources(result)

    def _tensorzero_extra(self, blocks: list[Any]) -> None:
        """TensorZero's extra content (its OpenAI-compatible endpoint): what the chat wire
        has no field for, as `{type, insert_index, id, ...}` entries. A `thought` entry's
        `text` (and `summary_text`, a reasoning summary) is reasoning, its `signature`
        ends it as a `signature_delta` does (an empty reasoning delta with it); an
        `unknown` entry (a provider's block TensorZero does not model) has no event."""
        for block in blocks:
            if block.__class__ is not dict:
                continue
            if block.get("type") != "thought":
                self._log_once("tensorzero extra", f"extra content {_short(block)} has no event")
                continue
            self._thinking_parts(block.get("text"))
            self._thinking_parts(block.get("summary_text"), block.get("signature"))

    def _audio(self, audio: dict[str, Any]) -> None:
        """OpenAI's audio output (`modalities: ["text", "audio"]`): `content` stays null and
        what the model says comes as `delta.audio.transcript` pieces beside the base64
        `data` (the chunk's `ChoiceDeltaAudio`): the transcript is the turn's text. The
        audio bytes have no event."""
        transcript = audio.get("transcript")
        if transcript.__class__ is str and transcript:
            self.content(transcript)
        if audio.get("data"):
            self._log_once("audio", "audio data has no event: not read")

    def _reasoning_steps(self, steps: list[Any]) -> None:
        """Perplexity's `stream_mode: "concise"`: `chat.reasoning` chunks carry the search
        steps as `delta.reasoning_steps` (`{thought, type, web_search: {search_keywords,
        search_results}, fetch_url_content: {contents}, execute_python: {code, result}}`,
        the payload under the step's type), whose `thought` is the reasoning in words.
        Each thought is reasoning, a line of its own; the tool the step ran is a server
        tool call named after its type, whose arguments are the payload but its results
        (`_STEP_RESULTS`), and those results its result, as Groq's `executed_tools` are.
        A search's results come again as the `search_results` of the done chunks, the
        turn's citations."""
        for step in steps:
            if step.__class__ is not dict:
                continue
            thought = step.get("thought")
            if thought.__class__ is str and thought:
                self.reasoning(thought if thought.endswith("\n") else thought + "\n")
            kind = step.get("type")
            ran = step.get(kind) if isinstance(kind, str) else None
            if isinstance(kind, str) and ran.__class__ is dict:
                self._typed_tool(("step", len(self.server_tools)), None, kind, ran)

    def _typed_tool(self, key: Any, call_id: str | None, kind: str, ran: dict[str, Any]) -> None:
        """A tool the provider ran, said as a payload under the key its type names: a
        server tool call named after the type when first seen, whose arguments are the
        payload but its results (`_STEP_RESULTS`), and those results its result, once.
        Whole in one payload (a Perplexity step, a Zhipu web search's intent and results)
        or in two under one key (GLM-4-AllTools: `{input}`, then `{outputs}`); input
        after the result is the next call."""
        arguments = {k: v for k, v in ran.items() if k not in _STEP_RESULTS}
        result = {k: v for k, v in ran.items() if k in _STEP_RESULTS}
        known = self.server_tools.get(key)
        if known is None or (known[2] and arguments):
            call_id = call_id or f"{kind}_{self.response_tag()}_{len(self.server_tools)}"
            if known is not None:  # the next call at the same key: the first is done
                self.server_tools[(key, len(self.server_tools))] = known
            known = self.server_tools[key] = (call_id, kind, False)
            self.server_tool_call(call_id, kind, arguments)
        if result and not known[2]:
            self.server_tools[key] = (known[0], kind, True)
            self.server_tool_result(known[0], kind, result)

    def _log_once(self, key: str, message: str) -> None:
        """Log at debug what has no event, once per stream for each `key`."""
        unread = self.unread
        if unread is None:
            unread = self.unread = set()
        if key not in unread:
            unread.add(key)
            logger.bind(provider=self.provider, attempt=self.attempt).debug(message)

    def _choice_rest(self, choice: dict[str, Any]) -> None:
        """What a choice carries beside its delta and finish: a whole `message`, and
        fields that have no event (each logged once, then known). Beside a delta, its
        text would repeat the deltas', so only what deltas cannot repeat is read from
        it: annotations, executed tools. Without a delta it is the answer itself, whole
        (servers that stream `message` instead of `delta`, Amm1rr/WebAI-to-API#55), and
        is read as one delta: nothing it says is dropped; unless deltas carried output
        before it: then it is the turn's summary, and its text, reasoning and calls are
        theirs again (MiniMax's closing `chat.completion` frame). So is a choice's `text`
        without a delta: the legacy completions wire (`object: "text_completion"`,
        vLLM's, llama.cpp's, Ollama's and OpenAI's `/v1/completions`) streams its
        answer so. An `error` object in it (OpenRouter's, beside a failed finish, when
        the upstream failed mid-stream) ends the turn as an error chunk does (`on_chunk`)."""
        error = choice.get("error")
        if error:
            self.choice_error = error
        message = choice.get("message")
        if message and message.__class__ is not dict:
            if "delta" not in choice and not self.streamed:  # the answer: it cannot be read
                raise ValueError(f"a choice's message is {json_type(message)}, not an object")
            self._log_once("message", f"message {_short(message)} is no object: not read")
        elif message:
            if "delta" in choice or self.streamed:
                if self.streamed:
                    self._log_once("summary", "a whole message after the deltas: a summary")
                self._sources_and_tools(message)
            else:
                self._delta(message)
                self.streamed = False  # read as the answer: the next message is read too
        text = choice.get("text")
        if text and text.__class__ is str and "delta" not in choice and not message:
            self.content(text)
        grounding = choice.get("groundingMetadata")
        if grounding.__class__ is dict:
            self._grounding(grounding)
        self.choice_keys = self._unread("choice", choice, self.choice_keys, _CHOICE_READ_WHEN_SENT)

    def _grounding(self, grounding: dict[str, Any]) -> None:
        """Gemini's `groundingMetadata`, passed on beside a choice (Portkey serving Gemini,
        strict OpenAI compliance off): each grounding chunk's source with a uri is a
        citation, as the Gemini wire reads it (`rxllm.providers.google`), once per turn.
        The rest (the search entry point's HTML, the queries, the supports, which
        quote the answer's own text) has no event."""
        for source in grounding.get("groundingChunks") or ():
            if source.__class__ is not dict:
                continue
            for kind, uri_key in _GROUNDING_SOURCES:
                ref = source.get(kind)
                if ref.__class__ is dict:
                    uri = ref.get(uri_key)
                    if uri and uri.__class__ is str:
                        self._cite_url(uri, text_or_none(ref.get("title")))

    def _sources_and_tools(self, holder: dict[str, Any]) -> None:
        """What a delta or a whole message may carry beside its text: `annotations`
        (citations), Azure's retrieval `context` and Groq's `executed_tools`."""
        annotations = holder.get("annotations")
        if annotations:
            if annotations.__class__ is list:
                self._annotations(annotations)
            else:  # sources, not the answer: what cannot be read is logged
                self._log_once("annotations", f"annotations {_short(annotations)} are no list")
        context = holder.get("context")
        if context.__class__ is dict:
            self._retrieved(context)
        elif context is not None:
            self._log_once("context", f"context {_short(context)} has no event: not read")
        executed = holder.get("executed_tools")
        if executed.__class__ is list:
            self._executed_tools(executed)

    def _annotations(self, annotations: list[dict[str, Any]]) -> None:
        """`url_citation` annotations as citations, each once per turn."""
        for annotation in annotations:
            kind = annotation.get("type") if annotation.__class__ is dict else None
            if kind != "url_citation":
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "annotation of type {} is not a citation", kind
                )
                continue
            cited = annotation.get("url_citation") or annotation  # flat in some servers
            # (a url that is no string cites nothing: it keyed the cited set, "unhashable")
            url = text_or_none(cited.get("url")) if cited.__class__ is dict else None
            if url is None:
                continue
            title, text = text_or_none(cited.get("title")), text_or_none(cited.get("content"))
            self._cite(url, title, text)

    def _cite(self, url: str, title: str | None, cited_text: str | None) -> None:
        """A citation with its cited text, once per turn for each (url, title, text)."""
        key = (url, title, cited_text)
        seen = self.cited
        if seen is None:
            seen = self.cited = set()
        if key not in seen:
            seen.add(key)
            self._cited_urls().add(url)
            self.citation(*key)

    def _retrieved(self, context: dict[str, Any]) -> None:
        """Azure OpenAI On Your Data (`data_sources` in the request): the first delta's
        `context` holds the documents its search retrieved, `citations` (`{content,
        title, url, filepath, chunk_id}`, learn.microsoft.com, On Your Data API
        reference), which the answer's `[docN]` markers point to. One with a URL is a
        citation, its `content` the cited text; one without (an index with no URL
        field) has nothing to cite by and is logged, as are the context's other fields
        (`intent`, the queries run; `all_retrieved_documents`)."""
        for key in context:
            if key != "citations":
                self._log_once(f"context {key}", f"context field {key!r} has no event: not read")
        citations = context.get("citations")
        for cited in citations if citations.__class__ is list else ():
            if cited.__class__ is not dict:
                continue
            url, title = text_or_none(cited.get("url")), text_or_none(cited.get("title"))
            if url is not None:
                self._cite(url, title, text_or_none(cited.get("content")))
                continue
            name = title or text_or_none(cited.get("filepath"))
            shown = repr(name) if name else _short(cited)
            self._log_once(f"retrieved {shown}", f"retrieved document {shown} has no URL to cite")

    def _sources(self, sources: list[Any]) -> None:
        """Top-level source lists, each URL cited once per turn, however often the list
        is repeated: xAI's `citations` (URLs, in the last chunk), Perplexity's
        `citations` and `search_results` (`{title, url, date}`), on every chunk, and
        Z.ai's `web_search` (`{title, link, ...}`: docs.z.ai, Web Search in Chat), and
        Tencent Hunyuan's `search_info.search_results` (`{index, title, url}`), Volcano
        Engine Ark's `references` (`{url, title, site_name, ...}`; a knowledge-base
        chunk has no URL), the pages of MiniMax's web search (`{no, url, title,
        ...}`: `_tool_role`), and Venice's `venice_parameters.web_search_citations`
        (`{title, url, content, date}`, in the first chunk)."""
        for source in sources:
            if source.__class__ is dict:
                url = text_or_none(source.get("url") or source.get("link"))
                title = text_or_none(source.get("title"))
            else:
                url, title = text_or_none(source), None
            if url is not None:
                self._cite_url(url, title)
                continue
            shown = _short(source)
            self._log_once(shown, f"source {shown} has no URL to cite")

    def _unread(
        self,
        where: str,
        fields: dict[str, Any],
        known: frozenset[str],
        read_when_sent: frozenset[str],
    ) -> frozenset[str]:
        """Each field of `fields` no event carries (neither known nor read where sent)
        logged at debug; returns the keys known from now on, so that each is logged
        once per stream."""
        for key in fields:
            if key not in known and key not in read_when_sent:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "{} field {!r} has no event: not read", where, key
                )
                known = known | {key}
        return known

    def _cited_urls(self) -> set[str]:
        urls = self.cited_urls
        if urls is None:
            urls = self.cited_urls = set()
        return urls

    def _cite_url(self, url: str, title: str | None) -> None:
        """A source cited once per turn, however often the endpoint repeats it."""
        urls = self._cited_urls()
        if url not in urls:
            urls.add(url)
            self.citation(url, title)

    def _ran(
        self,
        key: Any,
        call_id: str | None,
        name: str,
        arguments: Callable[[], dict[str, Any]],
        result: Callable[[], Any] | None,
        is_error: bool = False,
    ) -> None:
        """A tool the provider ran, reported as it runs (known by `key` from one report
        to the next): its `server_tool_call` when first seen, under `call_id` (None: the
        endpoint gives none, named like a call without one, `_call_id`), its
        `server_tool_result` once a report has the result (None: not yet; `is_error`:
        the report says the tool failed), each once."""
        known = self.server_tools.get(key)
        if known is None:
            if call_id is None:
                call_id = f"{name}_{self.response_tag()}_{len(self.server_tools)}"
            known = (call_id, name, False)
            self.server_tools[key] = known
            self.server_tool_call(call_id, name, arguments())
        call_id, name, reported = known
        if not reported and result is not None:
            self.server_tools[key] = (call_id, name, True)
            self.server_tool_result(call_id, name, result(), is_error=is_error)

    def _executed_tools(self, executed: list[dict[str, Any]]) -> None:
        """Groq's built-in tools: a call when first seen, a result once it has output.
        An entry is known by its `index` where that is a number (it keys the turn's
        tools), else by its place; one that is no object has nothing to show."""
        for position, entry in enumerate(executed):
            if entry.__class__ is not dict:
                continue
            index = entry.get("index")
            self._ran(
                index if index.__class__ is int else ("position", position),
                None,  # Groq gives none an id
                text_or_none(entry.get("type")) or "tool",
                functools.partial(arguments_object, entry.get("arguments")),
                functools.partial(_without, entry, _GROQ_CALL) if _has_result(entry) else None,
            )

    @staticmethod
    def _is_server_item(payload: dict[str, Any]) -> bool:
        """Whether a chunk is an output item of a tool the provider ran (`_server_item`),
        whose id is the item's, not the response's; a chunk with any other `type`
        (`"chat.completion.chunk"`) is the response's."""
        kind = payload.get("type")
        return kind.__class__ is str and _responses_wire().item_kind(payload) == "server"

    def _server_item(self, item: dict[str, Any]) -> bool:
        """A chunk that is an output item of the Responses wire, sent between the chat
        chunks (Tinfoil's web search: one frame per state of each tool it ran,
        `{"type": "web_search_call", "id", "status", "action"}` in a chunk's envelope,
        `choices: []`; `in_progress` with the action, then `completed`, `failed` or
        `blocked` with a `reason`), read as that wire reads a provider-run item: its
        server tool call, named after its type, with its input (`action`) as arguments,
        when first seen; its result (the item but its id, type and the envelope) once
        its status is final. Whether it was one: any other item's fields are logged as
        any unread field is."""
        if not self._is_server_item(item):
            return False
        responses = _responses_wire()
        call_id = text_or_none(item.get("id"))
        under_way = item.get("status") in _UNDER_WAY
        self._ran(
            ("item", call_id),
            call_id,
            responses.server_name(item),
            lambda: responses.server_item_arguments(item),
            None if under_way else lambda: _without(item, _ITEM_ENVELOPE),
            is_error=responses.server_item_failed(item),
        )
        return True

    def _provider_fields(self, fields: dict[str, Any], delta: dict[str, Any]) -> None:
        """LiteLLM's `provider_specific_fields` on a delta (its proxy serving Claude):
        what Anthropic's stream said that this wire has no field for. The result blocks
        of the tools Anthropic ran (`_SERVER_RESULT_LISTS`: the turn's list so far, sent
        whole again at each new one), each read once as the Anthropic wire reads the
        block (`_server_result`); a `citation` (a `citations_delta`'s), read as that wire
        reads one; `thinking_blocks`, which the delta carries itself too. Any other field
        is logged once."""
        for key, value in fields.items():
            if key in _SERVER_RESULT_LISTS and value.__class__ is list:
                for block in value:
                    if block.__class__ is dict:
                        self._server_result(block)
            elif key == "citation" and value.__class__ is dict:
                self._part_citations([value])
            elif value is not None and not (key == "thinking_blocks" and key in delta):
                self._log_once(
                    f"provider field {key}",
                    f"provider_specific_fields field {key!r} has no event: not read",
                )

    def _server_call(self, call_id: str, name: str, arguments: str) -> None:
        """A call the provider ran (`_SERVER_CALL_ID`), whole: its `server_tool_call`.
        Arguments that are not a JSON object are not invented: the call is skipped with
        a debug log, as the Anthropic wire skips one."""
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            parsed = None
        if parsed.__class__ is not dict:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "skipped server tool call {} ({}): its input is not a JSON object: {!r}",
                call_id,
                name,
                arguments,
            )
            return
        self.server_tools[("server", call_id)] = (call_id, name, False)
        self.server_tool_call(call_id, name, parsed)

    def _server_result(self, block: dict[str, Any]) -> None:
        """A result block of a tool the provider ran, once per turn however often the list
        holding it comes again, read as the Anthropic wire reads it: call id = its
        `tool_use_id`, name = its call's (or its type without `_tool_result`), content =
        its `content`, an MCP failure's said beside it, and a failure `is_error`. Its
        call, held until now (its arguments are whole: the call's block ended before its
        result's began), is reported first."""
        call_id = text_or_none(block.get("tool_use_id")) or ""
        known = self.server_tools.get(("server", call_id))
        if known is not None and known[2]:
            return  # said already: the list came again
        index = next((i for i in self.ran_calls or () if self.call_ids[i] == call_id), None)
        if index is not None and self.unnamed and index in self.unnamed:
            self._start_unnamed(index)  # named, no arguments: a call without input
        if index is not None and self.wrapped and index in self.wrapped:
            name, pieces = self.wrapped.pop(index)
            self._server_call(call_id, name, "".join(pieces))
            known = self.server_tools.get(("server", call_id))
        kind = block.get("type")
        if known is not None:
            name = known[1]
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            name = kind[: -len("_tool_result")]
        else:
            name = "tool"
        self.server_tools[("server", call_id)] = (call_id, name, True)
        self.server_tool_result(
            call_id, name, server_result_content(block), is_error=server_result_failed(block)
        )

    def _reasoning_details(self, details: list[dict[str, Any]], delta: dict[str, Any]) -> None:
        """OpenRouter's typed reasoning items. The text they carry is the same text as
        the plain `reasoning` field beside them, so that field is read only when no item
        carried text (an encrypted-only delta). An item with no `type` that holds
        `thinking` or a `signature` is an Anthropic thinking block, as a gateway serving
        Claude writes it there (Helicone's AI Gateway, beside the finish, after the
        thinking streamed as `reasoning`): read as LiteLLM's `thinking_blocks` are. An
        item of any other type has no event (logged). Serving Gemini, that gateway
        writes each thought part there with the one signature the answer carried: an
        item that repeats the signature of the one before it ends no other block.
        Serving Claude with interleaved thinking, it writes one item per thinking block,
        each with its own signature, all at the finish, while the blocks' thinking
        streamed as one run of `reasoning` (the record's one block): no one of those
        signatures signs that run, and a block sent back with another's signature is
        refused ("Invalid `signature` in `thinking` block"), so none is taken (logged)
        and the thinking stays plain reasoning. An item that is no object has no event
        (logged); a signature or encrypted data that is no string is none (logged), as
        the answer does not need it."""
        if not all(item.__class__ is dict for item in details):
            self._log_once("reasoning detail", f"reasoning_details {_short(details)}: not objects")
            details = [item for item in details if item.__class__ is dict]
        carried_text = False
        # whether the thinking these blocks hold streamed already (beside them, or as
        # `reasoning` since the last signature): then they only sign it
        beside = self.reasoned or bool(delta.get("reasoning_content") or delta.get("reasoning"))
        signed: Any = None
        unsignable = beside and len(details) > 1 and _signs_several(details)
        if unsignable:
            self._log_once(
                "thinking signatures",
                "thinking blocks signed apart that streamed as one run of reasoning:"
                " their signatures are not kept",
            )
        for item in details:
            kind = item.get("type")
            if kind is None and item.keys() & {"thinking", "signature"}:
                signature = item.get("signature")
                if not (unsignable or (signature and signature == signed)):
                    signed = signature
                    self._thinking_blocks([item], beside)
                continue
            if kind == "reasoning.encrypted":
                data = self._opaque(item.get("data"))
                if data:  # whole in one fragment: a block of its own
                    if self.detail is not None:
                        self._end_detail()
                    self.reasoning(signature=data, redacted=True, details=_detail_fields(item))
                continue
            if kind == "reasoning.text":
                field = "text"
            elif kind == "reasoning.summary":
                field = "summary"
            else:
                self._log_once(
                    f"reasoning detail {kind}", f"a reasoning detail of type {kind!r} has no event"
                )
                continue
            text = item.get(field) or ""
            if text.__class__ is not str:  # (it was compared with the detail's text so far)
                raise ValueError(f"a {kind} detail's {field} is {json_type(text)}, not a string")
            carried_text = True
            self._detail_fragment(kind, item)
            if text:
                if self.detail_text is not None:  # not known to be increments yet
                    text = self._detail_news(text, self.detail_text)
                if text:
                    self.detail_said = True
                    self.reasoning(text)
            signature = self._opaque(item.get("signature"))
            if signature:  # the signature ends the detail (Anthropic's, last)
                self._end_detail(signature)
        if not carried_text:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.reasoning(reasoning)

    def _opaque(self, value: Any) -> str | None:
        """A signature or encrypted reasoning: a string, else none (logged)."""
        if value is not None and value.__class__ is not str:
            self._log_once(
                "opaque", f"a reasoning signature {_short(value)} is no string: not kept"
            )
        return text_or_none(value)

    def _detail_news(self, text: str, so_far: str) -> str:
        """What a fragment adds to the open detail. MiniMax documents each fragment's
        `text` as the detail's whole text so far (platform.minimax.io, the OpenAI API's
        streaming example keeps only the part past what it has), while its M2.7 sends
        increments (MiniMax-AI/MiniMax-M2#95), as OpenRouter does: a fragment that
        starts with the text so far adds only its rest. The text is kept only while
        each fragment has started with it; the first that does not shows increments,
        and the detail's later fragments are taken as they come, not compared again."""
        if so_far and text.startswith(so_far):  # the whole so far, again
            self.detail_text = text
            return text[len(so_far) :]
        self.detail_text = None if so_far else text
        return text

    def _detail_fragment(self, kind: str, item: dict[str, Any]) -> None:
        """A fragment of a text or summary detail: the next fragment of the open detail
        when its type and index are the same (a field it did not send yet is taken
        from it), else the first of a new one."""
        key = (kind, item.get("index"))
        detail = self.detail
        if detail is not None and key == self.detail_key:
            for name, value in item.items():
                if value is not None and name not in _DETAIL_CONTENT:
                    detail[name] = value
            return
        if detail is not None:
            self._end_detail()
        self.detail_key, self.detail = key, _detail_fields(item)
        self.detail_text = ""

    def _end_detail(self, signature: str | None = None) -> None:
        """The open detail is complete: one delta closes it with its own fields (and
        the signature that ended it), unless it said nothing at all."""
        detail, self.detail = self.detail, None
        said, self.detail_said = self.detail_said, False
        if detail is not None and (said or signature is not None):
            self.reasoning(signature=signature, details=detail)

    def _content_parts(self, parts: list[dict[str, Any]]) -> None:
        """Mistral's content as a list of typed chunks: `text`, and `thinking` whose
        own text chunks are reasoning; any other chunk, inside `thinking` or not, goes
        to `_content_part`. A text chunk's `thoughtSignature` (Gemini served by
        Databricks, block/goose#8042) is Gemini's signature of the text, read as its
        native wire's is: a signed empty reasoning delta before the text. A part with no
        `type` whose `text` is a string is text too: Qwen-VL's parts (`[{"text": ...}]`,
        `[{"image": url}]`, DashScope's own content list: lobehub#3114, higress#1221).
        A `reasoning` part (Databricks serving Claude or gpt-oss: `{"type": "reasoning",
        "summary": [{"type": "summary_text", "text", "signature"}]}`, as LiteLLM's
        Databricks transformation reads it) is a native thinking block's pieces: each
        summary's text is reasoning, its signature ends the block (`_thinking_parts`).
        A part that is no object holds no answer this wire can read: an error that says
        so; a `null` one is none."""
        for part in parts:
            if part.__class__ is not dict:
                if part is None:
                    continue
                raise ValueError(f"a content part is {json_type(part)}, not an object")
            kind = part.get("type")
            if kind == "text" or (kind is None and part.get("text").__class__ is str):
                signature = part.get("thoughtSignature")
                if signature and signature.__class__ is str:
                    self.reasoning("", signature, details={})
                text = part.get("text")
                if text:
                    self.content(text)
                citations = part.get("citations")
                if citations.__class__ is list:
                    self._part_citations(citations)
            elif kind == "thinking":
                thinking = part.get("thinking")
                if isinstance(thinking, str):
                    if thinking:
                        self.reasoning(thinking)
                    continue
                for inner in thinking if thinking.__class__ is list else ():
                    if inner.__class__ is not dict:
                        self._content_part({"thinking": inner})
                    elif inner.get("type") == "text":
                        text = inner.get("text")
                        if text:
                            self.reasoning(text)
                    else:
                        self._content_part(inner)
            elif kind == "reasoning" and part.get("summary").__class__ is list:
                for entry in part["summary"]:
                    if entry.__class__ is dict and entry.get("type") == "summary_text":
                        self._thinking_parts(entry.get("text"), entry.get("signature"))
                    else:
                        self._content_part(entry)
            else:
                self._content_part(part)

    def _part_citations(self, citations: list[Any]) -> None:
        """The citations of a text part (Databricks serving Claude passes Anthropic's
        on: LiteLLM's `test_chunk_parser_with_citation`; LiteLLM's own chat wire, one in
        `provider_specific_fields.citation`), read as the Anthropic wire
        reads them: one with a `url` (`web_search_result_location`) is a citation with
        its title and cited text; a document's (`char_location`, `page_location`:
        an index into documents the client sent, no URL) is logged."""
        for cited in citations:
            source = cited_source(cited)
            if source is None:
                self._log_once("part citation", f"citation {_short(cited)} has no url: no event")
                continue
            self._cite(*source)

    def _content_part(self, part: dict[str, Any]) -> None:
        """A content chunk that is neither text nor thinking. Mistral's `tool_reference`
        (a source a built-in tool found: `{tool, title, url}`) is a citation when it has
        a URL, once per URL. Anything else has no event and is logged: a `reference`
        (`reference_ids` into sources the client sent with its tool results: no URL
        here to cite), an image, a chunk type not known yet."""
        url = text_or_none(part.get("url")) if part.get("type") == "tool_reference" else None
        if url is None:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "content chunk {} has no event", _short(part)
            )
        else:
            self._cite_url(url, text_or_none(part.get("title")))

    def _tool_call(self, call: dict[str, Any], place: int | None = None) -> None:
        """One entry of a delta's `tool_calls`; `place` is its place in the list when the
        list has several entries."""
        key = call.get("index")
        if key.__class__ is not int and key is not _FUNCTION_CALL:
            # Several index-less entries in one delta (Kimi: vercel/ai's moonshotai
            # fixtures) are told apart by their place in the list, the same place in
            # every delta, as vercel/ai reads them; an explicit index later names the
            # same call. A lone one is a call of its own or the one before it (Mistral).
            # An index that is no number is none: it keys the turn's calls (a list was
            # hashed there, "unhashable type").
            key = place
        call_id = call.get("id")
        if call_id.__class__ is not str:  # an id that is no string is none: rxllm names it
            call_id = None
        function = call.get("function")
        if function and function.__class__ is not dict:
            raise ValueError(f"a tool call's function is {json_type(function)}, not an object")
        custom = None
        if not function:  # (most fragments have one: nothing more to look up)
            kind = call.get("type")
            ran = call.get(kind) if kind.__class__ is str and kind not in _CALL_TYPES else None
            if ran.__class__ is dict and isinstance(kind, str):
                # A tool Zhipu ran, under its type: its web search (`{"type":
                # "web_search", "web_search": {"search_intent", "search_result"}}`),
                # GLM-4-AllTools' `web_browser`, `code_interpreter` (`{input}`, then
                # `{outputs}`, at one index). Never a call for the client to run.
                self._typed_tool(("typed", key, kind), text_or_none(call_id), kind, ran)
                return
            custom = call.get("custom")
            if custom.__class__ is dict and custom:  # a custom tool: its name, free text
                function = custom
            else:
                function, custom = {}, None
        name = function.get("name")
        if name.__class__ is not str:  # a name that is no string names none (no call: per fragment)
            name = None
        if key is not None:
            index = self.calls.get(key)
            held = self.unnamed.get(index) if index is not None and self.unnamed else None
            if (
                index is not None
                and call_id
                and name
                and call_id != self.call_ids[index]
                and (held is None or (held[0] and held[2]))
            ):
                # A new id and name on a known index is a new call (Ollama has sent
                # every parallel call as index 0); a new id alone is not (some servers
                # send a fresh id on every fragment of one call), nor is the first id of
                # a call still unnamed.
                index = None
        elif self.last_call is not None and call_id in (None, self.call_ids[self.last_call]):
            index = self.last_call  # no index on the wire (Mistral): same id, same call
        else:
            index = None
        if (
            index is None
            and not call_id
            and not name
            and (not function.get("arguments") or _empty_object(function))
        ):
            # An entry that names no tool and asks nothing on an index no call began:
            # LiteLLM's marker for a content block that stopped with no input
            # (`check_empty_tool_call_args`, arguments `{}`), written at a thinking
            # block's stop too, at `tool_index` -1 before any call; Workers AI's closing
            # entry (`{id: null, type: null, function: {name: null}}`, which
            # cloudflare/ai's workers-ai-provider `isNullFinalizationChunk` skips
            # whatever its index). A call that names this index later starts then.
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "tool call entry with no id and no name, arguments {!r}, at index {}: not a call",
                function.get("arguments"),
                key,
            )
            return
        if index is None:
            self._flush_held()  # text held so far comes before the call
            if self.unnamed:
                self._start_named()  # the calls before this one start before it
            index = len(self.call_ids)
            self.calls[key if key is not None else ("no-index", index)] = index
            self.call_ids[index] = call_id or self._call_id(index)
            # The call starts when its arguments begin: its name may come in pieces
            # before them (`_name_call`).
            self.unnamed[index] = [bool(call_id), [], name or ""]
        elif self.unnamed and index in self.unnamed:
            self._name_call(index, call_id, name)
        self.last_call = index
        extra = call.get("extra_content")
        if extra:
            self._signature(index, extra)
        signature = call.get("thoughtSignature") or function.get("thought_signature")
        if signature and signature.__class__ is str and not extra:
            # Gemini served by Databricks signs a call beside its `function`
            # (block/buzz#3569), Portkey inside it (`function.thought_signature`), where
            # Gemini's own endpoint writes `extra_content`.
            if self.signatures is None:
                self.signatures = {}
            self.signatures[index] = signature
        if custom is None:
            arguments = function.get("arguments")
        else:
            arguments = self._custom_input(index, custom.get("input"))
        if arguments is not None and arguments.__class__ is not str:
            arguments = _arguments_text(arguments)
        if arguments and self.unnamed and index in self.unnamed and self.unnamed[index][2]:
            self._start_unnamed(index)  # its arguments begin: its name is whole
        if arguments:
            held = self.unnamed.get(index) if self.unnamed else None
            if held is not None:
                held[1].append(arguments)
            elif self.wrapped and index in self.wrapped:
                self.wrapped[index][1].append(arguments)
            elif self.ran_calls and index in self.ran_calls:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "arguments after its result for server tool call {}: not read",
                    self.call_ids[index],
                )
            else:  # a started call's fragment
                state = self.call_args.get(index)
                if state is None:  # started at the turn's end (a wrapper released as it came)
                    state = self.call_args[index] = [0, 0]
                if name and call_id in (None, self.call_ids[index]):
                    arguments = self._restated(state, arguments)
                if arguments:
                    state.append(arguments)
                    self.tool_args(index, arguments)

    def _restated(self, state: list[Any], arguments: str) -> str:
        """What a delta that names a started call again (its name, and its id or none)
        adds to its arguments. Cerebras (gpt-oss-120b) ends a call with a delta of its
        id, its name and its whole arguments, after streaming them in fragments
        (elizaOS/eliza#9766): arguments that start with all the call's fragments so far
        add only their rest, and the whole said again adds nothing. Only arguments as
        long as the fragments so far are compared with them: servers that name the call
        on every fragment (TGI) would otherwise join its arguments at each one; the
        fragments' length is counted here, each fragment once (`state`: `call_args`)."""
        chars = state[0] + sum(map(len, state[2 + state[1] :]))  # the fragments not counted
        state[0], state[1] = chars, len(state) - 2
        if not chars or len(arguments) < chars:
            return arguments
        if len(state) > 3:
            state[2:] = ["".join(state[2:])]
            state[1] = 1
        if arguments.startswith(state[2]):
            return arguments[chars:]
        return arguments

    def _signature(self, index: int, extra: Any) -> None:
        """Gemini's thought signature of call `index`, in the call's `extra_content`
        (on its first delta, or on a delta of its own after it): Gemini 3 answers 400
        to a history whose calls lost it, so the request sends it back the same way."""
        signature = _thought_signature(_google_of(extra))
        if signature is not None:
            if self.signatures is None:
                self.signatures = {}
            self.signatures[index] = signature

    def _google_extra(self, extra: Any, delta: dict[str, Any]) -> None:
        """Gemini's `extra_content` on a delta. Its `thought_signature` is Gemini's
        signature of the turn's text (on the first text delta, or on a delta of its own
        at the end: Gemini 3 signs every turn). Its native wire gives it on a text part,
        and rxllm emits it as that wire does (`rxllm.providers.google`): an empty
        reasoning delta with the signature, before the text, its details the part's
        fields (`{}`, or `{"thought": true}` on a thought), so the turn goes back signed
        on either wire (`chat_messages`). `thought: true` (with `include_thoughts`)
        says the delta's content is a thought, not the answer: it is reasoning
        (`_thought`)."""
        google = _google_of(extra)
        if google.__class__ is not dict:
            return
        thought = google.get("thought") is True
        signature = _thought_signature(google)
        if signature is not None:
            self.reasoning("", signature, details={"thought": True} if thought else {})
        content = delta.get("content") if thought else None
        if content and content.__class__ is str:
            self.content = self._thought  # this delta's content only

    def _thought(self, content: str) -> None:
        """The content of a delta Gemini flags as a thought, as reasoning. Its endpoint
        wraps a turn's thoughts in tags, `<thought>` at the start of the first flagged
        delta and `</thought>` at the start of the first delta after them (a probe of
        the API, as written by a fake server's tests); the tags are the wire's, not the
        model's words. The next content is `_after_thought`'s."""
        thought = content.removeprefix(_THOUGHT_OPEN).removesuffix(_THOUGHT_CLOSE)
        if thought:
            self.reasoning(thought)
        self.content = self._after_thought

    def _after_thought(self, content: str) -> None:
        """Content after a thought, not flagged: the answer, without the tag that
        closes the thoughts."""
        self.content = self.answer
        content = content.removeprefix(_THOUGHT_CLOSE)
        if content:
            self.content(content)

    def _custom_input(self, index: int, text: Any) -> str:
        """A fragment of a custom tool's input (OpenAI's custom tools take free text, and
        stream `{type: "custom", custom: {name, input}}`: openai/openai-python#2530) as
        JSON text of `{"input": text}`, the arguments the Responses wire dispatches for
        a `custom_tool_call`; `_close_custom` closes it when the call ends."""
        if text is None:
            text = ""
        elif text.__class__ is not str:
            raise ValueError(f"custom tool input must be a string, got {type(text).__name__}")
        # ASCII escapes: a surrogate pair the wire split across two fragments (each a
        # lone surrogate once decoded) joins again when the whole is read.
        piece = json.dumps(text)[1:-1]
        opened = self.custom
        if opened is None:
            opened = self.custom = {}
        pieces = opened.get(index)
        if pieces is not None:
            pieces.append(text)
            return piece
        opened[index] = [text]
        return '{"input": "' + piece

    def _close_custom(self) -> None:
        """The turn ended: each custom tool's input is complete, its JSON closed."""
        opened, self.custom = self.custom, None
        for index in sorted(opened or ()):
            self.tool_args(index, '"}')

    def _function_call(self, function_call: dict[str, Any], beside_tool_calls: bool) -> None:
        """OpenAI's deprecated `delta.function_call` (`functions` in the request): one
        call per turn, `{name, arguments}` streamed like a tool call's `function`. Beside
        `tool_calls` it would be the same call said twice: `tool_calls` is read."""
        if beside_tool_calls or (self.calls and _FUNCTION_CALL not in self.calls):
            if not self.legacy_beside:
                self.legacy_beside = True
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "delta.function_call beside tool_calls not read: {}", _short(function_call)
                )
            return
        self._tool_call({"index": _FUNCTION_CALL, "function": function_call})

    def _call_id(self, index: int) -> str:
        """The id of call `index`, which came without one (TGI's `""`, a legacy
        `function_call`, Gemini's OpenAI-compatible endpoint at times): `call_{tag}_{index}`,
        the tag naming the response (`response_tag`), so that no call of another turn
        holds it (an app finds a call by its id) and a replay gives it again."""
        return f"call_{self.response_tag()}_{index}"

    def _name_call(self, index: int, call_id: str | None, name: str | None) -> None:
        """A later delta of a call not started yet: its id if none came, and its name or
        a piece of it. A name said in pieces before the arguments (Gemini's
        OpenAI-compatible endpoint: "edit_ex", "isting_file", continuedev/continue#5849;
        NVIDIA-NeMo/Switchyard#785) goes on; the whole name said again (MiniMax on
        NVIDIA NIM names the call on every fragment, hermes-agent#8259) is the same name.
        A name that comes after arguments (vercel/ai#14722) starts the call at once,
        with the arguments held so far."""
        held = self.unnamed[index]
        if call_id and not held[0]:
            held[0] = True
            self.call_ids[index] = call_id
        if name and name != held[2]:
            held[2] += name
            if held[1]:
                self._start_unnamed(index)

    def _start_unnamed(self, index: int) -> None:
        """Call `index`, named, starts with the arguments held so far."""
        held = self.unnamed.pop(index)
        self._start_call(index, held[2])
        for piece in held[1]:
            self._arguments(index, piece)

    def _start_named(self) -> None:
        """The calls named but with no arguments yet start (another call begins, or the
        turn ends): their names are whole."""
        for index in [index for index, held in self.unnamed.items() if held[2]]:
            self._start_unnamed(index)

    def _start_call(self, index: int, name: str) -> None:
        """Call `index` starts, under an id no other call of the turn has: DeepSeek and
        Z.ai have given two parallel calls one id (HKUDS/nanobot#3943), whose results
        could not be told apart, and an endpoint refuses a history that repeats one
        ("Duplicate value for 'tool_call_id'"). The repeat is renamed as `CallIds`
        renames one in a history (`{id}_2`), and goes back under that name. Calls are
        matched on the wire by the id the server sent (`call_ids`)."""
        ran = self.call_ids[index].startswith(_SERVER_CALL_ID)
        if ran or name in PARALLEL_WRAPPERS:
            # read once whole: a wrapper at the turn's end (`_unwrap`), a call the
            # provider ran when its result comes (`_server_result`) or the turn ends
            if self.wrapped is None:
                self.wrapped = {}
            self.wrapped[index] = (name, [])
            if ran:
                if self.ran_calls is None:
                    self.ran_calls = set()
                self.ran_calls.add(index)
            return
        self.call_args[index] = [0, 0]
        self.tool_start(self._turn_ids().call(self.call_ids[index]), name, index)

    def _arguments(self, index: int, piece: str) -> None:
        """A fragment of call `index`'s arguments: held while the call is a parallel
        wrapper, streamed otherwise."""
        held = self.wrapped.get(index) if self.wrapped else None
        if held is not None:
            held[1].append(piece)
        else:
            self.call_args[index].append(piece)
            self.tool_args(index, piece)

    def _unwrap(self, index: int, signature: str | None) -> None:
        """A parallel wrapper, complete: each call it wraps is requested on its own, at the
        wrapper's index, one after the other, under the wrapper's id and `_{n}`, as the
        Responses wire reads one; a call that wraps none is requested as it came."""
        assert self.wrapped is not None
        name, pieces = self.wrapped.pop(index)
        arguments = "".join(pieces)
        call_id = self.call_ids[index]
        if self.ran_calls and index in self.ran_calls:
            self._server_call(call_id, name, arguments)
            return
        calls = wrapped_calls(arguments)
        ids = self._turn_ids()
        if calls is None:
            self.tool_start(ids.call(call_id), name, index)
            self.tool_end(index, arguments or None, signature)
            return
        for n, (tool, parameters) in enumerate(calls):
            self.tool_start(ids.call(f"{call_id}_{n}"), tool, index)
            self.tool_end(index, json.dumps(parameters, ensure_ascii=False))

    def _release_wrapped(self) -> None:
        """The turn did not complete (cut off, or failed): a wrapper still held starts as
        the call it came as, with what it streamed, and is judged as any call left open."""
        wrapped, self.wrapped = self.wrapped, None
        for index, (name, pieces) in (wrapped or {}).items():
            if self.ran_calls and index in self.ran_calls:  # nothing for the client to run
                self._server_call(self.call_ids[index], name, "".join(pieces))
                continue
            self.tool_start(self._turn_ids().call(self.call_ids[index]), name, index)
            for piece in pieces:
                self.tool_args(index, piece)

    def _turn_ids(self) -> CallIds:
        """The ids the turn's calls were given so far (`_start_call`)."""
        ids = self.turn_ids
        if ids is None:
            ids = self.turn_ids = CallIds()
        return ids

    def _release_unnamed(self) -> None:
        """The turn ended: calls named with no arguments start (a call without
        parameters), and calls that never named their tool start as they are, with no
        name, rather than be dropped."""
        for index in list(self.unnamed):
            if self.unnamed[index][2]:
                self._start_unnamed(index)
                continue
            pieces = self.unnamed.pop(index)[1]
            logger.bind(provider=self.provider, attempt=self.attempt).warning(
                "tool call {} ended without a name", self.call_ids[index]
            )
            self._start_call(index, "")
            for piece in pieces:
                self.tool_args(index, piece)

    def _error(self, error: Any) -> None:
        """An error chunk after `200 OK` (TGI's validation string, llama.cpp's context
        error object, the envelope around either): read by the same parser as HTTP error
        bodies, so the recovery layer sees the same status, `param`, `code` and wait
        wherever the rejection came."""
        raw = json.dumps(error, ensure_ascii=False)
        if error.__class__ is dict and "error" not in error and (words := _flat_error_words(error)):
            # `error_message` (or, alone, `error_type`) is what TGI's `error` string is
            error = {"error": words, "error_type": error.get("error_type")}
        self.stream_error(error, raw)

    def release(self) -> None:
        self._flush_held()  # text held back before an error is still output
        if self.unnamed:
            self._start_named()  # a call named before the error began
        if self.wrapped:
            self._release_wrapped()

    def _settle(self) -> None:
        if self.detail is not None:  # [DONE] without a finish (Snowflake)
            self._end_detail()
        self._flush_held()
        finish, word = self.finish, self.finish_word
        if word in FAILED_FINISHES:  # no error object came (it would have ended it)
            if self.unnamed:
                self._start_named()
            if self.wrapped:
                self._release_wrapped()
            self.fail(
                "stream_error",
                f"{self.provider} ended the turn with finish_reason {finish!r}",
                code=word,
            )
        elif finish is not None:
            stop = stop_reason_of(word, FINISH_REASONS)
            asked = self._asked()
            if stop == "tool_use" and not asked and self.server_tools:
                # "tool_calls" after tools the provider ran, and no call for the client:
                # the turn asks it to run none (LiteLLM's for calls Anthropic ran,
                # `_SERVER_CALL_ID`; Zhipu's typed tools; MiniMax's closing frame)
                stop = "stop"
            # A natural end after calls is an end to run them: Ollama said "stop" after
            # its calls, and so has OpenAI's gpt-4o (both in ollama#7963).
            self.done("tool_use" if stop == "stop" and asked else stop, finish)
        else:  # [DONE] with no finish reason (Snowflake never sends one)
            # [DONE] completes the turn, and so its calls, as a finish would: one with no
            # arguments at all is a call without parameters, not one cut off.
            self._end_calls()
            self.done("tool_use" if self._asked() else "stop")

    def _asked(self) -> bool:
        """Whether the turn has a call for the client to run: one the provider did not."""
        return len(self.calls) > len(self.ran_calls or ())

    def _end_calls(self, cut: bool = False) -> None:
        """The turn is complete: calls still unnamed start, custom inputs close, and
        every call ends, with the signature that came on a delta of its own. A finish
        that `cut` the output short (the token limit, a filter) ends no call it may have
        cut: one whose arguments had not begun (cut off before them, not a call without
        parameters: never `{}`), or a custom tool's free-text input (nothing tells it
        whole: `tool_input_cut` says what came of it). Those stay open, and the turn's end
        fails them as cut off. A call written in DSML is ended by its markup, never here:
        one still open was cut off (`rxllm.providers.dsml`)."""
        if self.unnamed:
            self._release_unnamed()
        custom = self.custom
        if custom and not cut:
            self._close_custom()
        signatures = self.signatures or {}
        wrapped = self.wrapped
        ran = self.ran_calls or ()
        dsml = self.dsml is not None
        for index in self.call_ids:
            if wrapped and index in wrapped:
                self._unwrap(index, signatures.get(index))
            elif index in ran:
                continue  # reported with its result (`_server_result`)
            elif custom and cut and index in custom:
                self.tool_input_cut(index, "".join(custom[index]))  # left open, cut off
            elif dsml and ("dsml", index) in self.calls:
                continue  # ended by its invoke's end, or left open: cut off
            elif cut and len(self.call_args[index]) == 2:
                continue  # (2: no fragment came) left open, cut off
            else:
                self.tool_end(index, signature=signatures.get(index))


class OpenAIChat(WireProtocol):
    """The OpenAI Chat Completions wire, for OpenAI and every compatible endpoint. Its
    defaults are OpenAI's own endpoint, its options (`OPENAI`) included; a compatible
    endpoint (`rxllm.providers.presets`) declares its own."""

    genai_operation = "chat"
    system_apart = "none"  # system messages are messages of the history
    # `stream_options` is only asked for usage; a user may ask for more (or less).
    param_defaults: ClassVar[frozenset[str]] = frozenset({"stream_options"})
    request_keys: ClassVar[Mapping[str, str]] = {
        **REQUEST_KEYS,
        # Inception's diffusion mode: each chunk's content is then the whole text so
        # far, noisy drafts first, each replacing the last; appended as this wire reads
        # content, drafts and answer would be one text, and a text is never taken back.
        "diffusing": (
            "in Inception's diffusion mode each chunk is the whole text so far, noisy "
            "drafts first, each replacing the last, which rxllm's text deltas cannot carry "
            "(every draft would be joined to the answer); leave it out, and Mercury "
            "streams its answer as deltas"
        ),
    }

    def __init__(
        self,
        name: str = "openai",
        default_base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        requires_api_key: bool = True,
        options: ChatOptions | None = None,
        recovery: RecoveryPolicy = DEGRADES,
        ssrf_guard_by_default: bool = False,
    ) -> None:
        self.name = name
        self.recovery = recovery
        self.ssrf_guard_by_default = ssrf_guard_by_default
        self.default_base_url = default_base_url
        self.api_key_env = api_key_env
        self.requires_api_key = requires_api_key
        self.options = OPENAI if options is None else options
        self.tool_names = self.options.tool_names
        if self.options.sampling_renames:  # the endpoint's own body keys
            self.sampling_keys = {**self.sampling_keys, **self.options.sampling_renames}

    def __repr__(self) -> str:
        return f"OpenAIChat({self.name!r}, {self.default_base_url!r}, {self.options})"

    def sending_reasoning(self, send: bool) -> OpenAIChat:
        """This endpoint with the reasoning of assistant messages sent back in its own
        form (`send`; `reasoning_content` where it sends none back, or only what came in
        `<think>` tags: the field Kimi needs wherever it is served), or not at all
        (`ProviderOptions.send_reasoning`)."""
        form = self.options.reasoning_back
        if not send:
            form = "none"
        elif form in ("none", "think_tags"):
            form = "reasoning_content"
        wire = copy.copy(self)
        wire.options = replace(self.options, reasoning_back=form)
        return wire

    def url(self, base_url: str, request: ChatRequest) -> str:
        return endpoint(base_url, "/chat/completions")

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            key_header = self.options.api_key_header
            if key_header:
                headers[key_header] = api_key
            else:
                headers["Authorization"] = f"Bearer {api_key}"
        return headers | self.options.extra_headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(
                request.messages,
                self.options,
                _custom_tools(request.params.get("tools")),
                endpoint=self.name,
            ),
            "stream": True,
        }
        if self.options.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": function_parameters(tool.parameters),
                    },
                }
                for tool in request.tools
            ]
        return body

    def tool_choice_body(self, choice: str, request: ChatRequest) -> dict[str, Any]:
        """The OpenAI form (`WireProtocol.tool_choice_body`).

        Raises:
            ConfigError: a forced choice (`required`, a name) while the model thinks, on
                an endpoint that refuses one then
                (`ChatOptions.thinking_refuses_forced_choice`): a fallback moves on to
                another provider.
        """
        thinkers = self.options.thinking_refuses_forced_choice
        if thinkers is not None and forces_a_call(choice):
            switch = thinking_switch(request.params)
            thinking = thinkers.match(request.model) is not None if switch is None else switch
            if thinking:
                how = "by default" if switch is None else "params['thinking']"
                raise ConfigError(
                    f"{self.name} refuses tool_choice={choice!r} while {request.model} "
                    f"thinks (on {how}): a forced tool choice is incompatible with thinking "
                    "enabled; use 'auto' or 'none', or turn thinking off "
                    "(params={'thinking': {'type': 'disabled'}}) where the model allows"
                )
        return super().tool_choice_body(choice, request)

    def response_format_body(
        self, output: Literal["json"] | JsonSchema, request: ChatRequest
    ) -> dict[str, Any]:
        """The Chat Completions form (`WireProtocol.response_format_body`).

        Raises:
            ConfigError: a `JsonSchema` on an endpoint that takes JSON mode only
                (`ChatOptions.json_schema_output`): a fallback moves on to another
                provider.
        """
        if isinstance(output, JsonSchema) and not self.options.json_schema_output:
            raise ConfigError(
                f"{self.name} takes no JSON Schema as response_format, only JSON mode "
                '("response_format.type `json_schema` is unavailable now"): use '
                "response_format='json' and describe the answer's shape in the prompt"
            )
        return super().response_format_body(output, request)

    def calls_offered(self, body: Mapping[str, Any]) -> bool:
        """Tools (or the deprecated `functions`), and a tool choice that is not `none`
        (`WireProtocol.calls_offered`)."""
        if not (body.get("tools") or body.get("functions")):
            return False
        return bool(body.get("tool_choice", body.get("function_call")) != "none")

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> ChatNormalizer:
        return ChatNormalizer(emit, provider, attempt, self.options)
