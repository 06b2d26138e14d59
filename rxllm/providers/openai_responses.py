"""OpenAI Responses streaming: typed output items and one JSON event per SSE event.

Request: `POST {base}/responses` with `stream: true`; the conversation goes in `input`
as typed items (messages, `function_call`, `function_call_output`, and an assistant
turn's `reasoning` items, each right before an item of its turn), leading
system text in `instructions`; a request that continues a response the API holds
(`previous_response_id` or `conversation` in params) sends only what follows the last
assistant turn (`responses_input`). Response: events whose JSON `type` names them
(`response.output_text.delta`, `response.function_call_arguments.delta`, ...). The
`event:` line repeats the type on OpenAI's wire but not on OpenRouter's, so only the
JSON `type` is read. The stream ends with `response.completed`, `response.incomplete`
or `response.failed` (or the older `response.done`, read as `response.completed`; an
`error` event may come first; the usage a failed response carries comes before its
error, as the failure's own: `FailureUsage`); there is no `[DONE]`, though OpenRouter sends one
after the terminal event. An `error` event (or a proxy's type-less `{"error": ...}`, or
AWS's type-less `{"message": ...}` that ends a Bedrock Mantle stream) is
`error(kind="stream_error")`, its fields read at the top level or nested in `error`; one
with no `event: error` line that comes before any output is held until the stream says
more, since OpenRouter's may go on after it (its TypeScript SDK fails only a stream that
never completes): another event but a failure goes on, the error logged; the end of the
body ends in it; an `event: error` frame this reading does not end (a payload with no
type it knows, a bare message, no data) is read as any error body is
(`Normalizer.error_frame`).

Output items, by type (the decisions of this module):

- `message`: text and refusal deltas as they come. A part that had no deltas arrived
  whole: its text is emitted at its `response.output_text.done` (`refusal.done`), its
  `response.content_part.done`, or else at the message's `output_item.done`, once; a
  part that had deltas is never emitted again. Text a `response.content_part.added`
  already holds (empty on OpenAI's wire; TanStack AI's mocks of it) is emitted at the
  terminal if none of these said the part. The parts that streamed are the done
  item's first parts, in order, whatever their `content_index` (vLLM's gpt-oss stream
  numbers parts on across items). A message's `phase` (gpt-5.3-codex and later:
  `commentary`, `final_answer`), from its added item or else its done item, goes on its
  text (`TextDelta.phase`), and each run of text of one phase goes back as a message
  item of its own with that phase (`_said`).
- `reasoning`: summary (and reasoning text) deltas as they come, each part apart from
  the one before (summary part 0 and reasoning-text part 0 are two parts); a part that
  had no deltas arrived whole: its text is emitted at its own `.done` event
  (`reasoning_summary_text.done`, `reasoning_summary_part.done`,
  `reasoning_text.done`, `content_part.done`, or vLLM's `reasoning_part.done`), once.
  An item that had no part at all arrived whole: its `summary` texts (else its
  `content` texts) are emitted at its `output_item.done`; the parts that streamed are
  its first parts, in order, whatever their index. A part index that moves on with
  every delta, no part closed between them, counts deltas (vLLM's simple path): one
  part.
  That item ends with one more delta: its `encrypted_content` as the signature, its
  other fields (`id`, `summary`, ...) as `details`, which the request builder sends
  back as the item.
- `compaction` (server-side compaction's opaque context): kept as a reasoning item
  is, an empty delta at its `output_item.done` with its `encrypted_content` as the
  signature and its other fields as `details`; the request builder sends it back after
  the turn's other items, where OpenAI's response puts it ("For stateless input-array
  chaining, append output items as usual", the compaction guide).
- `function_call`: a `tool_request` (below). A call seen only at its `output_item.done` is
  started and ended there; argument events with no call begun at their output index (a
  background stream resumed with `starting_after` past its `output_item.added`, a server
  that sends none) are logged and left out, as custom tool input is, and the call is read
  whole from its done item, else the terminal's output. The arguments of the first done
  event (`function_call_arguments.done`, `output_item.done`) are authoritative; an empty
  or absent `arguments` there (a proxy's) leaves the streamed deltas as the arguments, and
  an object sent in place of the JSON text is taken as its text. A call named `parallel`
  (`PARALLEL_WRAPPERS`) is held until its arguments are whole: when they are the
  `multi_tool_use.parallel` wrapper, `{"tool_uses": [{"recipient_name":
  "functions.<tool>", "parameters": {...}}, ...]}`, which gpt-5.4 sometimes sends in
  place of parallel calls (vercel/ai#19067), each wrapped call is a `tool_request` of its
  own (call id `<call_id>_<n>`, the wrapper's output index); otherwise the call is
  requested as it came, and one still open at the terminal is ended there as any call.
  A call added without its `call_id` (the id its answer must name) or without its name
  (upstreams of TanStack AI's OpenAI-compatible Responses adapter, which name it in a
  second `output_item.added`, its `output_item.done` or only the terminal's output) is
  held too, its argument events kept, until an item names it: its done item, else the
  terminal response's item; then it is started and ended under that call_id and name,
  with the arguments of its first done event. One no item names goes by its item id.
  A call added whole (`status: completed` at its `output_item.added`: Perplexity's
  Agent API, which streams no argument events) is read at its done item, which says
  whose it is: a `function_call` done item is the client's call; another item done at
  its output index is the result of a tool the provider ran (Perplexity's `search_web`
  call, then its `search_results` item, without an id, in the call's place): a
  `server_tool_call` named and with the arguments of the call, its `server_tool_result`
  that item (minus its id), and a `citation` for each page in its `results` (or
  `contents`), as vercel/ai's Perplexity provider reads them. One that no done item
  answers is read from the terminal's output, else requested as it came.
- Items that ask the client to act (`CLIENT_ITEMS`: `computer_call`, `shell_call`,
  `local_shell_call`, `apply_patch_call`, `custom_tool_call`, `mcp_approval_request`, and
  a `tool_search_call` whose `execution` is `client`) are `tool_request`s too, so an agent
  loop never stalls on them: `tool_start` at `output_item.added` (or at `.done` when no
  added was seen; a client tool search always at `.done`, whose `call_id` replaces the one
  gpt-5.4 gave at added and is the one its answer names), `tool_end` at `output_item.done`
  with that item's JSON as authoritative. Arguments: the item minus `id`, `type`,
  `call_id` and what only the output says (`status`, `created_by`), with a JSON-object
  string in `arguments` (an MCP approval's) parsed. The name keeps the item's type
  recoverable: a `custom_tool_call`'s own `name` (a tool the client declared, at the top
  level or in a `namespace` tool: `custom_tool_names`), the item type for the others
  (`mcp_approval_request` keeps the MCP tool's `name` in the arguments). call_id: the
  item's `call_id`, else its `id` (an approval is answered by `approval_request_id` = that
  id). A custom tool call's input streams as text (`custom_tool_call_input.delta`, whole
  at `.done`): the done item's `input` is authoritative; a done item without one (a
  proxy's) takes the streamed input, and so does a call whose done item never came, once
  its input is marked done or the response completed (free text cannot say it was cut off,
  as a function call's JSON does); otherwise the call is malformed. The item's type
  decides what its input events are: function-call argument events about a custom tool
  call (LiteLLM's bridge streams its input as them, JSON-wrapped as `{"content": ...}`)
  are logged and left out, its done item's `input` the call's. A `shell_call` whose
  `environment` is a hosted container (any type but `local`) is run by OpenAI: a
  provider-run item (below).
- Items the provider runs itself (`SERVER_ITEMS`: `web_search_call`, `file_search_call`,
  `code_interpreter_call`, `mcp_call`, `mcp_list_tools`, `image_generation_call`, a
  `program` of programmatic tool calling, whose calls of client tools are function
  calls, a server-executed `tool_search_call`, a hosted `shell_call`) are never
  `tool_request`s:
  `server_tool_call` once its input is known, as the Anthropic wire shows a server
  tool at its block's end (an added item carries none: a web search's `action`, a file
  search's `queries` and a call's `code` come only later): at
  `code_interpreter_call_code.done` (the code, with the added item's `container_id`),
  at `mcp_call_arguments.done` (the arguments, with its `server_label` and `name`), else
  at the item's `output_item.done`, right before its result. Name = the item type,
  arguments = the input fields (`action` without the `sources` it found, `queries`,
  `code`, `container_id`, `server_label`, `name`, `arguments` parsed; empty values left
  out); the input's deltas are not read, its done event repeats them (a shell call's
  `shell_call_command.*` and a hosted one's `shell_call_output_content.*`: their items'
  done events repeat them whole). Then
  `server_tool_result` at `output_item.done` with content = the whole done item minus
  `id` and `type` (its `status`, `results`, `outputs`, `output`, `error`, `tools`,
  `result`, and the final input such as a web search's `action`), `is_error` when its
  status is `failed` (or Tinfoil's `blocked`) or it has an `error`
  (`server_item_failed`). A
  `tool_search_output` item is the result of a server tool search (of the latest one
  when, as OpenAI sends both, it has no `call_id`), a `shell_call_output` item that of
  a hosted shell call (a local shell's output is the client's, never in a response's
  output), a `program_output` item that of its `program` (by its `call_id`: the program
  may have begun in an earlier turn, its client calls answered since). Progress events
  (`response.<item type>.<status>`: `response.web_search_call.searching`,
  `response.image_generation_call.partial_image`, ...) and a field's streaming events
  (`response.<item type>_<field>.<event>`: `apply_patch_call_operation_diff.delta`) add
  nothing: each type logged at debug, once a stream (`PROGRESS_OF`), as audio output's
  bytes are.
- xAI's Responses stream its server-side tools as items of its own (`x_search_call`,
  `code_execution_call`, `view_image_call`, `view_x_video_call`: provider-run items) and
  as `custom_tool_call`s of the sub-tools those run (`XAI_SERVER_TOOLS`:
  `x_keyword_search`, `view_x_video`, ...; call ids `xs_call_...`), which the same
  response answers itself: a custom tool call of one of those names is provider-run,
  named by its `name`, and its `server_tool_call` waits for its done item, the first
  to hold its `input` (parsed, as vercel/ai's xAI provider reads these items).
- Audio output: `response.audio.transcript.delta` (what the model says, of no output
  item) is text, as the chat wire's `delta.audio.transcript` is; its `.done` repeats
  nothing (a whole `transcript` there is the text when no delta came). The audio's
  bytes have no event.
- `url_citation` annotations become `citation` events (url, title), from
  `response.output_text.annotation.added` (`response.output_text_annotation.added`, the
  name the API streamed in March 2025) or from the message's `output_text` parts at
  `output_item.done`, each once (keyed by output item, part, url and range).
  `cited_text` stays empty, as on the Gemini wire: `start_index`/`end_index` mark the
  answer's own text (often the link itself), not text quoted from the source.
  Other annotation types (`file_citation`, `container_file_citation`, `file_path`)
  have no event and are logged at debug.
- The terminal response (`response.completed`, `response.incomplete`) holds every
  output item, each matched to an item the stream showed (added, done or with deltas):
  the one of its id, else the first of its type not yet matched, in order (vLLM builds
  `output` again with fresh ids, not always at the output indexes it streamed). A
  matched item already done is not read again; one whose `output_item.done` never came
  (an event lost on the way, or never sent: vLLM's last gpt-oss item) is read there as
  its done event would have been, at the output index it streamed at. A function call
  already started is left to the terminal to end, as any call not marked done (its
  streamed JSON says whether it is whole); any other call started, a custom tool call
  or an item that asks the client to act (which streams no input: the item is its
  arguments), is read from a completed response's item. An item
  the stream never showed (a server that streams only the terminal response, a call
  vLLM streamed as text) is read at its position.
- An event about an item is read at its own output index, unless no item was shown
  there and its item id was seen at another; then the events without an id that follow
  there are read at that other index too (vLLM's gpt-oss stream of late 2025 sent an
  item's done events one output index on from its deltas, a call's done item without
  its id).
- An event without an `output_index` (llama.cpp's server numbers none) is about the item
  its item id names (a function call without an `id` is named by its `call_id`), else
  the latest item; an item added or done without one that no id places is a new item.
- An event that names another item by its id than the one already done at its output
  index begins that item there (LiteLLM's bridge streams the message after its reasoning
  item at output index 0, without an `output_item.added`).
- A terminal `response.completed` whose response says `status: "incomplete"` (vLLM's,
  for a response cut by its token limit) is read as `response.incomplete`.
- An `output_item.added` at the output index of an item already done, for another
  item (Ollama's parallel calls in separate chunks, vLLM's gpt-oss message after its
  reasoning), starts that index afresh: what was kept of the done item is dropped. So
  does one for another item than one still open there, both named by their ids
  (Ollama adds a chunk's calls at the index of the message before them, never done).
  A message so displaced that is closed later by its id at that index (Portkey's
  Responses adapter closes it at the end, with the text that streamed) is closed as
  itself (`displaced`): its parts already shown are not said again, and the item there
  now is not marked done. A function call added at the output index of another call
  still open there, both named by their ids, is read at an output index of its own (the
  next past every index shown), where each event that names it by its id goes: Helicone's
  AI Gateway writes every item of a chat turn at output index 0, adds each call when its
  first chat fragment comes (a chat chunk may name every call before any arguments) and
  streams each call's arguments and done events under its item id. Each call keeps its
  own arguments, whatever the order of their events. An argument event there without an
  item id is the latest call's still open there (each call added before its arguments);
  a `function_call_arguments.done` without one while several are open ends none (logged),
  each call's `output_item.done` names it.
- An `output_item.added` or `.done` whose `item` is null, absent, empty or of no type a
  string names names no item and begins or ends none (logged); the items around it are
  read as they are (openai-python's stream keeps them, `test_null_output_items.py`), and
  the terminal's output says what the item was.
- A value of another JSON type than the streaming events reference gives (a list, an
  object, a number, a bool) fails no turn on a field the turn can go without: an
  event's `type` of no string is none (logged and skipped, or the error a type-less
  payload holds); an item's `type` of no string is none (`_type_of`: an item of a type
  unknown here, logged); an `output_index` of no int (a bool too) is none, a
  `content_index` or `summary_index` of no int is 0 (`_position`); a call id, a name or
  a model of no string is none; a response, its `incomplete_details`, a usage or its
  details, annotations, and a reasoning item's summary or content, of another type,
  say nothing. A call's done `arguments` of another JSON type than a string are its
  JSON text: an array, a number or a bool is no object, `malformed_tool_arguments`
  naming the call. Text, argument and signature pieces of no string end the turn in a
  `protocol` error naming them.
- `sequence_number` counts the events of a response from 0: a number that is not the
  one after the last (an event lost or repeated on the way) is logged at debug; the
  events that did arrive are read as they are.
- An event of another API's stream (`rxllm.providers.wire_signs.other_api`: a chat
  chunk's `choices`, Anthropic's Messages events, a Gemini chunk's `candidates`) ends
  the turn at once in a `protocol` error naming that API and the provider that reads it:
  a base URL or a relay's route that speaks another wire, whose every event is as
  unreadable. Each was logged and the turn ended cut short, retried, with no word of
  what it was.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import parse_error_payload, status_in
from rxllm.errors import ConfigError
from rxllm.events import StopReason, Usage
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import (
    REQUEST_KEYS,
    Normalizer,
    WireProtocol,
    endpoint,
    json_schema_fields,
    stop_reason_of,
    text_or_none,
)
from rxllm.providers.call_ids import CallIds
from rxllm.providers.openai_chat import (
    OPENAI_TOOL_NAMES,
    PARALLEL_WRAPPERS,
    arguments_object,
    function_parameters,
    pdf_file,
    usage_cost,
    wrapped_calls,
)
from rxllm.providers.wire_signs import json_type, other_api
from rxllm.request import (
    TOOL_CHOICE_MODES,
    ChatRequest,
    ImagePart,
    JsonSchema,
    Message,
    ReasoningPart,
    TextPart,
    ToolCall,
)

__all__ = [
    "CLIENT_ITEMS",
    "SERVER_ITEMS",
    "OpenAIResponses",
    "ResponsesNormalizer",
    "responses_input",
    "responses_usage",
    "tool_namespaces",
]

# `incomplete_details.reason` -> stop reason; anything else is `other`, the raw kept.
INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}

# Reasoning parts (summary paragraphs, reasoning-text parts, reasoning items) arrive as
# separate pieces; joined with a blank line, as OpenAI's and pydantic-ai's clients show
# them, so that the record's reasoning reads as paragraphs and not one run-on line.
REASONING_PART_SEPARATOR = "\n\n"

# Lifecycle and bookkeeping events that carry nothing the normalized stream needs (the
# `.done` events repeat what was streamed as deltas). Others are logged at debug.
_IGNORED = frozenset(
    {
        "response.in_progress",
        "response.queued",
        "response.reasoning_summary_part.added",
        "response.reasoning_part.added",  # vLLM's, for a reasoning-text part
        # a provider-run call's input, whole at its done event (`_server_input_done`)
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call.code.delta",  # the older name
        "response.mcp_call_arguments.delta",
        "response.mcp_call.arguments_delta",  # the older name
        # a shell call's commands and a hosted one's output: its `output_item.done` (and
        # its `shell_call_output` item's) repeats them whole
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
    }
)


# Items that ask the client to act: each is a tool_request (module docstring).
CLIENT_ITEMS = frozenset(
    {
        "computer_call",
        "shell_call",
        "local_shell_call",
        "apply_patch_call",
        "custom_tool_call",
        "mcp_approval_request",
    }
)
# Items the provider runs itself: server_tool_call, then server_tool_result.
SERVER_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
        "image_generation_call",
        "program",
        # xAI's
        "x_search_call",
        "code_execution_call",
        "view_image_call",
        "view_x_video_call",
    }
)
# What an item's progress events (`response.<item type>.<status>`:
# `response.web_search_call.searching`, `response.image_generation_call.partial_image`,
# `response.mcp_list_tools.failed`, `response.compaction.compacting`, ...) and the events
# streaming one of its fields (`response.<item type>_<field>.<event>`:
# `response.apply_patch_call_operation_diff.delta`) say, its done item says whole; audio
# output's bytes (`response.audio.delta`, `.done`) have no event. Each such type is known,
# logged at debug once a stream (`_unread`).
PROGRESS_OF = SERVER_ITEMS | CLIENT_ITEMS | {"tool_search_call", "compaction", "audio"}
_FIELD_OF = tuple(f"{kind}_" for kind in sorted(PROGRESS_OF))
# The sub-tools xAI's server-side web search, X search and code execution run, which its
# Responses stream shows as `custom_tool_call` items (vercel/ai's xAI provider, the names
# it reads as provider-executed; `view_x_video` in its x-search fixture): from a Grok
# model, a custom tool call of one of these is xAI's to run. Not from another model: an
# OpenAI client may declare a custom tool of its own named `web_search`.
XAI_SERVER_TOOLS = frozenset(
    {
        "web_search",
        "web_search_with_snippets",
        "browse_page",
        "x_user_search",
        "x_keyword_search",
        "x_semantic_search",
        "x_thread_fetch",
        "view_image",
        "view_x_video",
        "code_execution",
    }
)
# The fields of a provider-run item that say what it was asked to do.
SERVER_INPUT_FIELDS = (
    "action",
    "queries",
    "code",
    "container_id",
    "server_label",
    "name",
    "arguments",
    "input",
)
# What an output item says of itself and its input item does not take: its `status`
# (a reasoning item's among them: "Unknown parameter: 'input[1].status'",
# BerriAI/litellm#13420) and who created it (`created_by`, "The ID of the entity that
# created this tool call": a shell or apply_patch call's). Sent back,
# the API refuses the whole request.
_OUTPUT_ONLY = frozenset({"status", "created_by"})
_NOT_ARGUMENTS = frozenset({"id", "type", "call_id"}) | _OUTPUT_ONLY
# Output items that carry the result of a provider-run call -> that call's item type (a
# `program_output` answers a program of programmatic tool calling, often one begun in
# an earlier turn, whose client calls were answered since).
SERVER_OUTPUTS = {
    "tool_search_output": "tool_search_call",
    "shell_call_output": "shell_call",
    "program_output": "program",
}


def _type_of(item: Mapping[str, Any]) -> str | None:
    """An item's (or a part's) `type`, None for one of no string: a list or an object
    names no type, is compared with none and hashed nowhere, and the item is read as one
    of a type unknown here (logged), as a wire's new item types are."""
    kind = item.get("type")
    return kind if kind.__class__ is str else None


def _position(payload: Mapping[str, Any], key: str = "content_index") -> int:
    """A place an event gives (a part's `content_index` or `summary_index`, an annotation's
    `start_index` or `end_index`): 0 when absent, and for a value of another type, read as
    absent (a key of the parts shown and the citations said, never hashed nor counted
    with as it came)."""
    position = payload.get(key, 0)
    return position if position.__class__ is int else 0


def _fields(value: Any) -> dict[str, Any]:
    """A wire object the turn can go without (a usage, its details, a response's
    envelope): one of another type has no fields."""
    return value if value.__class__ is dict else {}


def _array(value: Any) -> list[Any]:
    """A wire array (annotations, summary parts, results); none for another type."""
    return value if value.__class__ is list else []


def _call_id_of(item: Mapping[str, Any], index: int) -> str:
    """The id an item's call goes by: its `call_id`, else its `id`, else one made of its
    output index; an id of no string is none."""
    return text_or_none(item.get("call_id")) or text_or_none(item.get("id")) or f"call_{index}"


def _parsed(value: Any) -> Any:
    """A JSON-object string as the object; anything else as it is."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def client_item_arguments(item: dict[str, Any]) -> dict[str, Any]:
    """The arguments of an item that asks the client to act: the item minus `id`,
    `type`, `call_id` and what only the output says (`status`, `created_by`; and a custom
    tool's `name`, which is the event's), with a JSON-object string in `arguments`
    parsed."""
    out = {key: value for key, value in item.items() if key not in _NOT_ARGUMENTS}
    if _type_of(item) == "custom_tool_call":
        out.pop("name", None)
    if "arguments" in out:
        out["arguments"] = _parsed(out["arguments"])
    return out


def server_item_arguments(item: dict[str, Any]) -> dict[str, Any]:
    """What a provider-run item was asked to do: its input fields. A web search's
    `action` leaves out the `sources` it found, which are its result (pydantic-ai's
    reading, `_map_web_search_tool_call`)."""
    out: dict[str, Any] = {}
    for key in SERVER_INPUT_FIELDS:
        value = item.get(key)
        if value in (None, "", [], {}):
            continue
        if key in ("arguments", "input"):
            value = _parsed(value)
        elif key == "action" and isinstance(value, dict) and "sources" in value:
            value = {k: v for k, v in value.items() if k != "sources"}
        out[key] = value
    return out


_FAILED_ITEM = ("failed", "blocked")  # a tuple: a status that is no string is not hashed
"""The statuses of a provider-run item whose tool gave no result: `failed` (a web or file
search's, code interpreter's, image generation's, MCP call's), and Tinfoil's `blocked`:
its safeguard refused the query before the search ran ("blocks queries containing
sensitive information before they're sent to Exa. The model still responds, just
without search results", docs.tinfoil.sh/guides/web-search), the frame's `reason` says
why, and its own client lists such searches apart (`blocked_searches`, tinfoil-go's
websearch_test.go) as Anthropic's `*_tool_result_error` is told from a result.
`incomplete` is the response's cut, not the tool's failure."""


def server_item_failed(item: dict[str, Any]) -> bool:
    """Whether a provider-run item's done form says its tool failed: its `status`
    (`_FAILED_ITEM`) or an `error` (an MCP call's or tool listing's, a string, null when
    it worked)."""
    return item.get("status") in _FAILED_ITEM or item.get("error") not in (None, "", {})


def server_name(item: dict[str, Any]) -> str:
    """A provider-run item's tool name: its type, or an xAI custom tool call's `name`."""
    kind = _type_of(item) or ""
    return (text_or_none(item.get("name")) or kind) if kind == "custom_tool_call" else kind


def _a_result(item: dict[str, Any]) -> bool:
    """Whether an item done where a call added whole was is that call's result: an item
    of no kind the wire reads (Perplexity's `search_results`). A message, reasoning or
    another call done at the same index is itself (a server that reuses indices)."""
    kind = _type_of(item)
    return kind not in ("message", "reasoning", "function_call") and item_kind(item) is None


def item_kind(item: dict[str, Any], grok: bool = False) -> str | None:
    """`client`, `server` or None (another item) for an output item; `grok`: the
    response is a Grok model's (`XAI_SERVER_TOOLS`)."""
    kind = _type_of(item)
    if kind == "shell_call":  # run in a hosted container unless its environment is local
        environment = item.get("environment")
        if isinstance(environment, dict) and environment.get("type") not in (None, "local"):
            return "server"
    if grok and kind == "custom_tool_call" and text_or_none(item.get("name")) in XAI_SERVER_TOOLS:
        return "server"
    if kind in CLIENT_ITEMS:
        return "client"
    if kind in SERVER_ITEMS:
        return "server"
    if kind == "tool_search_call":
        return "client" if item.get("execution") == "client" else "server"
    return None


def responses_usage(raw: dict[str, Any]) -> Usage:
    """Normalize a Responses usage object: cached input apart (OpenAI counts it inside
    `input_tokens`), reasoning counted once (`output_tokens` already includes it).
    xAI's does not always count the cache inside (grok-4-1-fast-non-reasoning: 4,328
    cached of an `input_tokens` of 4,142, vercel/ai#12485): a cache larger than the
    input, or a `total_tokens` that adds it to the input and output, is apart from it.
    The cost is OpenRouter's `cost` (USD), Perplexity's `cost.total_cost` or xAI's
    `cost_in_usd_ticks`."""
    details = _fields(raw.get("input_tokens_details"))
    cost = usage_cost(raw)
    usage = Usage.of(  # the counts read whole, the cache apart from the input
        input_tokens=raw.get("input_tokens") or 0,
        output_tokens=raw.get("output_tokens") or 0,
        reasoning_tokens=_fields(raw.get("output_tokens_details")).get("reasoning_tokens") or 0,
        cache_read_tokens=details.get("cached_tokens") or 0,
        cache_write_tokens=details.get("cache_write_tokens")
        or details.get("cache_creation_input_tokens")  # Perplexity's (Anthropic's name)
        or 0,
        cost_usd=float(cost) if cost is not None else None,
    )
    cache = usage.cache_read_tokens + usage.cache_write_tokens
    if cache and cache <= usage.input_tokens and raw.get("total_tokens") != usage.total_tokens:
        # OpenAI's reading: the input holds the cache
        update = {
            "input_tokens": usage.input_tokens - cache,
            "total_tokens": usage.total_tokens - cache,
        }
        usage = usage.model_copy(update=update)
    return usage


def _input_text(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text or len(message.content) == 1:
                parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            if part.pdf:
                parts.append({"type": "input_file", **pdf_file(part, by_url=True)})
            else:
                image = {"type": "input_image", "image_url": part.url}
                parts.append({**image, "detail": part.detail or "auto"})
    return parts


# What answers each item that asks the client to act, in the next request's input.
ANSWER_ITEMS = {
    "computer_call": "computer_call_output",
    "shell_call": "shell_call_output",
    "local_shell_call": "local_shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "tool_search_call": "tool_search_output",
    "mcp_approval_request": "mcp_approval_response",
}


# Client items whose input form requires the `status` their arguments leave out (openai-python
# `ApplyPatchCall`, `LocalShellCall`, `ResponseComputerToolCallParam`): a call is requested
# once its item is done, so it goes back `completed`.
STATUS_REQUIRED = frozenset({"apply_patch_call", "local_shell_call", "computer_call"})

_FLAT_RESPONSE_KEYS = frozenset({"status", "model", "usage", "output", "error"})
"""A terminal's response fields written beside its `type`, with no `response` object:
Perplexity's `response.failed` (its SDK's ResponseFailedEvent: `error` alone) and its
Agent API's `response.completed` in prism-php's fixture (`status`, `usage`, `output`)."""


def custom_tool_names(tools: Iterable[Any]) -> frozenset[str]:
    """The names of the custom tools offered: at the top level, and inside a `namespace`
    tool, which "Groups function/custom tools under a shared namespace" (its
    `namespace_tool.py`). Their calls are `custom_tool_call`s, and go back as such."""
    found: set[str] = set()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        members = tool.get("tools") if tool.get("type") == "namespace" else [tool]
        for member in members if isinstance(members, list) else ():
            if isinstance(member, dict) and member.get("type") == "custom":
                found.add(str(member.get("name")))
    return frozenset(found)


def tool_namespaces(tools: Iterable[Any]) -> dict[str, str]:
    """The namespace of each function that a `namespace` tool groups (`{"type":
    "namespace", "name": "crm", "tools": [...]}`), by the function's name: the one its
    call item names in `namespace`, which the API requires back ("Missing namespace for
    function_call ... Round-trip the model's function_call item with its namespace
    field included"). A name that does not say its namespace alone (grouped under two,
    or also a tool of its own) is left out."""
    found: dict[str, str | None] = {}
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        space, members = tool.get("name"), tool.get("tools")
        if tool.get("type") != "namespace" or not isinstance(members, list):
            if isinstance(space, str):
                found[space] = None
            continue
        for member in members:
            name = member.get("name") if isinstance(member, dict) else None
            if isinstance(name, str):
                found[name] = space if name not in found and isinstance(space, str) else None
    return {name: space for name, space in found.items() if space is not None}


def _call_item(
    call: ToolCall, call_id: str, custom_tools: frozenset[str], namespaces: Mapping[str, str]
) -> dict[str, Any]:
    """An assistant's tool call as the item the model sent, under `call_id` (its id as
    the API takes it back, `CallIds`): a `function_call` (with the `namespace` of the
    tool it called, `tool_namespaces`), or the client-actionable item its name stands for
    (`client_item_arguments` reversed)."""
    if call.name in custom_tools:
        return {"type": "custom_tool_call", "call_id": call_id, "name": call.name, **call.arguments}
    if call.name == "mcp_approval_request":  # answered by its id, its arguments as text
        fields = dict(call.arguments)
        if isinstance(fields.get("arguments"), dict):
            fields["arguments"] = json.dumps(fields["arguments"])
        return {"type": call.name, "id": call.id, **fields}
    if call.name in STATUS_REQUIRED:
        return {"type": call.name, "call_id": call_id, "status": "completed", **call.arguments}
    if call.name in ANSWER_ITEMS:
        return {"type": call.name, "call_id": call_id, **call.arguments}
    item = {"type": "function_call", "call_id": call_id, "name": call.name}
    if call.name in namespaces:
        item["namespace"] = namespaces[call.name]
    return {**item, "arguments": call.arguments_json}


def _answer_item(kind: str, message: Message, call_id: str | None) -> dict[str, Any]:
    """A tool message as the item that answers a call of this `kind` (`call_id`: its
    call's id as sent, `CallIds`): a JSON object's fields are the answer item's own
    (`output`, `status`, `approve`...), anything else is its `output` text. A function's
    or custom tool's result with images is a list of `input_text` and `input_image`
    parts, which their `output` takes. An apply_patch output requires its `status`: the
    answer's own, else `failed` for a failed call (`is_error`), `completed` otherwise."""
    text = message.text
    if kind in ("function_call", "custom_tool_call") and message.images:
        return {"type": f"{kind}_output", "call_id": call_id, "output": _input_text(message)}
    if kind == "function_call":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    fields = _parsed(text)
    if not isinstance(fields, dict):
        fields = {"output": text}
    if kind == "apply_patch_call":
        fields = {"status": "failed" if message.is_error else "completed", **fields}
    if kind == "mcp_approval_request":  # by the request item's own id, as it came
        return {**fields, "type": ANSWER_ITEMS[kind], "approval_request_id": message.tool_call_id}
    return {**fields, "type": ANSWER_ITEMS[kind], "call_id": call_id}


def _reasoning_item(part: ReasoningPart, stored: bool) -> dict[str, Any] | None:
    """A reasoning part that came from a Responses reasoning item, as that item: its
    own fields (`id`, `summary`, ...) and its signature as `encrypted_content`. Any
    other part is not one: the API takes an item only by its `id`. Without `store`
    the API keeps nothing to look the id up in ("Items are not persisted when `store`
    is set to false ... remove this item from your input"), so an item without its
    encrypted content is left out then. Its `status` is the output's (`_OUTPUT_ONLY`)."""
    details = part.details
    if not details or details.get("type") != "reasoning" or not details.get("id"):
        return None
    if part.signature is None and not stored:
        return None
    # `summary` is required, even when empty; what only the output says is refused
    item = {"summary": [], **{k: v for k, v in details.items() if k not in _OUTPUT_ONLY}}
    if part.signature is not None:
        # Sent by its content, without its id, as codex sends it: an item named by its id
        # is checked against the stored item that followed it (`_paired`).
        del item["id"]
        item["encrypted_content"] = part.signature
    return item


def _said(message: Message) -> list[dict[str, Any]]:
    """An assistant turn's text as its message items: one for each run of text parts of
    one phase with nothing else between them (a preamble before the calls, the answer),
    each with its `phase` (gpt-5.4 and later take a preamble sent back without it for a
    final answer: "preserve and resend phase on all assistant messages")."""
    runs: list[tuple[str | None, list[str]]] = []
    open_run = False  # the last part was text: a text part of its phase joins its run
    for part in message.content:
        if not isinstance(part, TextPart):
            open_run = False
        elif part.text:
            if open_run and runs[-1][0] == part.phase:
                runs[-1][1].append(part.text)
            else:
                runs.append((part.phase, [part.text]))
            open_run = True
    said = []
    for phase, texts in runs:
        # `annotations` is required in an `output_text` part (strict validators, vLLM and
        # Azure's, reject the part without it; OpenAI's tolerates that).
        content = [{"type": "output_text", "text": "".join(texts), "annotations": []}]
        item: dict[str, Any] = {"type": "message", "role": "assistant", "content": content}
        if phase is not None:
            item["phase"] = phase
        said.append(item)
    return said


def _compaction_item(part: ReasoningPart) -> dict[str, Any] | None:
    """A part that came from a `compaction` item, as that item: its encrypted content,
    which the API requires, without its id (sent by its content, as a reasoning item
    is); None for any other part."""
    details = part.details
    if not details or details.get("type") != "compaction" or part.signature is None:
        return None
    return {"type": "compaction", "encrypted_content": part.signature}


def _paired(
    reasoning: list[dict[str, Any]], message: list[dict[str, Any]], calls: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A turn's items as they go back, its reasoning items among them. The API refuses a
    reasoning item "provided without its required following item": one followed by
    another reasoning item (openai/codex#1235), and one named by its `id` (stored, no
    encrypted content) followed by a message that does not carry its own `msg_` id
    (mastra-ai/mastra#11103, which passes with the id rxllm does not keep), while a call
    after it passes without one.

    - Sent by their content (encrypted, without ids, as codex sends them), reasoning
      items go where a model writes them: the n-th before the n-th of the message and
      the calls, the turn's reasoning kept even without calls (newer models use the
      reasoning of earlier turns: OpenAI's "preserved reasoning").
    - Named by their ids, the message goes first and each reasoning item right before a
      call (parallel calls follow one); a turn without calls sends none.

    The earliest reasoning items beyond what they can precede are left out."""
    if all("id" not in item for item in reasoning):
        return _each_before(reasoning, [*message, *calls])
    return [*message, *_each_before(reasoning, calls)]


def _each_before(
    reasoning: list[dict[str, Any]], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`items` with the n-th (latest) reasoning item right before the n-th item."""
    kept = reasoning[max(len(reasoning) - len(items), 0) :] if items else []
    out: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        if n < len(kept):
            out.append(kept[n])
        out.append(item)
    return out


def responses_input(
    messages: list[Message],
    custom_tools: frozenset[str] = frozenset(),
    stored: bool = True,
    namespaces: Mapping[str, str] | None = None,
    chained: bool = False,
) -> tuple[str | None, list[dict[str, Any]]]:
    """(instructions, input items) of a conversation: the leading system messages
    become `instructions`; a system message later on stays in place as an item. A call
    that came from an item asking the client to act goes back as that item, and its
    tool message as the item answering it (`custom_tools`: the names of the custom
    tools offered, `custom_tool_names`, and of those a client tool search's answer
    loaded, whose calls are `custom_tool_call`s); a function call with the namespace of
    its tool (`namespaces`, `tool_namespaces`: of the tools offered, and of those a
    client tool search's answer loaded). An assistant turn's reasoning items go
    back, each before an item of its turn (`_paired`), so that a reasoning model keeps
    its reasoning across tool calls (`stored`: whether the request lets the API store
    its items, `store`), and its compaction items after them.

    `chained`: the request continues a response the API holds (`previous_response_id`,
    or a `conversation`), which holds every item up to and including its output: only
    the items after the last assistant turn go, as the API refuses one it holds again
    ("Duplicate item found with id mcpr_... Remove duplicate items from your input")."""
    namespaces = dict(namespaces or {})
    leading: list[str] = []
    items: list[dict[str, Any]] = []
    held = 0  # how many items the API holds when `chained`: those up to the last turn
    kinds: dict[str, str] = {}  # call id -> the item type that carried the call
    # Each call once (the API refuses "Duplicate function_call_output for call_id"), at
    # most 64 characters: a history's Gemini calls may repeat `{name}_{index}` from turn
    # to turn (rxllm tags them per response now; older records did not).
    ids = CallIds(longest=64)
    for message in messages:
        role = message.role
        if role == "system":
            if not items:
                if message.images:  # `instructions` is a string: not to be dropped unsaid
                    raise ConfigError(
                        "the Responses instructions take text only: send the system "
                        "message's images in a user message"
                    )
                leading.append(message.text)
            else:
                items.append({"type": "message", "role": "system", "content": _input_text(message)})
        elif role == "user":
            items.append({"type": "message", "role": "user", "content": _input_text(message)})
        elif role == "assistant":
            said = _said(message)
            calls: list[dict[str, Any]] = []
            for call in message.tool_calls:
                item = _call_item(call, ids.call(call.id), custom_tools, namespaces)
                kinds[call.id] = item["type"]
                calls.append(item)
            kept = [part for part in message.content if isinstance(part, ReasoningPart)]
            reasoning = [found for part in kept if (found := _reasoning_item(part, stored))]
            items += _paired(reasoning, said, calls)
            # the compacted context after the turn's items, where the response put it
            items += [found for part in kept if (found := _compaction_item(part))]
            held = len(items)
        else:  # tool
            kind = kinds.get(message.tool_call_id or "", "function_call")
            answer = _answer_item(kind, message, ids.result(message.tool_call_id))
            if kind == "tool_search_call":  # the tools it loaded, namespaces among them
                loaded = answer.get("tools") or ()
                namespaces |= tool_namespaces(loaded)
                custom_tools |= custom_tool_names(loaded)
            items.append(answer)
    return ("\n\n".join(leading) if leading else None), items[held:] if chained else items


def _key(item: dict[str, Any]) -> str | None:
    """What names an output item in the events about it: its id, else its call id
    (llama.cpp's function calls have no id; their argument deltas name the call id)."""
    key = item.get("id") or item.get("call_id")
    return key if isinstance(key, str) else None


def _code_of(error: dict[str, Any]) -> str | None:
    """The error's code, or its type where it has no code."""
    code = error.get("code") or error.get("type")
    return code if isinstance(code, str) else None


@dataclass(slots=True)
class _Shown:
    """An output item the stream showed: where, of what type, under which id, and
    whether its `output_item.done` came."""

    index: int
    kind: str
    item_id: str | None
    done: bool = False


@dataclass(slots=True)
class _Held:
    """A function call held back from the stream: a parallel wrapper until its arguments
    are whole (`PARALLEL_WRAPPERS`), a call added without its `call_id` or its name until
    an item names it (`named`), with the arguments its `function_call_arguments.done` gave
    (`marked`) in the meantime."""

    call_id: str
    name: str
    named: bool
    pieces: list[str] = field(default_factory=list)  # the argument deltas
    marked: bool = False
    arguments: Any = None


def _match_shown(shown: list[_Shown], output: list[Any]) -> list[_Shown | None]:
    """For each item of a terminal response's `output`, the item the stream showed that it
    is: the one of its id, else the first of its type not yet matched, in order (a server
    may build `output` again with fresh ids, at other output indexes than it streamed:
    vLLM's); None for an item the stream never showed."""
    left = list(shown)
    matched: list[_Shown | None] = [None] * len(output)
    for by_id in (True, False):
        for position, item in enumerate(output):
            if matched[position] is not None or not isinstance(item, dict):
                continue
            found = next(
                (
                    s
                    for s in left
                    if (s.item_id is not None and s.item_id == item.get("id"))
                    or (not by_id and s.kind == item.get("type"))
                ),
                None,
            )
            if found is not None:
                matched[position] = found
                left.remove(found)
    return matched


def _begins(shown: _Shown, item_id: str | None, event: str | None) -> bool:
    """Whether an event at an output index begins another item there than `shown`, the
    item shown there: the event names another item than one already done (by its added
    or done event, or by its item id: LiteLLM's bridge streams a message after its
    reasoning item at the same output index, with no added event); or its added event
    names another item than one still open (Ollama numbers the calls of a chunk from
    the output index of the message before them, which it never marks done)."""
    if item_id == shown.item_id:
        return False
    if shown.done:
        return event is not None or item_id is not None
    return event == "added" and item_id is not None and shown.item_id is not None


class ResponsesNormalizer(Normalizer):
    """Responses events -> fragments, dispatched on the JSON `type`.

    A function call is keyed by its `output_index` (unique in a response): it starts at
    `output_item.added` and ends at `function_call_arguments.done`, whose full text is
    authoritative, or at its `output_item.done`, whichever comes first. Encrypted
    reasoning is kept as a signature, taken from the item's `output_item.done` (OpenAI
    re-encrypts it there) or else from its `output_item.added`; the delta that carries
    it ends the item, with the item's other fields as `details` (its `id` above all),
    so that the item goes back in the next request's input as it came.
    """

    __slots__ = (
        "added_parts",
        "call_types",
        "calls",
        "cited",
        "custom_done",
        "custom_inputs",
        "displaced",
        "handlers",
        "held",
        "held_error",
        "homes",
        "ids",
        "moved",
        "parts",
        "phases",
        "progress",
        "reasoned_parts",
        "reasoning_counted",
        "reasoning_items",
        "reasoning_part",
        "reasoning_run",
        "sequence",
        "server_calls",
        "server_items",
        "shown",
        "shown_at",
        "stacked",
        "transcribed",
        "whole_calls",
    )

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        super().__init__(emit, provider, attempt)
        self.calls: dict[int, bool] = {}  # output_index -> ended
        # output_index -> the type of the item each call began from: an event that streams
        # a call's input is read for a call of its own type only (`_begun`)
        self.call_types: dict[int, str] = {}
        # The input each custom tool call streamed (output_index -> its pieces, or the
        # whole input of its `custom_tool_call_input.done`), and the calls that had one.
        self.custom_inputs: dict[int, list[str]] = {}
        self.custom_done: set[int] = set()
        # reasoning items added and not yet done: output_index -> the added item
        self.reasoning_items: dict[int, dict[str, Any]] = {}
        # (output_index, "summary" or "text", part index) of the last reasoning part shown
        self.reasoning_part: tuple[int, str, int] | None = None
        self.reasoned_parts: set[tuple[int, str, int]] = set()  # the parts shown
        # The deltas the last part shown had, none once a `.done` event closed it (a part
        # that had one delta, never closed, may be a counter's: `_reasoning_delta`).
        self.reasoning_run = 0
        # the part keys a counter named (`_reasoning_delta`): the part before them goes on
        self.reasoning_counted: set[tuple[int, str, int]] = set()
        self.sequence: int | None = None  # the last sequence_number
        self.server_calls: dict[int, str] = {}  # output_index -> call_id, server tools shown
        # provider-run items added, their call not yet shown: output_index -> the added item
        self.server_items: dict[int, dict[str, Any]] = {}
        # function calls held back (parallel wrappers, calls not yet named): output_index
        # -> the call (`_Held`)
        self.held: dict[int, _Held] = {}
        # an `error` event before any output, until the stream says whether it went on
        self.held_error: dict[str, Any] | None = None
        # the text a part's `content_part.added` already held (TanStack AI's mocks of
        # OpenAI's): (output_index, content_index) -> the text, said at the terminal
        # unless something else said the part (deltas, its done event, its item's)
        self.added_parts: dict[tuple[int, int], str] = {}
        # function calls added whole, read at their done item (`_item_added`):
        # output_index -> the added item
        self.whole_calls: dict[int, dict[str, Any]] = {}
        # The (output_index, content_index) of each part that had deltas (or came whole at
        # its own `.done`): which parts of a done message were already shown.
        self.parts: set[tuple[int, int]] = set()
        # Messages another item was added over while still open (`_begins`), by item id:
        # the content index of each of their parts already shown. Portkey's Responses
        # adapter adds a call at its message's output index, then closes that message
        # there, by its id, with the text that streamed (`_displaced`).
        self.displaced: dict[str, set[int]] = {}
        # Function calls added at the output index of another call still open there, by
        # item id: the output index each is read at (`_own_index`).
        self.homes: dict[str, int] = {}
        # The output index given to several calls open at once -> the output indexes they
        # are read at, the latest added last: where an event without an item id goes
        # (`_call_index`).
        self.stacked: dict[int, list[int]] = {}
        # The `phase` of each message that named one (gpt-5.4: commentary, final_answer),
        # by output index: its text carries it.
        self.phases: dict[int, str] = {}
        self.cited: set[tuple[Any, ...]] = set()
        self.transcribed = False  # whether the audio's transcript streamed (`_transcript`)
        self.progress: set[str] = set()  # the progress event types logged (`_unread`)
        # The items the stream showed, in the order first seen (the terminal response's
        # `output` repeats them: `_finish`), the latest at each output index, the output
        # index where each item id was first seen, and where events were moved (`_index`).
        self.shown: list[_Shown] = []
        self.shown_at: dict[int, _Shown] = {}
        self.ids: dict[str, int] = {}
        self.moved: dict[int, int] = {}  # output index of nothing shown -> the item's
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "response.output_text.delta": self._text,
            "response.refusal.delta": self._refusal,
            "response.reasoning_summary_text.delta": self._reasoning_summary,
            "response.reasoning_text.delta": self._reasoning_text,
            "response.reasoning_summary_text.done": self._reasoning_summary_done,
            "response.reasoning_summary_part.done": self._reasoning_summary_part_done,
            "response.reasoning_text.done": self._reasoning_text_done,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.custom_tool_call_input.delta": self._custom_input_delta,
            "response.custom_tool_call_input.done": self._custom_input_done,
            "response.output_text.done": self._text_done,
            "response.refusal.done": self._refusal_done,
            "response.content_part.added": self._part_added,
            "response.content_part.done": self._content_part_done,
            # vLLM's for a reasoning-text part: `content_part.done`'s shape
            "response.reasoning_part.done": self._content_part_done,
            "response.output_text.annotation.added": self._annotation,
            # the name it had on the wire in March 2025 (weave's web_search_preview cassette)
            "response.output_text_annotation.added": self._annotation,
            "response.audio.transcript.delta": self._transcript,
            "response.audio.transcript.done": self._transcript_done,
            "response.code_interpreter_call_code.done": partial(self._server_input_done, "code"),
            "response.code_interpreter_call.code.done": partial(self._server_input_done, "code"),
            "response.mcp_call_arguments.done": partial(self._server_input_done, "arguments"),
            "response.mcp_call.arguments_done": partial(self._server_input_done, "arguments"),
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.created": self._created,
            "response.completed": self._completed,
            # the older name some servers end with (vercel/ai's xAI provider reads both)
            "response.done": self._completed,
            "response.incomplete": self._incomplete,
            "response.failed": self._failed,
            "error": self._error,
        }

    def on_chunk(self, chunk: RawChunk) -> None:
        data = chunk.data
        if data == "[DONE]":  # OpenRouter's, after the terminal event; not a terminal itself
            return
        payload = self.read_chunk(data)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object, got {json_type(payload)}")
        kind = payload.get("type")
        if kind.__class__ is not str:  # a type of no string (a list, an object) names none
            kind = None
        number = payload.get("sequence_number")
        if number.__class__ is int:
            if self.sequence is not None and number != self.sequence + 1:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "sequence_number {} after {}: {}",
                    number,
                    self.sequence,
                    f"{number - self.sequence - 1} event(s) missing"
                    if number > self.sequence
                    else "an event repeated or out of order",
                )
            self.sequence = number
        held = self.held_error
        if held is not None:
            self.held_error = None
            if self._ends_in(held, kind):
                return
        elif kind == "error" and not self.shown and chunk.event != "error":
            # Before any output, OpenRouter's stream (no `event:` lines) may go on after
            # an `error` event (a provider it fell back from): its SDK fails only a
            # stream that never completes. Held until the next event or the end
            # (`_ends_in`, `end`). OpenAI's `event: error` frame ends the turn.
            self.held_error = payload
            return
        handler = self.handlers.get(kind) if kind is not None else None
        if handler is not None:
            handler(payload)
        elif kind is None and payload.get("error"):
            self._error(payload)  # a proxy's bare `{"error": ...}` (`false` says no error)
        elif kind is None and payload.keys() == {"message"}:
            # AWS's typeless error object, a Bedrock Mantle stream's terminal frame
            # (vercel/ai's normalize-responses-error-frames): read as any error body is.
            self.stream_error(payload, data)
        elif (other := other_api("openai-responses", kind, payload)) is not None:
            # (each was logged, the turn ended cut short and retried, with no word of
            # what it was)
            self.another_api(
                other, kind, data, "a Responses stream event: this wire reads /v1/responses"
            )
        elif kind is None:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored a Responses event whose type is no string: {!r}", payload.get("type")
            )
        elif kind not in _IGNORED:
            self._unread(kind)

    def _unread(self, kind: str) -> None:
        """An event read by no handler: an item's progress, a field of it streamed, audio
        bytes (`PROGRESS_OF`), known and logged once a stream; else of a type unknown
        here, logged each time."""
        if kind in self.progress:
            return
        log = logger.bind(provider=self.provider, attempt=self.attempt)
        parts = kind.split(".")
        of = parts[1] if len(parts) == 3 and parts[0] == "response" else ""
        if of in PROGRESS_OF or of.startswith(_FIELD_OF):
            self.progress.add(kind)
            log.debug("{!r} has no event", kind)
        else:
            log.debug("ignored a Responses event of unknown type {!r}", kind)

    # -- which item -------------------------------------------------------------------

    def _index(self, payload: dict[str, Any], item_id: Any = None) -> int:
        """The output index of the item an event is about: its own, unless no item was
        shown there and its item id was seen at another, and then for the events without
        an id that follow there too (vLLM's gpt-oss stream of late 2025 sent an item's
        done events one output index on from its deltas, a call's done item without
        its id)."""
        item_id = item_id if item_id is not None else payload.get("item_id")
        if self.homes and item_id.__class__ is str and item_id in self.homes:
            return self.homes[item_id]
        index = payload.get("output_index")
        if index.__class__ is not int:  # unnumbered (llama.cpp's), or of no int: by its id
            known = self.ids.get(item_id) if isinstance(item_id, str) else None
            return known if known is not None else (self.shown[-1].index if self.shown else 0)
        if index in self.shown_at:
            return index
        if isinstance(item_id, str) and item_id in self.ids:
            self.moved[index] = self.ids[item_id]
        return self.moved.get(index, index)

    def _item_index(self, payload: dict[str, Any], item: dict[str, Any]) -> int:
        """The output index of an added or done item: its own (a done item's as `_index`
        reads it); unnumbered (llama.cpp's), the index of its id, else the next free one."""
        index = payload.get("output_index")
        if index.__class__ is int:
            added = payload.get("type") == "response.output_item.added"
            return index if added else self._index(payload, _key(item))
        known = self.ids.get(_key(item) or "")
        return known if known is not None else max(self.shown_at, default=-1) + 1

    def _show(self, index: int, kind: Any, item_id: Any = None, event: str | None = None) -> _Shown:
        """The item shown at `index`: the one there, or a new one when none was or the
        event begins another item there (`_begins`; `event`: "added" or "done" for an
        item's own added or done event). What was kept of the item before is dropped then
        (`_forget`)."""
        shown = self.shown_at.get(index)
        item_id = item_id if isinstance(item_id, str) and item_id else None
        # (the ids alike, as on every delta of the item there: no call on the hot path)
        if shown is None or (item_id != shown.item_id and _begins(shown, item_id, event)):
            if shown is not None:
                if not shown.done and shown.kind == "message" and shown.item_id is not None:
                    said = {key[1] for key in self.parts if key[0] == index}
                    self.displaced[shown.item_id] = said
                self._forget(index)
            shown = _Shown(index, str(kind), item_id)
            self.shown.append(shown)
            self.shown_at[index] = shown
        if item_id is not None:
            self.ids.setdefault(item_id, index)
        return shown

    # -- content ----------------------------------------------------------------------

    def _part(self, payload: dict[str, Any]) -> None:
        index = self._index(payload)
        self._show(index, "message", payload.get("item_id"))
        self.parts.add((index, _position(payload)))

    def _text(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        self._part(payload)
        if delta:
            if self.phases:  # (the hot path of every stream without phases asks no more)
                self._say(self._index(payload))(delta)
            else:
                self.text(delta)

    def _say(self, index: int) -> Callable[[str], None]:
        """How the text of the message at output `index` is emitted: with its phase."""
        phase = self.phases.get(index)
        return self.text if phase is None else partial(self.text, phase=phase)

    def _refusal(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        self._part(payload)
        if delta:
            self.refusal(delta)

    def _transcript(self, payload: dict[str, Any]) -> None:
        """Audio output: what the model says, in the transcript beside the audio (no output
        item holds either); the turn's text, as the chat wire reads `delta.audio.transcript`.
        The audio's bytes (`response.audio.delta`) have no event."""
        delta = payload.get("delta")
        if delta:
            self.transcribed = True
            self.text(delta)

    def _transcript_done(self, payload: dict[str, Any]) -> None:
        """The transcript's end: OpenAI's carries nothing but its type; a whole `transcript`
        there (the Realtime API's `response.audio_transcript.done` has one) is the text
        only when no delta came, as a part's `.done` is."""
        whole = payload.get("transcript")
        if not self.transcribed and isinstance(whole, str) and whole:
            self.transcribed = True
            self.text(whole)

    def _text_done(self, payload: dict[str, Any]) -> None:
        self._part_done(payload, payload.get("text"), self._say(self._index(payload)))

    def _refusal_done(self, payload: dict[str, Any]) -> None:
        self._part_done(payload, payload.get("refusal"), self.refusal)

    def _part_added(self, payload: dict[str, Any]) -> None:
        """A part begins: empty on OpenAI's wire; text it already holds is kept, to be
        said at the terminal if nothing else says the part (`added_parts`)."""
        part = payload.get("part")
        if not isinstance(part, dict) or part.get("type") != "output_text":
            return
        whole = part.get("text")
        if isinstance(whole, str) and whole:
            index = self._index(payload)
            self._show(index, "message", payload.get("item_id"))
            self.added_parts[(index, _position(payload))] = whole

    def _content_part_done(self, payload: dict[str, Any]) -> None:
        """The part whole, as its own `.done` event gives it: once more what came before
        (deltas, `output_text.done`), or the part itself if nothing did."""
        part = payload.get("part")
        if not isinstance(part, dict):
            return
        kind = part.get("type")
        if kind == "output_text":
            self._part_done(payload, part.get("text"), self._say(self._index(payload)))
            for annotation in _array(part.get("annotations")):
                self._annotation({**payload, "annotation": annotation})
        elif kind == "refusal":
            self._part_done(payload, part.get("refusal"), self.refusal)
        elif kind == "reasoning_text":
            if self._of_a_message(payload):
                # LiteLLM's chat-to-Responses bridge (until litellm's
                # test_streaming_event_order.py) put the turn's reasoning once more in
                # its message's part, the message a "ghost" after a turn of calls: a
                # message holds no reasoning on this wire, and the reasoning item said it.
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "a reasoning_text part of a message item is not read"
                )
                return
            self._reasoning_part_done(self._reasoning_key(payload, "text"), part.get("text"))

    def _of_a_message(self, payload: dict[str, Any]) -> bool:
        """Whether an event is about the message item shown at its output index (the
        one its item id names, where it names one)."""
        shown = self.shown_at.get(self._index(payload))
        item_id = payload.get("item_id")
        return (
            shown is not None
            and shown.kind == "message"
            and (not isinstance(item_id, str) or shown.item_id in (None, item_id))
        )

    def _part_done(self, payload: dict[str, Any], whole: Any, emit: Callable[[str], None]) -> None:
        """A part's `.done` repeats its deltas; a part that had none arrived whole."""
        index = self._index(payload)
        said = self._displaced(index, payload.get("item_id")) if self.displaced else None
        if said is not None:  # said where it streamed, else now: once either way
            position = _position(payload)
            if position not in said:
                said.add(position)
                if isinstance(whole, str) and whole:
                    emit(whole)
            return
        key = (index, _position(payload))
        if key in self.parts:
            return
        self._show(index, "message", payload.get("item_id"))
        self.parts.add(key)
        if isinstance(whole, str) and whole:
            emit(whole)

    def _annotation(self, payload: dict[str, Any]) -> None:
        annotation = payload.get("annotation")
        if isinstance(annotation, dict):
            self._cite((self._index(payload), _position(payload)), annotation)

    def _cite(self, part: tuple[int, int], annotation: dict[str, Any]) -> None:
        if annotation.get("type") != "url_citation":
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "an annotation of type {!r} has no event", annotation.get("type")
            )
            return
        url = annotation.get("url")
        if not isinstance(url, str) or not url:
            return
        # its range tells it apart (a key: a bound of no int is 0, never hashed)
        key = (*part, url, _position(annotation, "start_index"), _position(annotation, "end_index"))
        if key in self.cited:
            return
        self.cited.add(key)
        title = annotation.get("title")
        self.citation(url, title if isinstance(title, str) else None)

    def _reasoning_key(self, payload: dict[str, Any], which: str) -> tuple[int, str, int]:
        """(output index, "summary" or "text", part index) of a reasoning part's event."""
        index = self._index(payload)
        self._show(index, "reasoning", payload.get("item_id"))
        part = _position(payload, "summary_index" if which == "summary" else "content_index")
        return (index, which, part)

    def _reasoning_summary(self, payload: dict[str, Any]) -> None:
        self._reasoning_delta(self._reasoning_key(payload, "summary"), payload.get("delta"))

    def _reasoning_text(self, payload: dict[str, Any]) -> None:
        self._reasoning_delta(self._reasoning_key(payload, "text"), payload.get("delta"))

    def _reasoning_summary_done(self, payload: dict[str, Any]) -> None:
        key = self._reasoning_key(payload, "summary")
        self._reasoning_part_done(key, payload.get("text"))

    def _reasoning_summary_part_done(self, payload: dict[str, Any]) -> None:
        part = payload.get("part")
        key = self._reasoning_key(payload, "summary")
        self._reasoning_part_done(key, part.get("text") if isinstance(part, dict) else None)

    def _reasoning_text_done(self, payload: dict[str, Any]) -> None:
        self._reasoning_part_done(self._reasoning_key(payload, "text"), payload.get("text"))

    def _reasoning_part_done(self, key: tuple[int, str, int], whole: Any) -> None:
        """A part's `.done` events repeat its deltas; a part that had none arrived whole."""
        if key not in self.reasoned_parts and isinstance(whole, str):
            self._reasoning_delta(key, whole)
        if key == self.reasoning_part:
            self.reasoning_run = 0  # closed

    def _reasoning_delta(self, key: tuple[int, str, int], delta: Any) -> None:
        if not delta:
            return
        self.reasoned_parts.add(key)
        last = self.reasoning_part
        if key == last:
            self.reasoning_run += 1
        else:
            # vLLM's simple Responses path numbers each reasoning-text delta's
            # `content_index` on (vllm-project/vllm#35184): a part that had one delta and
            # was never closed, followed by the next index of the same item, is counted
            # deltas of one part, not a new paragraph.
            counted = (
                last is not None
                and self.reasoning_run == 1
                and key[:2] == last[:2]
                and key[2] == last[2] + 1
            )
            if counted:
                self.reasoning_counted.add(key)
            elif last is not None:
                delta = REASONING_PART_SEPARATOR + delta
            self.reasoning_part = key
            self.reasoning_run = 1
        self.reasoning(delta)

    # -- output items and function calls ----------------------------------------------

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = self._item_of(payload)
        if item is None:
            return
        kind = _type_of(item)
        index = self._item_index(payload, item)
        if kind == "function_call":
            index = self._own_index(index, _key(item))
        self._show(index, kind, _key(item), event="added")
        if kind == "function_call":
            if item.get("status") == "completed":
                # Added whole (Perplexity's Agent API): its done item says whose call it
                # is; Perplexity replaces a search it runs itself by its results there.
                self.whole_calls[index] = item
            else:
                self._start_call(index, item)
        elif kind == "reasoning":
            self.reasoning_items[index] = item
        elif kind == "message":
            self._phase(index, item)
        else:
            acts = item_kind(item, self._grok())
            if acts == "client" and kind != "tool_search_call":
                # a client tool search is started at its done item: gpt-5.4 gives it
                # another call_id there, the one its answer must name
                self._start_call(index, item)
            elif acts == "server":  # shown once its input is known (`_server_input_done`)
                self.server_items[index] = item

    def _phase(self, index: int, item: dict[str, Any]) -> None:
        phase = item.get("phase")
        if isinstance(phase, str) and phase:
            self.phases[index] = phase

    def _forget(self, index: int) -> None:
        """Another item begins at the output index of the one before it (`_begins`):
        what was kept of that item is dropped, so that the new one is read afresh there."""
        for table in (
            self.calls,
            self.call_types,
            self.custom_inputs,
            self.server_calls,
            self.server_items,
            self.reasoning_items,
            self.held,
            self.phases,
            self.whole_calls,
        ):
            table.pop(index, None)
        self.custom_done.discard(index)
        self.added_parts = {key: text for key, text in self.added_parts.items() if key[0] != index}
        self.parts = {key for key in self.parts if key[0] != index}
        self.reasoned_parts = {key for key in self.reasoned_parts if key[0] != index}

    def _displaced(self, index: int, item_id: Any) -> set[int] | None:
        """The parts already shown of a message another item was added over while it
        was open (`displaced`), when an event names it by its id at an output index now
        another item's; None for any other event."""
        said = self.displaced.get(item_id) if isinstance(item_id, str) else None
        if said is None:
            return None
        shown = self.shown_at.get(index)
        return None if shown is None or shown.item_id == item_id else said

    def _own_index(self, index: int, item_id: str | None) -> int:
        """The output index a function call added at `index` is read at: its own, unless
        another call is still open there (both named by their ids), which it would end
        before that call's arguments came; then the next past every index shown, which
        the events that name it by its id are read at (`homes`, `_index`)."""
        home = self.homes.get(item_id) if item_id is not None else None
        if home is not None:  # added again
            return home
        shown = self.shown_at.get(index)
        stacked = self.stacked.get(index)
        if (
            shown is None
            or shown.done
            or shown.kind != "function_call"
            or shown.item_id is None
            or item_id is None
            or item_id == shown.item_id
        ):
            if stacked is not None and index in stacked:  # a call begins there again
                stacked.remove(index)
                stacked.append(index)
            return index
        home = self.homes[item_id] = max(self.shown_at) + 1
        self.stacked.setdefault(index, [index]).append(home)
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "function call {!r} added at output index {}, where call {!r} is still open:"
            " read at output index {}",
            item_id,
            index,
            shown.item_id,
            home,
        )
        return home

    def _call_index(self, payload: dict[str, Any], done: bool = False) -> int | None:
        """The output index of the call an event streaming a call's arguments is about
        (`_index`). Without an item id, at an output index several calls were added at
        (`stacked`): a delta is the latest call's still open there (each call was added
        before its arguments); a done event, which may end any of them, only when one is
        open, else none (logged: its `output_item.done`, by its id, ends it)."""
        if self.stacked and not payload.get("item_id"):
            index = payload.get("output_index")
            stacked = self.stacked.get(index) if index.__class__ is int else None
            open_calls = [
                index
                for index in stacked or ()
                if self.calls.get(index) is False and self.call_types.get(index) == "function_call"
            ]
            if len(open_calls) > 1 and done:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "{} without an item id at output index {}, where calls {} are open:"
                    " each is ended by its done item",
                    payload.get("type"),
                    payload.get("output_index"),
                    [self.shown_at[index].item_id for index in open_calls],
                )
                return None
            if open_calls:
                return open_calls[-1]
        return self._index(payload)

    def _item_of(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The item an `output_item` event carries; None (logged) for a null, absent or
        empty one, or one of no type a string names, which names no item and so begins
        or ends none (module docstring): the terminal's item says what it was."""
        item = payload.get("item")
        if isinstance(item, dict) and _type_of(item) is not None:
            return item
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "{} at output index {} without an item of a type: {!r}",
            payload.get("type"),
            payload.get("output_index"),
            item,
        )
        return None

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = self._item_of(payload)
        if item is None:
            return
        index = self._item_index(payload, item)
        said = self._displaced(index, _key(item)) if self.displaced else None
        if said is not None and _type_of(item) == "message":
            # the parts that had no deltas nor done event of their own arrived whole; the
            # item there now (the call added over it) is not the one done
            content = item.get("content")
            for position, part in enumerate(content if isinstance(content, list) else ()):
                if isinstance(part, dict) and position not in said:
                    said.add(position)
                    whole = part.get("text") if part.get("type") == "output_text" else None
                    if isinstance(whole, str) and whole:
                        self._say(index)(whole)
            return
        shown = self._show(index, _type_of(item), _key(item), event="done")
        shown.done = True
        whole = self.whole_calls.get(index)
        if whole is not None and _a_result(item):
            del self.whole_calls[index]
            self._provider_ran(index, whole, item)
            return
        self._done_item(index, item)

    def _done_item(self, index: int, item: dict[str, Any]) -> None:
        """An item read whole, as its `output_item.done` gives it, at output index `index`."""
        kind = _type_of(item)
        if kind == "function_call":
            self.whole_calls.pop(index, None)
            if index not in self.calls:
                self._start_call(index, item)
            held = self._name(index, item)
            if held is not None and held.marked:  # the first done event's arguments
                self._end_call(index, held.arguments)
            else:
                self._end_call(index, item.get("arguments"))
        elif kind == "reasoning":
            # Its summary, else its text: each part that had no deltas arrived whole (a
            # relay dropped its events, or only the first streamed). Not when parts of
            # the other form streamed: the item was shown in that form.
            summary = _array(item.get("summary"))
            shown, parts = (
                ("summary", summary) if summary else ("text", _array(item.get("content")))
            )
            if all(key[1] == shown for key in self.reasoned_parts if key[0] == index):
                # The parts that streamed are its first parts, in order, whatever their
                # index (vLLM's run on from 8), a counter's keys none of their own.
                seen = sorted(
                    key
                    for key in self.reasoned_parts
                    if key[0] == index and key not in self.reasoning_counted
                )
                for position, part in enumerate(parts):
                    text = part.get("text") if isinstance(part, dict) else None
                    key = seen[position] if position < len(seen) else (index, shown, position)
                    self._reasoning_part_done(key, text)
            added = self.reasoning_items.pop(index, None) or {}
            blob = item.get("encrypted_content") or added.get("encrypted_content")
            self._end_reasoning({**added, **item}, blob)  # the done item is authoritative
        elif kind == "message":
            self._message_done(index, item)
        elif kind == "compaction":  # opaque context, kept as a reasoning item is
            self._end_reasoning(item, item.get("encrypted_content"))
        elif kind in SERVER_OUTPUTS:
            call_kind = SERVER_OUTPUTS[kind]
            call_id = text_or_none(item.get("call_id")) or self._latest_server_call(call_kind)
            call_id = call_id or _call_id_of(item, index)
            content = {k: v for k, v in item.items() if k not in ("id", "type")}
            self.server_tool_result(call_id, call_kind, content, is_error=server_item_failed(item))
        else:
            acts = item_kind(item, self._grok())
            if acts == "client":
                if index not in self.calls:
                    self._start_call(index, item)
                self._end_call(index, json.dumps(self._client_arguments(index, item)))
            elif acts == "server":
                self.server_items.pop(index, None)
                call_id = self.server_calls.get(index) or self._start_server_call(index, item)
                content = {k: v for k, v in item.items() if k not in ("id", "type")}
                self.server_tool_result(
                    call_id, server_name(item), content, is_error=server_item_failed(item)
                )
            elif item.get("type") is not None:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "an output item of type {!r} has no event", item.get("type")
                )

    def _message_done(self, index: int, item: dict[str, Any]) -> None:
        """Parts of a finished message that had no deltas arrived whole: emitted now;
        url_citation annotations not yet seen become citations."""
        content = item.get("content")
        if not isinstance(content, list):
            return
        self._phase(index, item)  # the done item is authoritative
        for key in [key for key in self.added_parts if key[0] == index]:
            del self.added_parts[key]
        say = self._say(index)
        # The parts that streamed are the item's first parts, in order: a server may
        # number them on from the items before (vLLM's gpt-oss stream: content_index 1
        # for the only part of a message after a reasoning item).
        seen = sorted(key for key in self.parts if key[0] == index)
        for position, part in enumerate(content):
            if not isinstance(part, dict):
                continue
            streamed = position < len(seen)
            key = seen[position] if streamed else (index, position)
            kind = part.get("type")
            if kind == "output_text":
                whole = part.get("text")
                if not streamed and isinstance(whole, str) and whole:
                    say(whole)
                for annotation in _array(part.get("annotations")):
                    if isinstance(annotation, dict):
                        self._cite(key, annotation)
            elif kind == "refusal":
                whole = part.get("refusal")
                if not streamed and isinstance(whole, str) and whole:
                    self.refusal(whole)

    def _latest_server_call(self, kind: str) -> str | None:
        """The call id of the latest provider-run call of type `kind`: the call an output
        item without a `call_id` answers (a server tool search's `tool_search_output`)."""
        for shown in reversed(self.shown):
            if shown.kind == kind and shown.index in self.server_calls:
                return self.server_calls[shown.index]
        return None

    def _server_input_done(self, field: str, payload: dict[str, Any]) -> None:
        """A provider-run call's input, whole (`code_interpreter_call_code.done`'s `code`,
        `mcp_call_arguments.done`'s `arguments`): the call is shown now, with the fields
        its added item gave, before it runs. Its done item shows it otherwise."""
        index = self._index(payload)
        added = self.server_items.pop(index, None)
        if added is None:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "{} for output item {}, which is no provider-run call open",
                payload.get("type"),
                index,
            )
            return
        self._start_server_call(index, {**added, field: payload.get(field)})

    def _start_server_call(self, index: int, item: dict[str, Any]) -> str:
        call_id = _call_id_of(item, index)
        if index not in self.server_calls:
            self.server_calls[index] = call_id
            self.server_tool_call(call_id, server_name(item), server_item_arguments(item))
        return call_id

    def _release(self, index: int) -> None:
        """A call added whole whose arguments then stream (or are marked done) is read as
        any call: started now."""
        whole = self.whole_calls.pop(index, None)
        if whole is not None:
            self._start_call(index, whole)

    def _provider_ran(self, index: int, call: dict[str, Any], result: dict[str, Any]) -> None:
        """A call added whole whose output index another item took when done: the call was
        the provider's own and that item is its result (Perplexity's `search_web` call,
        then its `search_results`); each result's page is a source (`citation`), as
        vercel/ai's Perplexity provider reads them."""
        call_id = _call_id_of(call, index)
        name = text_or_none(call.get("name")) or ""
        self.server_tool_call(call_id, name, arguments_object(call.get("arguments")))
        self.server_tool_result(call_id, name, {k: v for k, v in result.items() if k != "id"})
        for found in _array(result.get("results")) or _array(result.get("contents")):
            url = found.get("url") if isinstance(found, dict) else None
            if isinstance(url, str) and url and (url,) not in self.cited:
                self.cited.add((url,))
                title = found.get("title")
                self.citation(url, title if isinstance(title, str) else None)

    def _start_call(self, index: int, item: dict[str, Any]) -> None:
        if index in self.calls:
            held = self.held.get(index)
            name = text_or_none(item.get("name"))
            if held is not None and not held.name and name:
                held.name = name  # the call added again, named this time
            return
        self.calls[index] = False
        call_id = _call_id_of(item, index)
        kind = _type_of(item)
        self.call_types[index] = str(kind)
        # A function or custom tool is named by the client; any other item by its type.
        named = kind in ("function_call", "custom_tool_call")
        if kind == "custom_tool_call":
            self.custom_inputs[index] = []
        name = text_or_none(item.get("name")) or ""  # an id or a name of no string is none
        if kind == "function_call":
            # Without its call_id (the item's id stands in) or its name, a call waits
            # for the item that names it.
            known = bool(text_or_none(item.get("call_id"))) and bool(name)
            if not known or name in PARALLEL_WRAPPERS:
                self.held[index] = _Held(call_id, name, known)
                return
        self.tool_start(call_id, name if named else str(kind), index)

    def _end_call(self, index: int, arguments: Any) -> None:
        """End call `index` with the arguments its done event gives: authoritative,
        unless empty or absent (a proxy's done event that leaves out what it streamed),
        where the streamed deltas are the arguments. Any other JSON value is taken as its
        JSON text: an object, as the chat wire takes one, is the arguments; an array, a
        number or a bool is no object, and the call is malformed, naming it."""
        if self.calls.get(index) is not False:
            return
        if arguments is not None and arguments.__class__ is not str:
            arguments = json.dumps(arguments, ensure_ascii=False)
        self.calls[index] = True
        held = self.held.pop(index, None)
        if held is not None:
            self._unwrap(index, held, arguments or "".join(held.pieces))
            return
        self.tool_end(index, arguments or None)

    def _unwrap(self, index: int, held: _Held, arguments: str) -> None:
        """A held call, complete: each call a parallel wrapper wraps, requested on its own
        at the wrapper's index, one after the other; or the call itself when it wraps none
        (or is no wrapper: a call held until named)."""
        call_id, name = held.call_id, held.name
        calls = wrapped_calls(arguments) if name in PARALLEL_WRAPPERS else None
        if calls is None:
            self.tool_start(call_id, name, index)
            self.tool_end(index, arguments or None)
            return
        for n, (tool, parameters) in enumerate(calls):
            self.tool_start(f"{call_id}_{n}", tool, index)
            self.tool_end(index, json.dumps(parameters, ensure_ascii=False))

    def _name(self, index: int, item: dict[str, Any]) -> _Held | None:
        """The call held at output `index` for want of its `call_id` or its name, named now
        by `item` (its done item, or the terminal response's) with the item's, else by the
        item id and the name it went by; None when no call waits there for its name."""
        held = self.held.get(index)
        if held is None or held.named:
            return None
        held.named = True
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id:
            held.call_id = call_id
        if not held.name and isinstance(item.get("name"), str):
            held.name = item["name"]
        return held

    def _client_arguments(self, index: int, item: dict[str, Any]) -> dict[str, Any]:
        """A client item's arguments; a custom tool call's done item without its
        `input` (a proxy's) takes the input the call streamed."""
        arguments = client_item_arguments(item)
        streamed = self.custom_inputs.get(index)
        if streamed and not item.get("input"):
            arguments["input"] = "".join(streamed)
        return arguments

    def _begun(self, index: int, kind: str, payload: dict[str, Any]) -> bool:
        """Whether the call at output `index`, which an event streaming a call's input
        (`payload`) is about, began from an item of type `kind`. Not (logged) for a call
        never begun there, or begun from another item (LiteLLM's bridge streams a custom
        tool call's input as function-call arguments, JSON-wrapped): its done item, whole,
        will say everything."""
        if self.call_types.get(index) == kind:
            return True
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "{} for output item {}, which is no {} begun", payload.get("type"), index, kind
        )
        return False

    def _custom_input(self, payload: dict[str, Any]) -> list[str] | None:
        """The input pieces of the custom tool call the event is about; None for one
        never begun (`_begun`)."""
        index = self._index(payload)
        begun = self._begun(index, "custom_tool_call", payload)
        return self.custom_inputs[index] if begun else None

    def _custom_input_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        pieces = self._custom_input(payload)
        if pieces is not None and isinstance(delta, str) and delta:
            pieces.append(delta)

    def _custom_input_done(self, payload: dict[str, Any]) -> None:
        """The whole input: authoritative over the deltas (unless empty after them)."""
        whole = payload.get("input")
        pieces = self._custom_input(payload)
        if pieces is None:
            return
        if isinstance(whole, str) and (whole or not pieces):
            pieces[:] = [whole]
        self.custom_done.add(self._index(payload))

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        # (`_call_index` only where calls share an output index: not a call per delta)
        index = self._call_index(payload) if self.stacked else self._index(payload)
        if index is None:
            return
        self._show(index, "function_call", payload.get("item_id"))  # its id, as the call's
        if self.whole_calls:  # (no call on the hot path of every other stream)
            self._release(index)
        if not self._begun(index, "function_call", payload):
            return
        delta = payload.get("delta")
        if delta and not self.calls[index]:
            held = self.held.get(index)
            if held is not None:  # a parallel wrapper, or a call not yet named: read whole
                if delta.__class__ is not str:  # said here, as `tool_args` says it, not at the join
                    raise TypeError(f"a tool-argument fragment is {json_type(delta)}, not a string")
                held.pieces.append(delta)
            else:
                self.tool_args(index, delta)

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        index = self._call_index(payload, done=True)
        if index is None:
            return
        self._release(index)
        if not self._begun(index, "function_call", payload):
            return
        held = self.held.get(index)
        if held is not None and not held.named:  # ended once an item names it (`_name`)
            if not held.marked:
                held.marked, held.arguments = True, payload.get("arguments")
            return
        self._end_call(index, payload.get("arguments"))

    # -- lifecycle and terminals ------------------------------------------------------

    def _response(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The response an event carries; one of another type than an object says
        nothing (logged): the event's type still says how the turn went."""
        response = _fields(payload.get("response"))
        if not response and "response" not in payload and _FLAT_RESPONSE_KEYS & payload.keys():
            response = payload  # Perplexity's terminals (`_FLAT_RESPONSE_KEYS`)
        elif payload.get("response") and not response:
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "{}: its response is no object: {!r}", payload.get("type"), payload["response"]
            )
        self.model = text_or_none(response.get("model")) or self.model
        self.response_id = text_or_none(response.get("id")) or self.response_id
        return response

    def _created(self, payload: dict[str, Any]) -> None:
        self._response(payload)

    def _grok(self) -> bool:
        """Whether a Grok model answers (xAI's own server tools, `XAI_SERVER_TOOLS`)."""
        return "grok" in (self.model or "").lower()

    def _end_reasoning(self, item: dict[str, Any], blob: Any) -> None:
        """The delta that ends a reasoning item: its encrypted content as the signature,
        its other fields as details. The API wants the item back by its `id` (with its
        encrypted content when nothing is stored), so an item is kept even when it
        showed no text."""
        details = {key: value for key, value in item.items() if key != "encrypted_content"}
        self.reasoning(signature=blob or None, details=details)

    def _finish(self, response: dict[str, Any], complete: bool) -> None:
        # The response's `output` holds every item, each matched to the item the stream
        # showed (`_match_shown`). One already done is not read again; one whose
        # `output_item.done` never came (an event lost on the way) is read now at the
        # output index it streamed at, as its done event would have been; one the stream
        # never showed (a server that streams only the terminal response) is read at its
        # position. A function call already started is ended by the terminal itself,
        # after the usage, as a call cut short must be: its streamed JSON says whether it
        # is whole. Any other call started (a custom tool call, whose input is free text
        # that cannot say so; an item that asks the client to act, `computer_call`,
        # `shell_call`..., which streams no input at all: the item is its arguments) is
        # read from a completed response's item. Otherwise a custom tool call is ended
        # with the input it streamed when that input was marked done or the response
        # completed (`complete`), else left open, cut off, for the terminal to end as cut
        # off, with the input it streamed (`tool_input_cut`): free text, not JSON.
        output = response.get("output")
        items: list[Any] = output if isinstance(output, list) else []
        # a position the stream used for another item: read past every index it used
        unused = itertools.count(max([len(items), *(index + 1 for index in self.shown_at)]))
        for position, shown in enumerate(_match_shown(self.shown, items)):
            item = items[position]
            if not isinstance(item, dict) or (shown is not None and shown.done):
                continue
            if shown is None:
                self._done_item(position if position not in self.shown_at else next(unused), item)
            elif shown.index in self.held:  # a call held, not done: the item names it
                self._name(shown.index, item)
            elif not (
                shown.index in self.calls
                and not (complete and self.call_types.get(shown.index) != "function_call")
            ):
                shown.done = True
                self._done_item(shown.index, item)
        for index, pieces in self.custom_inputs.items():
            if self.calls[index] is not False:
                continue
            if index in self.custom_done or (complete and pieces):
                self._end_call(index, json.dumps({"input": "".join(pieces)}))
            elif not complete:
                self.tool_input_cut(index, "".join(pieces))
        for index, item in self.whole_calls.items():  # complete when added, never done
            self._start_call(index, item)
            self._end_call(index, item.get("arguments"))
        self.whole_calls.clear()
        for index, held in list(self.held.items()):
            if held.marked:  # its arguments marked done, its item never: ended as they say
                self._end_call(index, held.arguments)
                continue
            # a call never marked done: judged at the terminal as any call left open
            self.tool_start(held.call_id, held.name, index)
            if held.pieces:
                self.tool_args(index, "".join(held.pieces))
        self.held.clear()
        for index in sorted(self.reasoning_items):  # reasoning items never marked done
            item = self.reasoning_items[index]
            self._end_reasoning(item, item.get("encrypted_content"))
        self.reasoning_items.clear()
        for key, whole in self.added_parts.items():  # a part nothing else said
            if key not in self.parts:
                self._say(key[0])(whole)
        self.added_parts.clear()
        usage = _fields(response.get("usage"))  # (of another type: no count said)
        if usage:
            self.usage(responses_usage(usage))

    def _completed(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        status = response.get("status")
        if status == "incomplete":
            # vLLM ends a response cut by its token limit with `response.completed`,
            # the status and `incomplete_details` saying what `response.incomplete` says.
            self._incomplete(payload)
            return
        if status in ("failed", "cancelled"):  # the status says the turn did not succeed
            if status == "cancelled" and not response.get("error"):
                error = {"code": "cancelled", "message": "the response was cancelled"}
                response = {**response, "error": error}
            self._failed({**payload, "response": response})
            return
        self._finish(response, complete=True)
        self.done("tool_use" if self.calls else "stop", response.get("status") or "completed")

    def _incomplete(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        self._finish(response, complete=False)
        reason = _fields(response.get("incomplete_details")).get("reason")
        self.done(stop_reason_of(reason, INCOMPLETE_REASONS), reason)

    def _failed(self, payload: dict[str, Any]) -> None:
        response = self._response(payload)
        usage = _fields(response.get("usage"))
        if usage:  # what the failed turn cost: it commits nothing
            self.failure_usage(responses_usage(usage))
        error = response.get("error") or {}
        if not isinstance(error, dict):  # neither shape: read as any error body is
            self.stream_error(error, json.dumps(error))
            return
        message = text_or_none(error.get("message")) or "the response failed"
        body = parse_error_payload(error)  # the wait and the request id, as in `_error`
        self.fail(
            "stream_error",
            message,
            status=status_in(error),
            code=_code_of(error),
            param=text_or_none(error.get("param")),
            raw=json.dumps(error),
            retry_after=body.retry_after,
            request_id=body.request_id,
        )

    def _ends_in(self, held: dict[str, Any], kind: Any) -> bool:
        """Whether an event of type `kind` after an `error` event held before any output
        (`on_chunk`) ends the turn in that error: a failure of its own, or another error,
        does; any other event is the stream going on, the error logged and forgotten."""
        if kind in ("error", "response.failed", "response.incomplete"):
            self._error(held)
            return True
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "the stream went on after an error event before any output: {}",
            held.get("message") or held,
        )
        return False

    def end(self) -> None:
        held, self.held_error = self.held_error, None
        if held is not None and not self.settled:
            self._error(held)

    def _error(self, payload: dict[str, Any]) -> None:
        # OpenAI documents the fields at the top level; some servers nest them in `error`.
        # At the top level `type` is the event's (`error`), never an error code.
        nested = payload.get("error")
        if nested is not None and not isinstance(nested, dict):
            # Neither shape (a proxy's `{"error": "..."}`): read as any error body is.
            self.stream_error(payload, json.dumps(payload))
            return
        error = nested if isinstance(nested, dict) else payload
        code = _code_of(nested) if isinstance(nested, dict) else text_or_none(payload.get("code"))
        message = text_or_none(error.get("message")) or "the server reported an error"
        param = text_or_none(error.get("param"))
        body = parse_error_payload(error)  # the wait and the request id, as over HTTP
        self.fail(
            "stream_error",
            message,
            status=status_in(error),  # a proxy's numeric code
            code=code,
            param=param,
            raw=json.dumps(error),
            retry_after=body.retry_after,
            request_id=body.request_id,
        )


class OpenAIResponses(WireProtocol):
    """The OpenAI Responses wire, for OpenAI and the endpoints that speak it."""

    # The leading system messages go in `instructions`; a later one stays an input item.
    system_apart = "leading"
    # Never dropped by a degraded retry: without them the request says something else.
    recovery = RecoveryPolicy(mandatory_body_keys=frozenset({"input", "instructions"}))
    tool_names = OPENAI_TOOL_NAMES
    # The Responses API has no stop sequences, seed or penalties.
    sampling_keys: Mapping[str, str] = {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_output_tokens",
    }
    request_keys: ClassVar[Mapping[str, str]] = {
        **REQUEST_KEYS,
        "input": "the Responses input is written from ChatRequest.messages",
        "instructions": "the instructions are the request's system messages (Message.system)",
    }

    def __init__(
        self,
        name: str = "openai-responses",
        default_base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        requires_api_key: bool = True,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.default_base_url = default_base_url
        self.api_key_env = api_key_env
        self.requires_api_key = requires_api_key
        self.extra_headers = dict(extra_headers or {})

    def url(self, base_url: str, request: ChatRequest) -> str:
        return endpoint(base_url, "/responses")

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers | self.extra_headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        params = request.params
        offered = params.get("tools") or ()
        custom = custom_tool_names(offered)
        stored = params.get("store") is not False  # the API stores by default
        namespaces = tool_namespaces(offered)
        chained = bool(params.get("previous_response_id") or params.get("conversation"))
        instructions, items = responses_input(request.messages, custom, stored, namespaces, chained)
        body: dict[str, Any] = {"model": request.model, "input": items, "stream": True}
        if instructions is not None:
            body["instructions"] = instructions
        if request.tools:
            # `strict: false` said outright: the Responses API otherwise rewrites a schema
            # into strict mode (every field required), unlike Chat Completions.
            body["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": function_parameters(tool.parameters),
                    "strict": False,
                }
                for tool in request.tools
            ]
        return body

    def response_format_body(
        self, output: Literal["json"] | JsonSchema, request: ChatRequest
    ) -> dict[str, Any]:
        """The Responses `text.format`: `{"type": "json_object"}`, or the schema's fields
        flat beside `{"type": "json_schema"}`; a `text` given in params (its `verbosity`)
        keeps its other settings."""
        given = request.params.get("text")
        text = dict(given) if isinstance(given, Mapping) else {}
        if output == "json":
            text["format"] = {"type": "json_object"}
        else:
            text["format"] = {"type": "json_schema", **json_schema_fields(output)}
        return {"text": text}

    def tool_choice_body(self, choice: str, request: ChatRequest) -> dict[str, Any]:
        # The Responses function choice is flat: `{"type": "function", "name": ...}`.
        if choice in TOOL_CHOICE_MODES:
            return {"tool_choice": choice}
        return {"tool_choice": {"type": "function", "name": choice}}

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> ResponsesNormalizer:
        return ResponsesNormalizer(emit, provider, attempt)
