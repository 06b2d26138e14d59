"""Anthropic Messages streaming: named SSE events around indexed content blocks.

Request: `POST {base}/messages` with `x-api-key`, `anthropic-version: 2023-06-01` and
`stream: true`; `max_tokens` is mandatory (unset, rxllm writes 4096 plus any thinking
budget in params). System messages go to the top-level `system`; tool results travel
as `tool_result` blocks of a user message, and an assistant turn's signed reasoning
(`ReasoningPart`s) as its first `thinking` and `redacted_thinking` blocks. What the API
refuses and rxllm can send without losing anything is sent its way: text that is empty
or only whitespace is left out ("text content blocks must contain non-whitespace
text"), and a tool result of such text goes without `content`, which the API takes;
so is the trailing whitespace of a final assistant message (a prefill: "final
assistant content cannot end with trailing whitespace"); a call id outside
`^[a-zA-Z0-9_-]+$`, or one an earlier call of the conversation already used (ids other
providers made, such as `functions.f:0`, or a history's Gemini ids, `f_0` in every
turn before rxllm tagged them per response), is rewritten in
its `tool_use` and its results alike, as tool_use ids must be unique; a tool schema
without a top-level `type` gets `"type": "object"`, which `input_schema` requires; an
inline image goes with the type its bytes have, whatever its data URL says; a PDF part
(`ImagePart.pdf`: its bytes or data URL say so, or a URL given `media_type=
"application/pdf"`) is a `document` block, in a message or a tool result, never an
`image` the API refuses.
Reasoning from another wire is not sent: signed (a part with `details`), its signature
is not Claude's; unsigned (no signature at all: DeepSeek's `reasoning_content`, plain
text), the API refuses a thinking block without one. A thinking block an
Anthropic-compatible server sent unsigned goes back as it came, with `signature: ""`
(see Thinking below). A 404 from a base URL without `/v1` (the Anthropic SDKs' form)
says so.

Response: `message_start` (model, input usage), then per content block
`content_block_start` / `content_block_delta`s / `content_block_stop` (the block's
`index` is its place in the message), `message_delta` (stop reason, cumulative usage)
and `message_stop`, the terminal marker. `ping`s are keepalives. An `error` event may
replace the rest of the stream after `200 OK`.

Decisions, where the wire leaves a choice:

- Usage: `message_start`'s counts merged with `message_delta`'s (the later count of a
  field wins; Anthropic's delta counts are cumulative, so a later zero says nothing and
  never erases a count: compatible servers send `input_tokens: 0` there, envoyproxy/
  ai-gateway#1631, #2292; but a zero input beside a non-zero cache count is a count,
  the cache-aware split of a prompt `message_start` counted whole as input, Kimi's and
  QwenCloud's: maximhq/bifrost#5355, #5510) and emitted once, at `message_delta`
  (or, when an `error` event or the body's end comes first, with that failure:
  `FailureUsage`, reported where the turn had committed). `input_tokens` is already
  the uncached input; cache reads and writes are reported apart.
  A usage that counts no token at all is none, no event: LiteLLM's `/v1/messages`
  bridge (its `AnthropicStreamWrapper`, serving other providers' models on this wire)
  opens with zeros in `message_start` and keeps them when its upstream sent no usage,
  and a turn it ends with an `error` event would otherwise be reported as costing
  nothing.
  `output_tokens` includes thinking; the thinking share, where sent
  (`output_tokens_details.thinking_tokens`), is `reasoning_tokens`. The top-level
  counts leave out compaction (the compaction docs: the billed total sums
  `usage.iterations`), so each `compaction` iteration's counts are added to them (the
  latest `iterations` list wins, like any count); other iterations are already in the
  top level (`message`) or another model's (`advisor_message`), and only logged. A
  usage with `iterations` gives the top-level counts exactly, zeros too: the
  `message_start` before it counted the first iteration (a compaction's cache read),
  which would otherwise be counted twice.
- The stop reason of `message_delta` is held until `message_stop`; a body that ends
  without `message_stop` is truncated, even after a `message_delta`. A natural end
  (`end_turn`, `stop_sequence`) after client `tool_use` blocks is `tool_use`, the raw
  reason kept, as on the chat and Gemini wires: proxies that translate another wire
  into this one end a turn of calls with `end_turn` (LiteLLM#34692, Bifrost#3638,
  #6123), and an agent loop reading the stop reason would not run them. OpenAI's
  finish reasons a relay writes here as they came from its chat upstream (`stop`,
  `length`, `tool_calls`, `content_filter`: router-for-me/CLIProxyAPI passes `stop`
  through) are the stops they name, `stop` a natural end. A refusal's
  `stop_details.explanation` is a `refusal` event, at once (its category is logged).
  A relay that writes this wire ends a turn its upstream failed with `stop_reason:
  "error"` (1rgs/claude-code-proxy, where its translation raised): no stop reason of
  Anthropic's, so the turn is `error(kind="stream_error", code="error")`, its usage
  the failure's, never a `done` that passes the cut answer off as complete.
- A `message_delta` without a `stop_reason` is a running count a relay writes while
  the content goes on (LobeHub's heterogeneous-agent bridge: `{"delta": {}, "usage"}`
  at each usage update; the TypeScript SDK's stream accumulates any number of them):
  its counts are merged, and nothing ends, nor is usage emitted, until the
  `message_delta` with the stop reason (or `message_stop`). Before, the first one ended
  the content: a call still streaming was dropped, its arguments cut.
- `message_delta` ends the content. A block still open then when the model ended the
  turn itself (`end_turn`, `stop_sequence`, `tool_use`: a relay that leaves out the
  last `content_block_stop`) ends there as at its stop, a call without input included.
  A client `tool_use` block still open after any other stop (cut by `max_tokens`) is
  ended with the fragments it got, so its arguments are judged at once and never
  completed or invented.
- A `tool_use` block that got no non-empty `partial_json` ends, at its
  `content_block_stop`, with the `input` object of its `content_block_start` (that is
  how the API sends an explicit empty object); without one (or with `input: null`, a
  Go relay's nil map) it ends with no arguments, a call the protocol marks complete
  without parameters (`{}`).
- Content that arrives whole: a `message_start` whose `message.content` already holds
  complete blocks (seen when a programmatic tool-calling turn resumes) is read block by
  block as if each had streamed: its position in `content` is its index, each block is
  emitted once (a `tool_use` is `tool_start`, its `input` as the arguments and
  `tool_end`, so a `tool_request` follows), and its `stop_reason` is held like
  `message_delta`'s until `message_stop` (a later `message_delta` may replace it).
- One message a stream: a `message_start` repeated while the message is open (the same
  id, or no id to tell them apart) is ignored with a debug log; one naming another
  message means a relay spliced two responses (vercel/ai#18331), whose blocks share
  indices: `error(kind="protocol")`, never the two read as one turn.
- A `content_block_start` naming a block that already ended starts the next block, as
  the SDK's accumulator appends each started block: the API has sent, after a
  `*_tool_result` block, the next block's start with the result's index and its deltas
  and stop with the next one (vercel/ai anthropic-code-execution-pdf-skill.1), which
  read by the start's index would lose a call's input. Its deltas and stop may name
  either index.
- A block event without an `index` is for the block started last (a start without
  one, the next place): Continue's Anthropic adapter reads text deltas that name no
  block and follow no `content_block_start` (its openai-adapters token-usage test).
- Server tools run at Anthropic and are never `tool_start` / `tool_request`. A
  `server_tool_use` or `mcp_tool_use` block is one `server_tool_call` at its
  `content_block_stop` (call id = block id, name = block name; an MCP block's
  `server_name` is not kept): the arguments are its `input_json_delta` fragments parsed
  once there, or, when it got no non-empty fragment, the start block's `input`
  (`{}` without one, or for a null one). Arguments that are not a JSON object are not
  invented: the call is skipped with a debug log, as is a server block still open at
  `message_delta`.
  Every `*_tool_result` block (web search and fetch, code execution, bash and text
  editor code execution, tool search, MCP) is one `server_tool_result` when it starts,
  since it arrives whole: call id = its `tool_use_id`, name = the matching call's
  name (or, with no call seen, its type without `_tool_result`), content = its
  `content` JSON as sent. The other tools report a failure inside `content`
  (`web_search_tool_result_error`, ...); an MCP result says it beside it, as
  `is_error`, so a failed MCP result's content is `{"is_error": true, "content": ...}`,
  never one that reads like the tool's output. Either failure is the event's
  `is_error` (`server_result_failed`), as the AI SDK's Anthropic provider marks it;
  so is code that ran and exited other than 0 (a `*code_execution_result`'s
  `return_code`), as Gemini's `OUTCOME_FAILED` is.
  Both carry their block as `raw` (a call's with its complete input), so that the
  turn goes back with them where they came (`ServerToolPart`): a paused turn is
  continued from them. A result goes back without
  its `citations`, which the API writes on code execution results (null, or a list)
  and refuses on input ("...code_execution_tool_result.citations: Extra inputs are not
  permitted": agno's test_server_tool_block_citations).
- Citations: each `citations_delta` (and each entry of a whole text block's
  `citations`) is one `citation`, in wire order, repeats included.
  `web_search_result_location` gives `url`, `title` and `cited_text`;
  `search_result_location` has no url but its `source` is the search result's
  url-like identifier, used as the url. Document citations (`char_location`,
  `page_location`, `content_block_location`) name only a document index and title,
  no url or identifier, so they are skipped with a debug log.
- Thinking: `thinking_delta` is reasoning text; a block's signature is one reasoning
  event with empty text and the signature, at the block's end: its `signature_delta`s
  joined (Anthropic sends one; a relay that splits it must not make two blocks of
  one, each refused for half a signature); a `redacted_thinking` block is one reasoning
  event with empty text, its opaque `data` as signature, and `redacted=True`.
  Anthropic-compatible servers send thinking unsigned (DeepSeek's `/anthropic`,
  new-api#4763) or signed `""` (Kimi's, Fireworks': opencode#44713, pi#4464), and
  refuse a tool-call turn sent back without it (DeepSeek: "The `content[].thinking` in
  the thinking mode must be passed back to the API", hermes-agent#16748): a thinking
  block that had text and ends (`content_block_stop`, or the end of the content) with
  no signature gets the empty signature the server gave it, so that it is a block of
  its own and goes back as it came, as the anthropic SDK sends it back. A block a
  refusal or a limit cut (its stop never came: `max_tokens`, the streaming
  classifier's `refusal`) was never signed, as Anthropic signs a block at its end: it
  keeps its text as plain reasoning, without a signature, and is not sent back as a
  thinking block the API would refuse ("Invalid `signature` in `thinking` block").
- A `fallback` block (a model that declined gave way to another mid-turn) makes the
  model it names in `to` the turn's served model (`done.model`). It and a `compaction`
  block (its summary from `compaction_delta`s, its `encrypted_content`) are kept, each
  an empty reasoning delta whose `details` is the block, so that the turn goes back with
  them where they came (between two runs of thinking the API rejects the turn without
  the fallback; a turn paused after compaction continues from its summary).
- A `tool_use` block's `caller` (the code execution that made a programmatic call, or
  `direct`) and `toolset_name` are the call's `details`, and go back on its block; the
  `container` of a message or `message_delta` (where the turn's code ran) is the
  `Done`'s id, for the next request to name: a turn that ended on a programmatic call
  is refused without it.
- Fields no event carries are logged at debug with their values, never dropped
  unsaid: a message's or `message_delta`'s `stop_sequence` (the sequence that matched),
  `context_management` (the edits applied) and any newer field; a container's fields
  beside its id (`expires_at`, the `skills` loaded in it); usage fields beyond the token
  counts (`cache_creation`'s 5m/1h split, `server_tool_use` request counts,
  `service_tier`); a refusal's `stop_details` beside its explanation (the
  `fallback_credit_token` to echo on a retry on a fallback model, the
  `recommended_model`); a `message_stop`'s own fields (Bedrock's
  `amazon-bedrock-invocationMetrics`, whose counts the usage already holds).
- An `error` event is `error(kind="stream_error")` with the HTTP status its type stands
  for (`overloaded_error` 529, `api_error` 500) and the type as its code, so the
  recovery policy reads it as it reads the same HTTP error; claude-code-router's
  bridge writes that object under `message` instead, read the same. An error payload
  without Anthropic's `error.type` (a proxy's envelope, a bare string) is read as any
  error body is (`Normalizer.stream_error`), and so is an `event: error` frame whose
  data is not a JSON object, or is empty (`Normalizer.error_frame`). Unknown event,
  block and delta types are ignored with a debug log of their fields (a
  `container_upload`'s file id), so new wire features never break a stream;
  so is an `input_json_delta` for a block that is no call.
- A value of another JSON type than the streaming reference gives (a list, an object, a
  number, a bool) fails no turn on a field the turn can go without: an event's `type`
  of no string is none (its SSE name is read); a block's `index` of no int is none (the
  block started last; a start, the next place); an id, a name or a model of no string
  is none (a call's id then `toolu_{index}`, as for a block without one); a message's
  envelope, content or usage, a `message_delta`'s delta or usage, a text block's
  `citations`, of another type, say nothing (logged). What the answer is made of cannot
  be left out unsaid: a `content_block` or a `delta` of no object, and a piece joined
  at its block's end (a server call's `partial_json`, a `signature`) of no string, end
  the turn in a `protocol` error naming the field.
- The legacy Text Completions stream (`POST /v1/complete`, claude-2 and before: recorded
  by instrumentation test suites) is read too: each `completion` event's `completion` is
  text, its `model` and `id` the turn's, and the first with a `stop_reason`
  (`stop_sequence`, `max_tokens`) ends the turn, as `message_stop` would; it has no
  usage.
- An event of another API's stream (`rxllm.providers.wire_signs.other_api`: a chat
  chunk's `choices`, the Responses API's `response.*`, a Gemini chunk's `candidates`)
  ends the turn at once in a `protocol` error naming that API and the provider that
  reads it: a base URL or a relay's route that speaks another wire, whose every event is
  as unreadable. A chat stream failed at its `[DONE]` ("a data line is not JSON"), the
  others ended cut short, retried, with no word of what they were.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import parse_error_payload, status_in
from rxllm.errors import ConfigError
from rxllm.events import ErrorInfo, StopReason, Usage, token_count
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import (
    REQUEST_KEYS,
    Normalizer,
    ToolNames,
    WireProtocol,
    cited_source,
    endpoint,
    server_result_content,
    server_result_failed,
    stop_reason_of,
    text_or_none,
    thinking_switch,
)
from rxllm.providers.call_ids import CallIds
from rxllm.providers.wire_signs import json_type, other_api
from rxllm.request import (
    PDF,
    TOOL_CHOICE_MODES,
    ChatRequest,
    ImagePart,
    JsonSchema,
    Message,
    Part,
    ReasoningPart,
    ServerToolPart,
    TextPart,
    ToolCall,
    forces_a_call,
    image_type,
)

__all__ = ["Anthropic", "AnthropicNormalizer", "anthropic_messages"]

API_VERSION = "2023-06-01"

# Anthropic requires max_tokens; 4096 fits every current model's output limit.
DEFAULT_MAX_TOKENS = 4096


def _default_max_tokens(params: Mapping[str, Any]) -> int:
    """The `max_tokens` written when the request sets none: `DEFAULT_MAX_TOKENS` for
    the answer, plus the thinking budget where params enable extended thinking, since
    thinking counts against `max_tokens` and the API refuses a `budget_tokens` that is
    not below it (400 "`max_tokens` must be greater than `thinking.budget_tokens`"). A
    `max_tokens` the user sets replaces this, as it is."""
    thinking = params.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if budget.__class__ is int and budget > 0:
        return DEFAULT_MAX_TOKENS + budget
    return DEFAULT_MAX_TOKENS


STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "pause",  # a long turn paused: send it back to continue
    # `pause_after_compaction`: the summary is written; send the turn back to continue.
    "compaction": "pause",
    "max_tokens": "length",
    # The context window filled up before max_tokens: output cut for lack of room.
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
    # No Claude model's: an Anthropic-compatible endpoint's safety review blocked the
    # output (Z.ai's word on its chat wire; hermes-agent#3911, pi and openclaw map it).
    "sensitive": "content_filter",
    # OpenAI's words, as relays that translate a chat or Responses upstream write them
    # (router-for-me/CLIProxyAPI passes the upstream's `stop` through; a gateway's
    # moderation writes `content_filter`: infinigence/octollm): each the stop it names.
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "content_filter": "content_filter",
    # Bedrock's: a guardrail blocked the answer, its configured message said in its place
    # (InvokeModelWithResponseStream serving Claude: langchain-ai/langchain-aws#176, #937).
    "guardrail_intervened": "content_filter",
}

# Stop reasons no Anthropic model gives, that a relay writes for a turn that failed
# (1rgs/claude-code-proxy's, when its translation of the upstream's stream raised).
_FAILED_STOPS = ("error",)

# Stop reasons of a turn the model ended itself, its content complete (a relay's `stop`
# and `tool_calls` too): unlike `max_tokens` and `model_context_window_exceeded` (the
# last block cut) or `refusal`.
_COMPLETE = tuple(raw for raw, stop in STOP_REASONS.items() if stop in ("stop", "tool_use"))

# Error types Anthropic itself documents as transient (HTTP 529 and 500).
# Anthropic's error types and the HTTP status each stands for (its errors page), so an
# error event after `200 OK` reads like the same error as an HTTP response.
ERROR_STATUSES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

# Usage fields of the wire -> our field names.
_USAGE_FIELDS = (
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("cache_read_input_tokens", "cache_read_tokens"),
    ("cache_creation_input_tokens", "cache_write_tokens"),
)
_CACHE_COUNTS = ("cache_read_input_tokens", "cache_creation_input_tokens")


def _count_of(value: object) -> int | None:
    """A token count as the wire wrote it, `12` and `12.0` alike (JSON has one number
    type: the TypeScript SDK's `JSON.parse` reads both as 12); None for no count (absent,
    or null: `MessageDeltaUsage.input_tokens` is nullable) or a non-number."""
    return token_count(value) if type(value) in (int, float) else None


# Fields read beside the usage counts, and the message and message_delta fields read;
# any other field is logged (`AnthropicNormalizer._unread`).
_USAGE_READ = frozenset({wire for wire, _ in _USAGE_FIELDS} | {"output_tokens_details"})
_MESSAGE_READ = frozenset(
    {"id", "type", "role", "model", "content", "stop_reason", "usage", "stop_details", "container"}
)
_MESSAGE_DELTA_READ = frozenset({"type", "delta", "usage"})
_DELTA_READ = frozenset({"stop_reason", "stop_details", "container"})
# A refusal's `stop_details` fields read (the explanation) or logged as it is read (the
# type, the category); the others (`fallback_credit_token`, `fallback_has_prefill_claim`,
# `recommended_model`: how to retry on a fallback model) are logged with their values.
_STOP_DETAILS_READ = frozenset({"type", "category", "explanation"})
# A legacy `completion` event's fields an event carries (its `stop`, the sequence that
# matched, and its `log_id` are logged).
_COMPLETION_READ = frozenset({"type", "id", "completion", "stop_reason", "model"})
_TYPE_READ = frozenset({"type"})  # of a block or delta no event carries
_ID_READ = frozenset({"id"})  # of a container, whose id is the `Done`'s

# Block kinds the normalizer reads; any other kind is logged and skipped.
_TEXT, _THINKING, _TOOL = "text", "thinking", "tool_use"
# Provider-executed calls; their results are every block type ending in _RESULT. The
# sets of words a wire's value is tested against are tuples: a value that is no string
# (a list, an object) is compared, never hashed, and is none of them.
_SERVER_CALLS = ("server_tool_use", "mcp_tool_use")
_RESULT = "_tool_result"
# Blocks of the turn no event carries but the history needs, each kept as an empty
# reasoning delta whose `details` is the block: a `compaction` summary ("Users should
# round-trip these blocks ... to maintain context across compaction boundaries",
# BetaCompactionBlockParam) and a `fallback` (BetaFallbackBlockParam: "echo the assistant
# turn verbatim — block included"; between two runs of thinking it marks where one
# verification chain ends, and a turn sent back without it is rejected).
_OWN_MARKERS = ("compaction", "fallback")
# A client tool_use block's fields the events carry; of the others, those the block
# takes back (`ToolUseBlockParam`) are the call's `details`: `caller` (the code execution
# that made a programmatic call, or "direct") and `toolset_name`. Any other is logged.
_TOOL_BACK = ("caller", "toolset_name")
_TOOL_READ = frozenset({"type", "id", "name", "input", *_TOOL_BACK})


class _ToolBlock:
    """A client tool_use block being streamed."""

    __slots__ = ("got_args", "input")

    def __init__(self, input_: Any) -> None:
        self.got_args = False
        self.input = input_


_NO_INPUT = object()


def _input_of(block: dict[str, Any]) -> Any:
    """A call block's `input`, or `_NO_INPUT` without one: JSON null is none either (a
    Go relay's nil map, `Input map[string]any` without omitempty, is written so)."""
    input_ = block.get("input")
    return _NO_INPUT if input_ is None else input_


def _index_of(payload: dict[str, Any]) -> int | None:
    """A block event's `index`, None where it gives none a block can have: absent, or of
    another JSON type (a list, an object, a string, a bool), read as a block event
    without an index is. An index is a key of the open blocks: a value that is no int
    is never hashed nor counted with."""
    index = payload.get("index")
    return index if index.__class__ is int else None


def _not_an_object(kind: str, payload: dict[str, Any], key: str) -> ValueError:
    """An object an event carries that the turn cannot go without (a block event's
    `content_block` or `delta`) is absent or of another JSON type: it cannot be read,
    and the turn ends in a protocol error saying so, never with a part of the answer
    left out unsaid."""
    what = json_type(payload[key]) if key in payload else "missing"
    return ValueError(f"a {kind} event's {key} is {what}, not an object")


def _string(delta: dict[str, Any], key: str) -> str:
    """A piece of a value that is joined at its block's end (a server call's input, a
    signature), checked as it comes: the join would fail on another type with no word
    of which field it was."""
    value = delta[key]
    if value.__class__ is not str:
        raise TypeError(f"the {delta.get('type')}'s {key} is {json_type(value)}, not a string")
    return value


class _ServerBlock:
    """A provider-executed call (server or MCP tool) being streamed."""

    __slots__ = ("block", "call_id", "fragments", "input", "name")

    def __init__(self, call_id: str, name: str, block: dict[str, Any]) -> None:
        self.call_id = call_id
        self.name = name
        self.block = block  # as it started: sent back with its input once complete
        self.input = _input_of(block)
        self.fragments: list[str] = []


class AnthropicNormalizer(Normalizer):
    """Messages stream events -> fragments, one content block index at a time."""

    __slots__ = (
        "called",
        "compacted",
        "compactions",
        "container",
        "counts",
        "ended",
        "message",
        "moved",
        "places",
        "refusal_text",
        "server_names",
        "servers",
        "signatures",
        "stop",
        "tools",
        "unsigned",
        "usage_sent",
    )

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        super().__init__(emit, provider, attempt)
        self.tools: dict[int, _ToolBlock] = {}  # open client tool_use blocks by index
        self.called = False  # a client tool_use block started
        self.unsigned: set[int] = set()  # open thinking blocks with text and no signature
        # open thinking blocks' signature pieces: a block has one signature, however sent
        self.signatures: dict[int, list[str]] = {}
        self.servers: dict[int, _ServerBlock] = {}  # open server tool calls by index
        # open compaction blocks by index: the block as it started, its summary's pieces
        self.compactions: dict[int, tuple[dict[str, Any], list[str]]] = {}
        self.server_names: dict[str, str] = {}  # server call id -> tool name
        self.counts: dict[str, int] = {}
        self.compacted: dict[str, int] = {}  # the compaction iterations' counts
        self.stop: str | None = None
        self.refusal_text: str | None = None  # a refusal explanation already emitted
        self.usage_sent = False
        self.message: str | None = None  # the open message's id ("" for one without)
        self.container: str | None = None  # the code execution container's id (`Done`)
        self.ended: set[int] = set()  # indices of streamed blocks that ended
        self.places = 0  # one past the highest index a streamed block started at
        self.moved: dict[int, int] = {}  # an ended block's index -> the block restarted there

    def on_chunk(self, chunk: RawChunk) -> None:
        payload = self.read_chunk(chunk.data)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object, got {json_type(payload)}")
        kind = payload.get("type")
        if not kind or kind.__class__ is not str:  # a type of no string is none: the SSE name
            kind = chunk.event
        if kind == "content_block_delta":  # (`_index_of` inline: the hot path)
            index = payload.get("index")
            if index.__class__ is not int:
                index = self._latest()
            elif self.moved:  # (one dict test per delta otherwise)
                index = self._at(index)
            delta = payload.get("delta")
            if delta.__class__ is not dict:
                raise _not_an_object(kind, payload, "delta")
            self._delta(index, delta)
        elif kind == "content_block_start":
            index = _index_of(payload)
            index = self.places if index is None else index
            block = payload.get("content_block")
            if block.__class__ is not dict:
                raise _not_an_object(kind, payload, "content_block")
            self._block_start(self._place(index), block)
        elif kind == "content_block_stop":
            index = _index_of(payload)
            index = self._latest() if index is None else self._at(index)
            self._block_stop(index)
            self.ended.add(index)
        elif kind == "ping":
            return
        elif kind == "completion":
            self._completion(payload)
        elif kind == "message_start":
            self._message_start(self._fields(payload, "message"))
        elif kind == "message_delta":
            self._message_delta(payload)
        elif kind == "message_stop":
            # Bedrock's `amazon-bedrock-invocationMetrics` (counts the usage already gave,
            # latencies) rides on it where a relay passes Bedrock's events on.
            self._unread("message_stop", payload, _TYPE_READ)
            if self.stop in _FAILED_STOPS:
                self._held_usage()
                self.fail(
                    "stream_error",
                    f"{self.provider} ended the turn with stop_reason {self.stop!r}",
                    code=self.stop,
                )
                return
            self._end_open()
            if not self.usage_sent and self.counts:
                self._send_usage()
            stop = stop_reason_of(self.stop, STOP_REASONS)
            stop = "tool_use" if stop == "stop" and self.called else stop
            self.done(stop, self.stop, container=self.container)
        elif kind == "error" or chunk.event == "error" or payload.get("error") is not None:
            # (also an error with no type: a proxy's `{"error": "..."}` (TGI's shape) or
            # OpenAI's `{"error": {"message": ...}}`, written where an event would be)
            self._error(payload)
        elif (other := other_api("anthropic", kind, payload)) is not None:
            # (it failed at a chat stream's `[DONE]`, or ended cut short, retried, with
            # no word of what it was; SSE's default event name is no one's)
            self.another_api(
                other,
                payload.get("type"),
                chunk.data,
                "a Messages stream event: this wire reads /v1/messages",
            )
        else:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored an unknown Anthropic event: {}", kind
            )

    def _fields(self, payload: dict[str, Any], key: str) -> dict[str, Any]:
        """An object of an event that the turn can go without (a message's envelope, a
        `message_delta`'s delta, a usage): one of another JSON type is read as one with no
        fields, logged, as an unknown field is; the content blocks still say the answer."""
        value = payload.get(key)
        if value.__class__ is dict:
            return value
        if value is not None:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a {} {} that is no object: {!r}", payload.get("type"), key, value
            )
        return {}

    def _place(self, index: int) -> int:
        """Where a streamed block starts: its index, unless the block that started there
        already ended; then the next place, where `_at` sends that index's deltas too."""
        if index in self.ended:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "block {} started again after it ended: read as block {}", index, self.places
            )
            self.moved[index], index = self.places, self.places
        self.places = max(self.places, index + 1)
        return index

    def _at(self, index: int) -> int:
        """The block a delta or stop names: the one restarted at its index, if any."""
        return self.moved.get(index, index)

    def _latest(self) -> int:
        """The block a delta or stop that names none is for: the one started last (the
        first place when none has started)."""
        return max(self.places - 1, 0)

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta["text"]
            if text:
                self.text(text)
        elif kind == "input_json_delta":
            partial = delta["partial_json"]
            block = self.tools.get(index)
            if block is None:
                server = self.servers.get(index)
                if server is not None:
                    server.fragments.append(_string(delta, "partial_json"))
                elif partial:
                    logger.bind(provider=self.provider, attempt=self.attempt).debug(
                        "ignored an input_json_delta for block {}, which is no call: {!r}",
                        index,
                        partial,
                    )
                return
            if partial:
                block.got_args = True
                self.tool_args(index, partial)
        elif kind == "thinking_delta":
            thinking = delta["thinking"]
            if thinking:
                self.unsigned.add(index)
                self.reasoning(thinking)
        elif kind == "signature_delta":
            signature = delta["signature"]
            if signature:  # an empty one is no signature: the block's end gives it
                self.signatures.setdefault(index, []).append(_string(delta, "signature"))
        elif kind == "citations_delta":
            self._cite(delta["citation"])
        elif kind == "compaction_delta" and index in self.compactions:
            started, summary = self.compactions[index]
            if isinstance(delta.get("content"), str):
                summary.append(delta["content"])
            if delta.get("encrypted_content") is not None:
                started["encrypted_content"] = delta["encrypted_content"]
        else:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored an unknown Anthropic delta: {}", kind
            )
            self._unread(str(kind), delta, _TYPE_READ)

    def _block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == _TEXT:
            citations = block.get("citations")
            for citation in citations if citations.__class__ is list else ():
                self._cite(citation)
            if block.get("text"):
                self.text(block["text"])
        elif kind == _TOOL:
            self.called = True
            self.tools[index] = _ToolBlock(_input_of(block))
            details = {key: block[key] for key in _TOOL_BACK if block.get(key) is not None}
            self.tool_start(  # an id or a name of no string is none
                text_or_none(block.get("id")) or f"toolu_{index}",
                text_or_none(block.get("name")) or "",
                index,
                details=details or None,
            )
            self._unread("tool_use block", block, _TOOL_READ)
        elif kind == _THINKING:
            thinking, signature = block.get("thinking") or "", block.get("signature") or None
            if thinking or signature:
                self.reasoning(thinking, signature=signature)
            if thinking and not signature:
                self.unsigned.add(index)
        elif kind == "redacted_thinking":
            self.reasoning("", signature=block.get("data") or "", redacted=True)
        elif kind in _SERVER_CALLS:
            call_id = text_or_none(block.get("id")) or f"srvtoolu_{index}"
            name = text_or_none(block.get("name")) or ""
            self.server_names[call_id] = name
            self.servers[index] = _ServerBlock(call_id, name, block)
        elif isinstance(kind, str) and kind.endswith(_RESULT):
            call_id = text_or_none(block.get("tool_use_id")) or ""
            name = self.server_names.get(call_id) or kind[: -len(_RESULT)]
            self.server_tool_result(
                call_id,
                name,
                server_result_content(block),
                raw=block,
                is_error=server_result_failed(block),
            )
        elif kind == "fallback":
            served = block.get("to")
            model = served.get("model") if isinstance(served, dict) else None
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "model fallback: {!r} gave way to {!r}", block.get("from"), served
            )
            if isinstance(model, str) and model:
                self.model = model
            self.reasoning("", details=dict(block))  # where it came, for the turn sent back
        elif kind == "compaction":
            content = block.get("content")
            self.compactions[index] = (dict(block), [content] if isinstance(content, str) else [])
        else:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "skipped an unknown Anthropic block: {}", kind
            )
            self._unread(f"{kind} block", block, _TYPE_READ)

    def _block_stop(self, index: int) -> None:
        pieces = self.signatures.pop(index, None)
        if pieces or index in self.unsigned:
            self.unsigned.discard(index)
            self.reasoning("", signature="".join(pieces or ()))
        block = self.tools.pop(index, None)
        if block is not None:
            if block.got_args or block.input is _NO_INPUT:
                self.tool_end(index)
            else:  # the provider's explicit input, e.g. {} for a call without arguments
                self.tool_end(index, json.dumps(block.input, ensure_ascii=False))
            return
        server = self.servers.pop(index, None)
        if server is not None:
            self._server_call(server)
        compaction = self.compactions.pop(index, None)
        if compaction is not None:
            started, summary = compaction
            # "Empty string content is not allowed": a summary that said nothing is None,
            # a failed compaction, which the server takes back as a no-op
            self.reasoning("", details={**started, "content": "".join(summary) or None})

    def _server_call(self, server: _ServerBlock) -> None:
        text = "".join(server.fragments)
        arguments: Any
        if text.strip():
            try:
                arguments = json.loads(text)
            except ValueError:
                arguments = None
        else:
            arguments = {} if server.input is _NO_INPUT else server.input
        if not isinstance(arguments, dict):
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "skipped server tool call {} ({}): its input is not a JSON object: {!r}",
                server.call_id,
                server.name,
                text or server.input,
            )
            return
        raw = {**server.block, "input": arguments}
        self.server_tool_call(server.call_id, server.name, arguments, raw=raw)

    def _cite(self, citation: Any) -> None:
        source = cited_source(citation)
        if source is None:
            log = logger.bind(provider=self.provider, attempt=self.attempt)
            if citation.__class__ is not dict:
                log.debug("skipped a citation that is no object: {!r}", citation)
                return
            log.debug(
                "skipped a {} citation without a url: {}",
                citation.get("type"),
                citation.get("document_title") or citation.get("title") or "",
            )
            return
        self.citation(*source)

    def _completion(self, payload: dict[str, Any]) -> None:
        """A legacy Text Completions event: a piece of the answer, and with a
        `stop_reason` the end of the turn (that stream has no `message_stop`)."""
        self.model = text_or_none(payload.get("model")) or self.model
        self.response_id = text_or_none(payload.get("id")) or self.response_id
        text = payload.get("completion")
        if text:
            self.text(text)
        stop = payload.get("stop_reason")
        if stop:
            self._unread("completion", payload, _COMPLETION_READ)
            self.done(stop_reason_of(stop, STOP_REASONS), stop)

    def _message_start(self, message: dict[str, Any]) -> None:
        message_id = text_or_none(message.get("id")) or ""
        if self.message is not None:
            # The open message's start again (a relay's repeat): nothing new to read.
            # Another message's: two responses spliced, their blocks at the same indices.
            if message_id == self.message or not (message_id and self.message):
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "ignored a repeated message_start: {}", message_id
                )
                return
            self.fail(
                "protocol",
                f"message {message_id} began while message {self.message} was still open: "
                "two responses spliced into one stream",
            )
            return
        self.message = message_id
        self.model = text_or_none(message.get("model")) or self.model
        self.response_id = message_id or self.response_id
        self._count(self._fields(message, "usage"))
        stop = message.get("stop_reason")
        if stop:
            self.stop = stop
        # Blocks already complete (a resumed turn): each read as a start and a stop.
        content = message.get("content")
        for index, block in enumerate(content if content.__class__ is list else ()):
            if isinstance(block, dict):
                self._block_start(index, block)
                self._block_stop(index)
        self._stop_details(message.get("stop_details"))
        self._container(message.get("container"))
        self._unread("message_start", message, _MESSAGE_READ)

    def _message_delta(self, payload: dict[str, Any]) -> None:
        delta = self._fields(payload, "delta")
        stop = delta.get("stop_reason")
        if stop:
            self.stop = stop
        self._stop_details(delta.get("stop_details"))
        self._container(delta.get("container"))
        self._unread("message_delta", payload, _MESSAGE_DELTA_READ)
        self._unread("message_delta", delta, _DELTA_READ)
        self._count(self._fields(payload, "usage"))
        if not stop:  # a relay's running count, the content goes on: usage at the end
            return
        self._end_open()
        if self.counts and self.stop not in _FAILED_STOPS:  # a failure's: at message_stop
            self._send_usage()
        # The content is over: a tool block still open was cut (max_tokens; `_end_open`
        # ended the others). It gets no `tool_end` (that would mark it complete): the end
        # of the turn judges what arrived, and a block that got nothing is missing, not
        # a call without input.
        self.tools.clear()
        for server in self.servers.values():
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "skipped server tool call {} ({}): cut before its content_block_stop",
                server.call_id,
                server.name,
            )
        self.servers.clear()

    def _end_open(self) -> None:
        """The content is over: thinking blocks left open end as at their stop, and so
        does every open block when the model ended the turn itself (a server that
        leaves out the last `content_block_stop`); a block cut by a limit is not."""
        if self.stop is not None and self.stop not in _COMPLETE:
            # A thinking block a refusal or a limit cut before its end, where Anthropic
            # signs it (`signature_delta` just before `content_block_stop`), was never
            # signed: its text stays plain reasoning, no empty signature making it look
            # like a block a compatible server ended unsigned, to be sent back as such.
            self.unsigned.intersection_update(self.signatures)
        open_blocks = {*self.unsigned, *self.signatures}
        if self.stop in _COMPLETE:
            open_blocks.update(self.tools, self.servers, self.compactions)
        for index in sorted(open_blocks):
            self._block_stop(index)

    def _stop_details(self, details: Any) -> None:
        """A refusal's `stop_details`: its explanation is the refusal's text; its other
        fields (the fallback credit to echo on a retry elsewhere, the model recommended
        for it) are logged with their values."""
        if not isinstance(details, dict):
            return
        explanation = details.get("explanation")
        if isinstance(explanation, str) and explanation and explanation != self.refusal_text:
            self.refusal_text = explanation  # a message_delta may repeat message_start's
            self.refusal(explanation)
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "stop details: {} (category {})", details.get("type"), details.get("category")
        )
        self._unread("stop_details", details, _STOP_DETAILS_READ)

    def _container(self, container: object) -> None:
        """The container the turn's code ran in (`{"id": ..., "expires_at": ...}`): its id
        is the `Done`'s, for the next request to name; its other fields (until when that
        id can be named, the skills loaded in it) are logged."""
        if isinstance(container, dict) and isinstance(container.get("id"), str):
            self.container = container["id"]
            self._unread("container", container, _ID_READ)

    def _unread(self, where: str, fields: dict[str, Any], read: frozenset[str]) -> None:
        """Fields no event carries, with their values (a stop sequence,
        context management edits, usage breakdowns): at most a few per turn."""
        for key, value in fields.items():
            if key not in read and value is not None:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "no event carries the {} field {}: {!r}", where, key, value
                )

    def _count(self, usage: dict[str, Any]) -> None:
        if not usage:
            return
        self._unread("usage", usage, _USAGE_READ)
        counts = self.counts
        # With `iterations`, the top level is the final sampling's counts, zeros and all:
        # `message_start` reported the first iteration's (a compaction's cache read),
        # which the compaction iteration already holds.
        iterations = usage.get("iterations")
        exact = isinstance(iterations, list)
        # A zero input beside a cache count is the cache-aware split of an input that
        # `message_start` counted whole (Kimi's and QwenCloud's compatible endpoints:
        # maximhq/bifrost#5355, #5510): the input is all cached, not left unsaid.
        split = any(_count_of(usage.get(wire)) for wire in _CACHE_COUNTS)
        for wire, ours in _USAGE_FIELDS:
            value = _count_of(usage.get(wire))
            if value is not None and (
                value or exact or ours not in counts or (split and wire == "input_tokens")
            ):
                counts[ours] = value
        details = usage.get("output_tokens_details")
        thinking = _count_of(details.get("thinking_tokens")) if isinstance(details, dict) else None
        if thinking is not None:
            counts["reasoning_tokens"] = thinking
        if isinstance(iterations, list):
            compacted: dict[str, int] = {}
            self.compacted = compacted
            for iteration in iterations:
                if isinstance(iteration, dict) and iteration.get("type") == "compaction":
                    for wire, ours in _USAGE_FIELDS:
                        value = _count_of(iteration.get(wire))
                        if value is not None:
                            compacted[ours] = compacted.get(ours, 0) + value

    def _send_usage(self) -> None:
        self.usage_sent = True
        usage = self._counted()
        if usage.total_tokens:  # (zeros everywhere: a placeholder, not a count)
            self.usage(usage)

    def _counted(self) -> Usage:
        counts = self.counts
        if self.compacted:  # compaction's counts, which the top-level ones leave out
            counts = counts.copy()
            for field, value in self.compacted.items():
                counts[field] = counts.get(field, 0) + value
        return Usage.of(**counts)

    def _held_usage(self) -> None:
        """The counts `message_start` gave (the input's), which `message_delta` would
        have completed: the turn fails before it, and they are what it cost so far."""
        if not self.usage_sent and self.counts:
            self.usage_sent = True
            usage = self._counted()
            if usage.total_tokens:  # (zeros everywhere: a placeholder, not a count)
                self.failure_usage(usage)

    def end(self) -> None:  # the body ended before `message_stop`: it is truncated
        self._held_usage()

    def release(self) -> None:  # before an error frame no `_error` could read (plain text)
        self._held_usage()

    def _error(self, payload: dict[str, Any]) -> None:
        self._held_usage()
        raw = json.dumps(payload, ensure_ascii=False)
        error = payload.get("error")
        if error is None and isinstance(payload.get("message"), dict):
            # claude-code-router's bridge (musistudio/llms, its Anthropic transformer)
            # writes Anthropic's error object under `message`, not `error`
            error = payload["message"]
        kind = text_or_none(error.get("type")) if isinstance(error, dict) else None
        if kind is None or not isinstance(error, dict):
            # Not Anthropic's `{"error": {"type", "message"}}`: a proxy's or another
            # server's shape (Google's, a bare string), read as any error body is.
            self.stream_error(payload, raw)
            return
        message = text_or_none(error.get("message")) or kind  # (no string: the raw has it)
        body = parse_error_payload(payload)  # the wait and the `request_id`, as over HTTP
        self.fail(
            "stream_error",
            f"{message} ({kind})",
            # The status the type stands for, else one the error names (a proxy's 5xx).
            status=ERROR_STATUSES.get(kind) or status_in(error),
            code=kind,
            raw=raw,
            retry_after=body.retry_after,
            request_id=body.request_id,
        )


def _media(part: ImagePart) -> dict[str, Any]:
    """An image part as its content block: an `image`, or a `document` for a PDF
    (`ImagePart.pdf`), which the API refuses as an image ("media_type: Input should be
    'image/jpeg', ...")."""
    kind = "document" if part.pdf else "image"
    inline = part.inline
    if inline is None:
        return {"type": kind, "source": {"type": "url", "url": part.url}}
    media_type, data = inline
    # The API checks the type against the bytes ("The image was specified using the
    # image/png media type, but the image appears to be a image/jpeg image"), where
    # OpenAI's reads the bytes: a data URL that says another type, or `image/jpg`,
    # goes with the type its bytes have.
    media_type = PDF if part.pdf else image_type(data) or media_type
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}}


def _blocks(*parts: Part) -> list[dict[str, Any]]:
    """Text and image parts (PDFs too) as content blocks; text that is empty or only
    whitespace is left out (the API rejects it: "text content blocks must contain
    non-whitespace text")."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_media(part))
    return blocks


def _thinking(part: ReasoningPart) -> dict[str, Any] | None:
    """A reasoning part as the thinking block this wire gave it: signed, or with the
    empty signature of a compatible server that signed nothing. A part without a
    signature (None) came from another wire as plain reasoning and cannot be sent: the
    API refuses a thinking block without one. Nor can a part with `details`, which came
    from another wire (a Responses reasoning item, an OpenRouter reasoning detail: a
    history begun elsewhere): its signature is not Claude's."""
    details = part.details
    if details is not None:  # Gemini's are `{}`
        # One of this wire's own blocks that no other event carries, kept unsigned as the
        # reasoning part's details where it came: sent back as it came
        own = part.signature is None and details.get("type") in _OWN_MARKERS
        return dict(details) if own else None
    if part.signature is None:
        return None
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.signature} if part.signature else None
    if part.signature or part.text:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _assistant_blocks(message: Message, ids: CallIds) -> list[dict[str, Any]]:
    """An assistant turn's blocks in the order of its content, each tool call where
    its `after` puts it (else last): with thinking on, the API refuses a turn of tool
    calls sent back without its thinking blocks, or with them moved (a turn that
    thought between its calls, sent back with its thinking first)."""
    placed: dict[int, list[ToolCall]] = {}
    last: list[ToolCall] = []
    for call in message.tool_calls:
        if call.after is not None and call.after < len(message.content):
            placed.setdefault(call.after, []).append(call)
        else:
            last.append(call)
    blocks: list[dict[str, Any]] = []
    for place, part in enumerate(message.content):
        blocks += (_tool_use(call, ids) for call in placed.get(place, ()))
        if isinstance(part, ReasoningPart):
            thinking = _thinking(part)
            if thinking is not None:
                blocks.append(thinking)
        elif isinstance(part, ServerToolPart):
            if _is_own_block(part.block):
                blocks.append(_block_back(part.block))
        else:
            blocks += _blocks(part)
    return blocks + [_tool_use(call, ids) for call in last]


def _is_own_block(block: dict[str, Any]) -> bool:
    """Whether a `ServerToolPart`'s block is one of this wire's (a server or MCP tool
    call, a `*_tool_result`), which the API takes back as it came."""
    kind = block.get("type")
    return kind in _SERVER_CALLS or (isinstance(kind, str) and kind.endswith(_RESULT))


# What the API writes on a `*_tool_result` block but refuses on input.
_RESULT_OUTPUT_ONLY = frozenset({"citations"})


def _block_back(block: dict[str, Any]) -> dict[str, Any]:
    """A server block as the next request sends it: as it came, but for what the API
    writes on a result and refuses back (`_RESULT_OUTPUT_ONLY`)."""
    kind = block.get("type")
    if isinstance(kind, str) and kind.endswith(_RESULT):
        return {key: value for key, value in block.items() if key not in _RESULT_OUTPUT_ONLY}
    return block


def _tool_use(call: ToolCall, ids: CallIds) -> dict[str, Any]:
    block = {
        "type": "tool_use",
        "id": ids.call(call.id),
        "name": call.name,
        "input": call.arguments,
    }
    if call.details:  # the block's own fields, as they came (`_TOOL_BACK`)
        block.update((key, call.details[key]) for key in _TOOL_BACK if key in call.details)
    return block


# What the API accepts as a tool_use id (and so as a tool_result's tool_use_id):
# `^[a-zA-Z0-9_-]+$`, unique in the conversation.
_TOOL_ID_CHARACTERS = "a-zA-Z0-9_-"


def anthropic_messages(messages: list[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    """(system texts, messages in the Messages API shape). Consecutive tool results
    share one user message, as the API expects after a turn with parallel calls. A
    final assistant message (a prefill) has the trailing whitespace of its text
    removed, which the API refuses there."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    ids = CallIds(_TOOL_ID_CHARACTERS)
    results: list[dict[str, Any]] | None = None  # the open tool-result user message
    for message in messages:
        if message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": ids.result(message.tool_call_id),
            }
            if message.images:
                result["content"] = _blocks(*message.content)
            elif message.text.strip():
                result["content"] = message.text
            elif message.is_error:  # "content cannot be empty if is_error is true"
                result["content"] = "error"
            # else no content, which the API takes, where it refuses one that is empty or
            # blank ("text content blocks must be non-empty"): a tool that printed nothing
            if message.is_error:
                result["is_error"] = True
            if results is None:
                results = []
                out.append({"role": "user", "content": results})
            results.append(result)
            continue
        results = None
        if message.role == "system":
            if message.images:  # `system` takes text blocks only: not to be dropped unsaid
                raise ConfigError(
                    "Anthropic's system prompt takes text only: send the system message's "
                    "images in a user message"
                )
            if message.text.strip():
                system.append(message.text)
            continue
        if message.role == "assistant":
            blocks = _assistant_blocks(message, ids)
        else:
            blocks = _blocks(*message.content)
        if blocks:
            out.append({"role": message.role, "content": blocks})
    if out and out[-1]["role"] == "assistant":
        # A prefill: the API refuses one whose text ends in whitespace ("final assistant
        # content cannot end with trailing whitespace"); `_blocks` left out text that was
        # only whitespace, so the text stays.
        last = out[-1]["content"][-1]
        if last["type"] == "text":
            last["text"] = last["text"].rstrip()
    return system, out


# The blocks an assistant turn opens with when thinking is on.
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _unthought_tool_turn(messages: list[dict[str, Any]]) -> int | None:
    """Where (a message index) the assistant turn of an open tool loop begins, when it
    does not begin with a thinking block; None when no tool loop is open (the last
    message holds no `tool_result`) or its turn began with one. A tool loop is one
    assistant turn: it begins at the first assistant message after the last user
    message that is no tool result, and with thinking on it must open with thinking
    ("Toggling thinking modes in conversations")."""
    if not messages or not _has_results(messages[-1]):
        return None
    first = None
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message["role"] == "assistant":
            first = at
        elif not _has_results(message):
            break
    if first is None:
        return None
    blocks = messages[first]["content"]
    opens = blocks[0].get("type") if isinstance(blocks, list) and blocks else None
    return None if opens in _THINKING_BLOCKS else first


def _has_results(message: dict[str, Any]) -> bool:
    content = message["content"]
    return message["role"] == "user" and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


class Anthropic(WireProtocol):
    """The Anthropic Messages wire."""

    name = "anthropic"
    default_base_url = "https://api.anthropic.com/v1"
    api_key_env = "ANTHROPIC_API_KEY"
    system_apart = "all"  # every system message goes in `system`
    recovery = RecoveryPolicy(mandatory_body_keys=frozenset({"max_tokens"}))
    # `tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`: no dots
    # or colons, which `rxllm.Tool` takes for Gemini.
    tool_names = ToolNames(
        re.compile(r"[A-Za-z0-9_-]{1,128}"), "letters, digits, '_' and '-', at most 128 characters"
    )
    request_keys: ClassVar[Mapping[str, str]] = {
        **REQUEST_KEYS,
        "system": "the system prompt is the request's system messages (Message.system)",
    }
    # Anthropic requires `max_tokens`; rxllm writes a default that a user may raise or
    # lower (the key stays in the body either way, as a mandatory key must).
    param_defaults: ClassVar[frozenset[str]] = frozenset({"max_tokens"})
    # The Messages API has no seed or penalties.
    sampling_keys: Mapping[str, str] = {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_tokens",
        "stop": "stop_sequences",
    }

    def url(self, base_url: str, request: ChatRequest) -> str:
        return endpoint(base_url, "/messages")

    def hint(self, error: ErrorInfo, base_url: str) -> str | None:
        # The Messages API is `/v1/messages`; Anthropic's SDKs take a base URL without
        # the version (`ANTHROPIC_BASE_URL=https://api.anthropic.com`), and that one 404s
        # here with a bare "Not Found".
        if error.status != 404 or base_url.partition("?")[0].rstrip("/").endswith("/v1"):
            return None
        return (
            f"the Anthropic base URL ends with its version, /v1 ({self.default_base_url}): "
            f"is base_url={base_url!r} missing it?"
        )

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        system, messages = anthropic_messages(request.messages)
        if not messages:  # the API's 400: "messages: at least one message is required"
            raise ConfigError(
                "anthropic needs a message besides the system prompt, and one that says "
                "something: an empty text is left out"
            )
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": _default_max_tokens(request.params),
            "messages": messages,
        }
        if system:
            body["system"] = (
                system[0] if len(system) == 1 else [{"type": "text", "text": t} for t in system]
            )
        if request.tools:
            body["tools"] = [
                {
                    "name": tool.name,
                    **({"description": tool.description} if tool.description else {}),
                    # `input_schema.type` is required ("Field required" without it).
                    "input_schema": tool.parameters
                    if "type" in tool.parameters
                    else {"type": "object", **tool.parameters},
                }
                for tool in request.tools
            ]
        body["stream"] = True  # this library reads streams only
        return body

    def tool_choice_body(self, choice: str, request: ChatRequest) -> dict[str, Any]:
        """Anthropic's `tool_choice`: `{"type": "auto" | "any" | "none"}`, or
        `{"type": "tool", "name": ...}` for a name.

        Raises:
            ConfigError: a forced choice (`required`, a name) with extended thinking
                on in params, which the API refuses ("Thinking may not be enabled when
                tool_choice forces tool use"): a fallback moves on to another provider.
        """
        if forces_a_call(choice) and thinking_switch(request.params):
            raise ConfigError(
                f"anthropic refuses tool_choice={choice!r} with extended thinking on "
                "(params['thinking']): thinking may not be enabled when tool_choice "
                "forces tool use; use 'auto' or 'none', or turn thinking off"
            )
        if choice == "required":
            return {"tool_choice": {"type": "any"}}
        if choice in TOOL_CHOICE_MODES:
            return {"tool_choice": {"type": choice}}
        return {"tool_choice": {"type": "tool", "name": choice}}

    def response_format_body(
        self, output: Literal["json"] | JsonSchema, request: ChatRequest
    ) -> dict[str, Any]:
        """Anthropic's JSON outputs: `output_config.format`, `{"type": "json_schema",
        "schema": ...}` (generally available, no beta header; the beta's `output_format`
        is deprecated), joining an `output_config` given in params (its `effort`). The
        format holds the schema alone, in the form Anthropic takes (`_closed_schema`): no
        name, no description, no `strict` (the answer always follows the schema, by
        constrained decoding).

        Raises:
            ConfigError: `"json"`: Anthropic has no JSON mode without a schema (the format's
                one type is `json_schema`, and its objects must say
                `additionalProperties: false`, so `{"type": "object"}` would allow only
                `{}`): a fallback moves on to another provider.
        """
        if output == "json":
            raise ConfigError(
                "anthropic has no JSON mode without a schema: output_config.format takes "
                "a JSON Schema only; give response_format a JsonSchema (a name and a "
                "schema), or a pydantic model class"
            )
        given = request.params.get("output_config")
        config = dict(given) if isinstance(given, Mapping) else {}
        config["format"] = {"type": "json_schema", "schema": _closed_schema(output.schema_)}
        return {"output_config": config}

    def add_params(self, body: dict[str, Any], params: Mapping[str, Any]) -> None:
        """Params as top-level keys, but `disable_parallel_tool_use`, a setting of the
        `tool_choice` object (a top-level one is refused: "Extra inputs are not
        permitted"), which a `tool_choice` in params would be `ChatRequest.tool_choice`
        set twice: it joins the tool choice written (`{"type": "auto"}` where the request
        has tools and none was given), and is left out of `{"type": "none"}`, which has no
        such setting and calls nothing.

        Thinking on, with an open tool loop whose assistant turn began without a
        thinking block (`_unthought_tool_turn`), is left out of the body: Anthropic's
        "If thinking is enabled, the final assistant turn must start with a thinking
        block"."""
        if "disable_parallel_tool_use" in params:
            params = dict(params)
            flag = params.pop("disable_parallel_tool_use")
            choice = params.get("tool_choice")
            if choice is None and ("tools" in body or "tools" in params):
                choice = {"type": "auto"}
            if not isinstance(choice, Mapping):
                params["disable_parallel_tool_use"] = flag  # no tools: the API's own word
            elif choice.get("type") != "none":
                params["tool_choice"] = {**choice, "disable_parallel_tool_use": flag}
        super().add_params(body, params)
        if thinking_switch(body):
            turn = _unthought_tool_turn(body["messages"])
            if turn is not None:
                # The turn's calls were made without thinking here (another provider's,
                # before a fallback; a history begun elsewhere): thinking cannot start
                # mid-turn. The API refused it ("Expected `thinking` or
                # `redacted_thinking`, but found `tool_use`"); its 2026 docs say it turns
                # thinking off for such a request itself. Off here, on every platform,
                # and on again at the next user message.
                logger.info(
                    "thinking left out of this request: the open tool loop's assistant "
                    "turn (messages[{}]) begins without a thinking block",
                    turn,
                )
                del body["thinking"]

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> AnthropicNormalizer:
        return AnthropicNormalizer(emit, provider, attempt)


# What Anthropic's JSON outputs refuse in a schema ("Numerical constraints", "String
# constraints", "Array constraints beyond `minItems` of 0 or 1": a 400), which its SDKs
# move into the description, where the model may still follow them.
_UNSUPPORTED_CONSTRAINTS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)


def _closed_schema(schema: Any) -> Any:
    """A JSON Schema in the form Anthropic's JSON outputs take: every object closed
    (`additionalProperties` "must be set to `false` for objects", and a pydantic model's
    schema says nothing), the constraints it refuses moved into the description. An
    `additionalProperties` the schema sets is kept: a 400 then says why."""
    if isinstance(schema, list):
        return [_closed_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    closed: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNSUPPORTED_CONSTRAINTS or (key == "minItems" and value not in (0, 1)):
            moved[key] = value
        elif key in ("properties", "$defs", "definitions", "patternProperties"):
            closed[key] = (
                {name: _closed_schema(sub) for name, sub in value.items()}
                if isinstance(value, Mapping)
                else value
            )
        elif key in ("items", "prefixItems", "anyOf", "allOf", "oneOf", "not"):
            closed[key] = _closed_schema(value)
        else:
            closed[key] = value
    kind = closed.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    if (is_object or "properties" in closed) and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    if moved:
        said = ", ".join(f"{key}: {json.dumps(value)}" for key, value in moved.items())
        description = closed.get("description")
        closed["description"] = f"{description}\n\n{{{said}}}" if description else f"{{{said}}}"
    return closed
