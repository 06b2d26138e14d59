"""Google Gemini `streamGenerateContent?alt=sse`: whole-candidate chunks to fragments.

Request: `POST {base}/models/{model}:streamGenerateContent?alt=sse` with the key in
`x-goog-api-key`; the model is in the URL, never in the body. Response: `data:` events
(framed with `\\r\\n\\r\\n`, which the SSE decoder handles), each a whole
`GenerateContentResponse`: `candidates[0].content.parts` (text, thought text,
`functionCall`, `executableCode`, `codeExecutionResult`, `toolCall`, `toolResponse`), a
cumulative `usageMetadata` on most chunks, `modelVersion`, and a `finishReason` on the
last candidate. There is no `[DONE]` (one a relay appends is logged and passed over):
a finish reason (or a prompt block) is the terminal marker, and usage-only chunks may
still follow it, so usage and `done` are emitted at the end of the body.

How the wire is read (decisions, each tested in tests/providers/test_google.py,
test_google_shapes.py and test_probe_google.py):

- Text parts with `"thought": true` are reasoning; their `thoughtSignature` rides on
  the same event. Code and built-in tool steps flagged `thought` (Gemini 2.5 runs code
  while it thinks, and the result follows) are tool steps like any other, as
  pydantic-ai and the AI SDK read them; a thought image is logged (no event carries
  an image). A signature on any other part (text, a function call, an empty text
  part) comes out first as a reasoning event with empty text carrying it: Gemini puts
  the signature of the thoughts on the first part after them, so it closes the
  reasoning that precedes that part. The signature of a text or thought part carries
  that part's own fields as `details` (`{}`, `{"thought": true}`): they mark it as
  Gemini's signature of the turn's text, which the request builder puts back on that
  text (a function call's goes back with the call).
- Inside one chunk, text-like parts come out before function calls (DESIGN.md: a
  chunk with both is split, text first), and text a relay wrote in the call's own
  part too. This is ordering inside the normalizer, not an operator: a chunk is
  already whole, so no state crosses chunks.
- A whole `functionCall` becomes tool_start, one argument fragment (its `args`
  encoded once) and tool_end. The call id is the part's `id` (the API's optional
  `FunctionCall.id`; no capture carries one), else `{name}_{tag}_{index}`: `index`
  counts calls in the turn, and the tag (`response_tag`: 8 base-62 characters of the
  SHA-256 of the `responseId`, else of the chunk the turn's first such call came in)
  keeps ids unique across the turns of a conversation, as apps that match results by
  id need (the AI SDK's `addToolOutput` takes the first call holding an id: with
  `{name}_{index}`, turn 2's `get_weather_0` took turn 1's result), and the same for a
  replay of the same bytes. A call with a name, no
  `args` (or `args: null`, which proto3 JSON reads as absent) and no `willContinue` is
  complete: a tool without parameters, `{}` (DESIGN.md; Vertex sends such calls beside
  streamed `partialArgs` ones).
- Vertex's streamed arguments (`willContinue` with `partialArgs` of `jsonPath`, an RFC
  9535 path whose bracketed names' escapes are read, and a typed value, strings
  continued across parts) build one call per `functionCall` that opened with a name,
  over the `args` that opening part may already carry: partial arguments merge into
  them, a string begun there continued by its pieces (as client accumulators of
  `partialArgs` do); `args` on a later part of the call are logged at debug. The call
  ends at the first `functionCall` part without `willContinue` (the empty `{}`
  terminator, or a last `partialArgs` part). String pieces are joined once, at the end.
  A call still open when the turn finishes is `malformed_tool_arguments`; the provider
  said more was coming. So are partial arguments that build no object (a `jsonPath`
  that is no path, a leaf set as a string and then a path through it).
- Code execution is a tool Gemini runs itself (DESIGN.md: provider-executed tools are
  shown, never dispatched). An `executableCode` part is `server_tool_call` named
  `code_execution` with arguments `{language, code}`, the keys it sent (Vertex may
  leave out `language`: LiteLLM's test_code_execution.py); a
  `codeExecutionResult` part is `server_tool_result` whose content is the part's
  `{outcome, output}` (the keys it sent), `is_error` for an outcome but `OUTCOME_OK`
  (and `OUTCOME_UNSPECIFIED`, which says nothing): `OUTCOME_FAILED`,
  `OUTCOME_DEADLINE_EXCEEDED`. The call id is the part's `id` (Gemini 3
  sends one on both parts), else `code_execution_{tag}_{n}` (`n` counts code parts in
  the turn, the tag as a function call's); a result without an `id` belongs to the
  latest code part. Neither part is text: the answer's text is only what the model wrote.
- So are the built-in tools Gemini 3 reports when asked to
  (`toolConfig.includeServerSideToolInvocations`, ai.google.dev/gemini-api/docs/
  tool-combination): a `toolCall` part {toolType, args, id} is `server_tool_call`
  named after its `toolType` in lower case (`google_search_web`, `url_context`,
  `google_maps`, `file_search`) with `args` as arguments; a `toolResponse` part
  {toolType, response, id} is `server_tool_result` with `response` as content. Ids
  as for code execution, counted per tool.
- `groundingMetadata.groundingChunks[]` (Google Search grounding: `web`, and `image`
  whose `sourceUri` is the page the image is on; Vertex: `retrievedContext`, `maps`)
  with a `uri` are `citation` events (url, title), each uri once per turn, since a
  later chunk may repeat the metadata (read even in a chunk after the finish reason,
  whose parts are ignored). A chunk with no uri (a File Search document: a title and
  a store) is logged at debug by its kind, once per turn. `cited_text` stays empty: a
  `groundingSupports` segment is the answer's own text that the source supports, not
  text quoted from the source.
- `citationMetadata` sources (recitation: Gemini API `citationSources[]` {uri,
  license}, Vertex `citations[]` {uri, title}) with a `uri` are `citation` events too,
  under the same once-per-uri rule; their index range is again the answer's own text.
  A source without a uri is logged at debug, as a grounding chunk without one is.
- A part no event carries (`inlineData`, `fileData`, a thought image, a part type
  newer than this module) is logged at debug by its keys, never its data; the parts
  around it are read as usual. So are fields beside a part's data (`partMetadata`) and
  candidate and grounding fields no event carries (`urlContextMetadata`,
  `webSearchQueries`, `searchEntryPoint`), each once per turn. A part's member written
  `null` (a relay writing every member of its struct) is no member: `Part` is a union.
- Usage: the latest `usageMetadata` with token counts wins and is emitted once,
  before `done` (or before the error of a stream cut before its finish, or of an
  `error` chunk or frame, even one after the finish, as that failure's: `FailureUsage`,
  reported where the turn had committed).
  input = prompt - cached + toolUsePrompt (code execution and search results the model
  read, which Gemini bills as input, so the total matches its `totalTokenCount`);
  cache_read = cached; output = candidates + thoughts (Gemini's candidates count
  excludes thoughts, its total adds them: where the total is prompt + candidates, a
  relay counted the thoughts inside the candidates and they are counted once);
  reasoning = thoughts. The fields beside the counts (the
  per-modality `*TokensDetails`, Vertex's `trafficType`) are logged at debug with it.
- Finish: STOP is `stop`, or `tool_use` when the turn made calls; MAX_TOKENS is
  `length`; the safety family (and LANGUAGE: content "flagged for using an unsupported
  language", worded as SAFETY and RECITATION are) is `content_filter`; OTHER,
  NO_IMAGE, TOO_MANY_TOOL_CALLS, FINISH_REASON_UNSPECIFIED and unknown reasons are
  `other`, the raw value kept. A reason written as its proto enum number (a client
  asking for `enum-encoding=int`, proto-plus's `to_json`) is read where the Gemini
  API's and Vertex AI's numberings mean the same stop (`FINISH_NUMBERS`: 1 STOP, 2
  MAX_TOKENS, 3, 4, 6 to 8 and 11 the safety family, 5 OTHER), the number kept as the raw
  reason; one they differ on (9 is SPII to one, MALFORMED_FUNCTION_CALL to the other)
  is `other`. MALFORMED_FUNCTION_CALL and UNEXPECTED_TOOL_CALL say the
  call the model made is invalid: the turn holds neither a call to dispatch nor an
  answer, so it ends in `error(kind="malformed_tool_arguments")` (code = the reason,
  message with the `finishMessage`, its usage first, as the failure's own:
  `FailureUsage`), never a `done` an agent loop would
  take for a final, empty answer. MISSING_THOUGHT_SIGNATURE says the request was
  faulty (history sent back without its thought signatures): it ends the same way in
  `error(kind="rejected")`, as Gemini's 400 for it before streaming does;
  MALFORMED_RESPONSE (generation stopped on a malformed response) in
  `error(kind="stream_error")`, which Kelivo retries. Any other
  `finishMessage` is logged at debug. Parts after the finish are ignored, except
  after a finish that came on a step of a built-in tool (a chunk holding
  `executableCode`, `codeExecutionResult`, `toolCall` or `toolResponse`): that ends the
  step, the tool runs and the answer follows, with the turn's own finish reason, which
  replaces it. Gemini 2.5 with File Search sends `STOP` on the chunk of its search
  call and the whole answer after it (pydantic-ai's cassette
  `test_google_model_file_search_tool_stream.yaml`). Nor after a finish that came
  before any part (relays translating an OpenAI stream stamp `STOP` on its empty
  leading chunks: CLIProxyAPI #5651, kelivo #1003). Nor are the parts of a chunk that
  carries a finish reason again: gemini-pro sent `STOP` on every chunk (LiteLLM #2195,
  one-hub #402, semantic-kernel's `chat_stream_response.json`); the latest finish
  replaces the earlier.
- CONTINUATION (a long answer paused: google-genai sends the same request again with
  the candidate's `continuationToken`) is `pause`, as Anthropic's `pause_turn` is. No
  event carries the token yet: it is logged with the candidate fields no event reads.
- `promptFeedback.blockReason` (other than the unspecified defaults) is terminal:
  `done("content_filter")` with the block reason as the raw stop reason (its
  `blockReasonMessage` and the safety ratings marked `blocked` logged at debug). It is
  the provider's answer, not a failure of the stream, as a filtered finish is, whose
  ratings marked `blocked` (what filtered the answer) are logged too; other ratings
  are scores no event carries.
- Only candidate 0 is read (`candidateCount` > 1 is not one stream): other candidates
  are ignored with a warning, once per stream.
- An `error` object in a chunk is `error(kind="stream_error")`, its HTTP-like `code`
  as the status and its status name (`UNAVAILABLE`) as the code. An `event: error`
  frame without one (a proxy's `{"message": ...}`, llama.cpp's `error:` line, a bare
  message, no data) is never read as a chunk that says nothing: it is read as any error
  body is (`Normalizer.error_frame`).
- A field of another JSON type than the reference gives it (a relay writing every member,
  an int32 written as a string, a proxy's bug) is read for what it can still say. The
  answer's own containers (`candidates`, a candidate, its `content` and `parts`, a part, a
  `functionCall`) that are not an array or an object end the turn in a `protocol` error
  that says so in JSON's words; a `null` entry among them is none. A call whose name is
  no string, or a call with `args` or an `id` and no name, is `malformed_tool_arguments`
  (never dispatched, never left out while the turn looks answered). A field no event
  needs is logged at debug and the turn goes on (`usageMetadata`, `promptFeedback`,
  grounding and citation metadata, a code or built-in tool step that is no object), and
  a value no event can carry is none (an id, a uri, a title, `modelVersion` or a
  `thoughtSignature` that is no string: a call gets rxllm's id and Google's placeholder
  signature goes back with it). A candidate `index` that is no number is candidate 0.
- Google's Interactions API (`POST /v1beta/interactions`) streams another wire: payloads
  naming their `event_type` (`interaction.created`, `step.delta`, ...) and no
  candidates. Its first event ends the stream in a `protocol` error that says so, never
  read as chunks with nothing to say (the answer lost unsaid).
- Google's Code Assist API (`v1internal:streamGenerateContent`, which Gemini CLI and
  Antigravity call) wraps each chunk as `{"response": chunk, "traceId": ...}`, and so
  do relays that answer in Gemini CLI's format (CLIProxyAPI's `gemini-cli`
  translators): a payload with no candidates of its own whose `response` is an object
  is read as that chunk, never as one that says nothing (the answer lost, the stream
  read as cut short).
- An event of another API's stream (`rxllm.providers.wire_signs.other_api`: a chat
  chunk's `choices`, Anthropic's Messages events, the Responses API's `response.*`) ends
  the turn at once in a `protocol` error naming that API and the provider that reads it:
  a base URL or a relay's route that speaks another wire, whose every event is as
  unreadable. Each was logged and the turn ended cut short, retried, with no word of
  what it was.
"""

from __future__ import annotations

import copy
import json
import mimetypes
import os
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import count, pairwise
from typing import Any, ClassVar, Literal
from urllib.parse import quote, urlsplit

from loguru import logger

from rxllm.degradation import RecoveryPolicy
from rxllm.error_body import parse_error_payload
from rxllm.errors import ConfigError
from rxllm.events import ErrorInfo, ErrorKind, StopReason, Usage, named_call, token_count
from rxllm.fragments import Emit, RawChunk
from rxllm.providers.base import (
    REQUEST_KEYS,
    Normalizer,
    ToolNames,
    WireProtocol,
    endpoint,
    gemini_text_signature,
    stop_reason_of,
    text_or_none,
)
from rxllm.providers.wire_signs import json_type, other_api
from rxllm.request import (
    TOOL_CHOICE_MODES,
    ChatRequest,
    ImagePart,
    JsonSchema,
    Message,
    Part,
    TextPart,
    ToolCall,
)

__all__ = ["GeminiNormalizer", "Google", "gemini_body_params", "gemini_contents", "gemini_usage"]

FINISH_REASONS: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
    "LANGUAGE": "content_filter",
    "CONTINUATION": "pause",  # a long answer paused, resumed with its continuationToken
}

# A finish reason written as its proto enum number: Google's REST endpoints write enums
# so when asked (`$alt=json;enum-encoding=int`, as Google's generated REST clients ask),
# and proto-plus does by default (`Candidate.to_json`), which relays and recordings built
# on those clients pass on. The Gemini API (google.ai.generativelanguage
# `Candidate.FinishReason`: OTHER 5, LANGUAGE 6, BLOCKLIST 7, PROHIBITED_CONTENT 8, SPII
# 9, MALFORMED_FUNCTION_CALL 10, IMAGE_SAFETY 11, UNEXPECTED_TOOL_CALL 12) and Vertex AI
# (google.cloud.aiplatform: OTHER 5, BLOCKLIST 6, PROHIBITED_CONTENT 7, SPII 8,
# MALFORMED_FUNCTION_CALL 9, MODEL_ARMOR 10, IMAGE_SAFETY 11) number it alike up to 5
# and apart after, and this wire reads both: a number is read where the two mean the
# same stop (6 to 8 are a safety stop in both); 9, 10 and 12 on are `other`.
FINISH_NUMBERS: dict[int, StopReason] = {
    1: "stop",
    2: "length",
    3: "content_filter",
    4: "content_filter",
    5: "other",
    6: "content_filter",
    7: "content_filter",
    8: "content_filter",
    11: "content_filter",
}

# Finish reasons that say the call the model made is invalid (google-genai FinishReason:
# MALFORMED_FUNCTION_CALL "the function call generated by the model is invalid",
# UNEXPECTED_TOOL_CALL "the tool call generated by the model is invalid"), or that the
# request was (MISSING_THOUGHT_SIGNATURE "request has at least one thought signature
# missing": the conversation sent back lost a signature, which Gemini 3 answers with a
# 400 when it says so before streaming), or that the response broke off
# (MALFORMED_RESPONSE "token generation stopped because the response was malformed",
# google-genai-kotlin's FinishReason; sent by the API, python-genai#2937; Kelivo retries
# it): the turn ends in this error, not in `done`.
FAILED_FINISHES: dict[str, ErrorKind] = {
    "MALFORMED_FUNCTION_CALL": "malformed_tool_arguments",
    "UNEXPECTED_TOOL_CALL": "malformed_tool_arguments",
    "MISSING_THOUGHT_SIGNATURE": "rejected",
    "MALFORMED_RESPONSE": "stream_error",
}

# The keys of a part that are read whatever else it holds: any other key is content.
_TEXT_KEYS = frozenset({"text", "thought", "thoughtSignature"})
# Candidate and grounding fields read here, or scores that are no event; any other
# field (`urlContextMetadata`, a grounding's `webSearchQueries`, `searchEntryPoint`...)
# is logged at debug, once per turn.
_CANDIDATE_KEYS = frozenset(
    {
        "content",
        "groundingMetadata",
        "citationMetadata",
        "finishReason",
        "finishMessage",
        "index",
        "safetyRatings",
        "avgLogprobs",
        "logprobsResult",
        "tokenCount",
    }
)
_GROUNDING_KEYS = frozenset({"groundingChunks", "groundingSupports"})
# A chunk's own fields read here (`createTime` says nothing to keep); any other is logged
# once per turn, as a candidate's are.
_CHUNK_KEYS = frozenset(
    {"candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "createTime"}
)
# Grounding chunk kinds (google-genai `GroundingChunk`) and the field naming the page
# each cites: an `image` chunk (Google Search image results) cites the page the image
# is on (`sourceUri`), not the image (`imageUri`), as Google's attribution asks.
_GROUNDING_SOURCES = {"web": "uri", "retrievedContext": "uri", "maps": "uri", "image": "sourceUri"}

# The data of a part that events carry, and every key read (the data and what rides with
# it); any other key beside that data (`partMetadata`) is logged.
_PART_DATA = frozenset(
    {"text", "functionCall", "executableCode", "codeExecutionResult", "toolCall", "toolResponse"}
)
_READ_PART_KEYS = _PART_DATA | _TEXT_KEYS

# The outcomes of code that ran (`Outcome`), or that say nothing of it: any other failed.
_CODE_RAN = frozenset({"OUTCOME_OK", "OUTCOME_UNSPECIFIED"})

# The parts of a step of a tool Gemini runs itself; a finish reason on a chunk holding
# one ends that step, not the turn.
_TOOL_STEP_KEYS = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")

# `promptFeedback.blockReason` values that mean "not blocked" (proto enum defaults). A
# tuple: a reason that is no string is compared, never hashed (any reason given blocks).
_NOT_BLOCKED = ("", "BLOCK_REASON_UNSPECIFIED", "BLOCKED_REASON_UNSPECIFIED")

# Google's documented placeholder for history whose thought signature is unknown
# (ai.google.dev/gemini-api/docs/thought-signatures): Gemini 3 answers 400 when the
# first functionCall of a model turn comes back without one. A call built with
# `ToolRequest.to_call()` carries the real signature instead.
SKIP_SIGNATURE = "skip_thought_signature_validator"

# The function names the Gemini API takes (`FunctionDeclaration.name`): dots and colons
# too, at most 64 characters.
TOOL_NAMES = ToolNames(
    re.compile(r"[A-Za-z0-9_.:-]{1,64}"),
    "letters, digits, '_', '-', '.' and ':', at most 64 characters (FunctionDeclaration.name)",
)


# -- usage --------------------------------------------------------------------------

# The `usageMetadata` counts read (`gemini_usage`, and the total it matches); any other
# field of the usage the turn reports is logged (`GeminiNormalizer._usage`).
_USAGE_COUNTS = frozenset(
    {
        "promptTokenCount",
        "cachedContentTokenCount",
        "toolUsePromptTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "totalTokenCount",
    }
)


def gemini_usage(raw: dict[str, Any]) -> Usage:
    """Normalize a `usageMetadata`: cached input apart, thoughts counted once."""
    prompt, cached, tool_prompt, candidates, thoughts = (
        token_count(raw.get(key))
        for key in (
            "promptTokenCount",
            "cachedContentTokenCount",
            "toolUsePromptTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
        )
    )
    total = token_count(raw.get("totalTokenCount"))
    if thoughts and prompt + tool_prompt + candidates == total:
        # A relay writing this wire from an OpenAI upstream copies `completion_tokens`,
        # thoughts included, as the candidates (CLIProxyAPI's OpenAI-to-Gemini
        # translator): its total, which Gemini's own always adds the thoughts to, says so.
        candidates = max(candidates - thoughts, 0)
    return Usage.of(
        input_tokens=max(prompt - cached, 0) + tool_prompt,
        output_tokens=candidates + thoughts,
        reasoning_tokens=thoughts,
        cache_read_tokens=cached,
    )


# -- streamed function-call arguments (Vertex `partialArgs`) --------------------------

PathKey = tuple[str | int, ...]

_SEGMENT = re.compile(
    r"\.(?P<name>[^.\[\]]+)|\[(?P<index>\d+)\]|\['(?P<single>(?:[^'\\]|\\.)*)'\]"
    r"|\[\"(?P<double>(?:[^\"\\]|\\.)*)\"\]"
)


@lru_cache(maxsize=1024)
def _json_path(path: str) -> PathKey:
    """`$.recipe.ingredients[0].name` -> ("recipe", "ingredients", 0, "name")."""
    if not path.startswith("$"):
        raise ValueError(f"a partialArgs jsonPath must start with '$': {path!r}")
    segments: list[str | int] = []
    position = 1
    while position < len(path):
        match = _SEGMENT.match(path, position)
        if match is None:
            raise ValueError(f"cannot read partialArgs jsonPath {path!r}")
        if match["index"] is not None:
            segments.append(int(match["index"]))
        else:
            segments.append(match["name"] or _name(match["single"] or match["double"] or ""))
        position = match.end()
    return tuple(segments)


# An escape in a bracketed name (RFC 9535 section 2.3.1.1): `\uXXXX`, or one character.
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.DOTALL)
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(match: re.Match[str]) -> str:
    escape = match[1]
    return chr(int(escape[1:], 16)) if len(escape) == 5 else _ESCAPED.get(escape, escape)


def _name(quoted: str) -> str:
    """A bracketed name as RFC 9535 writes it, its escapes read (`owner\\'s` is
    `owner's`, `caf\\u00e9` is `café`; a surrogate pair is one character)."""
    if "\\" not in quoted:
        return quoted
    name = _ESCAPE.sub(_unescape, quoted)
    return name.encode("utf-16", "surrogatepass").decode("utf-16")


class _StreamedCall:
    """One call whose arguments arrive as `partialArgs`: leaves by path, in order, over
    the `args` its first part may already carry (`base`).

    A string leaf is a list of its pieces (a partial argument's value is always a
    scalar, so a list can only be pieces); they are joined once, in `arguments`. A
    string that starts in `base` is the first piece of its leaf: pieces continue it.
    """

    __slots__ = ("base", "call_id", "index", "leaves", "name")

    def __init__(self, index: int, call_id: str, name: str, base: dict[str, Any]) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.base = base
        self.leaves: dict[PathKey, Any] = {}

    def add(self, partial_args: Any) -> None:
        """Raises:
        ValueError: an entry that builds no argument: not an object, a `jsonPath` that
            is no RFC 9535 path, or a value not of its field's type (a `stringValue` that
            is no string would be joined into the string it continues).
        """
        if partial_args.__class__ is not list:
            raise ValueError(f"partialArgs is {json_type(partial_args)}, not an array")
        leaves = self.leaves
        for arg in partial_args:
            if arg.__class__ is not dict:
                raise ValueError(f"a partialArgs entry is {json_type(arg)}, not an object")
            json_path = arg.get("jsonPath") or "$"
            if json_path.__class__ is not str:
                raise ValueError(f"a partialArgs jsonPath is {json_type(json_path)}, not a string")
            path = _json_path(json_path)
            if not path:
                continue  # the root itself: nothing to set
            # A member `null` is none (proto3 JSON), but `nullValue`, whose value is null.
            if arg.get("stringValue") is not None:
                piece = _typed(arg, "stringValue", str)
                pieces = leaves.get(path)
                if isinstance(pieces, list):
                    pieces.append(piece)
                else:
                    start = None if path in leaves else _value_at(self.base, path)
                    pieces = [start] if isinstance(start, str) else []
                    pieces.append(piece)
                    leaves[path] = pieces
            elif arg.get("numberValue") is not None:
                leaves[path] = _typed(arg, "numberValue", int | float)
            elif arg.get("boolValue") is not None:
                leaves[path] = _typed(arg, "boolValue", bool)
            elif "nullValue" in arg:
                leaves[path] = None

    def has_arguments(self) -> bool:
        return bool(self.leaves or self.base)

    def arguments(self) -> dict[str, Any]:
        root: dict[str, Any] = copy.deepcopy(self.base)
        for path, leaf in self.leaves.items():
            node: Any = root
            for segment, following in pairwise(path):
                child = _child(node, segment)
                if child is None:
                    child = [] if isinstance(following, int) else {}
                    _put(node, segment, child)
                node = child
            _put(node, path[-1], "".join(leaf) if isinstance(leaf, list) else leaf)
        return root


def _typed(arg: dict[str, Any], field: str, kind: Any) -> Any:
    """A partial argument's value, of its field's JSON type (a bool is no number)."""
    value = arg[field]
    if not isinstance(value, kind) or (value.__class__ is bool and kind is not bool):
        raise ValueError(f"a partialArgs {field} is {json_type(value)}")
    return value


def _value_at(node: Any, path: PathKey) -> Any:
    """The value at `path` inside `node`, or None where the path leads nowhere."""
    for segment in path:
        if not isinstance(node, dict | list):
            return None
        node = _child(node, segment)
    return node


def _child(node: Any, segment: str | int) -> Any:
    if isinstance(node, list):
        return node[segment] if isinstance(segment, int) and segment < len(node) else None
    return node.get(segment)


def _put(node: Any, segment: str | int, value: Any) -> None:
    if isinstance(node, list):
        if not isinstance(segment, int):
            raise TypeError(f"partialArgs name {segment!r} inside an array")
        node.extend([None] * (segment + 1 - len(node)))
    elif not isinstance(node, dict):
        raise TypeError(f"partialArgs path goes through a {type(node).__name__}")
    node[segment] = value


def _signature_details(part: dict[str, Any]) -> dict[str, Any]:
    """The details of the reasoning delta that carries a part's signature: the part's
    own fields beyond its text and signature, each as `True` (what they hold has events
    of its own: a call, a code part). `{}` for a text part and `{"thought": True}` for a
    thought say that the signature is Gemini's of the turn's text, which goes back on
    that text (`_sign_text`); any other part's (`{"functionCall": True}`) does not, a
    call's travelling with the call. Every one says that the signature is Gemini's, so
    that no other wire sends it back as its own (Anthropic's builder sends reasoning
    without details only)."""
    details = {key: True for key in part if key not in _TEXT_KEYS}
    if part.get("thought") is True:
        details["thought"] = True
    return details


def _blocking(ratings: Any) -> list[dict[str, Any]]:
    """The safety ratings that filtered the content (`SafetyRating.blocked`: "whether
    the content was filtered out because of this rating"), as sent."""
    if not isinstance(ratings, list):
        return []
    return [r for r in ratings if isinstance(r, dict) and r.get("blocked") is True]


def _tool_name(tool: dict[str, Any]) -> str:
    """The name of a built-in tool in a `toolCall` / `toolResponse` part: its `toolType`
    in lower case (`GOOGLE_SEARCH_WEB` -> `google_search_web`, `URL_CONTEXT`,
    `GOOGLE_MAPS`, `FILE_SEARCH`), near the request's own tool keys."""
    return (text_or_none(tool.get("toolType")) or "server_tool").lower()


def _candidate_index(candidate: dict[str, Any]) -> int:
    """A candidate's `index`. proto3 JSON leaves out the default 0 and takes an int32
    written as a string ("1"); a value that is no number names no other candidate, so it
    is candidate 0: read, not ignored (the answer lost, the turn read as cut short)."""
    index = candidate.get("index")
    if index.__class__ is int:
        return int(index)
    if isinstance(index, str) and index.strip().isdigit():
        return int(index)
    return 0


def _parts_of(candidate: dict[str, Any]) -> list[dict[str, Any]]:
    """A candidate's parts (`content.parts`); a `null` part is none, as a `null` member is.

    Raises:
        ValueError: the content, its parts or a part is of another JSON type: the answer
            they hold cannot be read.
    """
    content = candidate.get("content")
    if not content:
        return []
    if content.__class__ is not dict:
        raise ValueError(f"a candidate's content is {json_type(content)}, not an object")
    parts = content.get("parts")
    if not parts:
        return []
    if parts.__class__ is not list:
        raise ValueError(f"a candidate's content.parts is {json_type(parts)}, not an array")
    if all(part.__class__ is dict for part in parts):
        return parts
    for part in parts:
        if part is not None and part.__class__ is not dict:
            raise ValueError(f"a part is {json_type(part)}, not an object")
    return [part for part in parts if part is not None]


# -- the normalizer -------------------------------------------------------------------


class GeminiNormalizer(Normalizer):
    """Gemini chunks -> fragments. Only candidate 0 is read (candidateCount > 1 is not
    one stream); others are ignored, with a warning once per stream."""

    __slots__ = (
        "answered",
        "blocked",
        "calls",
        "cited",
        "finish",
        "finish_message",
        "open_call",
        "server_call_ids",
        "server_calls",
        "tool_step",
        "unread_fields",
        "usage_raw",
        "warned_candidates",
    )

    def __init__(self, emit: Emit, provider: str, attempt: int = 1) -> None:
        super().__init__(emit, provider, attempt)
        self.finish: Any = None  # as the wire wrote it: a word, or the enum's number
        self.finish_message: str | None = None
        self.tool_step = False  # the finish reason may not end the turn (see `_candidate`)
        self.answered = False  # a candidate has had parts
        self.warned_candidates = False
        self.blocked = False
        self.usage_raw: dict[str, Any] | None = None
        self.calls = 0
        self.open_call: _StreamedCall | None = None
        # Calls of each provider-run tool in the turn (for ids the wire omits), and the
        # latest one's id, which a result without an id answers.
        self.server_calls: dict[str, int] = {}
        self.server_call_ids: dict[str, str] = {}
        self.cited: set[str] = set()  # grounding uris already emitted
        self.unread_fields: set[str] = set()  # "where.field" no event carries, logged once

    def on_chunk(self, chunk: RawChunk) -> None:
        # Vertex sends `usageMetadata: {"trafficType": ...}` alone on the chunks before
        # the last: only a usage with counts replaces the one kept.
        if chunk.data.strip() == "[DONE]":
            # OpenAI's end marker that relays append to a Gemini stream (prism-php's
            # Vertex fixture; antigravity2api-nodejs#73): not a chunk, nor an end of its
            # own: the body's end still settles the turn, by its finish or as cut short
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored an OpenAI-style [DONE] in a Gemini stream"
            )
            return
        payload = self.read_chunk(chunk.data)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object, got {json_type(payload)}")
        if "candidates" not in payload and payload.get("error") is None:
            kind = payload.get("type")
            other = other_api("google", kind, payload)
            if other is not None:
                # (each was logged, the turn ended cut short and retried, with no word
                # of what it was). Asked before Code Assist's envelope is opened: a
                # Responses event holds a `response` too.
                self.another_api(
                    other,
                    kind,
                    chunk.data,
                    "a generateContent chunk: this wire reads streamGenerateContent streams",
                )
                return
        wrapped = payload.get("response")
        if wrapped.__class__ is dict and "candidates" not in payload:
            payload = wrapped  # Code Assist's envelope: the chunk is inside
        error = payload.get("error")
        if error is not None:
            self._error(error)
            return
        event_type = payload.get("event_type")
        if event_type.__class__ is str and "candidates" not in payload:
            self.fail(
                "protocol",
                f"the stream is Google's Interactions API ({event_type!r} event), not "
                "generateContent: the Gemini wire reads streamGenerateContent streams",
            )
            return
        if not _CHUNK_KEYS.issuperset(payload):
            self._unread_fields(payload.keys() - _CHUNK_KEYS, "response chunk")
        model = text_or_none(payload.get("modelVersion"))
        if model is not None:
            self.model = model
            if self.response_id is None:
                self.response_id = text_or_none(payload.get("responseId"))
        usage = payload.get("usageMetadata")
        if usage.__class__ is dict:
            if "totalTokenCount" in usage or "promptTokenCount" in usage:
                self.usage_raw = usage
        elif usage is not None:  # no counts to read: the turn's answer does not need them
            self._not_read("usageMetadata", usage)
        candidate = self._first_candidate(payload.get("candidates"))
        # a finish said again (gemini-pro's on every chunk) did not end the turn before it
        repeated = (
            not self.blocked and candidate is not None and bool(candidate.get("finishReason"))
        )
        if self.finish is not None and not self.tool_step and not repeated:
            if candidate is not None:
                self._sources(candidate)  # late metadata: each uri is cited once
                if candidate.get("content"):
                    logger.bind(provider=self.provider, attempt=self.attempt).debug(
                        "ignored candidate parts after the finish reason {}", self.finish
                    )
            return
        feedback = payload.get("promptFeedback")
        if feedback is not None and feedback.__class__ is not dict:
            self._not_read("promptFeedback", feedback)
        elif feedback:
            block = feedback.get("blockReason") or ""
            if block not in _NOT_BLOCKED:
                self.finish, self.blocked = block, True
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "prompt blocked ({}): {}", block, feedback.get("blockReasonMessage")
                )
                blocking = _blocking(feedback.get("safetyRatings"))
                if blocking:
                    logger.bind(provider=self.provider, attempt=self.attempt).debug(
                        "prompt blocked ({}) by the ratings {}", block, blocking
                    )
                return
        if candidate is not None:
            self._candidate(candidate)

    def _first_candidate(self, candidates: Any) -> dict[str, Any] | None:
        """Candidate 0 of a chunk; any other is ignored, with a warning once per stream.

        Raises:
            ValueError: `candidates` or one of them is no JSON array or object (`null`
                is none: a relay writing every member).
        """
        if not candidates:
            return None
        if candidates.__class__ is not list:
            raise ValueError(f"the chunk's candidates are {json_type(candidates)}, not an array")
        first = None
        for candidate in candidates:
            if candidate is None:
                continue
            if candidate.__class__ is not dict:
                raise ValueError(f"a candidate is {json_type(candidate)}, not an object")
            index = _candidate_index(candidate)
            if index == 0:
                if first is None:
                    first = candidate
            elif not self.warned_candidates:
                self.warned_candidates = True
                logger.bind(provider=self.provider, attempt=self.attempt).warning(
                    "candidate {} ignored: only candidate 0 is read "
                    "(candidateCount > 1 is not one stream)",
                    index,
                )
        return first

    def end(self) -> None:
        finish = self.finish
        if finish is None:  # no finish reason: `normalize` reports the stream truncated
            self.release()
            return
        call = self.open_call
        if call is not None:
            self.fail(
                "malformed_tool_arguments",
                f"arguments of {named_call(call.call_id, call.name)} were still "
                f"streaming when the turn finished ({finish})",
            )
            return
        # The enum is case-insensitive (google-genai's `FinishReason` is a
        # `CaseInSensitiveEnum`): a relay's `stop` is `STOP`.
        word = finish.upper() if isinstance(finish, str) else None
        failure = None if self.blocked or word is None else FAILED_FINISHES.get(word)
        if self.usage_raw is not None:
            usage = self._usage()
            if failure is None:
                self.usage(usage)
            else:  # what the refused request cost: it commits nothing
                self.failure_usage(usage)
        if self.blocked:
            self.done("content_filter", finish)
            return
        if failure is not None:
            message = self.finish_message
            self.fail(
                failure,
                f"Gemini ended the turn with {finish}" + (f": {message}" if message else ""),
                code=finish,
                raw=json.dumps({"finishReason": finish, "finishMessage": message}),
            )
            return
        if finish.__class__ is int:  # the enum's number (not a bool, which is no reason)
            stop = FINISH_NUMBERS.get(finish, "other")
        else:
            stop = stop_reason_of(word, FINISH_REASONS)
        self.done("tool_use" if stop == "stop" and self.calls else stop, finish)

    def release(self) -> None:
        """Before a failure: the latest usage is what the turn cost so far (Gemini sends
        it, cumulative, on every chunk), the failure's own (`FailureUsage`)."""
        if self.usage_raw is not None:
            self.failure_usage(self._usage())

    def _usage(self) -> Usage:
        """The latest usage's counts; the fields beside them that no event carries (the
        per-modality `*TokensDetails`, Vertex's `trafficType`) are logged with it."""
        raw = self.usage_raw or {}
        if not _USAGE_COUNTS.issuperset(raw):
            unread = {key: value for key, value in raw.items() if key not in _USAGE_COUNTS}
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "no event carries the usage fields {}", unread
            )
        return gemini_usage(raw)

    def _candidate(self, candidate: dict[str, Any]) -> None:
        parts = _parts_of(candidate)
        if parts:
            self.answered = True
            calls: list[dict[str, Any]] = []
            for part in parts:
                if len(part) > 1:  # beside its data, a part may hold fields no event carries
                    self._beside(part)
                if part.get("functionCall") is not None:  # a null member is no member
                    calls.append(part)
                    if part.get("text"):
                        # A part is one kind of data (a oneof), but its JSON has a member
                        # for each: text a relay writes beside the call is read, as
                        # google-genai reads both; its signature stays the call's.
                        self._part({key: part[key] for key in ("text", "thought") if key in part})
                else:
                    self._part(part)
            for part in calls:  # after every text-like part of the chunk: text first
                if self.settled:
                    return
                self._call(part)
        if not self.settled:
            self._sources(candidate)
        finish = candidate.get("finishReason")
        if finish:
            self.finish = finish
            # A finish on a built-in tool's step: the tool runs and the answer follows. A
            # finish before any part is not the answer's end either: relays translating
            # an OpenAI stream stamp STOP on its empty leading chunks (CLIProxyAPI#5651).
            self.tool_step = not self.answered or any(
                part.get(key) is not None for part in parts for key in _TOOL_STEP_KEYS
            )
            message = candidate.get("finishMessage")
            if message and message.__class__ is not str:  # said in JSON, not Python's repr
                message = json.dumps(message, ensure_ascii=False)
            self.finish_message = message or None  # the latest finish's
            if message:
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "finish {}: {}", finish, message
                )
            blocking = _blocking(candidate.get("safetyRatings"))
            if blocking:  # what filtered the answer (SAFETY and its kin): no event's
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "finish {}: blocked by the ratings {}", finish, blocking
                )
        if candidate.keys() - _CANDIDATE_KEYS:
            self._unread_fields(candidate.keys() - _CANDIDATE_KEYS, "candidate")

    def _part(self, part: dict[str, Any]) -> None:
        signature = self._signature(part)
        text = part.get("text")
        # A text or thought part's signature goes back on the turn's text: its details
        # (the part's own fields, `thought`) mark it as one (`gemini_contents`).
        details = _signature_details(part) if signature else None
        thought = part.get("thought") is True  # (JSON's true: a "false" is no thought)
        if thought and text:
            self.reasoning(text, signature, details=details)
        elif signature:
            self.reasoning("", signature, details=details)
        if text:
            if not thought:
                self.text(text)
            return
        # A part holds one kind of data; `thought` on code or a built-in tool's step
        # (Gemini 2.5 runs code while thinking) still means the tool ran: shown as any
        # other step, as google-genai clients do. A thought image stays unread below.
        # A step that is no object says nothing to show: logged below as a part no event
        # carries, and the answer goes on (the provider ran the tool, not the client).
        code = part.get("executableCode")
        if code.__class__ is dict:
            arguments = {key: code[key] for key in ("language", "code") if key in code}
            self._server_call("code_execution", code.get("id"), arguments)
            return
        result = part.get("codeExecutionResult")
        if result.__class__ is dict:
            content = {key: result[key] for key in ("outcome", "output") if key in result}
            # OUTCOME_FAILED (the code raised), OUTCOME_DEADLINE_EXCEEDED (it ran too long)
            outcome = result.get("outcome")
            failed = isinstance(outcome, str) and outcome not in _CODE_RAN
            self._server_result("code_execution", result.get("id"), content, failed)
            return
        tool = part.get("toolCall")  # a built-in tool's call (tool combination)
        if tool.__class__ is dict:
            args = tool.get("args")
            self._server_call(
                _tool_name(tool), tool.get("id"), args if args.__class__ is dict else {}
            )
            return
        tool = part.get("toolResponse")
        if tool.__class__ is dict:
            self._server_result(_tool_name(tool), tool.get("id"), tool.get("response") or {})
            return
        if any(part[key] is not None for key in part.keys() - _TEXT_KEYS):
            self._unread(part)  # a member `null` (a relay's struct) is no member

    def _server_call(self, name: str, call_id: Any, arguments: dict[str, Any]) -> None:
        """A call of a tool Gemini runs itself; its id is the wire's, else
        `{name}_{tag}_{n}` (`n` counts that tool's calls in the turn)."""
        number = self.server_calls.get(name, 0)
        self.server_calls[name] = number + 1
        call_id = text_or_none(call_id) or f"{name}_{self.response_tag()}_{number}"
        self.server_call_ids[name] = call_id
        self.server_tool_call(call_id, name, arguments)

    def _server_result(self, name: str, call_id: Any, content: Any, is_error: bool = False) -> None:
        """That tool's result; without an id it answers the tool's latest call (or,
        with no call before it, is still shown under an id of its own)."""
        call_id = text_or_none(call_id) or self.server_call_ids.get(name)
        if call_id is None:
            number = self.server_calls.get(name, 0)
            self.server_calls[name] = number + 1
            call_id = f"{name}_{self.response_tag()}_{number}"
        self.server_tool_result(call_id, name, content, is_error=is_error)

    def _beside(self, part: dict[str, Any]) -> None:
        """Fields beside a part's data that no event carries (`partMetadata`, a
        `videoMetadata` or `mediaResolution`), logged by name once per turn; a part
        whose data no event carries is logged whole (`_unread`)."""
        if _READ_PART_KEYS.issuperset(part):  # a thought, a signed text or call: no set built
            return
        extra = {key for key in part.keys() - _READ_PART_KEYS if part[key] is not None}
        if extra and any(part.get(key) is not None for key in _PART_DATA):
            self._unread_fields(extra, "part")

    def _unread(self, part: dict[str, Any]) -> None:
        """A part no event carries: logged by its keys (its data may be a whole image)."""
        logger.bind(provider=self.provider, attempt=self.attempt).debug(
            "no event carries a part with keys {}", sorted(part)
        )

    def _sources(self, candidate: dict[str, Any]) -> None:
        """A candidate's grounding and recitation sources as citations. None of it is the
        answer: metadata of another shape is logged (`_not_read`), never the turn's end."""
        grounding = candidate.get("groundingMetadata")
        if grounding.__class__ is dict:
            self._grounding(grounding)
        elif grounding:
            self._not_read("groundingMetadata", grounding)
        recited = candidate.get("citationMetadata")
        if recited.__class__ is dict:
            sources = recited.get("citationSources") or recited.get("citations")
            for source in self._entries(sources, "citationMetadata sources"):
                uri = text_or_none(source.get("uri"))
                if uri is not None:
                    self._cite(uri, source.get("title"))
                else:  # a license, or only the range of the answer it covers
                    self._unread_fields(set(source), "citation source without a uri")
        elif recited:
            self._not_read("citationMetadata", recited)

    def _grounding(self, grounding: dict[str, Any]) -> None:
        """Grounding sources as citations, each uri once per turn."""
        for source in self._entries(grounding.get("groundingChunks"), "groundingChunks"):
            cited = False
            for kind, uri_key in _GROUNDING_SOURCES.items():
                ref = source.get(kind)
                if ref.__class__ is not dict:
                    continue
                uri = text_or_none(ref.get(uri_key))
                if uri is not None:
                    self._cite(uri, ref.get("title"))
                    cited = True
            if not cited:  # a File Search document, a kind newer than this module
                self._unread_fields(set(source), "grounding chunk without a uri")
        if grounding.keys() - _GROUNDING_KEYS:
            self._unread_fields(grounding.keys() - _GROUNDING_KEYS, "grounding")

    def _entries(self, entries: Any, where: str) -> list[dict[str, Any]]:
        """The objects of a list of sources; a list or an entry of another type is logged."""
        if not entries:
            return []
        if entries.__class__ is not list:
            self._not_read(where, entries)
            return []
        objects = [entry for entry in entries if entry.__class__ is dict]
        if len(objects) < len(entries):
            self._not_read(f"an entry of {where}", entries)
        return objects

    def _not_read(self, where: str, value: Any) -> None:
        """A field of a shape Gemini does not send, which no event needs: logged at debug,
        once per turn and place, by its type (it may be long); the turn goes on."""
        key = f"not read.{where}"
        if key not in self.unread_fields:
            self.unread_fields.add(key)
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored {}: {}, which Gemini does not send there", where, json_type(value)
            )

    def _signature(self, part: dict[str, Any]) -> str | None:
        """A part's `thoughtSignature`; one that is no string is left out (logged): the
        part's answer stands, and a call without one goes back with Google's placeholder
        (`gemini_contents`)."""
        signature = part.get("thoughtSignature")
        if signature is not None and signature.__class__ is not str:
            self._not_read("thoughtSignature", signature)
        return text_or_none(signature)

    def _unread_fields(self, fields: set[str], where: str) -> None:
        """Fields no event carries, logged by name (a search entry point is a page of
        HTML), each once per turn and place."""
        new = {name for name in fields if f"{where}.{name}" not in self.unread_fields}
        if new:
            self.unread_fields.update(f"{where}.{name}" for name in new)
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "no event carries the {} fields {}", where, sorted(new)
            )

    def _cite(self, uri: str, title: Any) -> None:
        if uri not in self.cited:
            self.cited.add(uri)
            self.citation(uri, text_or_none(title))

    def _call(self, part: dict[str, Any]) -> None:
        call = part["functionCall"]
        if call.__class__ is not dict:
            raise ValueError(f"a functionCall is {json_type(call)}, not an object")
        signature = self._signature(part)
        if signature:
            self.reasoning("", signature, details=_signature_details(part))
        name = call.get("name")
        open_call = self.open_call
        if name is not None and name.__class__ is not str:
            self.fail(
                "malformed_tool_arguments",
                f"Gemini sent a function call whose name is {json_type(name)}, not a string",
            )
            return
        if name:
            if open_call is not None:
                self.fail(
                    "malformed_tool_arguments",
                    f"arguments of {named_call(open_call.call_id, open_call.name)} "
                    f"were still streaming when tool call {name!r} began",
                )
                return
            index = self.calls
            self.calls += 1
            # An id that is no string is none: the call gets one of rxllm's.
            given = text_or_none(call.get("id"))
            call_id = given or f"{name}_{self.response_tag()}_{index}"
            # Gemini's own id goes back on the call and its result (`gemini_contents`);
            # one rxllm made up does not.
            details = None if given is None else {"id": given}
            self.tool_start(call_id, name, index, signature, details)
            partial_args = call.get("partialArgs")
            if call.get("willContinue") or partial_args:
                # The arguments known so far may come whole with the name: the
                # partial ones add to them.
                base = call.get("args")
                if base is not None and base.__class__ is not dict:
                    self.fail(
                        "malformed_tool_arguments",
                        f"arguments of {named_call(call_id, name)} are "
                        f"{json_type(base)}, not an object",
                    )
                    return
                open_call = self.open_call = _StreamedCall(index, call_id, name, base or {})
            elif call.get("args") is not None:  # `null` is no args (proto3 JSON)
                self.tool_args(index, json.dumps(call["args"], ensure_ascii=False))
                self.tool_end(index)
                return
            else:
                self.tool_end(index)  # complete with no arguments: a call without parameters
                return
        elif open_call is None:
            if call.get("partialArgs"):
                raise ValueError("partialArgs for a function call that never began")
            if call.get("args") or call.get("id") is not None:
                # A call made, whose function is unknown: it cannot be dispatched, and
                # left out, the turn would look answered (the `done` of a final answer).
                self.fail(
                    "malformed_tool_arguments",
                    f"Gemini sent a function call that names no function (keys {sorted(call)})",
                )
            elif call:  # more than a stray `{}` terminator, and nothing that calls
                logger.bind(provider=self.provider, attempt=self.attempt).debug(
                    "ignored a functionCall without a name, keys {}", sorted(call)
                )
            return
        elif call.get("args"):  # whole args on a later part: no rule says how they merge
            logger.bind(provider=self.provider, attempt=self.attempt).debug(
                "ignored args on a continued part of tool call {!r}", open_call.call_id
            )
        partial_args = call.get("partialArgs")
        ends = not call.get("willContinue")
        try:
            if partial_args:
                open_call.add(partial_args)
            built = open_call.arguments() if ends and open_call.has_arguments() else None
        except (ValueError, TypeError) as exc:  # a path no RFC 9535 path, shapes at odds
            self.fail(
                "malformed_tool_arguments",
                f"arguments of {named_call(open_call.call_id, open_call.name)} cannot be "
                f"built from their partialArgs: {exc}",
            )
            return
        if ends:
            self.open_call = None
            if built is not None:
                self.tool_args(open_call.index, json.dumps(built, ensure_ascii=False))
            self.tool_end(open_call.index)

    def _error(self, error: Any) -> None:
        if isinstance(error, dict):
            message = str(error.get("message") or "the server reported an error")
            code, status_name = error.get("code"), error.get("status")
        else:
            message, code, status_name = str(error), None, None
        status = code if isinstance(code, int) and 400 <= code < 600 else None
        body = parse_error_payload({"error": error})  # RetryInfo, RequestInfo: as over HTTP
        self.release()
        self.fail(
            "stream_error",
            message,
            status=status,
            code=status_name if isinstance(status_name, str) else None,
            raw=json.dumps(error),
            retry_after=body.retry_after,
            request_id=body.request_id,
        )


# -- the request body -----------------------------------------------------------------

# `generationConfig` fields (ai.google.dev/api/generate-content#generationconfig); a
# param named by one of these, or by its snake_case form, goes inside it.
_GENERATION_CONFIG = frozenset(
    {
        "stopSequences",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "responseModalities",
        "candidateCount",
        "maxOutputTokens",
        "temperature",
        "topP",
        "topK",
        "seed",
        "presencePenalty",
        "frequencyPenalty",
        "responseLogprobs",
        "logprobs",
        "enableEnhancedCivicAnswers",
        "speechConfig",
        "thinkingConfig",
        "imageConfig",
        "mediaResolution",
    }
)
# The OpenAI-style names users reach for first.
_ALIASES = {
    "max_tokens": "maxOutputTokens",
    "max_completion_tokens": "maxOutputTokens",
    "stop": "stopSequences",
    "n": "candidateCount",
}


# `ChatRequest.tool_choice` modes as `functionCallingConfig.mode` names them: ANY is
# "constrained to always predicting function calls only" (Vertex AI's ToolConfig).
_GEMINI_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}


def _declares_functions(tools: Any) -> bool:
    """Whether params' own `tools` hold a function declaration (either spelling)."""
    if not isinstance(tools, list):
        return False
    return any(
        isinstance(tool, Mapping)
        and bool(tool.get("functionDeclarations") or tool.get("function_declarations"))
        for tool in tools
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def gemini_body_params(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(generationConfig, other top-level keys) of a request's params.

    Known generation settings, by Gemini's name, its snake_case form or an OpenAI
    alias (`max_tokens`, `stop`, `n`), go into `generationConfig`; a given
    `generationConfig` dict is merged in; anything else passes through at the top
    level (`safetySettings`, `toolConfig`, `cachedContent`, ...), as in every wire.
    Keys the wire writes itself are refused before this (`Google.request_keys`).

    Raises:
        ConfigError: one setting given twice (a sampling field or param and the same
            key in a `generationConfig` dict, or two spellings of it): one would be
            lost.
    """
    config: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    given: dict[str, str] = {}  # setting (camelCase) -> where it was given

    def put(target: str, value: Any, where: str) -> None:
        setting = _camel(target)
        if setting in given:
            raise ConfigError(
                f"generationConfig.{setting} is set twice, as {given[setting]!r} and "
                f"{where!r}: keep one"
            )
        given[setting] = where
        config[target] = value

    for key, value in params.items():
        if key in ("generationConfig", "generation_config"):
            if not isinstance(value, dict):
                raise ConfigError(
                    f"params {key!r} must be an object of generation settings, "
                    f"got {type(value).__name__}"
                )
            for name, setting in value.items():
                put(name, setting, f"{key}.{name}")
            continue
        target = _ALIASES.get(key) or (key if key in _GENERATION_CONFIG else _camel(key))
        if target in _GENERATION_CONFIG:
            if target == "stopSequences" and isinstance(value, str):
                value = [value]
            put(target, value, key)
        else:
            extra[key] = value
    return config, extra


def _parts(content: Sequence[Part]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            if part.text:  # Gemini rejects an empty text part
                parts.append({"text": part.text})
        elif isinstance(part, ImagePart):
            inline = part.inline
            if inline is not None:
                parts.append({"inlineData": {"mimeType": inline[0], "data": inline[1]}})
            else:
                parts.append({"fileData": _file_data(part)})
    return parts


# The type of an image whose URL does not say it, as the AI SDK's google provider sends an
# image of unknown type (`image/*` becomes `image/jpeg`).
_IMAGE_BY_DEFAULT = "image/jpeg"

# A file of Gemini's Files API (`https://generativelanguage.googleapis.com/v1beta/files/
# {id}`): the API has its type, whatever it is (a video, audio, a document).
_GEMINI_FILE = re.compile(r"https://generativelanguage\.googleapis\.com/[^?#]*/files/")


def _file_data(part: ImagePart) -> dict[str, str]:
    """An image by its URL, with its type: `media_type`, else the one its URL's path says,
    else `_IMAGE_BY_DEFAULT`. Vertex AI requires the type (`FileData.mime_type`: "Required";
    without it, 400 "it has an empty mimeType parameter in fileData"); the Gemini API reads
    it where given. A file of Gemini's Files API goes without one unless given: the API
    knows its type, which a default would misname."""
    media_type = part.media_type or mimetypes.guess_type(urlsplit(part.url).path)[0]
    if media_type is None and _GEMINI_FILE.match(part.url) is None:
        media_type = _IMAGE_BY_DEFAULT
    file_data = {"fileUri": part.url}
    if media_type:
        file_data["mimeType"] = media_type
    return file_data


def _function_response(content: str, is_error: bool = False) -> dict[str, Any]:
    """A tool result as Gemini's `response` object: a JSON object as itself, a JSON
    array (`Message.tool(id, [...])`) as the array under `output` (the key Google's
    docs name for a function's output), any other text as it is under `output`. A
    failed call's (`is_error`) goes under `error`, the key the docs name for one."""
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    if is_error:
        return {"error": content if value is None else value}
    if isinstance(value, dict):
        return value
    return {"output": value if isinstance(value, list) else content}


def _sign_text(parts: list[dict[str, Any]], content: Sequence[Part]) -> None:
    """Put the signature Gemini gave a model turn's text back on that text.

    Google's thought-signatures guides ask for the signatures of earlier responses
    back in later requests, so that the model keeps its reasoning context (a missing
    one is a 400 only where it is required, on a function call). The normalizer marks
    a text or thought part's signature with its part's details (`{}` or
    `{"thought": true}`; no other wire's details are either); the last such signature
    (the one closing the thoughts before the answer, or a stream's last, sent on an empty
    text part) goes on the turn's last text part (a record keeps a run of text between
    other parts as a part of its own). Thought text itself is not sent back, and a
    signature from another provider is never sent to Gemini."""
    signature = gemini_text_signature(content)
    if signature is None:
        return
    for entry in reversed(parts):
        if "text" in entry:
            entry["thoughtSignature"] = signature
            return


def _gemini_id(call: ToolCall) -> str | None:
    """The id Gemini gave `call` (its `functionCall.id`, kept in its details by the
    normalizer), or None for a call Gemini gave none (rxllm named it) or another
    provider made."""
    given = call.details.get("id") if call.details else None
    return given if isinstance(given, str) and given == call.id else None


def gemini_contents(messages: list[Message]) -> tuple[list[dict[str, Any]], list[str]]:
    """(contents, system texts) of a conversation.

    Roles become `user` and `model`; system messages, wherever they are, become the
    `systemInstruction`. A tool result is a `functionResponse` part named after the
    earlier assistant call with its id (Gemini matches results by name and order). A
    call whose `id` Gemini gave (`ToolCall.details`, as the normalizer keeps it) goes
    back with it, and so does its result: the API asks for the call's id on its
    `functionResponse` ("Populated by the client to match the corresponding function
    call id") where it sent one. No other id is sent: Vertex gives none, google-genai
    refuses `id` for Vertex ("id parameter is not supported in Vertex AI"), and ids
    rxllm or another provider made mean nothing to Gemini. Consecutive results share one
    `user` content, as parallel calls need, in
    the order of the calls, whatever order they finished in. Images in a tool result
    follow the turn's function responses as parts of their own: nested in
    `functionResponse.parts` they are refused by models before Gemini 3 ("Multimodal
    function responses are not supported for this model"). Consecutive assistant
    messages are one `model` content: Gemini refuses a function call turn that does not
    follow a user or function response turn, and histories often hold a turn's text and
    its calls apart. A model turn's text and calls go back with their thought
    signatures (`_sign_text`).
    """
    # call id -> (name, its place among the calls, Gemini's id for it or None)
    calls: dict[str, tuple[str, int, str | None]] = {}
    # Counted, not `len(calls)`: an id may come back in a later turn (a server's, or one
    # rxllm gave Gemini's calls before they were unique per response, `{name}_{index}`):
    # a result answers the latest call holding its id.
    places = count()
    contents: list[dict[str, Any]] = []
    system: list[str] = []
    results: list[dict[str, Any]] | None = None  # the parts of the open tool-result turn
    answered: list[int] = []  # the call position of each function response in it, in order
    for message in messages:
        role = message.role
        if role == "system":
            if message.images:  # `systemInstruction` is read for its text: not dropped unsaid
                raise ConfigError(
                    "Gemini's systemInstruction takes text only: send the system message's "
                    "images in a user message"
                )
            if message.text:
                system.append(message.text)
            continue
        if role == "tool":
            call_id = message.tool_call_id or ""
            if call_id not in calls:
                raise ConfigError(
                    f"tool result for call id {call_id!r} follows no assistant tool call "
                    "with that id: Gemini needs the function's name"
                )
            name, position, given = calls[call_id]
            response: dict[str, Any] = {"name": name}
            if given is not None:
                response["id"] = given
            response["response"] = _function_response(message.text, message.is_error)
            part = {"functionResponse": response}
            if results is None:
                results, answered = [], []
                contents.append({"role": "user", "parts": results})
            at = bisect_right(answered, position)
            answered.insert(at, position)
            results.insert(at, part)
            results += _parts(message.images)
            continue
        results = None
        parts = _parts(message.content)
        if role == "assistant":
            _sign_text(parts, message.content)
            for number, call in enumerate(message.tool_calls):
                given = _gemini_id(call)
                calls[call.id] = (call.name, next(places), given)  # the order of the calls
                function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
                if given is not None:
                    function_call["id"] = given
                entry: dict[str, Any] = {"functionCall": function_call}
                signature = call.signature or (SKIP_SIGNATURE if number == 0 else None)
                if signature:
                    entry["thoughtSignature"] = signature
                parts.append(entry)
        if not parts:
            continue
        if role == "assistant" and contents and contents[-1]["role"] == "model":
            contents[-1]["parts"] += parts
        else:
            contents.append({"role": "model" if role == "assistant" else "user", "parts": parts})
    return contents, system


def _model_path(model: str) -> str:
    """`models/<id>` (or `tunedModels/<id>`) with the id escaped, so a model name can
    never change the rest of the path."""
    collection, slash, rest = model.partition("/")
    if slash and collection in ("models", "tunedModels"):
        return f"{collection}/{quote(rest, safe='')}"
    return f"models/{quote(model, safe='')}"


def _key_env() -> str:
    """GEMINI_API_KEY, or GOOGLE_API_KEY when only that one is set (Google's SDKs read
    both; with both set, the Gemini-specific one wins)."""
    if not os.environ.get("GEMINI_API_KEY") and os.environ.get("GOOGLE_API_KEY"):
        return "GOOGLE_API_KEY"
    return "GEMINI_API_KEY"


class Google(WireProtocol):
    """The Gemini API's streaming wire (`generativelanguage.googleapis.com`), which
    Vertex AI's `streamGenerateContent?alt=sse` speaks too."""

    name = "google"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    tool_names = TOOL_NAMES
    # The registry's "Multimodal content generation operation such as Gemini Generate
    # Content" (and what the google-genai instrumentation reports).
    genai_operation = "generate_content"
    system_apart = "all"  # every system message goes in `systemInstruction`
    recovery = RecoveryPolicy(mandatory_body_keys=frozenset({"contents"}))
    # Gemini reads both spellings of a field, so both are the wire's own.
    request_keys: ClassVar[Mapping[str, str]] = {
        **REQUEST_KEYS,
        "model": "the model is ChatRequest.model (Gemini takes it in the URL)",
        "contents": "the contents are written from ChatRequest.messages",
        "systemInstruction": "it is the request's system messages (Message.system)",
        "system_instruction": "it is the request's system messages (Message.system)",
    }
    # Every one is a generationConfig setting (`add_params` puts it there).
    sampling_keys: Mapping[str, str] = {
        "temperature": "temperature",
        "top_p": "topP",
        "max_tokens": "maxOutputTokens",
        "stop": "stopSequences",
        "seed": "seed",
        "presence_penalty": "presencePenalty",
        "frequency_penalty": "frequencyPenalty",
    }

    def __init__(self) -> None:
        # Read when the provider is built (`wire_for` builds a fresh wire each time).
        self.api_key_env = _key_env()

    def url(self, base_url: str, request: ChatRequest) -> str:
        return endpoint(base_url, f"/{_model_path(request.model)}:streamGenerateContent?alt=sse")

    def hint(self, error: ErrorInfo, base_url: str) -> str | None:
        # The Gemini API lives under a version path; a base URL without one 404s.
        path = base_url.partition("?")[0].rstrip("/")
        if error.status != 404 or path.endswith(("/v1beta", "/v1")):
            return None
        return (
            f"the Gemini API's base URL ends with its version, /v1beta "
            f"({self.default_base_url}): is base_url={base_url!r} missing it?"
        )

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            headers["x-goog-api-key"] = api_key
        return headers

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        contents, system = gemini_contents(request.messages)
        if not contents:  # the API's 400: "contents is not specified"
            raise ConfigError(
                "google needs a message besides the system instruction, and one that says "
                "something: an empty text is left out"
            )
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
        if request.tools:
            declarations = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    # Full JSON Schema; `parameters` takes only an OpenAPI subset and
                    # refuses an object schema with no properties.
                    "parametersJsonSchema": tool.parameters,
                }
                for tool in request.tools
            ]
            body["tools"] = [{"functionDeclarations": declarations}]
        return body

    def add_params(self, body: dict[str, Any], params: Mapping[str, Any]) -> None:
        """Generation settings into `generationConfig` (which only params write), the
        rest at the top level, where a key the wire wrote (`tools`) is refused."""
        config, extra = gemini_body_params(params)
        self.refuse_overwrite(body, extra)
        if config:
            body["generationConfig"] = config
        body.update(extra)

    def tool_choice_body(self, choice: str, request: ChatRequest) -> dict[str, Any]:
        """`toolConfig.functionCallingConfig`: mode `AUTO`, `ANY` or `NONE`, a name as
        `ANY` with `allowedFunctionNames: [name]`. A `toolConfig` in params (under
        either spelling, which it keeps) holds Gemini's other tool settings
        (`includeServerSideToolInvocations`): the mode joins them.

        The mode governs declared functions only, and the Gemini API refuses it without
        one ("Function calling config is set without function_declarations."): with
        only Gemini's own tools in params (`googleSearch`, `codeExecution`), `auto` is
        written as nothing, as it is Gemini's default.

        Raises:
            ConfigError: `none` with only Gemini's own tools, which no mode turns off.
        """
        if not request.tools and not _declares_functions(request.params.get("tools")):
            if choice == "auto":
                return {}
            raise ConfigError(
                f"google cannot send tool_choice={choice!r} with only its own tools "
                "(params['tools'] declares no function): functionCallingConfig governs "
                "declared functions only, and Gemini refuses it without one; leave those "
                "tools out to answer in text"
            )
        if choice in TOOL_CHOICE_MODES:
            config: dict[str, Any] = {"mode": _GEMINI_MODES[choice]}
        else:
            config = {"mode": "ANY", "allowedFunctionNames": [choice]}
        key = "tool_config" if "tool_config" in request.params else "toolConfig"
        given = request.params.get(key)
        return {
            key: {**(given if isinstance(given, Mapping) else {}), "functionCallingConfig": config}
        }

    def response_format_body(
        self, output: Literal["json"] | JsonSchema, request: ChatRequest
    ) -> dict[str, Any]:
        """`generationConfig.responseMimeType: "application/json"`, with the schema as
        `responseJsonSchema` ("an alternative to responseSchema that accepts JSON Schema";
        `responseSchema` takes an OpenAPI subset). `add_params` puts both in
        `generationConfig`, beside the settings given there. Gemini has no place for the
        name, the description or `strict` (it always follows the schema)."""
        if output == "json":
            return {"responseMimeType": "application/json"}
        return {"responseMimeType": "application/json", "responseJsonSchema": output.schema_}

    def normalizer(self, emit: Emit, provider: str, attempt: int = 1) -> GeminiNormalizer:
        return GeminiNormalizer(emit, provider, attempt)
