"""What the embedded local provider says: protocol-neutral scripts of a turn.

A script is a sequence of steps (reasoning, text with its citations, a refusal, tool
calls, tools the provider runs itself) plus how the turn ends (a finish, a pause, an
error inside the stream, or a cut). Each wire encoder in this package
renders a script in its own protocol, so every protocol tells the same stories.

The request's tool choice, read from each wire's own form, is honoured: `none` answers
in text, `required` or a named tool calls that tool (the one the user asks about among
those it may call, else the first) at once, as a forced call comes, even after a tool's
result; `auto` is the usual story.

Faults and the other stories are chosen by the request's model name, `fault/<name>`
(see `FAULTS`, which holds `STORIES`: `refusal`, `web_search`, `code_execution`,
`pause`, `no_argument_tool`, `whole`, `client_action`; and
`HTTP_FAULTS` for those played at the HTTP level), so tests and users can provoke
every failure over real HTTP. Rejections as real endpoints word them (`reject_param`,
`reject_two_params`, `reject_max_tokens`, `reject_images`, `reject_tools`,
`nvidia_opaque_500`, `openrouter_502`, `error_after_200`, `overloaded`,
`rate_limited`, `context_length`, `bad_key`, `quota`) live in
`rxllm.local.rejections`; once a rejection's trigger no longer holds in the request,
the turn is this module's scripted answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

__all__ = [
    "FAULTS",
    "HTTP_FAULTS",
    "Cite",
    "Reasoning",
    "Refuse",
    "Say",
    "Script",
    "ServerTool",
    "Step",
    "ToolChoice",
    "ToolUse",
    "Prompt",
    "asked_tool",
    "chosen",
    "pieces",
    "response_id",
    "sealed",
    "sample_arguments",
    "words",
    "script_for",
]


@dataclass(frozen=True)
class Reasoning:
    text: str


@dataclass(frozen=True)
class Cite:
    """A source the text it is attached to cites (`cited_text` is a part of that text)."""

    url: str
    title: str
    cited_text: str


@dataclass(frozen=True)
class Say:
    text: str
    citations: tuple[Cite, ...] = ()


@dataclass(frozen=True)
class Refuse:
    """The model declines. Wires with a refusal field carry the text there; Anthropic
    ends with `stop_reason: refusal`, Gemini with `finishReason: SAFETY` (no text)."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    call_id: str
    name: str
    arguments: str
    """The JSON text as it will go on the wire (a fault may make it malformed); empty
    for a tool without parameters, sent as each protocol sends such a call."""
    item: str | None = None
    """The Responses item type when the call is not a `function_call` (`shell_call`:
    its arguments are the item's fields); other wires send a function call."""


@dataclass(frozen=True)
class ServerTool:
    """A tool the provider runs itself: a web search (`input` is the query, `output`
    the found page's title at `url`) or code execution (`input` is the code, `output`
    its stdout)."""

    call_id: str
    kind: Literal["web_search", "code_execution"]
    input: str
    output: str
    url: str = ""


Step = Reasoning | Say | Refuse | ToolUse | ServerTool


@dataclass(frozen=True)
class Script:
    steps: tuple[Step, ...]
    stop: Literal["stop", "tool_use", "length", "pause"] = "stop"
    """`pause` is Anthropic's `pause_turn`; the other wires have no pause and stop."""
    input_tokens: int = 24
    error: str | None = None
    """End with this error inside the 200 stream instead of a finish."""
    cut: bool = False
    """End the body without any terminal marker (a truncated stream)."""
    late_text: str | None = None
    """Text sent after the terminal marker (which a client must ignore)."""
    fragment: int = 6
    """Characters per tool-argument fragment on the wire."""
    whole: bool = False
    """Send each step whole, as some responses do: Anthropic puts every block and the
    stop reason in `message_start`, Responses sends only `output_item.done` items, the
    chat and Gemini wires send each text in one chunk."""

    @property
    def reasoning_tokens(self) -> int:
        return sum(_tokens(s.text) for s in self.steps if isinstance(s, Reasoning))

    @property
    def output_tokens(self) -> int:
        """Visible output plus reasoning, as OpenAI counts completion tokens."""
        visible = sum(_tokens(_said(s)) for s in self.steps if not isinstance(s, Reasoning))
        return visible + self.reasoning_tokens


def _said(step: Step) -> str:
    if isinstance(step, ToolUse):
        return step.arguments
    if isinstance(step, ServerTool):
        return step.input
    return step.text


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def sealed(text: str) -> str:
    """A stand-in for a provider's encrypted or signed reasoning (OpenAI's
    `encrypted_content`, Anthropic's signature): opaque to the client, stable, so a
    test can tell that it came back unchanged."""
    return "rxllm-local:" + base64.urlsafe_b64encode(text.encode()).decode()


def response_id(prefix: str, body: Mapping[str, Any]) -> str:
    """The id of the response to the request `body`: `prefix` then 16 hex digits of the
    request's SHA-256. One per request, as a provider names each response (rxllm names
    the calls a wire sends without an id after it: Gemini's code execution, Groq's
    executed tools), and the same for the same request, so a test plays alike."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode())
    return prefix + digest.hexdigest()[:16]


def pieces(text: str, size: int) -> Iterator[str]:
    """`text` in pieces of `size` characters (tool-argument fragments)."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def words(text: str) -> Iterator[str]:
    """`text` as word-sized deltas, each keeping its leading space (token-like pacing)."""
    start = 0
    for i in range(1, len(text)):
        if text[i] == " ":
            yield text[start:i]
            start = i
    if text:
        yield text[start:]


ANSWER = Script(
    steps=(
        Reasoning("The user wants a short greeting about streams. Keep it brief."),
        Say(
            "Hello from rxllm's local provider! This answer streams word by word, "
            "exactly as a real endpoint would, so you can try rxllm with no API key."
        ),
    )
)

WEATHER_TOOL = ToolUse(
    "call_local_weather_1",
    "get_weather",
    json.dumps({"city": "Paris", "unit": "celsius", "days": 3}),
)

WEATHER_CALL = Script(
    steps=(
        Reasoning("The user asks about the weather; I should call the weather tool."),
        Say("Let me check the weather."),
        WEATHER_TOOL,
    ),
    stop="tool_use",
)

PARALLEL_CALLS = Script(
    steps=(
        ToolUse("call_local_1", "get_weather", json.dumps({"city": "Paris"})),
        ToolUse("call_local_2", "get_time", json.dumps({"timezone": "Europe/Paris"})),
    ),
    stop="tool_use",
)

SEARCH = ServerTool(
    "srvtool_local_1",
    "web_search",
    "rxllm reactive streams",
    "rxllm: LLM streams, boring to consume",
    url="https://example.com/rxllm",
)

CITED_ANSWER = Script(
    steps=(
        SEARCH,
        Say(
            "rxllm makes LLM streams boring to consume.",
            citations=(Cite(SEARCH.url, SEARCH.output, "makes LLM streams boring to consume"),),
        ),
    )
)

STORIES: dict[str, Script] = {
    "refusal": Script(steps=(Refuse("I can't help with that request."),)),
    "web_search": CITED_ANSWER,
    "code_execution": Script(
        steps=(
            ServerTool("srvtool_local_2", "code_execution", "print(6 * 7)", "42\n"),
            Say("The answer is 42."),
        )
    ),
    "pause": replace(CITED_ANSWER, steps=(SEARCH,), stop="pause"),
    "no_argument_tool": Script(steps=(ToolUse("call_local_now", "get_time", ""),), stop="tool_use"),
    "whole": replace(WEATHER_CALL, whole=True),
    "client_action": Script(
        steps=(
            ToolUse(
                "call_local_shell",
                "shell_call",
                json.dumps({"action": {"commands": ["ls -la"], "timeout_ms": 10000}}),
                item="shell_call",
            ),
        ),
        stop="tool_use",
    ),
}
"""Shapes of what providers say beyond text and calls, each sent as every wire sends
it: a refusal, a web search the provider runs with a cited answer, code execution, a
paused turn, a tool without parameters, content that arrives whole, and a Responses
item that asks the client to act."""

FAULTS: dict[str, Script] = {
    **STORIES,
    "error_event": replace(ANSWER, error="The server is overloaded, try again later."),
    "truncated": replace(ANSWER, cut=True),
    "late_event": replace(ANSWER, late_text=" LATE TEXT THAT MUST BE IGNORED"),
    "malformed_tool": Script(
        steps=(ToolUse("call_bad", "get_weather", '{"city": "Par'),), stop="tool_use"
    ),
    "length_cut_tool": Script(
        steps=(ToolUse("call_cut", "get_weather", '{"city": "Paris", "da'),), stop="length"
    ),
    "parallel_tools": PARALLEL_CALLS,
    "weather": WEATHER_CALL,
    "answer": ANSWER,
}

HTTP_FAULTS = frozenset(
    {
        "http_500",
        "http_400_param",
        "not_sse",
        "hang",
        "long_line",
        "redirect_private",
        "redirect_other_origin",
        "redirect_loop",
        "reset_before_output",
        "reset_after_output",
        "slow_drip",
        "invalid_utf8",
    }
)
"""Faults the server plays at the HTTP level, whatever the protocol. `reset_*` drop
the connection (no chunked end) after `200 OK` and the role chunk, or after some
output; `slow_drip` streams the weather tool call a fragment every 50 ms;
`invalid_utf8` puts bytes that are not UTF-8 inside a text delta. The redirects are
307s (method and body kept): `redirect_private` to `http://10.0.0.1` (only a guarded
client may be pointed at it: it must refuse before connecting), `redirect_other_origin`
to a second loopback server on another port that records what arrives (the key must
not), `redirect_loop` to the same URL again and again."""


ToolChoice: TypeAlias = Literal["auto", "required", "none"]


@dataclass(frozen=True)
class Prompt:
    """What a request asks, in any protocol: what the local provider answers to."""

    model: str
    text: str = ""
    """The user's last words (a turn of tool results only is not the user speaking)."""
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The offered tools: name -> JSON schema of the parameters."""
    tool_result: tuple[str, str] | None = None
    """(tool name, result text) when the conversation ends with a tool's result."""
    tool_choice: ToolChoice = "auto"
    """What the request lets the model do with its tools, as its wire says it (the
    OpenAI wires' `tool_choice`, Anthropic's `tool_choice.type`, Gemini's
    `functionCallingConfig.mode`): `none` answers in text, `required` calls a tool."""
    allowed: tuple[str, ...] = ()
    """The tools the choice lets the model call (the one a choice names, OpenAI's
    `allowed_tools`, Gemini's `allowedFunctionNames`), under `auto` as under
    `required`; empty: any offered."""
    replies_before: int = 0
    """How many replies of the assistant the conversation already holds (its messages;
    on the Responses wire, the items of its turns): this answer's call ids are numbered
    after them, so no two calls of a conversation share an id."""


def chosen(
    mode: str, names: Iterable[Any], tools: Mapping[str, Any]
) -> tuple[ToolChoice, tuple[str, ...]]:
    """(`Prompt.tool_choice`, `Prompt.allowed`) of a choice a wire read: its mode (`auto`,
    `required`, `none`; any other is `auto`, the providers' default) and the tools it
    names. A wire reads its own form into these; what it cannot read is `auto`.

    Raises:
        ValueError: a choice that names a tool no tool offered declares, or one that
            requires a call with no tools: a 400, as real endpoints refuse them.
    """
    allowed = tuple(str(name) for name in names)
    for name in allowed:
        if name not in tools:
            raise ValueError(f"tool_choice names {name!r}, which no offered tool declares")
    if mode == "required" and not tools:
        raise ValueError("tool_choice requires a tool call, and no tools are offered")
    if mode in ("required", "none"):
        return ("required" if mode == "required" else "none"), allowed
    return "auto", allowed


def script_for(prompt: Prompt) -> Script:
    """Pick the story: a named fault; a call the tool choice forces; the answer to a
    tool's result; a call of the offered tool the user asks about (by the words of its
    name), unless the choice is `none` or allows other tools only; else the scripted
    answer. So an agent loop ends
    (a result is answered, never called again) unless its requests force a call.

    Its calls' ids are new in the conversation, as a provider's are: an app that keeps
    results by call id (the AI SDK's chat does) would give a second call under the
    same id the first one's result."""
    return _numbered(_story(prompt), prompt.replies_before)


def _numbered(script: Script, replies_before: int) -> Script:
    """`script` with the ids of its calls, the app's and the provider's own, suffixed
    after the conversation's `replies_before`; as it is in a conversation's first."""
    if not replies_before:
        return script
    steps = tuple(
        replace(step, call_id=f"{step.call_id}_{replies_before + 1}")
        if isinstance(step, ToolUse | ServerTool)
        else step
        for step in script.steps
    )
    return replace(script, steps=steps)


def _story(prompt: Prompt) -> Script:
    if prompt.model.startswith("fault/"):
        name = prompt.model.removeprefix("fault/")
        if name in FAULTS:
            return FAULTS[name]
    if prompt.tool_choice == "required":
        return _forced_call(prompt)
    if prompt.tool_result is not None:
        name, result = prompt.tool_result
        return Script(steps=(Say(f"{name} returned {result}. That is my answer."),))
    if prompt.tool_choice == "none":
        return ANSWER
    tool = asked_tool(prompt.text, _allowed(prompt))
    if tool == WEATHER_TOOL.name:
        return _weather_call(prompt.tools[tool])
    if tool is not None:
        call = _call_of(tool, prompt.tools[tool])
        return Script(steps=(Say(f"Let me use {tool}."), call), stop="tool_use")
    return ANSWER


def _allowed(prompt: Prompt) -> dict[str, Any]:
    """The offered tools the choice lets the model call: name -> JSON schema."""
    return {name: prompt.tools[name] for name in prompt.allowed or prompt.tools}


def _forced_call(prompt: Prompt) -> Script:
    """A call of a tool the choice allows: the one the user asks about, else the first.
    Only the call, as a forced call comes (Anthropic: no text before the `tool_use`)."""
    may = _allowed(prompt)
    tool = asked_tool(prompt.text, may) or next(iter(may))
    return Script(steps=(_call_of(tool, may[tool]),), stop="tool_use")


def _call_of(tool: str, schema: dict[str, Any]) -> ToolUse:
    """A call of `tool`: the weather story's, fitted to its schema, or sample arguments."""
    if tool == WEATHER_TOOL.name:
        return _weather_tool(schema)
    return ToolUse(f"call_local_{tool}_1", tool, json.dumps(sample_arguments(schema)))


def _weather_call(schema: dict[str, Any]) -> Script:
    """The weather story, its call fitted to the offered tool's schema (`_weather_tool`)."""
    call = _weather_tool(schema)
    if call is WEATHER_TOOL:
        return WEATHER_CALL
    return replace(WEATHER_CALL, steps=(*WEATHER_CALL.steps[:-1], call))


def _weather_tool(schema: dict[str, Any]) -> ToolUse:
    """The weather story's call, its arguments fitted to the offered tool's schema: the
    story's own values where the schema allows them, a sample for each property it
    declares that the story lacks or whose value does not fit, and none it refuses
    (`additionalProperties: false`)."""
    declared = schema.get("properties") if isinstance(schema, dict) else None
    properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
    closed = isinstance(schema, dict) and schema.get("additionalProperties") is False
    story = json.loads(WEATHER_TOOL.arguments)
    arguments = {name: value for name, value in story.items() if name in properties or not closed}
    for name, spec in properties.items():
        if name not in arguments or not _fits(arguments[name], spec):
            arguments[name] = _sample(name, spec)
    if arguments == story:
        return WEATHER_TOOL
    return replace(WEATHER_TOOL, arguments=json.dumps(arguments) if arguments else "")


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def _fits(value: Any, spec: Any) -> bool:
    """Whether `value` is one the property `spec` allows (its enum, else its type)."""
    if not isinstance(spec, dict):
        return True
    if spec.get("enum"):
        return bool(value in spec["enum"])
    kind = spec.get("type")
    if kind is None:
        return True
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(value, _JSON_TYPES[k]) for k in kinds if k in _JSON_TYPES)


# Words too common in tool names to say which tool the user asks about.
_VERBS = frozenset({"get", "set", "fetch", "find", "list", "lookup", "search", "the", "for"})


def asked_tool(text: str, tools: dict[str, dict[str, Any]]) -> str | None:
    """The offered tool whose name's words the user's text says most of, if any."""
    said = set(re.findall(r"[a-z0-9]+", text.lower()))
    best, score = None, 0
    for name in tools:
        words = set(re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()))
        hits = len((words - _VERBS) & said)
        if hits > score:
            best, score = name, hits
    return best


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a JSON schema: every property, a value of its type."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {name: _sample(name, spec) for name, spec in properties.items()}


def _sample(name: str, spec: Any) -> Any:
    if not isinstance(spec, dict):
        return "example"
    if spec.get("enum"):
        return spec["enum"][0]
    if "default" in spec:
        return spec["default"]
    kind = spec.get("type")
    if isinstance(kind, list):  # ["string", "null"]
        kind = next((k for k in kind if k != "null"), "string")
    samples = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "null": None}
    if kind == "object":
        return sample_arguments(spec)
    if kind in samples:
        return samples[kind]
    return "Paris" if name.lower() in ("city", "location", "place") else f"example {name}"
