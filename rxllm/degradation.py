"""What to send after a rejection: pure functions over the error and the body, no I/O.

A rejection before anything was committed is read once, by `classify`, into one of:

- `surface`: the rejection is about the account (401, 402, 403, quota, billing, a balance
  in Chinese ("余额不足", Zhipu's 429), funds short ("Insufficient account funds"), a trial
  over ("Your trial has expired"), what the caller's plan does not include where it is no
  key of the body ("Your plan does not include access to this model"; "... this parameter"
  is a key's, and "plan mode" no plan), an organization that "must be verified", Google's
  `FAILED_PRECONDITION`, a gateway's spending budget ("Budget has been exceeded!", LiteLLM),
  an organization "restricted" or an account "suspended", a spending or usage limit at 400
  ("You have reached your specified API usage limits", Anthropic) or an allowance used up
  where no wait is said to help ("used up your daily free allocation", Cloudflare's 429),
  a limit counted by the day or longer that names no wait ("Rate limit exceeded:
  free-models-per-day", OpenRouter; "requests per day (RPD)", Groq; "per 86400s", GitHub
  Models; a quota id "...PerDay...", Google; "超过每日使用限额"), whatever rate-limit code
  the envelope gives it, a key without the right to the model ("无权使用模型"), the
  caller's own "data policy" or provider restrictions excluding every route ("No allowed
  providers are available for the selected model", where the body sends no `provider`),
  what is refused "for this account" where no key is named, or where the caller is
  ("Country, region, or territory not supported", OpenAI's code
  `unsupported_country_region_territory`, "not available in your country");
  a relay's exception class, "litellm.PermissionDeniedError", is its name for the status,
  not words about the account; but a 403 that names a key of the body and no access of the
  caller's refuses that key: "You are not allowed to request logprobs from this model"),
  the size (context length, input length, a request that exceeded the model's token limit
  or max length, the request's tokens over a maximum or the model's limit ("Token count 9000
  is greater than the maximum allowed", "exceeds the token limit of this model"; not
  `max_tokens`'s, nor a limit per minute), a request said to have more tokens than the
  model's limit ("Request has 140000 tokens, more than the model's limit of 131072"), a
  prompt that "exceeds max length" (a value
  said to exceed it is that key's), a prompt's `prompt_tokens` that "must be less than
  max_seq_len", the prompt against the context by the server's field for it ("Cannot
  truncate prompt with n_keep (15028) >= n_ctx (7424)"), an input's count said to be more
  than the model supports ("the input token count is 1251952 but model only supports up to
  1048576"), an output limit refused as a negative number the body did not send
  ("max_tokens must be at least 1, got -53.", vLLM: the server derived it, the prompt fills
  the context), 413 or its words
  ("Request body too large", "Request payload size exceeds the limit: 4194304 bytes"; but
  the body's bytes over, with images in it, retry without them: `_bytes_over`), a
  request larger than a whole per-minute allowance; under a rate limit only
  the last: a per-minute limit that asks to "reduce the prompt length ... or try again
  later" backs off, and "Too many tokens, please wait" is a throttle), content policy (in a
  moderation's own words too: "inappropriate content", "Content Exists Risk", "敏感内容"; a
  gateway's guardrail that acted: "Violated guardrail policy"; a moderation or safety system
  that stopped it, "blocked by content moderation", "rejected by the safety system", or the
  terms it broke, "violates the provider's terms of use", where no key is named; the input or
  the output found sensitive, MiniMax's 1026 "input new_sensitive" and 1027 "output
  new_sensitive"), a missing
  model (its words,
  "模型不存在", "Unsupported model", a model "not supported for this request" or "not
  available for session", "not deployed", "the model name is invalid" or its "identifier",
  "Unable to access model", "You do not have access to the model", a model retired ("has
  been decommissioned", "is deprecated and no longer available", "模型已下线"), one
  named by its id and refused where no key is ("model ID x with on-demand throughput isn't
  supported"), none found for the request ("no model id could be identified", llama-swap),
  a gateway's "Invalid provider" for the route to it, or a structured code
  such as `model_not_available`, Azure's `OperationNotSupported`), a model that needs more
  memory than the machine has ("model requires more system memory ... than is available",
  LM Studio's "Model loading was stopped due to insufficient system resources"),
  or a never-dropped key (the structured `param`, or quoted where nothing else is named:
  "'stream' does not support true with this model"; streaming itself refused in words where
  nothing else is named and no condition is said: "The model is unsupported for streaming.",
  Bedrock; "does not support streaming", "不支持流式"; streaming refused with a key of the
  body, its first word after the refusal, drops that key: "streaming is not supported with
  tools", ollama#7750; or refused as unknown, alone or among
  others: "Unknown name "messages"" says the body reached another API),
  or the conversation itself (a role, the message order, a message by its role or index,
  content inside a message, a message's `content` by name, a "chat message", an assistant
  turn left to "prefill", the "parts field" of a turn, a message's text left empty ("an
  empty text parameter"), the chat's "history" (Cohere's `chat_history`), a turn's tool
  results by their field (Cohere's `tool_results`), Gemini's `contents` by its path
  ("contents[3].parts"), the Responses API's input by its path into a message's content
  ("missing `input.content.text' parameter", Ark), a provider asking to "adjust your
  prompt", the model's own output
  that broke the tool rules: Groq's `tool_use_failed`, "Tool choice is none, but model
  called a tool", which a body without the tools would only turn into prose; the types a
  message's part may have, listed as accepted ("Supported values are: 'text','image_url',
  'video_url' and 'video'"), or a part of other media than images refused ("The audio file
  could not be decoded", "PDF input is not supported"), which no removal of images changes),
  or no part
  of the body at all (a request header, this endpoint for the model, by name or by its path, the
  server's own chat template: "you must provide a chat template", "Template error: template
  not found"; at 4xx: a 5xx's "headers" are the server's own), or properties a validator
  requires at the body's root, none of which it has ("required properties at '/' are
  'input'", Workers AI: a model of another schema). No body can fix it.
- `backoff`: the same body may succeed later (429 rate limits, 503/529 overload, a busy
  model, a degraded deployment, a bare 5xx on a direct endpoint, a connection that failed;
  where no status says it, a 503's or 429's words: "server unavailable", a model "still
  loading", "not ready yet" or still "starting up", no available channel, deployment or
  data center, no worker to serve it, "No capacity available for model x", "out of
  capacity", too many requests at once ("Concurrency limit exceeded", "并发请求过多"), a
  count of requests at its bound ("Worker local total request limit reached (33/32)",
  OpenRouter's upstream at 502; Baidu's "Open api qps request limit reached", a window of
  queries per second), Google's RESOURCE_EXHAUSTED in words ("Resource exhausted.",
  "Resource has been exhausted (e.g. check quota).") at 429 or where no status speaks, a
  quota spent at 429 that says nothing of what is paid or of a day ("Quota exceeded"), "wait
  one minute", "please wait before trying again", "请稍后再试", a queue that "is full" or
  over its bound ("Exceeds maximum queue size", Triton), any store of the server's said to
  be full ("prompt_cache is full, try again": its name is no key refused; not a context
  window, the prompt's size), the server "temporarily" down, offline, busy or full (not a
  key "temporarily not supported", which the body can go without at once), a
  wait named ("Try again in 5 seconds"), a window such as "per minute", the server's own
  failure ("An internal error has occurred", "on our end", "An error occurred while
  processing your request", an engine that "encountered an issue" (vLLM's EngineDeadError),
  a model that "has crashed" or a runner that "terminated unexpectedly", a generation that
  failed in it: "Request failed during generation: Server error: ...", "Incomplete
  generation", TGI's errors in a stream;
  "an error was encountered while running the model", Ollama's; a validator's error about
  the server's own response class, "2 validation errors for ChatCompletionStreamResponse",
  vLLM's, at a 5xx too, where the fields it names are the response's, not the body's), or
  a backend's gRPC
  failure, "rpc error: code = Unknown"; where no status speaks; TGI's `generation` error
  type; and 424 (Failed Dependency: TGI's status for a generation error, SageMaker's for its
  model's) whatever its words, but a key, the images, the conversation or the size they
  name; no
  answer from what serves the model, where that is all that is said ("Failed
  to get response from provider", Cloudflare AI Gateway's 2005 at 400; not a relay's
  "Failed to get response from provider: ..." before its upstream's words); a turn that
  ended with `finish_reason: "error"` before any output). It is sent
  again after the `retry_after` the provider named, as given; when it named none (or 0),
  after an exponential wait less a random share of up to a quarter (`backoff_wait`), so
  that streams refused at one instant do not all come back at the next. A wait longer than
  the policy's `max_retry_after`, or than what is left of the turn's `total_timeout`,
  surfaces instead of holding the turn. The server's `x-should-retry` outranks all of this,
  for the same body only (`classify`).
- `drop`: the error names body keys: OpenAI's structured `param` first, then names of
  keys present in the body, found in the error's text. A key counts as named when it
  is quoted (`'top_p'`, `"reasoning"`, `` `top_p` ``) or assigned (`n=1`), the field a
  validator's item points at (pydantic's `loc`, zod's and express-validator's `path` or
  `param`, Google's `field`, ajv's `additionalProperty`) or its location written in text
  (a JSON pointer `#/store`, pydantic's `body -> temperature` and its location line above
  the message, serde's path after "into the target type: "), a path rooted at the request
  or its type (`parameter.enable_thinking`, `body.maxTokens`, Go's
  `ChatCompletionRequest.max_tokens`), the head of a path into it
  (`tools.0.function.strict` names `tools`, `thinking.type` `thinking`), its own value
  quoted in a sentence about a value ("Unsupported value:
  'minimal'" names the key holding 'minimal', where nothing else names a key and one key
  holds the value), or quoted and refused right after it, whatever the sentence calls it
  (CLIProxyAPI's "level "max" not supported, valid levels: ..." names the key holding
  'max'), an identifier
  that is no English word (`max_tokens`, capitalized too as a sentence's first word:
  "Response_format value as json_schema is enabled only for ..."), or a plain word next to words
  that name a parameter ("does not support tools", "argument supplied: thinking",
  "temperature is not supported" (or "not currently supported", "not yet supported", or
  available only elsewhere: "logprobs are currently available only for the vLLM backend",
  Triton), "Cannot use tools with stream", a server's flag needed to use it ("launch the
  api_server with --tool-call-parser if you want to use tools"; the key the subject:
  "having tools in the request requires --tool-call-parser to be set", Triton),
  "Temperature value 0.2 is not supported", "Argument not
  supported on this model: include", "invalid temperature", "temperature参数",
  "参数temperature"), the words of an identifier read the same way ("Frequency penalty
  must satisfy p > 0", "Top-p must be greater than 0", "enable
  thinking can not be support"), or the server's camelCase of it (`frequencyPenalty`);
  where nothing names a key, an identifier of two words or more that is none of the body's
  names the keys it begins ("chat_template is not supported for Mistral tokenizers.",
  vLLM's, names `chat_template_kwargs`; a never-dropped one so named surfaces), and a plain
  word that is a key of one of the body's objects, called a parameter, names that object
  ("This model does not support the effort parameter.", Anthropic's, names the
  `output_config` that holds the `effort`; not a name every object has, "type"), and an
  identifier of two words or more names keys by its stem only in a clause that refuses. So
  "stop" in an unrelated sentence never drops `stop`, nor does a key the provider only
  suggests ("did you mean 'stop'?") or asks to turn on ("enable `thinking`"), or a value
  it would accept ("Supported values are: 'low', ..."), nor a link's path, nor a field or
  role of a message the error points into ("'messages.1' : property 'metadata' is
  unsupported" is not the body's `metadata`, "roles must alternate between "user" and
  "assistant"" not its `user`), nor a word inside a longer key's words ("does not support
  prompt logprobs" names `prompt_logprobs` alone), nor a key named only as the condition
  of another's refusal ("temperature=1 is supported unless reasoning_effort resolves to
  'none'" drops `temperature` alone; a capability named there is never refused: "Thinking
  may not be enabled when tool_choice forces tool use" drops the reasoning switch the body
  sent, or with none the `tool_choice` it spells, never the tools). Capability phrases name
  keys too, where
  their sentence refuses them ("No endpoints found that support tool use" names
  `tools`, as do "No connected provider supports tool calling" (a router with no backend
  that has it; "No available backend supports function calling" and "No eligible provider
  found that supports tool calling" likewise, not an overload nor the caller's settings),
  "Functions are not supported", "function calling not support", "not yet
  implemented" and "Only [...] support tool calls", and a tool's type refused, "Unsupported
  Responses tool type: 'custom'", "tool type namespace not supported", or a type of the
  body's own tools spelled in a sentence that refuses ("Built-in tools ({google_search}) and
  Custom tools (Function Calling) cannot be combined"); the tools counted against a
  cap in prose, "You may not include more than 128 tools in your request", name `tools`; "does not
  support thinking", "thinking_config is not supported" and "thinking_level MEDIUM is not
  supported" (the value bare after the setting) the reasoning switches, as does
  "Reasoning is mandatory ... and cannot be disabled" (the body's switch that turned it off);
  "Function calling config is set without function_declarations" the tool keys sent; "Penalty is not
  enabled" the penalty keys; "Only one completion choice is allowed" and "Only one candidate" `n`; a
  "stopSequences value" out of range `stop`; the output's limit in
  prose the key the body sets it by ("The maximum tokens you requested exceeds the model
  limit of 32768", Bedrock; not tokens "per minute", a rate); "Tool use failed" names
  nothing). The output's
  schema refused ("response_schema...: should be non-empty") names `response_format`, as
  a tool's definition refused names `tools` ("Invalid schema for function 'ls'", "Tool
  parameters must be a JSON object", a validator's path "13.function.parameters.type"
  inside an `error` written as a JSON string); a call's parameters ("parameters for tool X
  did not match schema") do not. A JSON schema refused without its owner named ("JSON
  Schema not supported: could not understand the instance ...", a path rooted at a schema's
  keyword, quoted or bare: "Field 'properties.data.properties' is missing") names the one
  key that holds schemas, the tools or a `response_format` with one; with both, neither.
  The values a
  validator lists as accepted ("Input should be 'user', 'assistant' or 'system'") name
  nothing; roles listed so are the conversation.
  The legacy `functions` and `function_call` are tool keys. A key that means nothing
  without a dropped one goes with it (`tool_choice` with `tools`). What a named object's
  words point inside it goes alone, the rest of it sent again (`Verdict.prune`): a setting
  by its path ("Unsupported parameter: 'reasoning.effort'" keeps `reasoning.summary`,
  "response_format.json_schema.strict is not supported" the schema) or called a parameter
  (the effort parameter: `output_config.effort`, its `format` kept), where the object stays
  valid without it: not a name every object has (`thinking.type`), not beside a `type`
  that says what the object is (`thinking.budget_tokens` where `thinking.type` is
  "enabled" requires it), not inside a JSON schema, not a path to nothing sent; an object
  left empty goes whole. So do the tools of a type refused where the body has tools of other
  types ("Unsupported tool type: code_interpreter", "Hosted tool 'web_search_preview' is not
  supported", "tools[1].type", or only the type accepted named: "tool types other than
  function"): the function tools stay, and `tool_choice` unless it forces one that goes;
  with one type, or every type named, all the tools go. Where the provider
  names a replacement ("Use 'max_completion_tokens' instead") the value moves to it.
  Every named key goes in one retry, except a pair refused only together where the
  structured `param` points at one ("Setting 'max_tokens' and 'max_completion_tokens' at
  the same time is not supported", "Function tools with reasoning_effort are not
  supported"): that one goes alone.
- `images`: the body has images and the error says image input is refused ("is not a
  multimodal model", "not a vision model", "not a VLM", "does not have vision capability",
  "Only text content is supported",
  "image input is not supported", an image by its URL "not currently supported" (Ollama's
  /v1 takes one by its data only), "此模型不支持图像输入", "No endpoints found that support
  image input", a limit on the images themselves, their number or size ("At most 1
  image(s) may be provided", "Image count must be at most 4", "Number of images (2) exceeds
  maximum of 1", "Request contains 52 images, exceeding the maximum of 50" (all go: the words
  do not always say whether the count is per message, request or turn), "each image may be up to 5
  MB", "最多只能上传1张图片"; not a key's limit beside an image word, "Images are resized to
  768px; max_tokens must be at most 4096", "max_tokens must be at most 4096 for image
  inputs", "图片理解模型的max_tokens最多支持1024", which are `max_tokens`'s), "image_url is
  only supported by
  certain models", "unknown variant `image_url`, expected `text`", a validator's "Input
  should be 'text'" at a part's type, "图片输入格式/解析错误", "Vision add-on is not
  loaded, but images were provided", "does not have the projector", image input
  "disabled" ("image (vision) input is currently disabled on this gateway", LiveKit's
  gateway, at 503 too: an overload's status whose words refuse the images and say no load,
  wait or trouble of the server's is no overload), an image it "could not
  process", was "unable to decode" or "failed to download", or that is "not valid" or in
  another form than it takes ("'url' field must be a base64 encoded image"), an
  image file, by its name, it timed out or failed while downloading ("Timeout while
  downloading photo.jpg"), an image over a size or dimension limit: "image exceeds 5 MB
  maximum", "image too large", or outside the model's bounds: "The image length and width
  do not meet the model restrictions", DashScope; "image too small"), or that the server
  asks to have made smaller ("For image inputs, downscale the image", Rapid-MLX; "resize the
  image", "reduce the image resolution", "use a smaller image"),
  even where its `param` or its path points inside `messages`; a model's id is no words
  about images ("for model=doubao-1-5-vision-pro-32k-250115", "The model
  `llama-3.2-11b-vision-preview` has been decommissioned": the model, not the images). Each
  message's images
  become one notice (`image_notice`).
- `static`: nothing is named, but the status or the words say the body may be at fault
  (400/422 with no other explanation; an error event with no status whose code is not
  the server's trouble, a code that is a status, LiteLLM's `"500"`, read as one; "the
  requested parameters" at any 4xx; a feature said retired at 410 Gone, neither the model nor
  the endpoint ("Live search is deprecated. Please switch to the Agent Tools API", xAI's
  answer to `search_parameters`); a 502 where OpenRouter uses it for an upstream that
  cannot serve the body; NVIDIA's opaque 5xx). The static list is tried lazily, one body
  per attempt: without `stream_options`, without each optional key alone, without
  images, without tools, mandatory keys only.

A relay's own 5xx around its upstream's 4xx, given in the SDKs' words (LiteLLM's 500 "Error
code: 429 - {... 'status': 'RESOURCE_EXHAUSTED'}"), is read by the upstream's status: the
relay only failed to pass it on.

Account words ("quota", "billing") decide only where nothing structured does: a
rate-limit code (`rate_limit_exceeded`, Google's `RESOURCE_EXHAUSTED`) or a 429 that
names its wait or its window ("per minute") or says "rate limit" ("Rate limit exceeded
for this API key") is a rate limit, whatever page its message links or code it sends
(Azure's per-minute 429 points at "aka.ms/oai/quotaincrease", Gemini's says "You
exceeded your current quota", Groq's links its billing page, and a per-minute code may
say `quota`). An account code (`insufficient_quota`) or status (401, 402, 403) still
outranks any wait. And a limit counted by the day or longer that names no wait surfaces
under a rate-limit code too (Anthropic's envelope types every 429 `rate_limit_error`,
Google's `RESOURCE_EXHAUSTED`): a retry in seconds meets the same refusal until the day
turns; a wait it names is weighed against `max_retry_after` as any other is.

Degradation is declared per provider (`RecoveryPolicy`): the OpenAI-compatible family
degrades; the other wires only back off. `model`, `messages`, `stream` and the
provider's mandatory keys are never dropped. `RetryPlan` holds one turn's state: the
bodies already sent (a body is never sent twice, except by backoff, which is the point
of it), the targeted retries (capped at 3) and the attempts (capped at
`max_attempts`). Each degraded body starts from the last one sent; the next turn
starts again from the full body, since a plan lives for one subscription.

Compared with LiteLLM's `drop_params`: nothing is dropped before the endpoint
refuses it, and only what it refused is dropped; every retry is visible as a `retry`
event and in the record.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from random import random as _uniform
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeAlias

from rxllm.events import ErrorInfo

__all__ = [
    "ALWAYS_KEPT",
    "Action",
    "MAX_READ_CHARS",
    "MAX_TARGETED_RETRIES",
    "NextBody",
    "RecoveryPolicy",
    "RetryPlan",
    "Verdict",
    "backoff_wait",
    "classify",
    "count_images",
    "image_notice",
    "named_keys",
    "remove_images",
    "too_long",
    "static_bodies",
]

Body: TypeAlias = dict[str, Any]
Path: TypeAlias = tuple[str | int, ...]
Action: TypeAlias = Literal["surface", "backoff", "drop", "images", "static"]

ALWAYS_KEPT = frozenset({"model", "messages", "stream"})
"""Keys no degradation removes: without them there is no request."""

MAX_TARGETED_RETRIES = 3
"""Retries that drop what the error named (DESIGN: targeted retries are capped at 3)."""

MAX_BACKOFF_RETRIES = 2
"""Identical retries after a transient failure (the OpenAI and Anthropic SDKs' default)."""

BACKOFF_BASE_SECONDS = 0.5
"""The first wait when the provider names none; doubled on each backoff (the OpenAI and
Anthropic SDKs' `INITIAL_RETRY_DELAY`)."""

MAX_BACKOFF_SECONDS = 8.0
"""The longest computed wait, before jitter (the SDKs' `MAX_RETRY_DELAY`)."""

BACKOFF_JITTER = 0.25
"""The largest share of a computed wait that jitter takes off: the SDKs wait
`(1 - 0.25 * random())` of it, so a wait lies in 75 % to 100 % of the exponential one,
never longer."""

MAX_READ_CHARS = 8 * 1024
"""How much of an error's text the reading reads: its message, then its body's strings,
8,192 characters in all. The patterns cost some 20 µs of CPU a character, on the event
loop: read whole, a 64 KB error body (`MAX_ERROR_BODY_BYTES`) blocked it for over a
second, and an in-stream error of a megabyte for 24 s. A rejection's words come first,
and the longest real one in the shared cases and tests/rejections_extra is 1,204 bytes
(Cloudflare's 524 page): the bound reads almost seven times that, in ~0.15 s, ~0.35 s
for the worst body built (thousands of one-word sentences, "a. a. a. ...")."""

# (with the legacy `functions` and `function_call`, which some servers still read: Qwen's
# openai_api.py refuses them in stream mode, "Function calling is not yet implemented")
_TOOL_KEYS = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")


def image_notice(count: int) -> str:
    """The text that stands in a message for its removed images (DESIGN's words)."""
    what = "An attached image was" if count == 1 else f"{count} attached images were"
    return (
        f"[System: {what} removed because this endpoint rejected image input. "
        "Do not guess or claim to see the image contents.]"
    )


@dataclass(frozen=True)
class RecoveryPolicy:
    """How one provider's rejections are read; declared beside the provider's preset."""

    degrade: bool = False
    """Send a degraded body after a rejection (the OpenAI-compatible family)."""
    degrade_on_bad_gateway: bool = False
    """A 502 means "this body cannot be served upstream" (OpenRouter routes the body to
    providers, and answers 502 when none accepts it), not a gateway fault. The HTTP
    status only: a 502 in an error event after `200 OK` (OpenRouter's "Error processing
    stream", openrouter.ai/docs/api/errors) is an upstream that failed while it streamed,
    the same body's to send again."""
    degrade_on_opaque_server_error: bool = False
    """A 5xx that says only "Internal server error" is a refusal of the body (NVIDIA's
    backend answers unsupported input that way)."""
    mandatory_body_keys: frozenset[str] = frozenset()
    """Keys this provider needs and that are never dropped (NVIDIA `chat_template_kwargs`,
    DeepSeek `thinking`)."""
    image_part_types: frozenset[str] = frozenset({"image_url"})
    """The `type` of an image part inside a message's content list."""
    max_retry_after: float = 60.0
    """The longest wait honoured before an identical retry; a longer one surfaces."""

    @property
    def kept(self) -> frozenset[str]:
        return ALWAYS_KEPT | self.mandatory_body_keys


class Verdict(NamedTuple):
    """What `classify` read in one rejection: the action, why, and what it names."""

    action: Action
    why: str
    drop: tuple[str, ...] = ()
    rename: Mapping[str, str] = MappingProxyType({})
    """Dropped key -> the key the provider asked for instead; its value moves there."""
    delay: float | None = None
    """For `backoff`: the wait the provider named, if it named one."""
    prune: tuple[Path, ...] = ()
    """For `drop`: parts inside the body's keys that go, each a path from the body's root
    (`("reasoning", "effort")`, `("tools", 1)`); what holds each stays, less that part."""


# -- reading the error --------------------------------------------------------------

# The patterns stay strings, compiled by `re`'s own cache on first use: they read
# rejections only, and compiling them all at import cost about 5 ms of `import rxllm`.

_ACCOUNT = (
    r"(?i)api[ _-]?key|unauthori[sz]ed|authenticat|\bpermission|\bforbidden\b|access denied|"
    r"quota|billing|\bbalance\b|\bcredits?\b|payment|subscription|not found for account|"
    r"organi[sz]ation must be verified|"
    # the caller barred as a whole (Groq's 400 "Organization has been restricted. Please reach
    # out to support"), or its spending cap (Anthropic's 400 "You have reached your specified
    # API usage limits. You will regain access on ...")
    # (where the sentence ends there, or says why: "is restricted from using logprobs" or
    # "is restricted: 'service_tier' flex ..." refuses a key of the body)
    # (the caller the subject: not "Storing ... for this project is disabled", a feature)
    r"(?<!\bfor )(?<!\bfor this )(?<!\bfor your )(?<!\bfor the )"
    # (for a while too: "Your account has been temporarily suspended.")
    r"\b(?:account|organi[sz]ation|project|workspace|team) (?:has been|is|was) "
    r"(?:(?:temporarily|permanently) )?(?:disabled|suspended|restricted|blocked|banned|deactivated)"
    r"(?=\s*(?:[.!;,)]|$)|\s+(?:due|because|until|please|pending)\b)|"
    # a gateway's spending cap on the key (LiteLLM's "Budget has been exceeded! Current cost:
    # ..., Max budget: ...", "ExceededBudget: ... over budget"), sent at 400 or 429
    r"\bbudget has been exceeded|\bover budget\b|\bexceededbudget\b|"
    # the caller refused as a whole, at any status (Snowflake's "This account is not allowed to
    # access this endpoint", Google's "User location is not supported for the API use"): the
    # words say it where an envelope has no status or code for it
    r"\b(?:account|organi[sz]ation|project) is not (?:allowed|permitted|authori[sz]ed|active)\b|"
    r"\blocation is not supported for the API\b|"
    # the caller's own settings exclude every route (OpenRouter's 404 "No endpoints found
    # matching your data policy (Paid model training)"), at any status
    r"\byour (?:data|privacy) (?:policy|policies|settings?|preferences)\b|"
    # Zhipu's 429 "余额不足或无可用资源包,请充值。" (balance, recharge) and "您的账户已欠费" (in
    # arrears): its exhausted account, at the status of a rate limit
    r"余额|欠费|充值|"
    # the account's funds short ("Insufficient account funds", "Not enough funds"), or its
    # trial over ("Your trial has expired", "your free trial has ended")
    r"\b(?:insufficient|not enough|no)\s+(?:\w+\s+)?funds?\b|"
    r"\bfunds?\s+(?:(?:are|is|were|was|have been|has been)\s+)?"
    r"(?:insufficient|exhausted|depleted)\b|"
    r"\btrial\b[^.\n]{0,40}?\b(?:has|have|is|was)\s+(?:expired|ended|over|finished|exhausted)\b|"
    r"\b(?:expired|ended)\s+(?:free\s+)?trial\b|"
    # the caller's key or token without the right to it, in Chinese (one-api's 403
    # "该令牌无权使用模型" and the model's name, this token may not use the model)
    r"无权(?:使用|访问|调用)|没有权限|权限不足"
)
# A 403 that speaks of what the caller may reach, not of a key: "This account is not
# allowed to access this endpoint", "The account is not allowed to access this model",
# "Project ... does not have access to model ...", "not available in your region".
# A relay's exception class names the status it mapped, which the status says already
# (LiteLLM's "litellm.PermissionDeniedError: OpenAIException - You are not allowed to request
# logprobs from this model" at 403): its words are not the provider's about the account.
_RELAY_CLASS = r"\b(?:litellm\.)?[A-Z][A-Za-z]*(?:Error|Exception)\b"
# The same class as the prefix of the words it relays ("litellm.BadRequestError:
# OpenAIException - stop:最大只能有4个停止词"): the provider's words start after it, as they
# start a line in the provider's own body, where a validator writes "field: message".
_RELAY_PREFIX = _RELAY_CLASS + r":[^\S\n]*(?:" + _RELAY_CLASS + r"[^\S\n]+-[^\S\n]+)?"
# What is refused to the caller, where no key of the body is named ("openai.gpt-5.6-luna is
# not available for this account", Bedrock's 401; Cloudflare's 403 "Service unavailable for
# account"): the account, whatever status the envelope kept. Read after the names, as
# "service_tier 'flex' is not available for your organization" refuses that key.
# Streaming itself refused, in words, where nothing else is named ("The model is unsupported
# for streaming.", Bedrock's ValidationException; "This model does not support streaming",
# "Streaming is not supported for this model", "不支持流式"): `stream` is what is refused,
# and it is never dropped. A key refused for streaming names that key first ("Function
# calling is not yet implemented for stream mode" drops the functions); streaming refused
# under a condition ("... when tools are provided") may be served without what the condition
# names, and is left to the static list.
_STREAMING_REFUSED = (
    r"(?i)\b(?:unsupported|not\s+(?:(?:currently|yet)\s+)?(?:supported|available|allowed|enabled))"
    r"\s+(?:for|with|in)\s+(?:streaming|stream(?:ing)?\s+mode|stream(?:ed|ing)?\s+(?:requests?|responses?))\b|"
    r"\bdo(?:es)?(?:\s+not|n't)\s+support\s+(?:streaming|stream(?:ing)?\s+mode|"
    r"stream(?:ed|ing)?\s+(?:requests?|responses?|output))\b|"
    r"\b(?:streaming|stream(?:ing)?\s+mode|stream(?:ed|ing)?\s+(?:requests?|responses?|output))"
    r"\s+(?:(?:is|are)\s+)?(?:not|n't)\s+(?:(?:currently|yet)\s+)?"
    r"(?:supported|available|allowed|enabled|implemented)\b|"
    r"不支持流式"
)
_CALLER_REFUSED = (
    r"(?i)\b(?:not (?:available|enabled|accessible|permitted|allowed)|unavailable)\s+"
    r"(?:for|to|on|in)\s+(?:(?:this|your|the)\s+)?"
    r"(?:account|organi[sz]ation|project|subscription|plan|tier|team|workspace)\b|"
    # or where the caller is ("Country, region, or territory not supported", OpenAI's 403,
    # its status and code lost in a frame; "User location is not supported"; "not available
    # in your country"): no body moves the caller
    r"\b(?:country|countries|region|territory|location)"
    r"(?:,?\s+(?:or\s+)?(?:country|region|territory|location)\b){0,3},?\s+"
    r"(?:(?:is|are)\s+)?(?:not\s+(?:supported|available|allowed|permitted|served)|unsupported)\b|"
    r"\bnot\s+(?:supported|available|offered|allowed)\s+in\s+your\s+"
    r"(?:country|region|territory|location)\b"
)
_CALLER_ACCESS = (
    r"(?i)\baccess\b|\baccounts?\b|\borgani[sz]ations?\b|\bprojects?\b|\bregions?\b|"
    r"\bcountr(?:y|ies)\b|\bteams?\b"
)
_ACCOUNT_CODES = frozenset(
    {
        "invalid_api_key",
        "insufficient_quota",
        "billing_hard_limit_reached",
        "authentication_error",
        "permission_error",
        "permission_denied",
        "unauthenticated",
        "account_deactivated",
        "budget_exceeded",  # LiteLLM's key or team budget
        # OpenAI's refusal of the caller's country ("Country, region, or territory not
        # supported", 403 `request_forbidden`)
        "unsupported_country_region_territory",
        # Google: the account is not in a state to serve any request ("User location is
        # not supported for the API use", a free tier not offered in the country)
        "failed_precondition",
    }
)
# Groq: a request bigger than the whole per-minute allowance, sent as 413 or 429 with
# `rate_limit_exceeded` ("Request too large for model ... please reduce your message size"):
# no wait makes it fit. The one size a rate limit can state: Anthropic's per-minute 429
# also asks to "reduce the prompt length ... or try again later", and a wait does help it.
# A 413's words say it where no status does (GitHub Models' "Request body too large for
# gpt-4o model. Max size: 8000 tokens.", the reason phrases "Payload Too Large" and
# "Request Entity Too Large"), and so do a size in bytes said to be over a limit (Gemini's
# "Request payload size exceeds the limit: 4194304 bytes.", "Maximum request body size 1048576
# exceeded"): the request's own bytes, not a key's value nor an image's ("The image payload
# size exceeds the limit" is an image over a limit).
_OVER_ALLOWANCE = (
    r"request (?:body |entity |payload )?too large|payload too large|reduce your message size|"
    r"\brequest(?:\s+(?:payload|body))?\s+size\s+"
    r"(?:exceeds?|exceeded|is (?:over|larger than|greater than))\b|"
    r"\bmax(?:imum)?\s+(?:request\s+)?(?:payload|body)\s+size\b[^.\n]{0,40}?\bexceeded\b"
)
# The request's tokens counted as a whole, the subject of a sentence ("Token count 9000",
# "Total tokens", "The number of tokens in the request"); a key's name is no subject
# (`max_tokens`, `prompt.tokens`).
_SIZE_TOKENS = (
    r"(?<![\w.'\"`])(?<!\bmax )(?<!\bmaximum )(?<!\boutput )(?<!\bcompletion )(?<!\bnew )"
    r"(?:(?:total|input|prompt|request|message)\s+)?"
    r"(?:token\s+count|tokens|(?:total\s+)?(?:number|count)\s+of\s+tokens)"
    r"(?:\s+(?:in|of|for)\s+(?:the|your|this)\s+(?:request|input|prompt|messages?|conversation))?"
    r"(?:\s*\(?\d[\d,]*\)?)?"
    r"\s+(?:exceed(?:s|ed)?|(?:is|are|was|were)\s+(?:greater|larger|more|higher)\s+than)\s+"
    r"(?:the\s+)?(?:(?:model|model's|this model's)\s+)?"
    r"(?:(?:max(?:imum)?\s+)?(?:token\s+)?limit|maximum)\b"
)
# The request, the input or the prompt over the model's token limit ("This request exceeds
# the token limit of this model", "The prompt exceeds the model's token limit"): a limit
# said to be the model's or of tokens, not any limit (a request over a rate).
_SIZE_REQUEST = (
    r"(?<![\w.'\"`])(?:request|input|prompt|messages|conversation)(?:\s*\(?\d[\d,]*\)?)?"
    r"\s+(?:exceed(?:s|ed)?|(?:is|are|was)\s+(?:greater|larger|more)\s+than)\s+"
    r"(?:the\s+)?(?:(?:(?:model's|this model's)\s+)(?:max(?:imum)?\s+)?(?:token\s+)?limit|"
    r"(?:max(?:imum)?\s+)?token\s+limit)\b"
)
# ... where no window follows the limit (a rate: "the token limit per minute", "of 40,000
# tokens per minute", "TPM").
_SIZE_OVER = (
    r"(?![^.\n]{0,40}?(?:\b(?:per|each|every|a)\s+(?:second|sec|minute|min|hour|day|week|month)"
    r"\b|\b(?:[RT]P[SMHD]|[IO]TPM)\b|/\s*(?:s|sec|m|min|h|hr|d|day)\b))"
)
_PROMPT_SIZE = (
    # (tokens "processed" are a rate: Cerebras's 429 "Tokens per minute limit exceeded - too
    # many tokens processed")
    # (`search_context_size` is a key's name, not words about the context; nor is a field
    # quoted: Groq's "`max_completion_tokens` must be less than or equal to `16384`, the
    # maximum value for `max_completion_tokens` is less than the `context_window`" refuses
    # the key's value)
    r"(?i)(?<!_)(?<![`'\"])context[ _-]?(?:length|size|window)|maximum context|"
    # (nor tokens "per minute": Cerebras's and others' 503 "Too many tokens per minute"; nor
    # tokens the sentence asks to wait for, a throttle: Bedrock's 429 ThrottlingException "Too
    # many tokens, please wait before trying again.")
    r"too many (?:input )?tokens(?!\s+(?:processed|used|consumed|per)\b)"
    r"(?![^.\n]{0,40}?\b(?:wait|slow(?:ing)? down)\b)|"
    r"reduce the length|prompt is too long|input is too long|"
    # the request's own parts over a maximum ("The input token count (1200000) exceeds the
    # maximum", "the request exceeds the available context size", "The prompt is longer than
    # the maximum allowed length", "Input tokens (9000) exceed the model's `context_length`"),
    # not a key's value ("stop: sequence length exceeds the
    # maximum length of 32"), nor a part "in the request" (Gemini's "A FunctionDeclaration in
    # the request exceeds the maximum allowed nesting depth" is a tool's)
    r"(?<!\bin the )(?<!\bin this )(?<!\bin your )"
    r"\b(?:request|input|prompt|messages|conversation)"
    r"(?:\s+(?:token\s+)?(?:count|length|size)|\s+tokens)?"
    r"(?:\s*\(?\d[\d,]*\)?)?\s+(?:exceeds?|is longer than) the (?:model's )?"
    r"(?:available|maximum|['\"`]?context[ _-]?(?:length|size|window))|"
    # the same in Chinese: the input, prompt or context over its length ("输入长度超过限制")
    r"(?:输入|提示词?|上下文)的?(?:长度|内容)?\S{0,4}?(?:超过|超出|过长|太长)|"
    # xAI "maximum prompt length is 131072 but the request contains 136973 tokens", vLLM's
    # "The decoder prompt (length 5301) is longer than the maximum model length of 4096", a
    # "maximum supported sequence length"; TGI's limits on its `inputs`: "`inputs` tokens +
    # `max_new_tokens` must be <= 2048", "`inputs` must have less than 4096 tokens"
    r"maximum (?:\w+ )?(?:prompt|input|sequence|model) length|"
    # DashScope "Range of input length should be [1, 204800]", DeepInfra "Requested input
    # length 99009 exceeds maximum input length 8192"
    r"\b(?:prompt|input) length\b|"
    # (or by the server's field for them: SiliconFlow's 20015 "length of prompt_tokens (68957)
    # must be less than max_seq_len (65536).")
    r"\b(?:prompt|input)s?[\W_]*tokens?\b[^.\n]{0,60}?must be (?:<=|less|at most)|"
    r"must have (?:less|fewer) than \d+ tokens|"
    # (or compared with the context by the server's own field for it: LM Studio's "Cannot
    # truncate prompt with n_keep (15028) >= n_ctx (7424)", llama.cpp's `n_ctx`, vLLM's
    # `max_model_len`; the prompt's side only: "max_tokens (8192) must be less than n_ctx" is
    # that key's value)
    r"\b(?:prompt|input|n_keep|n_prompt_tokens|prompt_tokens|input_tokens)\b[^.\n]{0,60}?"
    r"(?:>=?|\bexceeds?\b|\bgreater than\b|\blarger than\b|\bover\b)\s*(?:the\s+)?\(?"
    r"(?:n_ctx(?:_slot|_train)?|ctx_size|context_size|max_seq_len|max_model_len)\b|"
    # the input's count said to be more than the model (or the server, the context) supports
    # (Vertex's "the input token count is 1251952 but model only supports up to 1048576"), not
    # a key's limit after it ("... but max_tokens only supports up to 4096")
    r"\b(?:input|prompt)(?:\s+token)?\s+(?:count|length|size)\s+(?:is|was)\s+\d[\d,]*"
    r"(?:\s+tokens)?,?\s+(?:but|while|whereas)\s+(?:the\s+|this\s+|that\s+)?"
    r"(?:model|server|endpoint|it|context(?:\s+window)?)\b[^.\n]{0,20}?"
    r"\b(?:supports?|allows?|accepts?|takes?|handles?)\s+(?:only\s+)?"
    r"(?:up\s+to|at\s+most|a\s+maximum\s+of|\d)|"
    # the request said to exceed the model's own limit: Moonshot's "Your request exceeded
    # model token limit: 262144", "model max length exceeded, max length:8192" (its input and
    # max_tokens together); not a value said to exceed it ("max_tokens (100000) exceeds the
    # model token limit" refuses `max_tokens`)
    r"\bexceeded (?:the )?model(?:'s)? (?:max(?:imum)? length|token limit)\b|"
    r"\bmodel(?:'s)? max(?:imum)? length exceeded\b|\bmodel(?:'s)? context limit\b|"
    # the request said to hold its tokens over a limit ("Request has 140000 tokens, more than
    # the model's limit of 131072", "This request has 9000 tokens which is more than the 8192
    # allowed for this model", "Your input has more tokens than this model accepts"): the
    # request's own count, not a rate ("... tokens per minute", `_SIZE_OVER` after the limit)
    r"\b(?:request|input|prompt|messages|conversation)\s+(?:has|have|had|contains?|holds?)\s+"
    r"(?:(?:\d[\d,]*\s+)?tokens\b(?!\s+per\b)[^.\n]{0,40}?"
    r"\b(?:more than|exceed(?:s|ed|ing)?|greater than|larger than|over|above|beyond)\b|"
    r"more tokens than\b)[^.\n]{0,40}?"
    r"\b(?:limit|maximum|max|allowed|accepts?|supports?|context)\b" + _SIZE_OVER + r"|"
    # the prompt itself over a length (Zhipu's 1261 "Prompt exceeds max length")
    # (not "max_tokens is too large: inputs exceed max length", a key's value)
    # (the request's own: not "'user' input exceeds maximum length of 256", a key's value)
    r"(?:\b(?:the|your|this)\s+|(?<![\w'\"`]\s)(?<![\w'\"`]))"
    r"(?:prompt|input)\s+exceeds\s+(?:the\s+)?max(?:imum)?\s+(?:\w+\s+)?length\b|"
    # the conversation itself said full ("The conversation is full", as "The context window is
    # full"): what it holds is the prompt, which no wait and no key frees. A thread is the
    # conversation where nothing or a determiner names it ("This thread is already full");
    # one another noun names is the server's ("Worker thread is full", "the inference thread
    # is full"), a store of the server's said full, which frees as requests end (`_TRANSIENT`)
    r"(?:\b(?:conversation|chat\s+history|message\s+history)|"
    r"(?:(?<![\w'\"`][^\S\n])(?<![\w'\"`-])|"
    r"\b(?:the|this|that|your|my|current|chat|conversation|message)\s+)thread)"
    r"\s+(?:is|are|has\s+become)\s+"
    r"(?:(?:now|already|completely)\s+)?full\b(?!\s+(?:of|name|path|text|list)\b)|"
    # the request's tokens over a maximum or the model's limit, in other words ("Token count
    # 9000 is greater than the maximum allowed", "Total tokens exceed the model's limit", "This
    # request exceeds the token limit of this model"): not a key's ("max_tokens exceeds the
    # token limit of this model"), nor a limit per a window ("... the token limit per minute")
    r"(?:" + _SIZE_TOKENS + r"|" + _SIZE_REQUEST + r")" + _SIZE_OVER
)
_SIZE = _PROMPT_SIZE + r"|" + _OVER_ALLOWANCE
# A size counted in tokens or of the context, whatever the words call it ("Request body too
# large for gpt-4o model. Max size: 8000 tokens.", GitHub Models' 413): the prompt's, text
# and images alike.
_IN_TOKENS = r"(?i)\btokens?\b|\bcontext\b|\b[IO]?TPM\b"
# The caller's own storage said full, or over its quota ("Vector store is full", "Your file
# storage is full. Delete files ...", "storage quota exceeded"): it frees as the caller deletes
# what it keeps there, neither after a wait nor with another body, unlike a store of the
# server's (a cache, a queue) that frees as requests end.
_OWN_STORE = (
    r"(?:\b(?:your|my)\s+(?:[\w-]+\s+){0,2}?|"
    r"\b(?:vector|files?|documents?|uploads?|objects?|blobs?)[ _-]?)"
    r"(?:stores?|storage|space|buckets?|drive)\b"
)
_OWN_STORE_FULL = (
    rf"(?i)(?:{_OWN_STORE}|(?<!\bcache )\bstorage\b)[^.\n]{{0,40}}?"
    r"\b(?:(?:is|are|has\s+become)\s+(?:(?:now|already|currently|completely)\s+)?full\b|"
    r"(?:quota|limit|capacity)\s+(?:(?:has\s+been|was|is)\s+)?(?:exceeded|reached)\b)"
)
# ... unless the words say a wait frees it ("Storage capacity reached, try again in 30
# seconds"): then it is the server's store, whatever it is called ("Try again after deleting
# files" says no wait)
_WAIT_FREES = (
    r"(?i)\b(?:try again|retry)\s+(?:later|shortly|soon|"
    r"(?:in|after)\s+(?:\d|a\s+(?:moment|while|bit|few)\b|some\s+time\b))|\bwait\b"
)
# The caller's own spending or usage cap ("You have reached your specified API usage
# limits. You will regain access on ...", Anthropic's 400) or allowance, unless a wait is
# said to help ("Usage limit reached for this minute. Please try again later" is a rate
# limit), and not a key's limit ("max_tokens exceeds the output token usage limit of 8192").
_SPENDING_CAP = (
    r"(?i)\b(?:you|your (?:account|organi[sz]ation|project|team|key))\b[^.\n]{0,40}?"
    r"\b(?:usage|spend(?:ing)?) limits?\b|"
    r"\b(?:usage|spend(?:ing)?) limits? (?:has been |have been |was )?(?:reached|exceeded|hit)\b|"
    # or its allowance used up (Cloudflare's 429 "You have used up your daily free allocation of
    # 10,000 neurons. Please upgrade to ... Workers Paid plan"), in the passive too ("Your daily
    # allowance has been exhausted")
    r"\b(?:used up|exhausted|spent|run out of)\b[^.\n]{0,40}?\b(?:allocation|allowance)\b|"
    r"\b(?:allocation|allowance)\b[^.\n]{0,40}?\b(?:used up|exhausted|spent|run out)\b"
)
# A 429's words that a wait lifts its limit ("Please wait a moment", "It resets at the top
# of the hour", "retry after a short while").
_WAIT_HELPS = r"(?i)\bwait\b|\bretry\b|\bresets?\b"
# RFC 9110 §15.5.14 Content Too Large (Anthropic's `request_too_large`, from Cloudflare).
_TOO_LARGE_STATUS = 413
# (OpenAI's `invalid_prompt`: "your prompt was flagged as potentially violating our usage
# policy. Please try again with a different prompt")
# A gateway's guardrail or moderation that stopped the prompt is the same policy (LiteLLM's
# "Violated guardrail policy", Bedrock's `GUARDRAIL_INTERVENED`, "Violated OpenAI moderation
# policy"): a guardrail said to have acted, or a policy said to be violated, not a key or a
# guardrail's name refused ("Invalid guardrail name").
_CONTENT_POLICY = (
    r"(?i)content[ _-]?(?:management |safety )?(?:policy|filter)|usage polic(?:y|ies)|"
    # (or its safety filters: "Content generation failed due to safety filters")
    r"\bsafety\s+filters?\b|"
    r"\bguardrails?[ _](?:\w+[ _]){0,2}?(?:violat|block|interven|trigger|flagg)\w*|"
    r"\b(?:violat|block|interven|trigger|flagg)\w*[ _](?:\w+[ _]){0,3}?guardrails?\b|"
    r"\bviolat\w*\s+(?:\w+\s+){0,2}?(?:moderation|safety)\s+polic(?:y|ies)\b"
)
# A moderation's verdict in its own words: the request said to hold unfit content ("Input
# data may contain inappropriate content", "the input text may contain sensitive
# information"; not a parameter refused "because it may expose sensitive information"), at
# risk (DeepSeek's "Content Exists Risk"), or the same in Chinese (Zhipu's 1301
# "...可能包含不安全或敏感内容": unsafe or sensitive content). Read where the error names no
# key: "logit_bias contains prohibited words" refuses that key.
_MODERATION = (
    r"(?i)\b(?:contain(?:s|ed|ing)?|includ(?:e|es|ed|ing)|detected|flagged)\b[^.\n]{0,40}?"
    r"\b(?:inappropriate|sensitive|unsafe|harmful|prohibited|objectionable|offensive)\s+"
    r"(?:content|information|text|words?|material)\b|\bcontent\s+(?:\w+\s+)?risks?\b|"
    r"(?:不安全|敏感|违规|违法|违禁|不当|不良|有害)的?(?:内容|词|信息)|内容\S{0,6}?风险|"
    # or found sensitive, the input or the output (MiniMax's 1026 "input new_sensitive" and
    # 1027 "output new_sensitive", "input new_sensitive, input text sensitive", "... image is
    # sensitive"): not a name "case sensitive", nor a value "sensitive to" another
    r"\b(?:input|output|prompt|content|text|image|response|completion)s?[\s_]+(?:new[\s_]+)?"
    r"sensitive\b(?![\s-]+to\b)|"
    r"\b(?:is|are|was|were|been)\s+(?:(?:deemed|flagged|judged|considered)\s+(?:as\s+)?)?"
    r"sensitive\b(?![\s-]+to\b)|"
    # or the moderation or safety system that stopped it ("Request blocked by content
    # moderation", "The prompt was rejected by the safety system", "flagged by our moderation"),
    # or the rules it broke ("violates the provider's terms of use")
    r"\b(?:blocked|rejected|flagged|refused|stopped|denied|filtered|caught)\s+by\s+"
    r"(?:(?:the|our|an?|its|their|your)\s+)?(?:[\w'-]+\s+){0,2}?(?:moderation|safety)\b|"
    r"\bviolat\w*\s+(?:[\w'-]+\s+){0,3}?(?:terms\s+of\s+(?:use|service)|acceptable\s+use|"
    r"(?:usage|content|safety|community)\s+(?:guidelines|standards|rules))\b"
)
# The words for a setting of a model, which a model's name is not ("model parameter",
# "model option top_k").
_SETTING_WORDS = r"(?:param|parameter|option|setting|argument|field|feature|capabilit)\w*\b"
# What the caller's plan leaves out ("Your plan does not include access to this model", "not
# included in your current plan"): the account, where the sentence names no setting ("plan
# does not include this parameter" is about a key, and one named is dropped) and what it
# leaves out is no key of the body ("Your plan does not include logprobs"; group 1 or 2).
_PLAN_LACKS = (
    r"(?i)\b(?:plan|tier)\s+(?:does\s+not|doesn't|do\s+not|don't)\s+(?:include|cover)\s+"
    r"(?![^.\n]{0,40}?\b" + _SETTING_WORDS + r")"
    r"(?:(?:the|this|any|access\s+to|use\s+of)\s+)?([\w-]+)|"
    r"(?<![\w-])([\w-]+)\s+(?:is\s+|are\s+)?not\s+(?:included|covered)\s+(?:in|by)\s+(?:your|the|this)\s+"
    r"(?:current\s+)?(?:plan|tier)\b"
)
_MISSING_MODEL = (
    # (to the sentence's end: a dot inside a name, "gpt-5.2-proo", ends none)
    r"(?i)\bmodel\b(?:[^.\n]|\.(?=\S)){0,120}?"
    # ("model gpt-x: unknown parameter 'top_k'" names the key; "temporarily unavailable"
    # is the server's state)
    r"(?:does not exist|not found|not exist|is not available|"
    r"unknown(?!\s+(?:param|parameter|field|argument|key|option|property)s?\b)|"
    r"(?<!temporarily )(?<!currently )\bunavailable\b)|"
    # (the model itself, not a setting of it: "Unsupported model parameter: top_k" names a key)
    r"(?:unknown|invalid|no such|not an? (?:valid|known)) model\b"
    r"(?!\W*(?:param|parameter|option|setting|argument|field|feature)s?\b)|model[_ ]not[_ ]found|"
    # "Unsupported model: 'deepseek-r1'." (a relay), or its id bare ("Unsupported model
    # anthropic.claude-3-5-haiku-20241022-v1:0, please use models API ...", Bedrock Access
    # Gateway; an id has a digit, a slash or a hyphen: "Unsupported model parameter" is no
    # model): the name next, and in the rest of the line no key it is for ("Unsupported
    # model 'o1-mini' for parameter 'reasoning_effort'")
    r"\bunsupported model\s*(?:[:'\"`]|(?=[\w.:/-]*[\d/-])[A-Za-z_])(?![^\n]*\b(?:for|with)\b)|"
    # or unnamed, the object an article makes it ("You invoked an unsupported model or your
    # request did not allow prompt caching", Bedrock behind a proxy): the model, not a setting
    # of it ("an unsupported model parameter") nor one for a key in its sentence ("... model
    # for 'logprobs'"; looked for in a bounded reach: a run of such words reads in linear time)
    r"\b(?:an|the|this|that)\s+unsupported\s+model\b"
    r"(?!\W*(?:param|parameter|option|setting|argument|field|feature)s?\b)"
    r"(?![^.\n]{0,200}?\b(?:for|with)\b)|"
    # the model's name said to be wrong ("You don't have access to this model or the model
    # name is invalid", Google; Bedrock's "The provided model identifier is invalid.")
    r"\bmodel(?:'s)? (?:name|id|identifier) is (?:invalid|unknown|not valid)\b|"
    # "The requested model is not supported", "The 'gpt-5' model is not supported when ...",
    # the verb left out or contracted ("Requested model not available for session", Copilot;
    # "Model not supported by provider fireworks-ai", Hugging Face's router), or not deployed
    # ("Model accounts/x/models/y is not deployed", Fireworks): the model (at most its name
    # between, no setting of it), not a parameter "not supported with this model", nor a
    # capability the model lacks ("... is not supported for tool calling"), but the model
    # refused for the request, session, task or provider as a whole (Copilot's "Model is not
    # supported for this request.", its `model_not_supported` code and `param` lost in an
    # envelope without them; Hugging Face's "... is not supported for task text-generation and
    # provider novita"); in one line, as the next string of the body may open with a key
    # ("... by this model\n'logprobs' is not supported by this model").
    r"\bmodel(?:[^\S\n]+(?!" + _SETTING_WORDS + r")\S+)?[^\S\n]+"
    r"(?:(?:is|are)[^\S\n]+not|isn['\u2019]t|aren['\u2019]t|not)[^\S\n]+"
    r"(?:supported|available|deployed|served|hosted)\b"
    r"(?!\s+(?:for|with)\b(?!\s+(?:(?:this|the|your)\s+)?(?:request|session|task|provider)\b))|"
    # or retired, in words as by its code (Groq's "The model `llama-3.1-70b-versatile` has
    # been decommissioned and is no longer supported", its `model_decommissioned` lost in a
    # relay's envelope; Azure's "The model associated with the deployment is deprecated and no
    # longer available for use"): the model and at most four words of its own, no setting of
    # it and no clause about another thing ("The model supports `functions`, which is
    # deprecated")
    r"\bmodel(?:[^\S\n]+(?!" + _SETTING_WORDS + r"|which\b|that\b)[^\s,;:]+){0,4}?[^\S\n]+"
    r"(?:has been|have been|was|were|is|are)[^\S\n]+(?:now[^\S\n]+)?"
    r"(?:decommissioned|deprecated|retired|discontinued|sunset|"
    r"no longer[^\S\n]+(?:supported|available|served|offered))\b|"
    # the caller unable to reach it ("400 Unable to access model gpt-4o-mini.", AI/ML API's
    # 500; Together's "Unable to access non-serverless model ..."; Bedrock's "You don't have
    # access to the model with the specified model ID."), not a part or a setting of it
    r"\b(?:(?:unable to|cannot|can['\u2019]?t|could(?: not|n['\u2019]t)|not able to) access|"
    r"(?:do(?:es)?(?: not|n['\u2019]t) have|no) access to)[^\S\n]+"
    r"(?:(?:the|this)[^\S\n]+)?(?:[\w-]+[^\S\n]+)?model\b"
    r"(?!['\u2019]s\b|[^\S\n]+" + _SETTING_WORDS + r")|"
    # Zhipu's 1211 "模型不存在" (the model does not exist), or the model taken offline or
    # retired ("该模型已下线", "模型 x 已停用"; not a parameter of it, "模型的top_k参数已弃用")
    # or none found for the request's `model` (llama-swap's 404 "no model id could be
    # identified", its status lost in a frame), not a thing of the model's ("could not identify
    # the model's context length")
    r"\bno\s+model(?:[\s_-]+(?:id|name))?\s+(?:could|can)\s+be\s+"
    r"(?:identified|found|determined|resolved|matched)\b|"
    r"\b(?:could|can)(?:\s+not|n['\u2019]t)\s+(?:identify|determine|resolve|find|match)\s+"
    r"(?:the|a|any|which)\s+model\b(?!['\u2019]s\b|\s+(?:that|which|with|for|to)\b)|"
    r"模型\S{0,16}?(?:不存在|未找到)|"
    r"模型(?:[^\S\n]?(?a:[\w.:/'\"`-]{1,64})[^\S\n]?)?已(?:下线|停用|弃用|废弃|退役)"
)
# The model named by its id and refused in the same sentence, whatever stands between
# ("Invocation of model ID anthropic.claude-sonnet-4-6 with on-demand throughput isn't
# supported. Retry your request with the ID or ARN of an inference profile ...", Bedrock):
# read where the error names no key of the body, as "model ID x with temperature=2 isn't
# supported" refuses that key.
_MODEL_ID_REFUSED = (
    r"(?i)\bmodel[ _-]?(?:id|identifier)\b(?:[^.\n]|\.(?=\S)){0,120}?"
    r"(?:\bis not|\bisn['\u2019]t|\bnot)\s+(?:supported|available|allowed|valid)\b"
)
# The provider a gateway routes the model to ("Invalid provider", Cloudflare AI Gateway's
# 2008 for a model id without its provider prefix): the model's route, unless the body
# says a `provider` itself (OpenRouter's routing preferences, a key to drop).
# (not the provider's failed answer: "Unknown provider error", "Invalid provider response")
_MISSING_PROVIDER = (
    r"(?i)\b(?:invalid|unknown|unsupported|no such) provider\b"
    r"(?!\s+(?:response|error|returned|failure|failed|timeout|option|setting|preference)s?\b)"
)
# No provider the caller allows serves the model (OpenRouter's "No allowed providers are
# available for the selected model.", at 404, or in a frame without a status): the account's
# provider restrictions exclude every route, unless the body says a `provider` itself (its
# routing preferences may be what excludes them, a key to drop).
# (not one that names what none of them supports: "No eligible provider found that supports
# tool calling" refuses that capability, a key of the body, not the caller's settings)
_NONE_ALLOWED = (
    r"(?i)\bno\s+(?:allowed|permitted|eligible)\s+(?:providers?|endpoints?|routes?|upstreams?)\b"
    r"(?!\s+(?:(?:found|available)\s+)?(?:(?:that|which)\s+)?(?:can\s+)?supports?\b)"
)
# A structured code that says the model, or the endpoint or deployment serving it, is not
# there: `model_not_available`, `model_not_supported`, `dedicated_endpoint_not_running`,
# Azure's `DeploymentNotFound` and `OperationNotSupported` ("The chatCompletion operation
# does not work with the specified model"), `invalid_model`. Read from the code, not the
# prose, so that no sentence about a parameter "with this model" reads as one.
_MISSING_MODEL_CODE = (
    r"(?i)^(?:\w+_)?(?:model|endpoint|deployment|operation)_?"
    r"(?:not_?\w+|unavailable|unsupported|invalid|unknown|deprecated|decommissioned|disabled)$|"
    r"^(?:invalid|unknown|unsupported|unavailable)_(?:model|endpoint|deployment)$"
)
# The model needs more memory than the machine has (Ollama's 500 "model requires more system
# memory (3.7 GiB) than is available (3.6 GiB)", "not enough memory to load the model"; LM
# Studio's guardrail, "Model loading was stopped due to insufficient system resources", "Not
# enough resources to load the model with the current settings"): no body and no short wait
# makes it fit; where a wait is said to help, it is a wait, and where a key of the body is
# named ("max_tokens needs more memory than ..."), that key's.
_NO_ROOM_FOR_MODEL = (
    r"(?i)\b(?:requires?|needs?)\s+more\s+(?:\w+\s+)?(?:memory|RAM|VRAM)\b"
    r"(?:[^.\n]|\.(?=\S)){0,40}?\bthan\b|"
    r"\b(?:insufficient|not\s+enough)\s+(?:\w+\s+)?(?:memory|RAM|VRAM|resources)\s+"
    r"(?:to\s+(?:load|run|fit|hold)|for\s+(?:the|this)\s+model)\b|"
    r"\bmodel\s+loading\s+(?:was\s+)?(?:stopped|aborted|refused)\s+"
    r"(?:due\s+to|because\s+of)\s+insufficient\b"
)
# What serves a request, as gateways and relays count it when none is free.
_SERVERS = r"(?:channel|upstream|backend|deployment|data ?center|replica|worker|instance|node)s?\b"
_TRANSIENT = (
    r"(?i)rate[ _-]?limit|overloaded|too many requests|temporarily unavailable|at capacity|"
    # Groq's 498 `capacity_exceeded` ("Capacity temporarily exceeded for flex tier, please
    # try again later"): the docs ask for backoff
    # (or any short wait: "please try again shortly", "retry in a moment")
    r"capacity[ _-](?:\w+ )?exceeded|"
    # or none free for the model now (Gemini Code Assist's "No capacity available for model x
    # on the server", its 503 and `MODEL_CAPACITY_EXHAUSTED` lost in a frame without them;
    # "out of capacity", "当前模型无可用容量"), or too many of the caller's requests at once
    # (sub2api's "Concurrency limit exceeded for user", "Too many concurrent requests for this
    # model", "并发请求过多"): a request that ends frees a place
    r"\bno (?:(?:free|spare|available) )?capacity (?:available|left|for (?:the |this )?model)\b|"
    r"\b(?:out of|insufficient) (?:\w+ )?capacity\b|\bcapacity (?:is )?(?:exhausted|unavailable)\b|"
    r"\bconcurrency limit\b|\btoo many (?:concurrent|parallel|simultaneous) requests\b|"
    # (or their bound exceeded, in other words: Scaleway's 429 "You exceeded your current
    # threshold of concurrent requests", its status lost in a frame)
    r"\b(?:exceed\w*|reached|hit)\s+(?:\w+\s+){0,3}?(?:threshold|limit|maximum|number)\s+of\s+"
    r"(?:concurrent|parallel|simultaneous)\s+requests\b|"
    r"\b(?:concurrent|parallel|simultaneous)\s+requests?\s+(?:limit|threshold|maximum)\s+"
    r"(?:(?:has\s+been|was|is)\s+)?(?:exceeded|reached|hit)\b|"
    r"容量不足|并发\S{0,6}?(?:过多|超过|超出|上限)|"
    # or a count of requests at its bound ("Worker local total request limit reached (33/32)",
    # OpenRouter's upstream at 502; "Open api qps request limit reached", Baidu's 18): a
    # request that ends frees a place (a limit by the day is read before, and surfaces)
    r"\brequests?\s+limit\s+(?:(?:has\s+been|was|is)\s+)?(?:reached|exceeded|hit)\b|"
    r"\b(?:try again|retry) (?:later|shortly|soon|"
    r"in a (?:moment|while|bit|few (?:seconds|moments)))\b|"
    # DeepInfra's "Model busy, retry later", "server is busy", "under high load"
    r"\bbusy\b|\bhigh (?:load|demand|traffic)\b|"
    # the deployment behind the model is unhealthy, whatever status says so (NVIDIA's 400
    # "Function id '...': DEGRADED function cannot be invoked"): the server's state
    r"\bdegraded\b|"
    # a 503's words, where no status says them: the service down for now ("server
    # unavailable: cache rebuild in progress"), the model still loading (Hugging Face's
    # "Model ... is currently loading", llama.cpp's "Loading model"), nothing left to serve
    # the model now (one-api's "当前分组 default 下对于模型 ... 无可用渠道", LiteLLM's "No
    # deployments available for selected model", Cloudflare's "No more data centers to
    # forward the request to"), a wait named ("Only one message at a time ... or wait one
    # minute"), or the same in Chinese (new-api's "当前分组上游负载已饱和, 请稍后再试": the
    # upstream's load saturated, please try again later)
    # (not where it is unavailable, or for what: "in your region", "for this model")
    r"\b(?:server|service) (?:is )?(?:currently )?unavailable\b(?!\s+(?:in|for|to)\b)|"
    r"\b(?:is|still|currently) (?:being loaded|loading)\b|\bloading (?:the )?model\b|"
    # or not ready yet, as a model scaled to zero is brought up (KServe's "Model sklearn-iris
    # is not ready yet.", at 400; Dynamo's "Model `x` is not ready to serve requests yet"):
    # the model or server itself the subject, by its name at most, and not ready for
    # anything but requests ("not ready for tool calling" is a capability)
    r"\b(?:model|server|service|deployment|endpoint|backend|engine|worker|replica)s?"
    r"(?:\s+(?:with\s+)?name)?(?:\s+[`'\"]?[\w./:@-]+[`'\"]?)?"
    r"\s+(?:(?:is|are)\s+(?:still\s+)?not\s+(?:yet\s+)?ready\b"
    r"(?=\s*(?:yet\b|to (?:serve|accept|handle|process)\b|for (?:requests|inference|serving)\b|"
    r"[.!,;]|$))|"
    # or still being brought up, in other words (Dynamo's "The deployment may still be
    # starting up", "Model x is still initializing", "The server is warming up")
    r"(?:is|are|may\s+still\s+be)\s+(?:still\s+)?(?:(?:starting|booting|warming|spinning)\s+up|"
    r"initiali[sz]ing|being\s+(?:initiali[sz]ed|provisioned|deployed|scaled\s+up))\b)|"
    # (TorchServe's "Model \"x\" has no worker to serve inference request")
    r"\bno (?:(?:available|healthy|more) )?"
    + _SERVERS
    + r"\s+(?:available|left|to (?:forward|serve|handle|process))\b|"
    # (not one that names what none of them supports: "No available backend supports function
    # calling" refuses the tools, as cocore's "No connected provider supports ..." does)
    r"\bno (?:available|healthy) "
    + _SERVERS
    + r"(?!\s+(?:(?:found|available)\s+)?(?:(?:that|which)\s+)?(?:can\s+)?supports?\b)|"
    r"无可用(?:渠道|节点|容量)|"
    # or no answer came from what serves it, the whole of what is said (Cloudflare AI
    # Gateway's 2005 "Failed to get response from provider", at 400): not a relay's
    # preamble to its upstream's refusal ("Failed to get response from provider: ...")
    r"\b(?:(?:(?:failed|unable) to|could(?: not|n't)) (?:get|receive|obtain)|no) (?:a |any )?"
    r"response (?:was )?(?:received )?from (?:the )?(?:upstream|provider|backend|origin)"
    r"(?: server| provider)?s?(?=[^\S\n]*(?:[.!\n]|$))|"
    r"\bwait (?:a|one|a few|\d+) (?:moments?|seconds?|minutes?)\b|"
    # (or before the next try: Bedrock's ThrottlingException "Too many tokens, please wait
    # before trying again.", its 429 lost in a frame without one)
    r"\bwait\s+before\s+(?:trying|retrying|sending|making)\b|"
    # a queue with no room now (SGLang's "The request queue is full." after `200 OK`, its
    # 503 lost in a frame without one)
    r"\bqueue (?:is )?(?:full|at capacity)\b|队列已?满|"
    # (its threads or processes in Chinese: bisheng's 10540 "服务器线程数已满, 请稍候再试",
    # the server's thread count full, please try again shortly)
    r"(?:线程|进程)数?已?满(?!足)|"
    # or any store of the server's said to be full now ("prompt_cache is full, try again",
    # "KV cache is full"): room frees as requests end, and the identifier before the words is
    # the server's store, no key refused; not a context or its window, the prompt's size
    r"(?<!\bcontext )(?<!\bwindow )(?<!\bconversation )\b(?:is|are)\s+"
    r"(?:currently\s+|temporarily\s+|already\s+|now\s+)?full\b(?!\s+(?:of|name|path|text|list)\b)|"
    # or the server's state said to hold for now ("prompt_cache is temporarily offline"): it
    # passes; not a key refused for now ("temperature is temporarily not supported" is served
    # without it at once)
    r"\btemporarily\s+(?:down|offline|busy|paused|full|throttled|out\s+of\s+(?:service|capacity)|"
    r"rate[ _-]?limited|at\s+capacity|exceeded)\b|"
    # or over its bound (Triton's "Exceeds maximum queue size", its 503 lost in a frame; "queue
    # size exceeded"): the queue's, not a count of the request's own ("Batch size exceeds
    # maximum queue size (64)", "Number of requests exceeds ...")
    r"(?<!\bsize )(?<!\bcount )(?<!\brequests )(?<!\bitems )(?<!\bmessages )"
    r"\bexceed(?:s|ed)?\s+(?:the\s+)?max(?:imum)?\s+queue\s+(?:size|length|depth)\b|"
    r"\bqueue\s+(?:size|length|depth)\s+(?:limit\s+)?(?:exceeded|reached)\b|"
    r"稍[后候]再?(?:重?试|尝试)|负载\S{0,4}?(?:饱和|过高|过大)|繁忙"
)
# A 429 that names the window it counts in ("Tokens per minute limit exceeded", "on
# requests per min (RPM)", Vertex's metric `generate_content_requests_per_minute_per_project`)
# is a rate limit, whatever `quota` its code or `param` says: the window passes. An
# exhausted balance names no window. So is an error event that names no status (the 429's
# words relayed after `200 OK`): its window is all that says the limit passes.
_RATE_LIMIT_WORDS = r"(?i)\brate[ _-]?limit(?:ed|ing)?\b"
# Google's words for its `RESOURCE_EXHAUSTED` ("Resource exhausted.", Vertex's 429; "Resource
# has been exhausted (e.g. check quota).", Gemini's), where the envelope lost the code (a
# relay or a CLI that keeps the words): the code's reading, a rate limit, whatever status
# the relay gave it (Google sends it at 429 only; 401, 402 and 403 still speak for the
# account). (Not gRPC's `ResourceExhausted` code name: "received message larger than max"
# is a size.)
_RESOURCE_EXHAUSTED = (
    r"(?i)\bresources?\s+(?:(?:has|have)\s+been\s+|(?:is|are|was|were)\s+)?exhausted\b"
)
# A quota said to be spent, at 429 ("Quota exceeded", "Quota exceeded for this model"): the
# status says a wait lifts it (Google's per-minute quotas say only that), unless the words
# speak of what is paid ("You exceeded your current quota, please check your plan and billing
# details", OpenAI's `insufficient_quota`): then the account's, as at any other status. A
# quota by the day or longer surfaces before this is read.
# (a quota, not the caller's own: "You exceeded your current quota" is OpenAI's
# `insufficient_quota` in words, the account's)
_QUOTA_SPENT = (
    r"(?i)(?<!\byour )(?<!\bcurrent )\bquotas?\b[^.\n]{0,40}?"
    r"\b(?:exceeded|exhausted|reached|hit|used up|depleted)\b|"
    r"\b(?:exceeded|exhausted|reached|hit)\s+(?:the|this|a|its)\s+(?:\w+\s+)?quotas?\b"
)
_PAID_WORDS = (
    r"(?i)\b(?:billing|payment|plan|balance|credits?|subscription|upgrade|purchase|recharge|"
    r"top[ -]?up|insufficient|funds?)\b|余额|充值|欠费"
)
# (and queries per second or minute, Baidu's words: "Open api qps request limit reached")
_RATE_WINDOW = (
    r"(?i)(?<![^\W_])per[ _](?:second|sec|minute|min|hour)(?![^\W_])|"
    r"\b(?:[RT]P[SMH]|[IO]TPM|QP[SM])\b"
)
# A limit counted by the day or longer, said to be reached (OpenRouter's "Rate limit exceeded:
# free-models-per-day", Groq's "on requests per day (RPD): Limit 1000, Used 1000", GitHub
# Models' "Rate limit of 50 per 86400s exceeded for UserByModelByDay", Google's quota id
# "GenerateRequestsPerDayPerProjectPerModel", "Daily request limit exceeded", "超过每日使用限额"):
# its window, then the words of a limit in the same sentence, or the other way round.
_LONG_WINDOW = (
    r"(?<![^\W_])per[ _-]?(?:day|week|month)(?![^\W_])|\b(?:daily|weekly|monthly)\b|"
    r"(?-i:\b[RT]PD\b|[a-z](?:Per|By)(?:Day|Week|Month)(?![a-z]))|\bper 86400 ?s|"
    r"\b(?:in|per|every|within) (?:a |the (?:last |past )?)?24 ?(?:h|hours?|hrs?)\b|"
    r"每[日天周月]|今[日天]|本[周月]"
)
_LIMIT_WORDS = (
    r"\blimits?\b|\bquotas?\b|\bcap\b|\ballowance\b|\ballocation\b|\bexceeded\b|"
    r"\bexhausted\b|\breached\b|\bused up\b|\brun out\b|限额|额度|上限|配额|用完|用尽|超过|超出"
)
_LONG_WINDOW_LIMIT = (
    rf"(?i)(?:{_LONG_WINDOW})[^.\n]{{0,80}}?(?:{_LIMIT_WORDS})|"
    rf"(?:{_LIMIT_WORDS})[^.\n]{{0,80}}?(?:{_LONG_WINDOW})|"
    # (a quota's own id names its window, and is the limit: Google's QuotaFailure detail)
    r"(?-i:[a-z](?:Per|By)(?:Day|Week|Month)(?![a-z]))"
)
# Words that a short wait lifts a limit ("retry shortly", "wait a few seconds"), unlike "try
# again tomorrow" or a reset at midnight.
_SHORT_WAIT = (
    r"(?i)\b(?:try again|retry)\s+(?:shortly|soon|in a (?:moment|bit|few (?:seconds|moments)))\b|"
    r"\bwait (?:a|one|a few) (?:moments?|seconds?)\b|\bmomentarily\b"
)
_TRANSIENT_CODES = frozenset(
    {
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded_error",
        "overloaded",
        "server_busy",
        "unavailable",  # Google's status names
        "resource_exhausted",
        "deadline_exceeded",
        # failed finishes of a streamed turn (the chat wire's code): the server's
        # trouble, not the body's (vLLM aborted it, Z.ai's inference failed, DeepSeek
        # ran out of resources)
        "abort",
        "network_error",
        "insufficient_system_resource",
    }
)
# Codes of "the server's trouble": weaker than the above, since some servers give every
# 500 this type (llama.cpp's `server_error` for "image input is not supported", Ollama's
# `api_error` for "does not support tools"), so the message is read first.
# OpenAI's Responses `vector_store_timeout` (a `response.failed` whose file search timed out
# in its vector store: its `ResponseError`, code and message only) is its own backend's.
_SERVER_TROUBLE_CODES = frozenset(
    {
        "server_error",
        "internal_error",
        "api_error",
        "timeout_error",
        "internal",
        "vector_store_timeout",
        # TGI's `error_type` of an `InferError::GenerationError` (its 424, or a frame after
        # `200 OK`): the shard failed the run ("CUDA out of memory", "Batch ID ... not found")
        "generation",
    }
)
# The chat wire's code for a turn that ended with `finish_reason: "error"` and no error
# object it could read (OpenRouter's chunk after `200 OK` when its upstream failed
# mid-stream, the "Error processing stream" object inside the choice): the generation
# failed, not the body. A code only: Anthropic's envelope is typed "error" whatever it says.
_FAILED_FINISH_CODE = "error"
# The same in words, for an error event that names neither status nor code (OpenAI's
# mid-stream "The server had an error while processing your request", its `server_error`
# type lost in an envelope without one), or Go's gRPC status from the server's backend
# whose code is the backend's failure, not the request's (LocalAI's "rpc error: code =
# Unknown desc = unimplemented"; `InvalidArgument` or `NotFound` would be the request's).
_SERVER_TROUBLE = (
    r"(?i)\bserver (?:had|has|encountered|experienced) an? (?:\w+ )?error\b|"
    # or its engine, worker or backend, by the same verbs or as having run into an issue or
    # a problem (vLLM's EngineDeadError: "EngineCore encountered an issue. See stack trace
    # (above) for the root cause.", its 500 lost in a frame; a server merely "has an issue"
    # with what it was sent is no failure of its own), and OpenAI's other words for its
    # `server_error`: "An error occurred while processing your request. You can retry your
    # request, ..." (a Responses `response.failed`, its code lost in an envelope without one)
    r"\b(?:server|engine(?:\s?core)?|worker|backend|scheduler)\s+(?:(?:had|has|encountered|"
    r"experienced)\s+an?\s+(?:\w+\s+)?error|(?:has\s+)?(?:encountered|experienced|ran\s+into)"
    r"\s+an?\s+(?:\w+\s+)?(?:error|issue|problem))\b|"
    r"\ban?\s+(?:unexpected\s+|internal\s+)?error\s+(?:has\s+)?occurred\s+while\s+processing\s+"
    r"(?:your|the|this)\s+request\b|"
    # Google's "An internal error has occurred. Please retry or report in ...", "Internal
    # error encountered." (its `INTERNAL` status lost in a frame without one)
    r"\binternal (?:server )?error\b|"
    # ("An unexpected error occurred on our end. Please retry your request.")
    r"\bon our (?:end|side)\b|"
    # the server's own crash dump (a Python traceback: LiteLLM's "Error serializing to JSON
    # ... Traceback (most recent call last)" relayed mid-stream), or a proxy that lost its
    # connection to the server behind it (Envoy's "upstream connect error or
    # disconnect/reset before headers. reset reason: connection termination")
    r"\bTraceback \(most recent call last\)|"
    # or its model's process gone (LM Studio's "The model has crashed without additional
    # information. (Exit code: null)", its 500 and `api_error` lost in a frame; Ollama's
    # "llama runner process has terminated: exit status 2"; Docker Model Runner's "unable to
    # load runner: ... llama.cpp terminated unexpectedly", its 500 lost in a frame)
    r"\bcrash(?:ed|es)?\b|\bprocess (?:has )?(?:terminated|exited|died)\b|"
    r"\b(?:terminated|exited|died|stopped)\s+unexpectedly\b|"
    # or a generation that failed in it (TGI's `InferError` in a stream: "Request failed
    # during generation: Server error: Batch ID 408 not found in cache.", "Incomplete
    # generation"; Ollama's "an error was encountered while running the model: unexpected
    # EOF", its 500 lost in a frame): what failed is the run, not the body. ("Decoding" is not
    # one of its words: "Error while decoding the image" is the body's.)
    r"\b(?:fail(?:ed|ure)|errors?)(?:\s+(?:was|has\s+been)\s+(?:encountered|raised|thrown)|"
    r"\s+occurred)?\s+(?:during|while)\s+(?:the\s+)?(?:generation|generating|inference|"
    r"running\s+the\s+model)\b|\bgeneration\s+failed\b|\bincomplete\s+generation\b|"
    r"\b(?:(?:upstream|backend|origin)\s+connect(?:ion)?\s+(?:error|fail\w*)|"
    r"connection\s+(?:termination|refused|reset|fail\w*|timed? ?out))\b|"
    # or that waited for it in vain (Tengine's "The gateway did not receive a timely response
    # from the upstream server", haproxy's "The server didn't respond in time", Cloudflare's
    # "A timeout occurred")
    r"\btimely response\b|\brespond(?:ed)? in time\b|\btime(?:d out|out occurred)\b|"
    r"\bgateway time-?out\b|"
    r"\brpc error: code = (?:Unknown|Internal|Unavailable|DeadlineExceeded|Aborted|DataLoss)\b|"
    # or its accelerator failing the run (TGI's shard: "CUDA out of memory. Tried to allocate
    # 2.00 GiB ...", "CUDA error: an illegal memory access was encountered"), not the body
    r"\b(?:CUDA|GPU|device)\s+(?:error\b|out\s+of\s+memory\b)"
)
# 408, 409, 429 and 5xx are what the OpenAI and Anthropic SDKs retry; 425 Too Early
# (RFC 8470 §5.2) asks for the same request again, once it is not early data; 529 is
# Anthropic's overload.
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 503, 529})
# Failed Dependency: what the server depends on failed (TGI's status for a generation that
# failed in its shard, SageMaker's for its model's error): its words say whose fault it is.
_FAILED_DEPENDENCY = 424
# ... whose words may relay what it depends on as a client's error (SageMaker's "Received
# client error (400) from primary with message ..."): the body's, then, not the server's.
_CLIENT_ERROR = r"(?i)\bclient error\b|\bError code:? 4\d\d\b"
# An error event that names no status but whose code is one, as a string (LiteLLM's proxy
# relays an upstream's failure after its `200 OK` as `{"error": {..., "code": "500"}}`): the
# code is the status.
_STATUS_CODE = r"[45]\d\d"
# An error event that names no status but opens with a status line ("502 Bad Gateway", a
# gateway's page relayed as the event's text), or whose words give the status as an error
# code (the OpenAI and Anthropic SDKs' "Error code: 400 - {...}" a relay passes on,
# Cloudflare's page "524: A timeout occurred ... Error code 524"): that is its status.
_STATUS_LINE = r"\s*(?:HTTP(?:/\d(?:\.\d)?)? )?([45]\d\d) [A-Z][a-z]"
_STATUS_WORDS = r"\bError code:? ([45]\d\d)\b"
_RELAYED_4XX = r"\bError code:? (4\d\d)\b"
# (ASCII word boundaries: in Chinese the field's name is written against the words,
# "assistant消息中的tool_calls之后必须跟随对应的tool消息")
_CONVERSATION = (
    r"(?ai)messages?\s*\[|\broles?\b|alternat|tool_call_id|\btool_calls?\b|conversation|"
    r"message order|\bmessages\b|"
    # one message of the history, by its role or place ("Missing `reasoning_content` field in
    # the assistant message at message index 3"), or a field only messages carry
    r"\b(?:user|assistant|system|tool|developer) message\b|\bmessage (?:index|sequence)\b|"
    # ("Last message must be from the user", "Message content must be a string", Gemini's
    # "must end with a user turn", Cohere's "must contain valid chat turns")
    r"\b(?:last|final|first) message\b|\bmessage content\b|"
    r"\b(?:user|assistant|model|system|last|final|single|chat)[ -]turns?\b|"
    # a message of the chat by the API's own word for it (StepFun's "Unrecognized chat
    # message."), an assistant turn left last for the model to continue, a "prefill"
    # (llama.cpp's "Assistant response prefill is incompatible with enable_thinking.",
    # "Prefilling assistant messages is not supported"), or the parts of a turn's content
    # (Vertex's "must include at least one parts field, which describes the prompt input")
    r"\bchat messages?\b|"
    r"\b(?:assistant|response|message)\s+prefill\w*|\bprefill\w*\s+(?:the\s+)?(?:assistant|response)|"
    r"\bparts? field\b|\bprompt input\b|"
    # or a message's text left empty (Gemini's "Unable to submit request because it has an
    # empty text parameter.")
    r"\b(?:empty|blank)\s+(?:text|content|message|prompt)"
    r"(?:\s+(?:parameter|part|field|block|value)s?)?\b|"
    # and Gemini's own name for the messages, as its validator writes the path
    # ("GenerateContentRequest.contents[3].parts: contents.parts must not be empty",
    # "GenerateContentRequest.contents: contents is not specified")
    # (a lookbehind: `\w+Request` would rescan every long word from each of its letters)
    r"\bcontents(?:\[\d|\.(?:parts|role)\b)|(?<=Request)\.contents\b|"
    # or the Responses API's, a path into a message's content by its JSON path (Ark's
    # "missing `input.content.text' parameter", `param` "input.content.text")
    r"\binput(?:\.\d+|\[\d+\])*\.content\b|"
    r"\breasoning_content\b|"
    # a thought's signature, which only the model's own turns carry back (Vertex's "Unable to
    # submit request because Thought signature is not valid.", Gemini's `thoughtSignature`)
    r"\bthought[ _]?signatures?\b|"
    # the same in prose: a call or result of the history ("tool result's tool id(call_...)
    # not found", MiniMax; Gemini's "the number of function response parts is equal to the
    # number of function call parts of the function call turn"), a rule for every message's
    # content ("The model expects a single `text` element per message", xAI), or the field
    # that carries the results (Cohere's "cannot specify both message and tool_results in
    # multistep mode")
    r"\b(?:tool|function)[ _](?:calls?|results?|responses?)\b|\b(?:per|each|every) message\b|"
    # the messages as the chat's history (Cohere's "invalid request: all elements in history
    # must have a message.")
    # (or by Cohere's v1 field for them, "chat_history[2].message is required")
    r"\b(?:chat|conversation|message)[\s_]+history\b|\b(?:in|of)\s+(?:the\s+)?history\b|"
    # the system turn itself (Gemma on Gemini: "Developer instruction is not enabled for
    # models/gemma-3-27b-it")
    r"\b(?:system|developer) (?:instructions?|prompts?)\b|"
    # a message's `content` by its field name (the chat body has no key of that name):
    # "Invalid 'content' type. Expected one of: ['str'], got list." (SambaNova)
    r"['\"`]content['\"`]|\bcontent (?:type|part)s?\b|"
    # the roles a message may have, listed as a validator lists a field's values ("Input
    # should be 'user', 'assistant' or 'system'", AI21 on Azure, its `loc` not shown)
    r"['\"`](?:system|user|assistant|tool|developer)['\"`](?:,\s*|\s+or\s+)"
    r"['\"`](?:system|user|assistant|tool|developer)['\"`]|"
    # and the types a message's part may have, listed so ("Invalid value: file. Supported
    # values are: 'text','image_url','video_url' and 'video'.", DashScope, to a PDF's `file`
    # part; zod's "Expected 'text' | 'image_url', received 'file'"): 'text' and a part of
    # other media, not `response_format`'s types ('text', 'json_object')
    r"['\"`]text['\"`]\s*(?:,|\||\bor\b|\band\b)\s*(?:and\s+)?"
    r"['\"`](?:image_url|input_audio|video_url|input_image|file|image|audio|video|refusal)['\"`]|"
    # or a message's part of other media than images, which no body without a key and no
    # removal of images changes ("The audio file could not be decoded or its format is not
    # supported.", OpenAI; "PDF input is not supported"); not the output's (`modalities`, the
    # `audio` key: "does not support audio output")
    r"\b(?:audio|video|pdf|document)\s+(?:files?|inputs?|content|parts?|data|attachments?|clips?)\b|"
    r"\bfile\s+(?:inputs?|parts?|attachments?|content\s+parts?)\b"
)
# What the rejection refuses is no part of the body: a request header ("Unexpected value(s)
# ... for the anthropic-beta header"), or this endpoint for the model ("The model does not
# support Chat Completions API", vLLM; "not supported in the v1/chat/completions endpoint",
# OpenAI), also by its path, refused ("does not support the '/v1/chat/completions' API",
# Bedrock; "/v1/chat/completions is not supported. Please use /v1/responses."; "is only
# accessible via the /responses endpoint"; a path, not a URL's tail): no degraded body
# reaches another endpoint or sends other headers.
_NOT_THE_BODY = (
    r"(?i)\bheaders?\b|\bcompletions?\s+(?:API|endpoint)\b|\bendpoint or method\b|"
    r"(?<![\w./-])(?:/?v\d+/|/)[\w/]+['\"`]?\s+(?:API\b|endpoint\b|(?:is|are) not supported)|"
    # the model served at another path only ("This model is only supported in v1/responses
    # and not in v1/chat/completions.", OpenAI)
    r"\bsupported (?:in|on|at|by|via|through) (?:the )?['\"`]?/?v\d+/|"
    # or at the other API or endpoint, by its name or a path to use instead ("Model ... only
    # supports the Responses API. Please use /serving-endpoints/responses instead.",
    # Databricks; "generate API is not supported for model '...'. Please use the chat API
    # instead", Cohere)
    r"\bresponses\s+API\b|\b(?:use|call|try)\s+['\"`]?/[\w/.-]+['\"`]?\s+instead\b|"
    r"\b(?:use|call|try)\s+the\s+[\w/.-]+\s+(?:API|endpoint)\b|"
    r"\b\w+\s+(?:API|endpoint)\s+(?:is|are)\s+not\s+supported\b|"
    # or the server's own chat template, which the model lacks and only the server's launch
    # supplies (vLLM's "default chat template is no longer allowed, so you must provide a chat
    # template if the tokenizer does not define one"; a body's `chat_template` refused is named
    # before this is read)
    r"\b(?:provide|specify|supply|pass|set|configure)\s+(?:a|an|the|your own)\s+"
    r"chat[ _-]?template\b|"
    r"\bno\s+chat[ _-]?template\b|"
    # (or the server's template failing, by the words it opens its error with: TGI's 422
    # "Template error: template not found", "Template error: invalid operation: ...", after a
    # relay's "OpenAIException - " too)
    r"(?:^|[\n:]|\s-)\s*(?:chat\s+)?template\s+error\b|\btemplate\s+(?:is\s+)?not\s+found\b|"
    r"\bchat[ _-]?template\s+(?:is\s+)?(?:missing|not\s+(?:found|set|defined|provided|available))\b"
)
# (and the same words in Chinese, Japanese and Korean: "此模型不支持图像输入", a gateway's
# "this model does not support image input"; SiliconFlow's "The model is not a VLM (Vision
# Language Model)")
_IMAGE_WORDS = r"(?i)image|vision|multi-?modal|visual|\bVLM\b|图像|图片|视觉|多模态|画像|이미지"
# A model's id is a name, not words about images: "vision" in `llama-3.2-11b-vision-preview`
# (Groq's "The model `llama-3.2-11b-vision-preview` has been decommissioned") or in
# "for model=doubao-1-5-vision-pro-32k-250115" (LiteLLM's refusal of `response_format` for
# it) says nothing of the body's images. An id here is a token of letters, digits and
# separators with an image word, two hyphens or a digit and a hyphen or slash, that is no
# image file's name and no data URL ("photo-1.jpg", "data:image/png").
_TOKEN = r"(?<![\w.:/-])[\w.:/-]++"
_IMAGE_FILE = r"(?i)\.(?:jpe?g|png|gif|webp|bmp|tiff?|heic|heif|avif|svg)$|^data:"


def _without_model_ids(text: str) -> str:
    """`text` without the model ids that hold an image word (a token at a time: linear)."""

    def cut(token: re.Match[str]) -> str:
        word = token.group(0)
        if (
            (word.count("-") >= 2 or (re.search(r"\d", word) and re.search(r"[-/]", word)))
            and re.search(_IMAGE_WORDS, word)
            and not re.search(_IMAGE_FILE, word)
        ):
            return " "
        return word

    return re.sub(_TOKEN, cut, text)


# An image file, by its name, that the endpoint failed to fetch (OpenAI's "Timeout while
# downloading 20250503_162129.jpg.", "Error while downloading https://.../Cat03.jpg.", their
# `invalid_image_url` code lost in an envelope without one): image input refused, as
# "failed to download" an image is.
_IMAGE_FETCH_FAILED = (
    r"(?i)\b(?:time(?:d)?[ -]?out|error|failure|failed)\s+(?:while|when)\s+"
    r"(?:downloading|fetching|retrieving|loading)\s+\S*\.(?:jpe?g|png|gif|webp|bmp|tiff?|heic|heif|avif)\b"
)
# The part of a server that reads images, where it is separate from the model (LM Studio's
# vision add-on, llama.cpp's multimodal projector).
_IMAGE_PART = r"(?:add-?on|projector|encoder|tower|adapter|processor|module|component|plugin)s?\b"
# An invalid image is refused (`invalid_image_url`, "Invalid image data"); a part of invalid
# shape ("Invalid type for 'messages[0].content[1].image_url'") is the body's fault.
_IMAGE_REFUSAL = (
    r"(?i)not (?:an? )?(?:multi-?modal|vision|VLM\b)|do(?:es)?(?: not|n't) support|"
    # (or the model without it: "Model does not have vision capability", "has no vision")
    r"\bdo(?:es)?(?: not|n't) have\b|\bha(?:s|ve) no\b|"
    # (or not yet, "image URLs are not currently supported, please use base64 encoded data
    # instead": Ollama's /v1 takes an image by its data only)
    r"(?:not|n't)(?: (?:currently|yet|presently))? supported|"
    r"unsupported|"
    r"not enabled|cannot|can't|not allowed|not accept|not available|\bunavailable\b|"
    # or switched off where it is served ("image (vision) input is currently disabled on this
    # gateway", LiveKit's inference gateway)
    r"\bdisabled\b|"
    # no route serves them ("No endpoints found that support image input", "No providers
    # available that accept image input"), or a header is required for them ("Copilot-Vision-
    # Request header is required for image input")
    r"\bno (?:(?:connected|available|active|online|eligible|healthy) )?"
    r"(?:endpoints?|providers?|backends?|routes?|upstreams?)\b|\brequire[sd]?\b|"
    # the image could not be read ("Image input format or parsing error"; Anthropic's
    # "Could not process image", "unable to decode", "failed to load"), nor fetched
    # (DashScope's "Failed to download multimodal content", a relay's "fail to decode image
    # config"), or is not a valid one (Gemini's "Provided image is not valid")
    r"\b(?:format|pars(?:e|ing)|decod(?:e|ing))\s+(?:error|failed|failure)\b|"
    # (or in the other order: "Error while decoding the image", "failure when parsing image")
    r"\b(?:error|fail(?:ed|ure))\s+(?:while|when)\s+(?:decod|pars|load|read|process)\w*|"
    r"\b(?:could(?: not|n't)|can not|unable to|fail(?:ed)? to)\s+(?:be\s+)?"
    r"(?:process|read|decod|pars|load|open|handl|download|fetch|retriev)\w*\b|"
    r"\bnot (?:an? )?valid\b|"
    r"invalid[ _-]?(?:image|vision|multi-?modal)|"
    # or in another form than the server takes ("'url' field must be a base64 encoded image.",
    # LM Studio, to an image by its URL or in a format it does not decode)
    r"\b(?:must|should)\s+be\s+(?:an?\s+)?(?:valid\s+)?(?:base64|data[ -]?ur[il])|"
    # a deserializer that does not know the part ("unknown variant `image_url`, expected
    # `text`", DeepSeek): the endpoint takes text only
    r"\bunknown (?:variant|type)\b|"
    # OpenAI: "Invalid content type. image_url is only supported by certain models."
    r"\bonly (?:supported|available|allowed)\b|"
    # Ollama's 500 on a model without a projector: "this model is missing data required
    # for image input"; the part that reads images absent ("Vision add-on is not loaded,
    # but images were provided", LM Studio): the part, not the model, which may be loading
    # (or "does not have the projector needed to process images")
    r"\b(?:missing|lacks?|lacking)\b|"
    r"\b"
    + _IMAGE_PART
    + r"(?:\s+\w+){0,2}?\s+not\s+(?:been\s+)?(?:loaded|installed|initiali[sz]ed)\b|"
    r"\b(?:do(?:es)?(?: not|n't) have|without|no)\s+(?:(?:an?|the|any)\s+)?(?:[\w-]+\s+)?"
    + _IMAGE_PART
    + r"|"
    # too many of them ("Too many images"; a limit on their number is `_IMAGE_LIMIT`), or
    # a limit in pixels or bytes beside them ("Image dimensions must be at most 8000 pixels",
    # "each image may be up to 5 MB")
    r"\btoo many\b|"
    r"\b(?:at most|more than|up to|no more than|a maximum of)\s+\d[\d,.]*[^\S\n]*"
    r"(?:(?:mega)?pixels?|px|[KMG]i?B|(?:kilo|mega)?bytes?)\b|"
    # "does not support" in Chinese, Japanese and Korean; an image input invalid or that
    # could not be parsed, in Chinese (Z.ai's 1210 "图片输入格式/解析错误")
    r"不支持|无法|(?:格式|解析|数据)\S{0,4}?错误|无效|非法|"
    r"サポート(?:し|され)ていません|지원하지 않"
)
# A limit on the images themselves, their number or their size ("At most 1 image(s) may be
# provided in one request", "Only one image is allowed per request", "You may not include
# more than 10 images", "image size must be at most 20MB", "the number of images must be no
# more than 5"): the one image action there is removes them all, rather than surface the
# turn. The limit is the images' where what it counts is images (or, beside an image word,
# pixels or bytes: `_IMAGE_REFUSAL`), or where an image's count or size is its subject; not
# a key's limit said beside an image word ("Images are resized to 768px; max_tokens must be
# at most 4096", "max_tokens too large for vision models: at most 4096"), which that key's
# reading takes.
_LIMIT = (
    r"\b(?:at most|more than|only|up to|no more than|a maximum of|"
    # (or a maximum said exceeded: "Number of images (2) exceeds maximum of 1")
    r"(?:exceed(?:s|ed|ing)?\s+(?:the\s+)?|the\s+)?max(?:imum)?(?:\s+(?:of|is|allowed))?:?)\s+"
    r"(?:(?:supports?|accepts?|allows?)\s+)?(?:\d[\d,.]*|one|a single)"
)
_IMAGE_NOUN = r"(?:images?|pictures?|photos?|screenshots?)"
# A word that tells the number before it is not a count of what follows: a key's limit "for
# image inputs", "with images", "per image request" ("max_tokens must be at most 4096 for
# image inputs" is `max_tokens`'s, not a limit on the images).
_NOT_COUNTED = r"(?:for|with|per|in|on|of|when|during|from|by)\b"
# What may stand between Chinese words of one clause: other Chinese words and numbers, no
# identifier and no clause's end.
# (the full-width comma, stop, semicolon, exclamation and question marks, and the
# enumeration comma, by their code points)
_CJK_GAP = r"(?:[\d \t]|[^\x00-\x7f\uff0c\u3002\uff1b\uff01\uff1f\u3001\n]){0,12}?"
_IMAGE_LIMIT = (
    r"(?i)"
    + _LIMIT
    + r"[^\S\n]+(?:(?!"
    + _NOT_COUNTED
    + r")[\w-]+[^\S\n]+)?"
    + _IMAGE_NOUN
    + r"\b|"
    r"\b"
    + _IMAGE_NOUN
    + r"(?:'s)?[^\S\n]+(?:count|number|size|file[^\S\n]+size|dimensions?|width|height|"
    r"resolution|pixels?)\b[^.;:\n]{0,40}?"
    + _LIMIT
    + r"|\b(?:number|count)\s+of\s+(?:\w+\s+)?"
    + _IMAGE_NOUN
    + r"\b[^.;:\n]{0,40}?"
    + _LIMIT
    # or the images counted, then said over a maximum, nothing between but a remark or a
    # comma ("Request contains 52 images, exceeding the maximum of 50"; not "2 images but
    # max_tokens exceeds the maximum", another key's)
    + r"|\b\d[\d,]*[^\S\n]+(?:[\w-]+[^\S\n]+)?"
    + _IMAGE_NOUN
    + r"\b(?:[^\S\n]*\([^()\n]{0,20}\))?[,\s]*(?:(?:which|that)\s+)?(?:(?:is|are)\s+)?"
    r"(?:exceed(?:s|ed|ing)?|over|above|beyond|more than)\s+(?:the\s+|a\s+|its\s+)?"
    r"(?:max(?:imum)?|limit)\b"
    # and "at most" in Chinese with the images its subject or what it counts ("最多只能上传1张
    # 图片", "图片最多10张"), nothing but Chinese words and numbers between: not another key's
    # limit beside an image word ("图片理解模型的max_tokens最多支持1024" is `max_tokens`'s)
     + r"|(?:图片|图像|照片)" + _CJK_GAP + r"最多|最多" + _CJK_GAP + r"(?:图片|图像|照片)"
)
# An image said to be over a limit, the image the subject ("messages.2.content.0.image.source
# .base64: image exceeds 5 MB maximum", "At least one of the image dimensions exceed max
# allowed size for many-image requests: 2000 pixels", Anthropic; "image too large: 9000x9000",
# the verb left out; "图片大小超过限制"): image input refused, though the path to it points
# into a message; not a key's value said to exceed a limit for images ("max_tokens exceeds
# 4096 for vision models").
_IMAGE_TOO_LARGE = (
    # (no clause's conjunction between: "2 images but max_tokens exceeds the maximum" is
    # another subject's; "image or video is too large" is still the image's)
    r"(?i)\b(?:image|picture|photo)s?\b"
    r"(?:[^\S\n]+(?!(?:but|while|whereas|however|yet)\b)[\w-]+){0,3}?[^\S\n]+"
    r"(?:exceed(?:s|ed|ing)?|(?:(?:is|are)\s+)?(?:too\s+(?:large|big|small)|(?:larger|smaller)\s+than))\b|"
    # or outside the model's bounds on its size (DashScope's "The image length and width do
    # not meet the model restrictions. [height:1 or width:1 must be larger than 10]")
    r"\b(?:image|picture|photo)s?\b(?:[^\S\n]+[\w-]+){0,3}?[^\S\n]+"
    r"do(?:es)?\s+not\s+(?:meet|satisfy)\s+(?:the\s+)?(?:[\w'-]+\s+){0,2}?"
    r"(?:restrictions?|requirements?|limits?|constraints?)\b|"
    r"(?:图片|图像)\S{0,6}?(?:超过|超出|过大)"
)
# The server asks for a smaller image ("For image inputs, downscale the image", Rapid-MLX's 400
# when an image's tokens are over its vision budget; "resize the image", "reduce the image
# resolution", "use a smaller image"): the image, as sent, is refused for its size. The verb
# as advice, the image its object: "Images are resized to 768px" tells, it does not refuse.
_IMAGE_SHRINK = (
    r"(?i)\b(?:downscale|downsample|downsize|resize|shrink|compress|scale\s+down)\s+"
    r"(?:(?:the|your|each|every|all|any|this|that)\s+)?(?:(?:input|attached|uploaded)\s+)?"
    + _IMAGE_NOUN
    + r"\b|"
    r"\b(?:reduce|lower|decrease)\s+(?:the\s+|your\s+)?(?:images?|pictures?|photos?)(?:'s)?\s+"
    r"(?:size|resolution|dimensions?|pixels?)\b|"
    r"\b(?:use|send|provide|upload)\s+(?:an?\s+|the\s+)?(?:smaller|lower[- ]resolution)\s+"
    r"(?:images?|pictures?|photos?)\b"
)
# Text alone accepted ("Only text content is supported"): with images in the body, they are
# what is refused, though the sentence does not name them.
_TEXT_ONLY = r"(?i)\bonly text\b|\btext[ -]only\b|\bonly (?:supports?|accepts?|allows?) text\b"
# A validator that wants each content part's type to be text ("Input should be 'text'" at
# `body -> messages -> 0 -> content -> list[TextContentPart] -> 0 -> type`, pydantic), where
# the error points into a message's content (at `response_format.type` the same words
# refuse that key's value); not one of a list of types ("'text' or 'json_object'").
_TEXT_PART_ONLY = r"(?i)\b(?:should|must) be ['\"`]text['\"`](?!\s*(?:or|,))"
_IN_CONTENT = r"(?i)\bmessages?\W+\d+\W+(?:\w+\W+)?content\b"
# Images refused only in some messages ("Image URLs are only allowed for messages with role
# 'user'") are a rule of the conversation, not image input refused.
_IMAGE_ROLE_RULE = (
    r"(?i)\brole\b|\b(?:system|assistant|tool) messages?\b|"
    r"\b(?:system|developer) (?:instructions?|prompts?)\b"
)
# A feature retired, said at 410 Gone (xAI's "Live search is deprecated. Please switch to the
# Agent Tools API", to any body with `search_parameters`): the model and the endpoint are read
# before (a model retired surfaces, as does "this endpoint"), so what is gone is something the
# body asks for, in words no key spells; the static list reaches it.
_GONE_STATUS = 410
_RETIRED = (
    r"(?i)\b(?:deprecated|retired|discontinued|removed|sunset|no longer (?:supported|available))\b"
)
# (not the endpoint or the API itself said retired: "This endpoint is deprecated. Use
# /v1/responses." is no body's)
_ENDPOINT_RETIRED = (
    r"(?i)\b(?:endpoint|api|route|path|url|version)s?\s+(?:is|are|has been|have been|was|were)\s+"
    r"(?:now\s+)?(?:deprecated|retired|discontinued|removed|sunset|no longer)\b"
)
# The parameters refused without a name, whatever the status: OpenRouter's 404 "No endpoints
# found that can handle the requested parameters" (no upstream serves this body).
_PARAMETERS_REFUSED = (
    r"(?i)\b(?:requested|provided|supplied|given|unsupported) (?:parameters|params|arguments)\b"
)
# "Internal server error", or an RFC 7807 problem whose title and detail both say only
# that ("Internal Server Error: Internal server error", as NVIDIA's cloud functions write).
_OPAQUE_SERVER_ERROR = (
    r"(?i)^\W*(?:HTTP \d+\W*)?internal server error(?:\W+internal server error)*\W*$"
)
_REPLACEMENT = r"(?i)\buse\s+['\"`]?([A-Za-z_][\w.]*)['\"`]?\s+instead"
# Where a provider suggests a key ("did you mean 'stop'?", "Use 'max_completion_tokens'
# instead", "has moved to 'reasoning.effort'"), the suggested key is not the refused one:
# these clauses are read for a rename, never for names to drop.
_SUGGESTION = (
    r"(?i)\bdid you mean\s+['\"`]?[A-Za-z_][\w.]*['\"`]?|"
    # a validator's list of the fields it knows, after the one it refused (serde's "unknown
    # field `top_k`, expected one of `model`, `messages`, ..."; Jackson's "Unrecognized field
    # \"top_k\" (class ...), not marked as ignorable (3 known properties: \"model\", ...)"):
    # to the end of the line
    r"\bexpected one of\b[^\n]*|\bknown propert(?:y|ies)\b[^\n]*|"
    # (pydantic's tagged union: "Input tag 'web_fetch_20250910' found using 'type' does not
    # match any of the expected tags: 'bash_20250124', ...", Anthropic's, lists the tags it
    # takes)
    r"\bexpected (?:tags?|values?|types?)\b[^\n]*|"
    # (or several, "use tools/tool_choice instead": advice, and no one key to move a value to)
    r"\buse\s+['\"`]?[A-Za-z_][\w.]*['\"`]?"
    r"(?:\s*(?:/|,|\bor\b|\band\b)\s*['\"`]?[A-Za-z_][\w.]*['\"`]?){0,3}\s+instead|"
    r"\bmoved to\s+['\"`]?[A-Za-z_][\w.]*['\"`]?|"
    # advice to switch a key on ("To use thinking blocks, enable `thinking` in your request.",
    # Anthropic): no body without a key turns it on ("disable `thinking`" still names it)
    # (not where it cannot be: "Cannot enable `logprobs` for this model" refuses it)
    r"(?<!\bcannot )(?<!\bcan't )(?<!\bnot )(?<!\bunable to )(?<!\bfailed to )"
    r"\b(?:enable|turn on|activate|switch on)\s+['\"`][A-Za-z_][\w.]*['\"`]|"
    # the values it would accept ("Supported values are: 'none', 'low', 'medium', and
    # 'high'.", MiniMax's "(allowed: adaptive, disabled)"): to the sentence's end
    r"\b(?:supported|allowed|valid|accepted) values? (?:are|is|include)\b[^.\n]*|"
    r"\(allowed:[^()\n]*\)|"
    # pydantic's literal_error lists them too ("Input should be 'user', 'assistant' or
    # 'system'"): two or more quoted alternatives, no key among them (the list only: "Tool
    # choice must be" still refuses `tool_choice`)
    r"(?:(?<=\bshould be )|(?<=\bmust be )|(?<=\bbe one of ))"
    r"(?:['\"`][^'\"`\n]{1,40}['\"`](?:,\s*|\s+or\s+)){1,16}['\"`][^'\"`\n]{1,40}['\"`]"
)
# A clause that states the condition under which a value would be allowed ("Only
# temperature=1 is supported unless reasoning_effort resolves to 'none'", "while reasoning
# is active", LiteLLM), or what the refused key needs ("The `metadata` field is only
# supported if `store` is set to true", "requires store=true"), or the purpose a rule serves
# ("'messages' must contain the word 'json' in some form, to use 'response_format' of type
# 'json_object'", not "unable to use"), names the circumstance, not what is refused: like a
# suggestion, it is not read for names to drop. Up to the clause's end.
_CONDITION = (
    r"(?i)(?:\b(?:unless|while|whenever|when|if|requires?)|"
    r"(?<!\bable )(?<!\bfailed )(?<!\bnot )\b(?:in order )?to use)\b[^.,;:!?\n]*"
)
# A link names no key, whatever its path or anchor says ("https://docs.example.com/tools.html",
# "#chat-create-max_completion_tokens"): it is where to read, not what is refused.
_URL = r"(?i)\bhttps?://[^\s\"'<>]*"
# A sentence about a value: where it quotes a value of the body, the key holding it is named.
_VALUE_WORD = r"(?i)\bvalues?\b"
# So does a value quoted and refused right after it, whatever the sentence calls it
# (CLIProxyAPI's "level \"max\" not supported, valid levels: low, medium, high, xhigh", to
# `reasoning_effort: "max"`; "effort 'high' is not available"; "'flex' is not supported").
_VALUE_REFUSED_AFTER = (
    r"(?i)^\s*(?:(?:is|are)\s+)?(?:not\s+(?:(?:currently|yet)\s+)?"
    r"(?:supported|available|allowed|permitted|accepted|valid)\b|unsupported\b|invalid\b)"
)
_LOC = r"""loc['"]?\s*[:=]\s*[\[(]\s*['"]body['"]\s*,\s*['"]([\w.]+)['"]"""
# Words that, next to a plain-word key, say it is a parameter being refused ("cannot" also
# written as two words, and with the server's own English: ModelScope's "enable thinking can
# not be support when `stream=False`").
_CUE_BEFORE = r"(?:support|supports|argument|arguments|parameter|parameters|param|field|fields|name|key|option|property|supplied:?)"  # noqa: E501
_CUE_AFTER = r"(?:parameter|param|field|argument|option|(?:is|are)(?: not|n't)(?: (?:currently|yet|presently))? (?:supported|allowed|permitted|available|enabled|configurable|adjustable)|not (?:(?:currently|yet|presently) )?supported|unsupported|unavailable|must|(?:may|can) only be|(?:is|are)(?: (?:currently|presently))? (?:only available|available only)\b|may not be|is invalid|(?:is|are) unknown|not (?:yet )?implemented|not support|can ?not be (?:used|set|specified|enabled|support(?:ed)?))"  # noqa: E501
# Words that refuse the key written right after them ("invalid temperature: only 1 is
# allowed"), and the words for "parameter" or "field" written right against it in Chinese,
# after ("temperature参数非法", Zhipu) or before ("参数temperature取值范围为(0, 1)").
_CUE_ADJACENT_BEFORE = r"(?:invalid|unsupported|unknown|unrecognized|too many)"
_CUE_CJK = r"(?:参数|字段)"
# Words that refuse using the key written right after them, with what it cannot go with
# ("Cannot use tools with stream", llama.cpp's 500): not a thing of the key's ("Unable to
# use user-provided keys", "cannot use the user's account").
_CUE_CANNOT_USE = r"(?:cannot|can't|can\s+not|unable\s+to|not\s+able\s+to)\s+use"
# A server's command-line flag said to be needed, in one sentence with the key it serves
# ("Please launch the api_server with --tool-call-parser if you want to use tools.",
# LMDeploy): that key is what the server as started refuses, though only the purpose names it.
_SERVER_FLAG = r"(?<![\w-])--[a-z][\w-]*"
# The same words before a colon, the key after it, however far the refusal reaches ("Argument
# not supported on this model: include", xAI).
_CUE_COLON = (
    r"(?:argument|parameter|param|field|option|property)s?\s+(?:(?:is|are)\s+)?"
    r"(?:not\s+(?:supported|allowed|permitted|recognized)|unsupported|unrecognized|unknown|invalid)"
    r"(?:\s+(?:on|for|by|with|in)\s+(?:this|the)\s+(?:model|endpoint|request|API))?\s*:\s*"
)
# A key listed before another after such words: an identifier (a plain word is prose,
# "Invalid request and ..."), or quoted (or the quotes a named key's words left).
_LISTED_KEY = r"(?:['\"`][^'\"`\n]{0,40}['\"`]|[A-Za-z]\w*_\w+)"
# A path rooted at the request names a key of the body by its next segment
# ("parameter.enable_thinking must be set to false", DashScope; "body.maxTokens: property
# 'body.maxTokens' is unsupported", Cerebras): the root is cut, so that the key reads as if
# written alone. Only as a path's first segment: `tools.0.function.parameters.x` is no root.
# The request's type is such a root too (Go's "Go struct field ChatCompletionRequest.max_tokens
# of type int", its validator's 'ChatCompletionRequest.Temperature').
_BODY_ROOT = r"(?i)(?<![\w.])(?:body|\w*request|parameters?|params?)\.(?=[A-Za-z_])"
# A validator's location written in its text points at a field as its JSON item does, and is
# read as that field quoted, its path dotted: a JSON pointer (Azure's "#/store", ajv's
# "/messages/1/content"), pydantic v1's "body -> temperature", pydantic v2's location on a
# line of its own above the indented message (vLLM: "temperature\n  Input should be a valid
# number"), serde's path in axum's "into the target type: temperature: invalid type", and
# a field that opens a line before a colon, as validators write "field: message" (Zhipu's
# "stop:最大只能有4个停止词", at most 4 stop words; an identifier is ASCII, and neither a
# URL's scheme nor a speaker of a transcript the error quotes, "user: hi", is one).
_LOCATION = (
    r"(?<![\w./#:-])#?/([A-Za-z_]\w*+(?:/(?:\w++|\*))*+)"
    r"|(?<!\w)(\w++(?: -> \w++)++)"
    r"|(?m:^([A-Za-z_][\w.]*+)$)(?=\n[ \t]+\S)"
    r"|(?<=into the target type: )([A-Za-z_][\w.\[\]]*+)(?=:)"
    r"|(?m:^)(?!(?:user|assistant|system|developer|tool|function|human)\b)"
    r"([A-Za-z_][A-Za-z0-9_.]*+)(?=:(?![/:]))"
)
# A sentence that points inside the conversation ("'messages.1' : property 'metadata' is
# unsupported", "messages.2.assistant.reasoning_content", "successive user or assistant
# messages (messages[0] and messages[1] ...)") speaks of a message's fields and roles, not
# of the body's keys of the same names (`metadata`, `user`). The sentence only: a one-line
# error may go on to name a body key ("messages.1.content.0.type: Expected `thinking` ...
# To avoid this requirement, disable `thinking`.", Anthropic's). So does a sentence about
# the messages' roles ("roles must alternate between "user" and "assistant"", Anthropic's):
# the quoted `user` there is a role.
# (Cut by `_outside_messages`: one regex from the sentence's start would try every start
# in a line without punctuation, quadratic in the line; a 64 KB body took minutes.)
_MESSAGE_POINTER = r"(?i)\bmessages?(?:\.\[?\d|\[\d| index \d)|\broles?\b"
_SENTENCE_END = r"(?m)[.!?](?=\s|$)|$"
_SENTENCE_STARTS = ".!?\n"
# Capability phrases that name keys without spelling them.
_REASONING_KEYS = ("reasoning_effort", "reasoning", "thinking", "think", "enable_thinking")
_CAPABILITIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # "tool choice" in prose is the capability; `tool_choice` spelled as the key names
    # that one key (a refused value), and is found by `_is_named`.
    # ("tool calls", "function call" in prose are the capability too; `tool_calls` is a
    # message's field; so are "functions", Azure's "Functions are not supported for this API
    # version or this model version"); and so is a tool's type refused, the tools being of
    # a kind the server does not take ("Unsupported Responses tool type: 'custom'", a
    # Responses proxy given Codex's freeform tool; vLLM's Harmony path, "tool type namespace
    # not supported"): `tool_choice` spelled beside "type" is that key's ("Invalid
    # tool_choice type: 'object'", LM Studio)
    (
        r"(?i)tool(?:[ _-]?(?:use|calling)|[ -]choice|[ -]calls?\b|[ _-]types?\b)|"
        r"function[ _-]?call(?:ing|s)?\b|"
        r"\bfunctions\b|工具调用|函数调用",
        _TOOL_KEYS,
    ),
    (
        r"(?i)response[ _-]?format|json[ _-]?(?:schema[ _-])?(?:mode|output)|structured output",
        ("response_format",),
    ),
    (r"(?i)\blog[ _-]?(?:probs|probabilit(?:y|ies))\b", ("logprobs", "top_logprobs")),
    # "Penalty is not enabled for models/gemini-2.5-flash" (Gemini): every penalty key the
    # body holds; a penalty named by its own words ("Frequency penalty must be ...") is that
    # key's, and its words are cut before this phrase is read. So the word names them all
    # only unqualified, after nothing, a mark or a word that is no penalty's kind (a
    # determiner, a preposition, a verb): "Length penalty is not supported" is
    # `length_penalty`'s, which the body may not hold.
    (
        r"(?i)(?:^|[^\w\s-]|\b(?:the|an?|any|all|no|these|such|of|for|with|without|and|or|"
        r"is|are|not|supports?|supported|enabled?|use|using|set|setting))\s*penalt(?:y|ies)\b",
        ("frequency_penalty", "presence_penalty", "repetition_penalty"),
    ),
    # Penalties in the plural after the words of their names ("presence and frequency
    # penalties are unsupported"): `_qualified` reads the words before as the keys they own.
    (
        r"(?i)(?:(?<=presence[ _-])|(?<=frequency[ _-])|(?<=repetition[ _-]))penalties\b",
        ("frequency_penalty", "presence_penalty", "repetition_penalty"),
    ),
    # The sampling family, as OpenAI's reasoning models refuse it ("Sampling parameters are
    # not supported for reasoning models"): the keys that shape how a token is drawn
    # (vLLM's SamplingParams beside OpenAI's reasoning guide's list); not `n`, `seed`,
    # `stop` or the lengths, which say how much or how many, not how it is drawn.
    (
        r"(?i)\bsampling[ _-]?(?:param(?:eter)?s?|settings?|options?)\b",
        (
            "temperature",
            "top_p",
            "top_k",
            "min_p",
            "presence_penalty",
            "frequency_penalty",
            "repetition_penalty",
            "logit_bias",
        ),
    ),
    # Reasoning is switched on by a key the error rarely spells ("\"llama3.1:8b\" does not
    # support thinking" for `reasoning_effort`, Ollama's "think value \"medium\" is not
    # supported for this model"): a refusal right next to the word, or to the word and the
    # setting it names (its mode, value, level, effort or budget, the value quoted, or bare
    # after the setting: Vertex's "thinking_level MEDIUM is not supported by this model"),
    # names the switches, the setting spelled as the server's field too (Gemini's
    # "thinking_config is not supported.", Vertex's "thinking is not configurable in this
    # model"); the word alone ("while reasoning is active") names nothing.
    (
        r"(?i)(?:does(?: not|n't)|do(?: not|n't)) support\W+"
        r"(?:\w+\W+){0,2}?(?:thinking|reasoning)\b|"
        r"\b(?:think|thinking|reasoning)(?:[ _-]?(?:mode|value|level|effort|budget|config)"
        r"(?: (?!(?:is|are|may|must|can|cannot|can't)\b)[\w-]{1,32})?)?"
        r"(?: [\"'`][^\"'`\n]{0,32}[\"'`])? "
        r"(?:(?:is|are) not|(?:may|must|can) not be|cannot be|can't be) "
        r"(?:supported|enabled|available|configurable|adjustable)",
        _REASONING_KEYS,
    ),
)
# A capability phrase names keys only where its sentence refuses it: "No endpoints found
# that support tool use" does; Groq's `tool_use_failed` ("Tool use failed: JSON does not
# match the expected schema for tool calls") says the model's call failed, and dropping
# the tools would only hide the turn's purpose.
_CAPABILITY_REFUSAL = (
    r"(?i)(?:\bnot|n't) (?:(?:currently|yet|presently) )?(?:be )?"
    r"(?:supported|enabled|available|allowed|permitted|configurable|"
    r"adjustable)|unsupported|"
    r"\bunavailable\b|do(?:es)?(?: not|n't) support|no endpoints? found|\brequires?\b|"
    # or no route behind a router that has it ("No connected provider supports tool calling
    # for this model", cocore; "no available backend supports ..."): the same model without
    # it is served
    r"\bno\s+(?:(?:connected|available|active|online|eligible|healthy|upstream)\s+)?"
    r"(?:providers?|endpoints?|backends?|deployments?|routes?|servers?|workers?|upstreams?|"
    r"channels?)\s+(?:(?:found|available)\s+)?(?:(?:that|which)\s+)?(?:can\s+)?supports?\b|"
    # or given without what it needs (Gemini's "Function calling config is set without
    # function_declarations.": a tool choice sent without tools)
    r"\b(?:is|are|was|were)\s+(?:set|given|specified|provided|passed|sent|enabled)\s+without\b|"
    r"\bcannot\b|can't|\bdisabled\b|不支持|"
    # a server's own English ("model features function calling not support", Novita) and a
    # feature it lacks ("Function calling is not yet implemented for stream mode")
    r"\bnot support\b|\bnot (?:yet )?implemented\b|"
    # a list of the models that have it, the served one not among them ("Only ['qwen-chat',
    # 'glm4-chat'] support tool calls", Xinference): names in a list or quoted, not "stop
    # only supports 4 sequences" or "Only n=1 supports tool calls" (a key's value)
    r"\bonly\s+(?:\[[^\]\n]{0,300}\]|['\"`][^'\"`\n]{1,80}['\"`])\s*supports?\b|"
    # or the list after ("Tool calls are only supported by ['qwen-chat', 'glm4-chat']")
    r"\bonly supported (?:by|for|on)\s+(?:\[|['\"`])"
)
# A definition is refused by a validator's words as well ("Invalid schema for function",
# "Tool parameters must be a JSON object"); a capability is not ("Invalid tool call id" is
# about a message of the history).
_DEFINITION_REFUSAL = (
    _CAPABILITY_REFUSAL
    + r"|\binvalid\b|\bmust\b|\bis not of type\b|\bmalformed\b|\brequired\b|\bmissing\b"
    # or over a limit ("A FunctionDeclaration in the request exceeds the maximum allowed
    # nesting depth", Gemini)
    + r"|\bexceed(?:s|ed|ing)?\b"
)
# A tool's definition in prose (or by the API's name for it, Gemini's `FunctionDeclaration`)
# is an entry of `tools` (or the legacy `functions`): its schema refused ("Invalid schema for
# function 'ls': null is not of type \"array\"", DeepSeek; "Tool parameters must be a JSON
# object.", Perplexity), or its name ("Tool names are not allowed to be [search]", DashScope)
# refuses that key, as `tools.0.function.parameters` would. A call's parameters ("parameters
# for tool X did not match schema", Groq's `tool_use_failed`) are the model's output, not a
# definition.
_TOOL_DEFINITION = (
    r"(?i)\bschemas?\s+(?:for|of|in)\s+(?:the\s+)?(?:function|tool)\b(?!\s+calls?\b)|"
    # (not a call checked against it: "arguments do not match the tool schema", Groq's
    # tool_use_failed, "invalid against the function schema": the model's output)
    r"(?<!match )(?<!match the )(?<!against )(?<!against the )(?<!for )(?<!for the )"
    r"\b(?:tool|function)(?:\s+names?|[\s_]*(?:parameters|schemas?|definitions?|declarations?))\b"
    r"(?!\s+(?:in|from)\s+(?:the\s+)?model)|"
    # the same as a path, where a validator of the tools alone points into an entry
    # ("13.function.parameters.type", LM Studio's zod issues): a call in the history has
    # `function.arguments`, never parameters
    r"(?<![\w.])(?:\d+\.)?function\.parameters\b"
)
# A JSON schema refused without its owner named, in words ("JSON Schema not supported: could
# not understand the instance `{'required': [...]}`", Fireworks) or by a path rooted at a
# schema's own keyword ("Field 'properties.data.properties' is missing", GigaChat, a location
# quoted: "'properties.a.type'" from "/properties/a/type"; or bare), names the one key of
# the body that holds schemas (`_schema_holders`), with both the tools and an output schema
# neither; not a model's output checked against a schema ("does not match the JSON schema").
_SCHEMA_WORDS = (
    r"(?i)(?<!match )(?<!match the )(?<!against )(?<!against the )(?<!conform to )"
    r"(?<!conform to the )(?<!conforms to the )\bjson[ _-]?schemas?\b(?!\s*(?:mode|output)\b)"
)
# (quoted, or written bare as the root of a path two steps deep at least: "Field
# properties.location.description is missing", "items.properties.name.type must be a
# string"; not a file's name, "definitions.json", nor the end of a longer name,
# `max_items.value.x`)
_SCHEMA_KEYWORD_PATH = (
    r"(?:['\"`/]|(?<![\w.$'\"`/-])(?=[\w$]+(?:\.[\w$]+|\[\w*\]){2}))"
    r"(?:properties|items|\$defs|definitions|anyOf|oneOf|allOf|additionalProperties|"
    r"patternProperties|\$ref)[./\[]"
)
# Each phrase, the keys it names, and the words that refuse it in its sentence.
# Reasoning that cannot be switched off ("Reasoning is mandatory for this endpoint and cannot
# be disabled.", OpenRouter, to a body that sent `reasoning: {"enabled": false}`): the switch
# the body sent is what is refused, so the reasoning keys go and the model reasons at its
# default. The words refuse by themselves; another capability said to be mandatory ("Tool use
# is mandatory") names nothing, as no body without it is served.
_REASONING_ALWAYS_ON = (
    r"(?i)\b(?:think|thinking|reasoning)(?:[ _-]?(?:mode|effort|budget|config))?\s+"
    r"(?:(?:is|are)\s+(?:mandatory|compulsory|always\s+(?:on|enabled))\b|"
    r"(?:cannot|can't|can\s+not|may\s+not|must\s+not)\s+be\s+"
    r"(?:disabled|turned\s+off|switched\s+off|deactivated)\b)"
)
_PHRASES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    *((pattern, keys, _CAPABILITY_REFUSAL) for pattern, keys in _CAPABILITIES),
    (_REASONING_ALWAYS_ON, _REASONING_KEYS, _REASONING_ALWAYS_ON),
    (_TOOL_DEFINITION, ("tools", "functions"), _DEFINITION_REFUSAL),
    # The tools counted against a cap in prose ("You may not include more than 128 tools in
    # your request", GitHub Copilot; "too many tools"; "Number of tools (130) exceeds maximum
    # of 128"): the count is the whole array's, which
    # no body can trim, so the array goes (`tool_choice` with it), as a `param` at `tools`
    # over its maximum length does. A count of calls ("more than 5 tool calls") is the
    # model's output, no definition.
    (
        r"(?i)\b(?:more than|over|too many|at most|up to|no more than|a maximum of|"
        r"max(?:imum)? (?:number )?of|limit of|(?:the )?number of)\s+(?:\d[\d,]*\s+)?"
        r"(?:tools|functions|function declarations|tool definitions)\b(?!\s+calls?\b)",
        ("tools", "functions"),
        r"(?i)\b(?:may|must|can)\s*not\b|\bcannot\b|can't|\bnot (?:be )?allowed\b|"
        r"\bexceed\w*|\btoo many\b|\b(?:allowed|permitted|supported)\b|\blimit(?:ed)?\b",
    ),
    # The output's schema by the API's name for it (Gemini's "generation_config.response_schema
    # .properties[...]: should be non-empty for OBJECT type") is `response_format`'s, refused
    # as a tool's definition is, by a validator's "should be" too.
    (
        r"(?i)\bresponse[ _-]?schemas?\b",
        ("response_format",),
        _DEFINITION_REFUSAL + r"|\bshould be\b",
    ),
    # The choices `n` asks for, refused by number too ("Only one completion choice is
    # allowed", llama.cpp; Gemini's name for them, "Only one candidate can be specified"):
    # one is what a body without `n` gets.
    (
        r"(?i)\bcompletion choices?\b|\b(?:multiple|several)\s+(?:choices|completions)\b|"
        r"\bcandidates?(?:[ _-]?count)?\b|"
        r"\bmore than (?:one|1)\s+(?:choices?|completions?)\b|"
        r"\bnumber of (?:choices|completions)\b",
        ("n",),
        # (or out of its range: "candidateCount must be between 1 and 8")
        _CAPABILITY_REFUSAL + r"|\b(?:only|at most) (?:one|1|a single)\b|\bmust be\b",
    ),
    # The output's limit in prose, no key spelled (Bedrock's "The maximum tokens you requested
    # exceeds the model limit of 32768", "max output tokens must be at most 8192"): whichever
    # key of the body sets it. The prompt's size over the context is read before any name.
    (
        # (in prose: `completion_tokens` spelled is the usage's count, a field of no body; and a
        # rate's window is no limit of the body's: "Output tokens per minute limit exceeded")
        r"(?i)(?<![\w-])(?:max(?:imum)?[ -]+(?:(?:output|completion|new|generat(?:ed|ion))[ -]+)?|"
        r"(?:output|completion)[ -]+)tokens?(?![\w-])(?![ -]+per\b)",
        ("max_tokens", "max_completion_tokens", "max_output_tokens", "max_new_tokens"),
        _DEFINITION_REFUSAL
        + r"|\btoo (?:large|high|big|many)\b|\b(?:greater|larger|more|higher) than\b|\babove\b|"
        r"\bout of range\b",
    ),
    # The sequences `stop` holds, in prose or by Google's field for them ("it has a
    # stopSequences value of 10 but the supported range is from 1 (inclusive) to 6
    # (exclusive)", Vertex), refused as a value is; `stop_sequences` spelled is a longer
    # key's name (Anthropic's), not `stop`.
    (
        r"(?i)\bstop[ -]?sequences?\b",
        ("stop",),
        _DEFINITION_REFUSAL + r"|\b(?:supported|allowed|valid) range\b|\bup to \d+\b",
    ),
)
# Keys refused only as a pair, either alone accepted ("Setting 'max_tokens' and
# 'max_completion_tokens' at the same time is not supported", OpenAI; "`temperature` and
# `top_p` cannot both be specified for this model. Please use only one.", Anthropic; Ark's
# "cannot be set at the same time"; "Function tools with reasoning_effort are not supported
# for gpt-5.6-terra", OpenAI, `param` at `reasoning_effort`): the one the structured `param`
# points at goes.
_TOGETHER = (
    r"(?i)\bat the same time\b|\b(?:cannot|can't|not) both\b|\bmutually exclusive\b|"
    r"\bonly one of\b|\bcannot be (?:used|set|specified|combined) together\b|"
    r"\bsimultaneously\b|\bcombination of\b"
)
# Keys that mean nothing without another go with it: OpenAI refuses a `tool_choice`
# "only allowed when 'tools' are specified", and `top_logprobs` without `logprobs`.
_DEPENDENTS: Mapping[str, tuple[str, ...]] = {
    "tools": ("tool_choice", "parallel_tool_calls"),
    "functions": ("function_call",),
    "logprobs": ("top_logprobs",),
}
# The provider asks for another prompt (Groq's `tool_use_failed`: "Failed to call a
# function. Please adjust your prompt."): the model's output failed, not the body, and
# the error quotes that output (`failed_generation`), so its words name no key.
_ADJUST_PROMPT = (
    r"(?i)\b(?:adjust|modify|modifying|change|rephrase|revise|rewrite)\s+(?:your|the)\s+prompt\b|"
    r"\b(?:a )?different prompt\b"
)


# The model's own output broke the request's tool rules (Groq's `tool_use_failed`: "Tool choice
# is none, but model called a tool", "Tool choice is required, but model did not call a
# tool"): the body is not at fault, and a body without the tools would only turn a required
# call into prose. No client sends another body or resamples the same one on this 400 (the
# Groq SDK retries 408, 409, 429 and 5xx; LiteLLM raises it, BerriAI/litellm#21242).
_MODEL_OUTPUT_FAILED = (
    r"(?i)\bmodel\s+(?:(?:has\s+)?called|did(?: not|n't)\s+call|failed\s+to\s+call|"
    r"(?:tried|attempted)\s+to\s+call)\s+(?:an?\s+|the\s+|any\s+)?(?:tool|function)s?\b"
)
_MODEL_OUTPUT_FAILED_CODE = "tool_use_failed"


def _texts(error: ErrorInfo) -> str:
    """Every string the error carries, as far as `MAX_READ_CHARS` reaches: its message,
    and the string values (not the keys) of its raw JSON body, so a structural key like
    `"metadata"` never reads as a name while `"loc": ["body", "top_p"]` does. A message
    that is a body no envelope reading knew, its JSON after the status's words ("HTTP 400:
    {"errors": [...], "success": false, "messages": []}", Cloudflare's), is read the same
    way: its strings, not its keys (that `"messages"` quotes no body key)."""
    message = _message(error)
    words, nested = _json_in(message)
    if nested is not None:
        message = "\n".join([words, *_strings(nested)])[:MAX_READ_CHARS]
    parts = [message]
    room = MAX_READ_CHARS - len(parts[0])
    if error.raw and room > 1:
        try:
            strings = _strings(json.loads(error.raw))
        except (ValueError, RecursionError):  # not JSON, or nested past reading
            strings = iter((error.raw,))
        for string in strings:
            room -= 1  # its line break
            parts.append(string[:room])
            room -= len(parts[-1])
            if room <= 1:
                break
    return "\n".join(parts)


def _message(error: ErrorInfo) -> str:
    """The error's message, as far as `MAX_READ_CHARS` reaches."""
    return error.message[:MAX_READ_CHARS]


# The members by which a validator's item points at the field it refuses: pydantic's
# `loc`, zod's and express-validator's `path` (`param` before v7), Google's `field`
# (`fieldViolations`), ajv's `instancePath` and `additionalProperty`, class-validator's
# `property`.
_POINTERS = ("loc", "path", "param", "field", "instancePath", "additionalProperty", "property")


def _strings(value: Any, pointers: bool = True) -> Iterator[str]:
    """The strings inside a JSON value, however deep (iteratively: a hostile body may
    nest as deep as the parser allows). An object that points at a field is one line:
    the field, quoted, then its other strings, so that the pointer names a key as a quoted
    name does ("'temperature': Invalid value", express-validator), and a field inside a
    message is cut with its words ("'messages.0.role': Input should be 'user' or
    'assistant'", pydantic), as a sentence that points there is. A string that is itself
    JSON, or ends in JSON after a relay's words, is read as those words and its value (LM
    Studio's `{"error": "[{\"path\": [13, \"function\", ...], ...}]"}`, zod's issues
    serialized; LiteLLM's "litellm.BadRequestError: OpenAIException - [{...}]"), so that
    its pointers point."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            words, nested = _json_in(item) if pointers else (item, None)
            if words.strip():
                yield words
            if nested is not None:
                pending.append(nested)
        elif isinstance(item, dict):
            field = _pointer(item) if pointers else None
            if field is None:
                pending.extend(reversed(list(item.values())))
            else:
                # (without pydantic's `input`: the client's own data, echoed, says nothing
                # of the error, and its lines may open with a key's name, "user: hi")
                rest = [
                    held for name, held in item.items() if name not in _POINTERS and name != "input"
                ]
                yield f"'{field}': " + "; ".join(_strings(rest, pointers=False))
        elif isinstance(item, list):
            pending.extend(reversed(item))


def _json_in(text: str) -> tuple[str, Any]:
    """The words before the object or list `text` ends with as JSON, and that value (the
    first bracket only, decoded once: linear); else `text` and None. (Each level of JSON
    inside a string escapes its quotes again, so a body cannot nest this deeper than its
    length's logarithm.)"""
    text = text.strip()
    start = min((at for at in (text.find("["), text.find("{")) if at >= 0), default=-1)
    if start < 0:
        return text, None
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return text, None
    if end != len(text) or not isinstance(value, dict | list):
        return text, None
    return text[:start], value


def _pointer(item: Mapping[str, Any]) -> str | None:
    """The field an object points at, as a dotted path (`["body", "top_p"]`, `/top_p` and
    `$.top_p` alike), or None."""
    for name in _POINTERS:
        held = item.get(name)
        if isinstance(held, list):
            held = ".".join(str(part) for part in held if isinstance(part, str | int))
        if isinstance(held, str):
            path = held.strip().lstrip("#$/.").replace("/", ".")
            if path:
                return path
    return None


def _is_named(key: str, text: str) -> bool:
    k = re.escape(key)
    if re.search(rf"['\"`]{k}['\"`]", text):
        return True
    # The head of a path into the body names its key, whatever the key's word: a field
    # refused inside it ("tools.0.function.strict", vLLM; "thinking.type", MiniMax) is
    # refused with it, as no degraded body can edit inside a key; so does a value assigned
    # to it ("Only n=1 is supported").
    if re.search(rf"(?<![\w./-]){k}(?:\.(?:\d|[A-Za-z_]\w)|\[\d|=(?!=))", text):
        return True
    if "_" in key.strip("_"):  # `frequency_penalty` written as the server's `frequencyPenalty`
        head, *rest = key.split("_")
        camel = re.escape(head + "".join(part[:1].upper() + part[1:] for part in rest))
        if re.search(rf"(?<![\w.-]){camel}(?![\w-])", text):
            return True
    # Identifiers are ASCII: a letter of another script next to one does not extend it
    # ("max_tokens参数非法").
    if not key.isalpha() and re.search(rf"(?<![\w.-]){k}(?![\w-])", text, re.ASCII):
        return True  # max_tokens, top_p, n_probs: identifiers, not prose
    # The same identifier capitalized as its sentence's first word ("Response_format value as
    # json_schema is enabled only for api versions ...", Azure).
    # (the spaces before it stop at a line's end: a line's start after them is a start too,
    # and `\s*` from each start of a run of line breaks read the run to its end, quadratic)
    capital = re.escape(key[:1].upper() + key[1:])
    start = rf"(?:^|(?<=[.!?:]\s))[^\S\n]*{capital}(?![\w-])"
    if not key.isalpha() and re.search(start, text, re.M):
        return True
    # In prose the key is a plain word, or the words of an identifier ("Frequency penalty
    # must satisfy p > 0" for `frequency_penalty`); either counts only next to words that
    # say it is a parameter being refused.
    # The words may be hyphenated ("Top-p must be greater than 0"), and a number between
    # them and the cue is one word ("Temperature value 0.2 is not supported"); both in one
    # sentence of one string (the error's strings are joined by lines: "... with tools +
    # stream\nlogprobs is not supported ..." refuses no `tools`). Words that refuse the key
    # right after them, or after "value(s) for", refuse a list of keys the same ("Invalid
    # top_logprobs and logprobs value", DeepSeek; "Invalid values for top_logprobs and
    # logprobs"): identifiers before it, or the gap a named longer key left.
    parts = key.strip("_").split("_")
    if not all(part.isalpha() for part in parts):
        return False
    w = r"[\s-]+".join(parts)
    gap = r"(?:[^\w.!?\n]+\w+(?:\.\d+)?){0,2}?[^\w.!?\n]+"
    cue = (
        rf"\b{_CUE_BEFORE}{gap}{w}\b"
        rf"|\b{w}\b{gap}{_CUE_AFTER}"
        # ("Unsupported user content type" speaks of a message's content, not `user`)
        rf"|\b{_CUE_ADJACENT_BEFORE}\s+(?:values?\s+(?:for|of)\s+)?"
        rf"(?:(?:{_LISTED_KEY}\s*)?(?:,|\band\b|\bor\b)\s*){{0,3}}"
        rf"{w}\b(?!\s+(?:message|content|role)s?\b)"
        rf"|\b{w}\s*{_CUE_CJK}|{_CUE_CJK}\s*{w}\b"
        rf"|\b{_CUE_COLON}{w}\b"
        rf"|\b{_CUE_CANNOT_USE}\s+{w}\b(?![-'\u2019]|\s+(?:message|content|role)s?\b)"
        # (in at most 80 characters either way: a run of flags reads in linear time)
        rf"|{_SERVER_FLAG}[^.\n]{{0,80}}?\b(?:use|using)\s+{w}\b"
        rf"|\b(?:use|using)\s+{w}\b[^.\n]{{0,80}}?{_SERVER_FLAG}"
        # (or the key itself the subject that needs the flag: "having tools in the request
        # requires --tool-call-parser to be set", Triton's OpenAI frontend)
        rf"|\b{w}\b[^.\n]{{0,80}}?\b(?:requires?|needs?)\s+{_SERVER_FLAG}"
    )
    return re.search(cue, text, re.I | re.ASCII) is not None


def named_keys(error: ErrorInfo, body: Mapping[str, Any], policy: RecoveryPolicy) -> list[str]:
    """The optional body keys the error names, in body order."""
    droppable = {key: value for key, value in body.items() if key not in policy.kept}
    text = _names_text(error)
    # A condition's names count only when nothing else is named, a never-dropped key or
    # the conversation in words included: "Error while parsing 'top_k'" names what it
    # refuses inside its clause; "'messages' (or "The messages") must contain the word
    # 'json' ..., to use 'response_format'" refuses the messages.
    outside = re.sub(_CONDITION, " ", text)
    named = _named_in(outside, droppable)
    if (
        named
        or _quoted_kept(outside, body, policy) is not None
        or re.search(_CONVERSATION, outside)
    ):
        return named
    # (a capability named inside the condition is the circumstance, not what is refused:
    # "Thinking may not be enabled when tool_choice forces tool use" refuses no tools; a key
    # spelled there still counts, and a capability before it is refused by its words: ""auto"
    # tool choice requires --enable-auto-tool-choice")
    return _named_in(text, droppable, re.sub(_CONDITION, _without_capabilities, text))


def _without_capabilities(condition: re.Match[str]) -> str:
    clause = condition.group(0)
    for pattern, _keys, _refusal in _PHRASES:
        clause = re.sub(pattern, " ", clause)
    return clause


def _names_text(error: ErrorInfo) -> str:
    """The error's strings as read for names: without suggestions, links and sentences
    inside a message, locations quoted, a path's root and a relay's prefix cut."""
    text = re.sub(_RELAY_PREFIX, "\n", re.sub(_URL, " ", re.sub(_SUGGESTION, " ", _texts(error))))
    return _outside_messages(re.sub(_BODY_ROOT, "", re.sub(_LOCATION, _quoted_path, text)))


def _quoted_kept(text: str, body: Mapping[str, Any], policy: RecoveryPolicy) -> str | None:
    """A never-dropped key the error's words (`_names_text`) quote, as its `param` would
    point at it ("Unsupported value: 'stream' does not support true with this model", the
    `param` lost in a relay's envelope), or spells its stem ("chat_template is not supported
    for Mistral tokenizers.", to NVIDIA's preset, which never drops `chat_template_kwargs`)."""
    kept = [key for key in body if key in policy.kept]
    quoted = (key for key in kept if re.search(rf"['\"`]{re.escape(key)}['\"`]", text))
    stemmed = (key for key in kept if _named_by_stem(text, (key,), body))
    return next(quoted, None) or next(stemmed, None)


# A key refused as unknown to the server: named after the words ("Unknown name \"messages\"",
# "Unrecognized request argument supplied: stream", "unknown field `model`"), or quoted
# before them ("'messages': Extra inputs are not permitted", a validator's item).
_UNKNOWN_BEFORE = (
    r"(?:unknown|unrecognized|unexpected|extraneous|extra)\s+(?:request\s+)?"
    r"(?:names?|fields?|keys?|parameters?|params?|arguments?|propert(?:y|ies)|inputs?)"
    r"(?:\s+supplied)?\W{0,3}"
)
_UNKNOWN_AFTER = (
    r"\W{0,3}(?:(?:is|are)\s+)?(?:unknown|unrecognized|not (?:a )?(?:known|recognized)|"
    r"extra (?:inputs?|fields?) (?:are |is )?not (?:permitted|allowed))"
)


def _names_inner_key(text: str, body: Mapping[str, Any], policy: RecoveryPolicy) -> bool:
    """Whether the words name, as an identifier, a key inside one of the body's objects
    that may be dropped ("include_usage is not supported for streaming requests": the
    refusal is `stream_options`', not streaming's)."""
    for key, value in body.items():
        if key in policy.kept or value.__class__ is not dict:
            continue
        for inner in value:
            if (
                isinstance(inner, str)
                and "_" in inner.strip("_")
                and re.search(rf"(?<![\w.-]){re.escape(inner)}(?![\w-])", text, re.ASCII)
            ):
                return True
    return False


# What streaming is refused with, said right after the refusal ("streaming is not supported
# with tools", the error of ollama/ollama#7750; "Streaming is not supported with n > 1"):
# the word after it, where that is a key of the body; not a kind of model ("with reasoning
# models": the model, whatever the body holds).
_STREAMING_WITH = (
    r"(?i)^[^\S\n]+(?:with|alongside|using)[^\S\n]+(?:the[^\S\n]+)?[`'\"]?(\w+)\b"
    r"(?![`'\"]?[^\S\n]+models?\b)"
)


def _streaming_condition(after: str, body: Mapping[str, Any], policy: RecoveryPolicy) -> str | None:
    """The key of the body that streaming is refused with, named as the first word after the
    refusal: a condition, as "when tools are provided" is, which the body may go without
    (the plain word `tools` is no name to `named_keys`). None where that word is no key of
    the body, or one never dropped ("with this model", "with model X")."""
    found = re.match(_STREAMING_WITH, after)
    if found is None:
        return None
    key = found.group(1)
    return key if key in body and key not in policy.kept else None


def _unknown_kept(text: str, body: Mapping[str, Any], policy: RecoveryPolicy) -> str | None:
    """A never-dropped key the error's words (`_names_text`) refuse as unknown, alone or
    among others (Gemini's native endpoint given a chat body: "Unknown name \"messages\":
    Cannot find field." and the same for `temperature` and `stream`): the body reached an
    endpoint of another API, where no body without the others passes either."""
    for key in body:
        if key not in policy.kept:
            continue
        k = re.escape(key)
        if re.search(
            rf"(?i){_UNKNOWN_BEFORE}['\"`]?{k}['\"`]?(?![\w.\[-])|['\"`]{k}['\"`]{_UNKNOWN_AFTER}",
            text,
        ):
            return key
    return None


def _quoted_path(location: re.Match[str]) -> str:
    path = next(group for group in location.groups() if group)
    return "'" + path.replace(" -> ", ".").replace("/", ".") + "'"


def _outside_messages(text: str) -> str:
    """`text` without the sentences that point inside a message (each from the end of
    the sentence before it to its own end, the line's at the latest), in linear time."""
    kept: list[str] = []
    last = 0  # the end of the last sentence cut
    sentence_end = re.compile(_SENTENCE_END).search  # from a position on
    for pointer in re.finditer(_MESSAGE_POINTER, text):
        if pointer.start() < last:
            continue  # in the sentence cut already
        start = max(
            last, *(text.rfind(mark, last, pointer.start()) + 1 for mark in _SENTENCE_STARTS)
        )
        end = sentence_end(text, pointer.end())
        assert end is not None  # `$` matches at the line's end
        kept += (text[last:start], " ")
        last = end.end()
    kept.append(text[last:])
    return "".join(kept)


def _named_in(text: str, droppable: Mapping[str, Any], phrase_text: str | None = None) -> list[str]:
    """The keys of `droppable` that `text` names; its capability phrases are read in
    `phrase_text` where given."""
    named = {m.group(1).split(".")[0] for m in re.finditer(_LOC, text)}
    # A word of a named key of several words is that key's: "does not support prompt
    # logprobs" names `prompt_logprobs`, not `logprobs` too.
    compounds = [key for key in droppable if "_" in key.strip("_") and _is_named(key, text)]
    named.update(compounds)
    rest = _without_compounds(text, compounds)
    named.update(key for key in droppable if key not in named and _is_named(key, rest))
    if not named:  # a value points at its key only where nothing names one
        by_value = _named_by_value(text, droppable)
        if len(by_value) == 1:  # and only where one key holds it
            named.update(by_value)
    if not named:  # and a family's stem only where nothing names a key either
        named.update(_named_by_stem(text, droppable, droppable))
    if not named:  # and an object by its own key only where nothing names one
        inside = _named_inside(text, droppable)
        if len(inside) == 1:  # that one object holds
            named.update(inside)
    phrase_text = text if phrase_text is None else phrase_text
    for pattern, keys, refusal in _PHRASES:
        readings = [
            _qualified(sentence[: found.start()], keys, droppable)
            for sentence in _clauses(_without_compounds(phrase_text, compounds, pattern))
            if (found := re.search(pattern, sentence))
            and re.search(refusal, sentence)
            and not re.search(
                _HELD_BY_A_MESSAGE, sentence[max(0, found.start() - 80) : found.start()]
            )
        ]
        if readings:
            named.update(keys if None in readings else (k for r in readings if r for k in r))
    # A type of the body's own tools spelled in a sentence that refuses ("Built-in tools
    # ({google_search}) and Custom tools (Function Calling) cannot be combined", Antigravity's)
    # names the tools, as "tool type" refused does; `_refused_tools` keeps those of other types.
    tools = droppable.get("tools")
    if "tools" not in named and isinstance(tools, list) and _tool_types_refused(text, tools):
        named.add("tools")
    holders = _schema_holders(droppable)
    if len(holders) == 1 and any(
        re.search(_DEFINITION_REFUSAL, clause)
        for clause in _clauses(_without_compounds(text, compounds))
        if re.search(_SCHEMA_WORDS, clause) or re.search(_SCHEMA_KEYWORD_PATH, clause)
    ):
        named.update(holders[0])
    return [key for key in droppable if key in named]


# A capability's phrase that a message of the history is said to hold ("Cannot pass both
# content and thinking in an assistant message with tool calls!", gpt-oss's template in LM
# Studio; "a message containing function calls"): the conversation's content, not the
# capability the body's keys ask for.
_HELD_BY_A_MESSAGE = (
    r"(?i)\bmessages?(?:['\u2019]s?)?\s+(?:(?:with|containing|carrying|holding|having|that\s+"
    r"(?:has|have|holds?|contains?|carries))\s+)?(?:(?:the|its|their|any|some|no)\s+)?$"
)


def _qualified(
    before: str, keys: tuple[str, ...], droppable: Mapping[str, Any]
) -> tuple[str, ...] | None:
    """The keys of a capability's `keys` that the words right before its phrase narrow it
    to, where each word is part of one key's name alone and the body holds it ("Parallel
    function calling is not supported" is `parallel_tool_calls`, not the tools; "top log
    probabilities" is `top_logprobs`); words joined by "and", "or" or a comma name a key
    each ("presence and frequency penalties"); None (the capability whole) otherwise."""
    run = re.search(
        r"(?:[^\W\d_]++(?:\s*+[,/&]\s*+(?:(?:and|or)\s++)?|\s++(?:and|or)\s++))*"
        r"[^\W\d_]++[\s_-]*+$",
        before[-80:],
    )
    if run is None:
        return None
    words = [
        w.lower() for w in re.findall(r"[^\W\d_]+", run.group()) if w.lower() not in ("and", "or")
    ]

    def owner(word: str) -> str | None:
        owners = [key for key in keys if word in key.split("_")]
        return owners[0] if len(owners) == 1 else None

    every = [owner(word) for word in words]
    held = tuple(dict.fromkeys(k for k in every if k is not None and k in droppable))
    if words and None not in every and held:
        return held
    # otherwise the last word alone, where its key is the body's
    last = every[-1] if every else None
    return (last,) if last is not None and last in droppable else None


def _schema_holders(droppable: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The keys of the body that hold JSON schemas: the tools (with the legacy
    `functions`), and `response_format` where it carries one."""
    holders = []
    tools = tuple(key for key in ("tools", "functions") if key in droppable)
    if tools:
        holders.append(tools)
    output = droppable.get("response_format")
    if isinstance(output, dict) and (
        "json_schema" in output or output.get("type") == "json_schema"
    ):
        holders.append(("response_format",))
    return holders


def _without_compounds(text: str, keys: list[str], capability: str | None = None) -> str:
    """`text` without the words of the named `keys` (`prompt_logprobs`, "Prompt logprobs"),
    so that a shorter key or a capability's phrase inside them is not read as named too:
    "parallel tool calls" is `parallel_tool_calls`, not the tools. A key whose words are
    the `capability`'s whole phrase stays that capability where written in prose ("tool
    choice", "function call"), and is the key where spelled as one ("function_call is not
    supported; use tools/tool_choice instead", FreeToken, refuses the legacy key alone)."""
    for key in keys:
        parts = key.strip("_").split("_")
        if capability is not None and re.fullmatch(capability, " ".join(parts)):
            text = re.sub(rf"(?<![^\W_]){re.escape(key)}(?![^\W_])", " ", text)
            continue
        words = r"[\s_-]+".join(re.escape(part) for part in parts)
        text = re.sub(rf"(?i)(?<![^\W_]){words}(?![^\W_])", " ", text)
    return text


def _named_by_value(text: str, droppable: Mapping[str, Any]) -> set[str]:
    """The keys whose own value a sentence about a value quotes ("Unsupported value:
    'minimal' is not supported with the 'gpt-5.1' model", its `param` masked), or quotes
    and refuses right after ("'flex' is not supported"): the value is refused, so its key
    is. Values are strings, at the top or one level down (`reasoning: {"effort": "minimal"}`)."""
    values = [
        (key, value)
        for key, held in droppable.items()
        for value in (held.values() if isinstance(held, dict) else (held,))
        if isinstance(value, str) and value.strip()
    ]
    named: set[str] = set()
    for sentence in _sentences(text) if values else ():
        about_a_value = re.search(_VALUE_WORD, sentence) is not None
        for key, value in values:
            for quote in "'\"`":
                at = sentence.find(f"{quote}{value}{quote}")
                if at >= 0 and (
                    about_a_value
                    or re.search(_VALUE_REFUSED_AFTER, sentence[at + len(value) + 2 :])
                ):
                    named.add(key)
    return named


def _named_by_stem(text: str, keys: Iterable[str], held: Container[str]) -> set[str]:
    """The `keys` whose stem the words spell as an identifier that is no key `held` (the
    body's): a server that refuses a family of keys by its stem ("chat_template is not
    supported for Mistral tokenizers.", vLLM's one answer to `chat_template` or
    `chat_template_kwargs`) names each key that the stem begins, `_` and more after it. A
    stem is two words at least (`chat_template`, `prompt_cache`): "stream" does not name
    `stream_options`, nor "max" `max_tokens`."""
    stems = {
        key: [
            pattern
            for end in range(2, len(parts))
            if (stem := "_".join(parts[:end])) not in held
            and re.search(pattern := rf"(?<![\w.-]){re.escape(stem)}(?![\w-])", text, re.ASCII)
        ]
        for key in keys
        if len(parts := key.strip("_").split("_")) > 2
    }
    if not any(stems.values()):
        return set()
    # (and in a clause that refuses: "prompt_cache is full, try again" speaks of the server's
    # store, and refuses nothing)
    refusing = "\n".join(
        clause for clause in _clauses(text) if re.search(_DEFINITION_REFUSAL, clause)
    )
    return {
        key
        for key, patterns in stems.items()
        if any(re.search(pattern, refusing, re.ASCII) for pattern in patterns)
    }


# The names an object's keys share with every other (a part's `type`, a tool's `name`): no
# word of them says which object is meant.
_STRUCTURAL_KEYS = frozenset({"type", "name", "id", "value", "text", "content", "role", "data"})


def _named_inside(text: str, droppable: Mapping[str, Any]) -> set[str]:
    """The objects of the body one of whose own keys the words call a parameter and refuse
    ("This model does not support the effort parameter.", Anthropic's, to a body whose
    `output_config` holds the `effort`): the object is named, as a path into it names it, and
    `_inner_paths` narrows the drop to that key where the object stays valid without it. The
    key a plain word (an identifier inside an object is
    read as that object's elsewhere: `include_usage` refused for streaming walks the static
    list, `stream_options` first), written with the word for a parameter after it."""
    return {
        key
        for key, value in droppable.items()
        if value.__class__ is dict and _called_a_parameter(text, value)
    }


def _called_a_parameter(text: str, value: Mapping[str, Any]) -> list[str]:
    """The keys of the object `value` that the words call a parameter and refuse
    (`_named_inside`): plain words, no name every object has."""
    return [
        inner
        for inner in value
        if isinstance(inner, str)
        and inner.isalpha()
        and inner.lower() not in _STRUCTURAL_KEYS
        and re.search(
            rf"(?i)\b{re.escape(inner)}\s+(?:parameter|param|option|setting)s?\b", text, re.ASCII
        )
        and _is_named(inner, text)
    ]


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+|\n", text)


# A remark in parentheses, one level deep.
_ASIDE = r"\(([^()\n]*)\)"


def _clauses(text: str) -> list[str]:
    """Each sentence of `text` without its remarks in parentheses, and each remark apart:
    an aside neither refuses nor is refused by the words around it ("Invalid 'logit_bias':
    token ids must be integers (stop sequences are unaffected)" refuses no `stop`)."""
    # (a blank line is no clause, and a sentence without a parenthesis is its own one:
    # the two regexes are read per sentence, of every phrase, thousands of times in a
    # body of blank lines or of bare full stops)
    return [
        clause
        for sentence in _sentences(text)
        if sentence.strip()
        for clause in (
            (re.sub(_ASIDE, " ", sentence), *re.findall(_ASIDE, sentence))
            if "(" in sentence
            else (sentence,)
        )
    ]


def _one_of_together(named: list[str], param: str | None, text: str) -> list[str]:
    """`named` less the partners of `param` where the provider points its structured
    `param` at one key of a pair it refuses only together: that one goes, the other
    keeps its setting. Without a pointer the pair goes together, which is accepted too."""
    if param not in named:
        return named
    keys = dict.fromkeys(named)
    for sentence in _sentences(text):
        # (read as `named_keys` reads them: "Tools with reasoning_effort 'high' are not
        # supported" names `tools` once the compound key's words are set apart)
        said = _named_in(sentence, keys)
        if not re.search(_TOGETHER, sentence):
            # or one key "with" another ("Function tools with reasoning_effort are not
            # supported"), not keys refused "with this model": a key named after the
            # `with`, and another before it
            joint = re.search(r"(?i)\bwith\b", sentence)
            after = _named_in(sentence[joint.end() :], keys) if joint and said else []
            if not after or all(key in after for key in said):
                continue
        if param in said:
            named = [key for key in named if key == param or key not in said]
    return named


def _with_dependents(
    named: list[str], body: Mapping[str, Any], policy: RecoveryPolicy
) -> list[str]:
    """`named` and the keys of `body` that mean nothing without one of them."""
    dependents = {dependent for key in named for dependent in _DEPENDENTS.get(key, ())}
    return named + [
        key for key in body if key in dependents and key not in named and key not in policy.kept
    ]


def _narrowed(
    named: list[str],
    error: ErrorInfo,
    body: Mapping[str, Any],
    policy: RecoveryPolicy,
    rename: Mapping[str, str],
) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """The keys of `named` that go whole (with their dependents), and the parts inside the
    others that go alone: where the words point inside a named object at a setting it stays
    valid without (`_inner_paths`), or refuse a type of the tools the body has others of
    (`_refused_tools`), that part goes and the rest of the object is sent again. A key whose
    parts would leave it empty goes whole."""
    text = _names_text(error) + (f"\n'{error.param}'" if error.param else "")
    whole: list[str] = []
    prune: list[Path] = []
    for key in named:
        value = body[key]
        parts: list[Path] = []
        if key not in rename:
            if key == "tools" and isinstance(value, list):
                parts = [(index,) for index in _refused_tools(text, value)]
            elif isinstance(value, dict):
                parts = _inner_paths(key, value, text)
        if parts and _pruned(value, parts):
            prune += [(key, *part) for part in parts]
        else:
            whole.append(key)
    if any(part[0] == "tools" for part in prune):
        # the tools stay: what means nothing without them stays too, unless spelled itself
        whole = [key for key in whole if key not in _DEPENDENTS["tools"] or _is_named(key, text)]
    whole = _with_dependents(whole, body, policy)
    # a choice that forces a tool that goes goes with it ("tool_choice": {"type":
    # "web_search_preview"}, or a function by its name); "auto" and the like stay; a choice
    # that lists tools (OpenAI's `allowed_tools`) loses their entries, and goes where it
    # would list none
    choice = body.get("tool_choice")
    gone = [body["tools"][part[1]] for part in prune if part[0] == "tools"]
    if isinstance(choice, dict) and "tool_choice" not in whole and "tool_choice" not in policy.kept:
        listed = _listed_tools(choice)
        if listed is not None:
            at, entries = listed
            out = [i for i, entry in enumerate(entries) if any(_forces(entry, t) for t in gone)]
            if len(out) == len(entries) and out:
                whole.append("tool_choice")
            else:
                prune += [("tool_choice", *at, index) for index in out]
        elif any(_forces(choice, tool) for tool in gone):
            whole.append("tool_choice")
    return tuple(whole), tuple(prune)


def _listed_tools(choice: Mapping[str, Any]) -> tuple[Path, list[Any]] | None:
    """The tools a choice lists and the path to the list from it: OpenAI's `allowed_tools`
    keeps them flat in the Responses API (`{"type": "allowed_tools", "mode": ...,
    "tools": [...]}`) and in the object its type names in chat (`{"type": "allowed_tools",
    "allowed_tools": {"mode": ..., "tools": [...]}}`); None where it lists none."""
    kind = choice.get("type")
    inner = choice.get(kind) if isinstance(kind, str) else None
    for holder, at in ((choice, ()), (inner, (kind,))):
        if isinstance(holder, dict) and isinstance(entries := holder.get("tools"), list):
            return (*at, "tools"), entries
    return None


def _forces(choice: Mapping[str, Any], tool: Any) -> bool:
    """Whether the tool choice `choice` forces `tool`: by its type where that is no
    function's, or by the tool's name, whatever type the choice gives (Anthropic's
    `{"type": "tool", "name": ...}` names a `web_fetch_20250910` tool too)."""
    if not isinstance(tool, dict):
        return False
    kind = tool.get("type")
    if kind != "function" and choice.get("type") == kind:
        return True
    name = _tool_name(tool)
    return name is not None and _tool_name(choice) == name


def _tool_name(value: Mapping[str, Any]) -> Any:
    """The name a tool or a tool choice gives: in the object its type names (chat's
    `{"type": "function", "function": {"name": ...}}`, a custom tool's `custom`), or flat
    (the Responses API's, Anthropic's)."""
    kind = value.get("type")
    inner = value.get(kind) if isinstance(kind, str) else None
    return (inner if isinstance(inner, dict) else value).get("name")


# The steps into a JSON schema the body holds (a tool's `parameters`, a `response_format`'s
# `schema`): what the schema says is the caller's contract, no setting to leave out.
_SCHEMA_STEPS = frozenset(
    {"schema", "parameters", "input_schema", "properties", "items", "$defs", "definitions"}
)


def _inner_paths(key: str, value: Mapping[str, Any], text: str) -> list[Path]:
    """The settings inside the body's object `value` (at `key`) that the words point at,
    by a path from `key` ("reasoning.effort", "response_format.json_schema.strict") or, with
    no path, as a plain word called a parameter ("the effort parameter", `_called_a_parameter`):
    each a key the object stays valid without, as an optional top-level key is. None (the
    object whole) where a path points at nothing the body holds, enters a schema, ends at a
    name every object has (`thinking.type`: the object's kind), or ends beside a `type` that
    says what the object is (Anthropic's `thinking: {"type": "enabled", "budget_tokens": ...}`
    requires its budget where enabled): such an object's members are its type's to require."""
    paths: list[Path] = []
    for found in re.finditer(rf"(?<![\w./-]){re.escape(key)}((?:\.[A-Za-z_][\w-]*)+)", text):
        path = _setting_at(value, found.group(1)[1:].split("."))
        if path is None:
            return []
        paths.append(path)
    if not paths:
        inner = _called_a_parameter(text, value)
        if any(_setting_at(value, [key]) is None for key in inner):
            return []
        paths = [(key,) for key in inner]
    return list(dict.fromkeys(paths))


def _setting_at(value: Any, steps: list[str]) -> Path | None:
    """The path `steps` into `value`, where each is a key of an object there and the last
    one names a setting its object may go without (`_inner_paths`); else None."""
    node = value
    for step in steps:
        if not isinstance(node, dict) or step not in node or step in _SCHEMA_STEPS:
            return None
        holder, node = node, node[step]
    if steps[-1].lower() in _STRUCTURAL_KEYS or "type" in holder:
        return None
    return tuple(steps)


def _pruned(value: Any, parts: list[Path]) -> Any:
    """`value` without each of `parts` (a path of keys and indices from it), an object or a
    list each part leaves empty removed with it; None where nothing is left."""
    if not parts:
        return value
    heads: dict[Any, list[Path]] = {}
    for part in parts:
        heads.setdefault(part[0], []).append(part[1:])
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return value
    kept = {}
    for head, held in items:
        rests = heads.get(head)
        if rests is None:
            kept[head] = held
        elif all(rest for rest in rests):  # a part inside it, not the whole of it
            inner = _pruned(held, rests)
            if inner is not None:
                kept[head] = inner
    if not kept:
        return None
    return kept if isinstance(value, dict) else list(kept.values())


# Words before a tool's type that say it is the one accepted, not refused ("tool types other
# than function", "Only 'function' tools are supported", "Value must be 'function'").
_ACCEPTED_BEFORE = (
    r"(?i)(?:\bonly|\bother than|\bexcept(?: for)?|\bbesides|\binstead of|"
    r"\b(?:must|should) be(?: one of)?)\W{0,3}"
)


def _refused_tools(text: str, tools: list[Any]) -> list[int]:
    """The indices of the body's tools whose type the words refuse, where the body has tools
    of other types too ("Unsupported tool type: code_interpreter" beside function tools: those
    stay; "Hosted tool 'web_search_preview' is not supported with gpt-4.1", OpenAI). A type is
    refused where the words spell it (quoted, after "type", before "tool", as an identifier
    anywhere) not as the one accepted, or point at a
    tool's type by its path ("tools[1].type"); where they name only the types accepted ("tool
    types other than function"), every other type is. Empty (all the tools) where the words
    refuse none of their types, or every one."""
    kinds = [tool.get("type") if isinstance(tool, dict) else None for tool in tools]
    present: set[str] = {kind for kind in kinds if isinstance(kind, str) and kind}
    if len(present) < 2:
        return []
    accepted = {kind for kind in present if re.search(_ACCEPTED_BEFORE + _type_word(kind), text)}
    refused = {kind for kind in present - accepted if _type_said(kind, text)}
    for found in re.finditer(r"(?<![\w.])tools?(?:\[(\d+)\]|\.(\d+))\.type\b", text):
        index = int(found.group(1) or found.group(2))
        kind = kinds[index] if index < len(kinds) else None
        if kind in present:
            refused.add(kind)
    if not refused and accepted:
        refused = present - accepted
    if not refused or refused == present:
        return []
    return [index for index, kind in enumerate(kinds) if kind in refused]


def _tool_types_refused(text: str, tools: list[Any]) -> bool:
    """Whether a sentence that refuses spells a type of the body's tools other than a
    function's (`_type_said`), not as the one accepted, or a sentence of the tools names the
    types accepted and the body has others. The sentence whole: a remark in parentheses
    there says which tools it speaks of ("Built-in tools ({google_search})")."""
    kinds: set[str] = {
        kind
        for tool in tools
        if isinstance(tool, dict)
        and isinstance(kind := tool.get("type"), str)
        and kind
        and kind != "function"
    }
    # (the kinds the whole text spells first, then only the sentences holding one: a text of
    # thousands of short refusing sentences is not read once per sentence and kind)
    said = {kind for kind in kinds if _type_said(kind, text)}
    if any(
        _type_said(kind, sentence) and not re.search(_ACCEPTED_BEFORE + _type_word(kind), sentence)
        for sentence in _sentences(text)
        for kind in said
        if kind.lower() in sentence.lower() and re.search(_DEFINITION_REFUSAL, sentence)
    ):
        return True
    # or a sentence of the tools that names the only types accepted ("Only 'function' tools
    # are supported."), where the body has tools of a type it does not name
    accepted = {
        kind
        for kind in kinds | {"function"}
        if re.search(_ACCEPTED_BEFORE + _type_word(kind), text)
    }
    return bool(kinds - accepted) and any(
        re.search(_ACCEPTED_BEFORE + _type_word(kind), sentence)
        for sentence in _sentences(text)
        for kind in accepted
        if kind.lower() in sentence.lower() and re.search(r"(?i)\btools?\b", sentence)
    )


def _type_word(kind: str) -> str:
    """A tool's type as the words write it, bare or quoted."""
    return rf"['\"`]?{re.escape(kind)}['\"`]?(?![\w-])"


def _type_said(kind: str, text: str) -> bool:
    k = re.escape(kind)
    spelled = [
        rf"['\"`]{k}['\"`]",
        rf"(?i)\btypes?\W{{0,3}}{k}(?![\w-])",
        rf"(?i)(?<![\w.-]){k}\s+(?:tools?|type)\b",
    ]
    if not kind.isalpha():  # an identifier (`web_search_preview`) is no English word
        spelled.append(rf"(?<![\w.-]){k}(?![\w-])")
    return any(re.search(pattern, text) for pattern in spelled)


def _param_key(param: str | None) -> str | None:
    """The top-level body key a structured `param` points at (`messages[0].role` ->
    `messages`)."""
    if not param:
        return None
    return re.split(r"[.\[]", param, maxsplit=1)[0] or None


def too_long(error: ErrorInfo, text: str | None = None) -> bool:
    """Whether the error says the conversation is too long for the model (`text`:
    the error's strings, when the caller has them already)."""
    if (error.code or "").lower() == "context_length_exceeded":
        return True
    return re.search(_SIZE, _texts(error) if text is None else text) is not None


def classify(error: ErrorInfo, body: Mapping[str, Any], policy: RecoveryPolicy) -> Verdict:
    """Read one rejection (an HTTP error, or an error event before anything was
    committed) against the body that caused it.

    The server's own word on an identical retry (`should_retry`, its `x-should-retry`
    header) comes first, as the openai and anthropic SDKs obey it before the status:
    `true` is a backoff whatever the status and the words (the same body again, as the
    SDKs send it, even where a key is named); `false` turns a backoff into `surface`. It
    speaks of the same request only: a degraded body is another request, so `drop`,
    `images` and `static` stand whatever `false` says (a gateway may send `false` with
    every 4xx it does not retry, the 400 that names a parameter to drop included)."""
    if error.should_retry:
        return Verdict(
            "backoff", "the server asks for the same request again", delay=error.retry_after
        )
    verdict = _read(error, body, policy)
    if verdict.action == "backoff" and error.should_retry is False:
        return Verdict("surface", "the server says the same request will fail again")
    return verdict


def _read(error: ErrorInfo, body: Mapping[str, Any], policy: RecoveryPolicy) -> Verdict:
    """`classify`'s reading of the error itself, the kind, the status and the words."""
    if error.kind in ("policy", "limit", "protocol", "malformed_tool_arguments"):
        return Verdict("surface", f"a {error.kind} error is not the endpoint's rejection")
    if error.kind in ("transport", "stalled", "truncated"):
        return Verdict("backoff", f"the {error.kind} failure may not happen again")
    text = _texts(error)
    message = _message(error)
    code = (error.code or "").lower()
    status = error.status
    if status is None and re.fullmatch(_STATUS_CODE, code):
        status = int(code)
    elif status is None and (
        line := re.match(_STATUS_LINE, message) or re.search(_STATUS_WORDS, message)
    ):
        status = int(line.group(1))
    # A relay's own 5xx around its upstream's 4xx, given in the SDKs' words (LiteLLM's 500
    # "Error code: 429 - {'error': {..., 'status': 'RESOURCE_EXHAUSTED'}}" from Vertex): the
    # relay only failed to pass it on, and the upstream's status is what speaks.
    if status is not None and status >= 500 and (relayed := re.search(_RELAYED_4XX, message)):
        status = int(relayed.group(1))
    # Structure before words: a rate-limit code, or a transient status that names its
    # wait, is a rate limit even when its message links a quota or billing page.
    rate_limited = (
        code in _TRANSIENT_CODES
        or (status in _TRANSIENT_STATUSES and error.retry_after is not None)
        or (status in (429, None) and re.search(_RATE_WINDOW, text) is not None)
        # a 429 that says it is a rate limit: "Rate limit exceeded for this API key" is
        # the key's rate, not the key refused
        or (status == 429 and re.search(_RATE_LIMIT_WORDS, text) is not None)
        or re.search(_RESOURCE_EXHAUSTED, text) is not None
        or (
            status == 429
            and re.search(_QUOTA_SPENT, text) is not None
            and re.search(_PAID_WORDS, text) is None
        )
    )
    if status in (401, 402) or code in _ACCOUNT_CODES:
        return Verdict("surface", "the account is refused: no body can change that")
    if re.search(_OWN_STORE_FULL, text) and not re.search(_WAIT_FREES, text):
        return Verdict("surface", "the caller's own storage is full: no wait or body frees it")
    # (a relay's class is its name for the status, not the provider's words: neither
    # "PermissionDenied" nor "RateLimitError" says more than the status does)
    words = re.sub(_RELAY_CLASS, " ", text)
    if not rate_limited and re.search(_ACCOUNT, words):
        return Verdict("surface", "the account is refused: no body can change that")
    if (
        not rate_limited
        and re.search(_SPENDING_CAP, text)
        and not re.search(_TRANSIENT, words)
        and not (status == 429 and re.search(_WAIT_HELPS, text))
    ):
        return Verdict("surface", "the account's spending or usage limit is reached")
    if (
        not rate_limited
        and any(
            (found.group(1) or found.group(2)).lower() in ALWAYS_KEPT
            or (found.group(1) or found.group(2)).lower() not in body
            for found in re.finditer(_PLAN_LACKS, text)
        )
        and _param_key(error.param) not in body
        and not named_keys(error, body, policy)
    ):
        return Verdict("surface", "the account's plan does not include it")
    # A limit counted by the day or longer that names no wait: a retry in seconds meets the
    # same refusal until its window turns, whatever rate-limit code the envelope gives every
    # 429 (Anthropic's, Google's); a wait it names is the plan's to weigh (`max_retry_after`),
    # and a shorter window or a short wait said beside it is a rate limit.
    if (
        error.retry_after is None
        and re.search(_LONG_WINDOW_LIMIT, text)
        and not re.search(_RATE_WINDOW, text)
        and not re.search(_SHORT_WAIT, text)
        and not named_keys(error, body, policy)
    ):
        return Verdict("surface", "a limit counted by the day or longer: no short wait lifts it")
    if status == 403 and not _forbids_a_key(error, body, policy, text):
        return Verdict("surface", "the account is refused: no body can change that")
    # Under a rate limit only a request larger than the whole allowance is a size; the
    # prompt a limit asks to shorten fits after a wait.
    oversize = re.search(_OVER_ALLOWANCE, text, re.I) if rate_limited else too_long(error, text)
    if status == _TOO_LARGE_STATUS or oversize:
        if (
            policy.degrade
            and count_images(body, policy)
            and _bytes_over(error, text, status, rate_limited)
        ):
            return Verdict("images", "the request's bytes are over the limit: the images go")
        return Verdict("surface", "the conversation is too long: dropping keys cannot shorten it")
    if code == "content_filter" or (not rate_limited and re.search(_CONTENT_POLICY, text)):
        return Verdict("surface", "the content policy refused the prompt")
    if (
        not rate_limited
        and re.search(_MODERATION, text)
        and _param_key(error.param) not in body
        and not named_keys(error, body, policy)
    ):
        return Verdict("surface", "the content policy refused the prompt")
    missing = (
        re.search(_MISSING_MODEL_CODE, code)
        or re.search(_MISSING_MODEL, text)
        or ("provider" not in body and re.search(_MISSING_PROVIDER, text))
    )
    if missing and not re.search(_IMAGE_WORDS, _without_model_ids(text)):
        return Verdict("surface", "the model does not exist for this endpoint")
    if "provider" not in body and re.search(_NONE_ALLOWED, text):
        return Verdict("surface", "the caller's own settings leave no provider for the model")
    if (
        not rate_limited
        and re.search(_NO_ROOM_FOR_MODEL, text)
        and not re.search(_TRANSIENT, words)
        and not named_keys(error, body, policy)
    ):
        return Verdict("surface", "the server has no room for the model: no body or wait helps")
    # (a wait the error names, where no status speaks: LiteLLM's "Try again in 5 seconds"
    # relayed after `200 OK`)
    waits = status is None and error.retry_after is not None
    # An overload's status (not a rate's) whose words refuse image input as the server's own
    # setting, with no word of load, of a wait or of the server's trouble (LiveKit's gateway
    # answers "image (vision) input is currently disabled on this gateway" at 503 as at 400):
    # the same body meets the same refusal after any wait; the images go.
    if (
        status in _TRANSIENT_STATUSES
        and status != 429
        and not rate_limited
        and error.retry_after is None
        and policy.degrade
        and count_images(body, policy)
        and not re.search(_TRANSIENT, text)
        and not re.search(_SERVER_TROUBLE, text)
        and _refuses_images(text, body, error.param)
    ):
        return Verdict("images", "the endpoint refuses image input, whatever its status says")
    if rate_limited or waits or status in _TRANSIENT_STATUSES or re.search(_TRANSIENT, text):
        return Verdict("backoff", "rate limited or overloaded", delay=error.retry_after)

    # The server's own answer refused by its validator ("2 validation errors for
    # ChatCompletionStreamResponse\nmodel\n  Field required", vLLM's 500 when its engine's
    # error chunk would not validate as a stream chunk): the fields it names are of the
    # server's response, not keys of the body, and it failed, as the same words in an
    # Anthropic `internal_error` frame say; at a 4xx the words keep their reading.
    if (status is None or status >= 500 or status == _FAILED_DEPENDENCY) and re.search(
        _OWN_RESPONSE_INVALID, message
    ):
        return Verdict(
            "backoff", "the server failed to build its own response", delay=error.retry_after
        )
    if (status is None or status < 500) and re.search(_ADJUST_PROMPT, text):
        return Verdict("surface", "the provider asks for another prompt, not another body")
    if (status is None or status < 500) and (
        code == _MODEL_OUTPUT_FAILED_CODE or re.search(_MODEL_OUTPUT_FAILED, text)
    ):
        return Verdict("surface", "the model's output broke the tool rules, not the body")

    degrade = policy.degrade and (status is None or 400 <= status < 600)
    server_side = (status is not None and status >= 500) or _server_trouble(error, status)
    # Before the structured `param`: OpenAI points its image refusal at the part
    # ("messages.[0].content.[1].type"), inside the never-dropped `messages`.
    if degrade and count_images(body, policy) and _refuses_images(text, body, error.param):
        return Verdict("images", "the endpoint refuses image input")
    param = _param_key(error.param)
    if param is not None and param in policy.kept:
        return Verdict("surface", f"the rejection is about {error.param!r}, which is never dropped")
    if degrade and (kept := _unknown_kept(_names_text(error), body, policy)):
        return Verdict("surface", f"{kept!r} itself is unknown there: the body reached another API")
    if degrade:
        named = named_keys(error, body, policy)
        if param is not None and param in body and param not in named:
            named.insert(0, param)
        named = _one_of_together(named, param, text)
        if named:
            rename = _rename(text, _with_dependents(named, body, policy), body)
            whole, prune = _narrowed(named, error, body, policy, rename)
            return Verdict("drop", "the error names them", tuple(whole), rename, prune=prune)
        if _no_room_left(text, body):
            return Verdict(
                "surface", "the room left for the output is negative: the prompt fills the context"
            )
        if required := _required_missing(text, body):
            return Verdict(
                "surface", f"the server requires {required!r} at the body's root, which it has not"
            )
        if param is None and (kept := _quoted_kept(_names_text(error), body, policy)):
            return Verdict("surface", f"the rejection is about {kept!r}, which is never dropped")
        if (
            body.get("stream")
            and (streaming := re.search(_STREAMING_REFUSED, text))
            and not re.search(_CONDITION, text)
            and not _names_inner_key(text, body, policy)
        ):
            if key := _streaming_condition(text[streaming.end() :], body, policy):
                return Verdict(
                    "drop",
                    "streaming is refused with a key of the body",
                    tuple(_with_dependents([key], body, policy)),
                )
            return Verdict("surface", "the endpoint does not stream: 'stream' is never dropped")
        if re.search(_CALLER_REFUSED, text):
            return Verdict("surface", "the account is refused: no body can change that")
        if re.search(_MODEL_ID_REFUSED, text):
            return Verdict("surface", "the model, named by its id, is refused here")
        if re.search(_CONVERSATION, text):
            return Verdict("surface", "the rejection is about the conversation itself")
        # (the server's trouble speaks of its side, by a 5xx or its words: Envoy's "reset
        # before headers" is its own)
        if not server_side and re.search(_NOT_THE_BODY, text):
            return Verdict("surface", "the rejection is about the headers or the endpoint")
        if _static_qualifies(error, status, policy):
            return Verdict(
                "static", "nothing is named, and the status or the words say the body is at fault"
            )
    if server_side:
        return Verdict("backoff", "a server error without detail", delay=error.retry_after)
    return Verdict("surface", "no policy covers this rejection")


# A validator's error about a response class (pydantic's "1 validation error for
# ChatCompletionResponse", "... for ChatCompletionStreamResponse", "... for
# ChatCompletionChunk", "... for ChatCompletionResponseStreamChoice"): the server's own
# answer, not the request ("... for ChatCompletionRequest", "... for ResponseFormat" are the
# body's).
_OWN_RESPONSE_INVALID = (
    r"\bvalidation errors? for\s+(?:[A-Za-z_][\w.]*?)?"
    r"(?:Response|Chunk)(?:Stream)?(?:Choice|Delta)?\b"
)


# A validator's properties required at the body's root ("oneOf at '/' not met, 0 matches:
# required properties at '/' are 'input', required properties at '/' are 'requests'", Workers
# AI, to a chat body sent to a model of another schema): where the body has none of them, no
# body without keys has one either.
_REQUIRED_AT_ROOT = (
    r"(?i)\brequired\s+propert(?:y|ies)\s+at\s+['\"`]?(?:/|#/?|\$)['\"`]?\s+(?:are|is)\s+"
    r"['\"`]([\w,\s]{1,200})['\"`]"
)


# The output's limit refused as a negative number ("max_tokens must be at least 1, got -53.",
# vLLM, to a body without `max_tokens`): the server derived it as the context less the
# prompt, so the prompt is longer than the context. A value the body sent is that key's.
_NEGATIVE_OUTPUT_ROOM = (
    r"(?i)\bmax(?:imum)?[_ ](?:completion[_ ]|new[_ ])?tokens\b[^.\n]{0,60}?"
    r"\b(?:got|is|was|given|received)\s*:?\s*(-\d+)\b"
)


def _no_room_left(text: str, body: Mapping[str, Any]) -> bool:
    """Whether the error refuses a negative output limit that no key of the body holds."""
    sent = {str(value) for value in body.values() if isinstance(value, int)}
    return any(found.group(1) not in sent for found in re.finditer(_NEGATIVE_OUTPUT_ROOM, text))


def _bytes_over(error: ErrorInfo, text: str, status: int | None, rate_limited: bool) -> bool:
    """Whether a size rejection counts the request's bytes, not its tokens nor the context:
    a 413 (RFC 9110's Content Too Large, whatever generic words it has: Anthropic's
    `request_too_large` "Request exceeds the maximum size"), or the body's size in words
    ("Request Entity Too Large", "Request payload size exceeds the limit: 4194304 bytes").
    Images inline in base64 are most of such a body: requests with screenshots are what meet
    it (open-webui#3273 after a few webcam pictures, wandb/openui#150, Claude Code's "Request
    too large (max 20MB)" as pasted screenshots pile up, anthropics/claude-code#43056), and
    clients that meet it shed or bound the images (microsoft/vscode#252745,
    screenpipe/screenpipe#6869, boldsoftware/shelley#213): the turn without them fits."""
    if rate_limited or (error.code or "").lower() == "context_length_exceeded":
        return False
    if re.search(_IN_TOKENS, text):
        return False
    return status == _TOO_LARGE_STATUS or not re.search(_PROMPT_SIZE, text)


def _required_missing(text: str, body: Mapping[str, Any]) -> str | None:
    """The first property the error requires at the body's root, where the body holds none
    of those it requires there; else None."""
    required = [
        name.strip()
        for found in re.finditer(_REQUIRED_AT_ROOT, text)
        for name in found.group(1).split(",")
        if name.strip()
    ]
    if not required or any(name in body for name in required):
        return None
    return required[0]


def _forbids_a_key(
    error: ErrorInfo, body: Mapping[str, Any], policy: RecoveryPolicy, text: str
) -> bool:
    """Whether a 403 refuses a key of the body rather than the caller: it names one, and
    no access of the caller's ("You are not allowed to request logprobs from this model",
    OpenAI's answer to `logprobs` for a reasoning model)."""
    # (its message and param only: the raw body may quote the user's own prompt, as
    # OpenRouter's `metadata.flagged_input` does)
    said = error.model_copy(update={"raw": None})
    return (
        policy.degrade
        and re.search(_CALLER_ACCESS, text) is None
        and bool(named_keys(said, body, policy))
    )


def _refuses_images(text: str, body: Mapping[str, Any], param: str | None = None) -> bool:
    # A body key's name is the key, not words about images ("'vl_high_resolution_images' is
    # not supported" refuses that key, not image input).
    # The structured `param` at another key of the body points at what is refused ("Image
    # output is not supported by this model" at `modalities`): that key, not the images.
    key = _param_key(param)
    if key is not None and key not in ALWAYS_KEPT and key in body:
        return False
    in_content = re.search(_TEXT_PART_ONLY, text) and re.search(_IN_CONTENT, text)
    text = _without_compounds(text, [key for key in body if "_" in key.strip("_")])
    text = _without_model_ids(text)
    return bool(in_content) or any(
        (re.search(_IMAGE_WORDS, sentence) and re.search(_IMAGE_REFUSAL, sentence))
        or re.search(_IMAGE_LIMIT, sentence)
        or re.search(_IMAGE_TOO_LARGE, sentence)
        or re.search(_IMAGE_SHRINK, sentence)
        or re.search(_IMAGE_FETCH_FAILED, sentence)
        or (re.search(_TEXT_ONLY, sentence) and _only_text_input(sentence, body, param))
        for sentence in _sentences(text)
        if not re.search(_IMAGE_ROLE_RULE, sentence)
    )


def _only_text_input(sentence: str, body: Mapping[str, Any], param: str | None) -> bool:
    """Whether "only text" speaks of the input, the images: not where the error points at
    a key of the body or names one ("Invalid value: 'audio'. This model only supports text
    output." with `param: modalities` refuses `modalities`)."""
    if param is not None and not param.startswith("messages"):
        return False
    return not any(_is_named(key, sentence) for key in body if key != "messages")


# OpenAI's newer name of a key, refused as unknown where it is not known yet, with no
# replacement named ("Unrecognized request argument supplied: max_completion_tokens", an
# older Azure api-version): its value goes back under the older name, which such
# endpoints read. A value refused ("max_completion_tokens is too large") is not renamed.
_OLDER_NAME = {"max_completion_tokens": "max_tokens"}
_UNKNOWN_KEY = (
    r"(?i)unrecognized|unknown|unsupported|not (?:supported|permitted|allowed)|"
    r"extra (?:inputs|fields)"
)


# A value refused, whose advice is another value ("Invalid value for 'response_format': use
# json_schema instead"): no key to move it to.
_VALUE_REFUSED = r"(?i)\b(?:invalid|unsupported|bad|wrong|illegal) values?\b"


def _rename(text: str, named: list[str], body: Mapping[str, Any]) -> dict[str, str]:
    if len(named) != 1 or re.search(_VALUE_REFUSED, text):
        return {}
    match = re.search(_REPLACEMENT, text)
    new = match.group(1) if match is not None else None
    if new is None and re.search(_UNKNOWN_KEY, text):
        new = _OLDER_NAME.get(named[0])
    if new is None or new in body or new == named[0]:
        return {}
    return {named[0]: new}


def _static_qualifies(error: ErrorInfo, status: int | None, policy: RecoveryPolicy) -> bool:
    # (a relay's exception classes before the words are its names for the status: LiteLLM's
    # "litellm.InternalServerError: OpenAIException - Internal server error" says no more)
    opaque = re.match(_OPAQUE_SERVER_ERROR, re.sub(_RELAY_CLASS, " ", _message(error)))
    # (where such a server says so, its bare "Internal server error" is the body's, with
    # or without the status)
    if opaque and policy.degrade_on_opaque_server_error and (status is None or status >= 500):
        return True
    if status is None:
        # An error event that names no status: its code says whose fault it is, and a
        # server's trouble (OpenAI's mid-stream `server_error`, "The server had an error
        # while processing your request") is no reason to send less.
        return not _server_trouble(error, status)
    if status in (400, 422):
        return True
    if (
        status == _GONE_STATUS
        and re.search(_RETIRED, words := _texts(error))
        and not re.search(_ENDPOINT_RETIRED, words)
    ):
        return True
    if status < 500 and re.search(_PARAMETERS_REFUSED, _texts(error)):
        return True
    # (a router's 502 refuses the body in its own JSON error, as OpenRouter's always is:
    # openrouter.ai/docs/api-reference/errors; a page, a text or nothing at 502 is a proxy's
    # in front of it, which got no answer: the same body's, later)
    return (
        status == 502
        and policy.degrade_on_bad_gateway
        and error.kind != "stream_error"
        and (error.raw or "").lstrip()[:1] in ("{", "[")
    )


def _server_trouble(error: ErrorInfo, status: int | None) -> bool:
    """Whether the error says the server failed: by its code or its type (OpenAI's
    envelope has both: Moonshot's mid-stream `{"type": "server_error", "code":
    "upstream_failure"}`), or, naming no status, in words. A 4xx is the request's fault
    whatever its type (Ollama types its 400 "... does not support tools" `api_error`),
    except 424 (Failed Dependency: what the server depends on failed, TGI's status for a
    generation that failed in its shard, SageMaker's for its model's error): the status says
    it, with words of failure or none ("CUDA out of memory" at 424 is the shard's), unless
    they relay a client error (SageMaker's ModelError "Received client error (400) from
    primary ..."), where they say whose fault it is, as where no status speaks; words that
    name a key, the images, the conversation or the size are read before this."""
    if status == _FAILED_DEPENDENCY and not re.search(_CLIENT_ERROR, _message(error)):
        return True
    in_words = status is None or status == _FAILED_DEPENDENCY
    if status is not None and status < 500:
        return False
    code = (error.code or "").lower()
    if code in _SERVER_TROUBLE_CODES or code == _FAILED_FINISH_CODE:
        return True
    if not _SERVER_TROUBLE_CODES.isdisjoint(_error_types(error)):
        return True
    return in_words and re.search(_SERVER_TROUBLE, _message(error)) is not None


def _error_types(error: ErrorInfo) -> set[str]:
    """The `type` the raw body gives its error, at its top or in its `error` object."""
    try:
        payload = json.loads(error.raw) if error.raw else None
    except (ValueError, RecursionError):
        return set()
    found: set[str] = set()
    for where in (payload, payload.get("error") if isinstance(payload, dict) else None):
        kind = where.get("type") if isinstance(where, dict) else None
        if isinstance(kind, str):
            found.add(kind.lower())
    return found


# -- building bodies ----------------------------------------------------------------


def count_images(body: Mapping[str, Any], policy: RecoveryPolicy) -> int:
    return sum(
        1
        for message in body.get("messages") or ()
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") in policy.image_part_types
    )


def remove_images(body: Body, policy: RecoveryPolicy) -> Body:
    """The body with each message's images replaced by one notice, its text kept."""
    messages = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            messages.append(message)
            continue
        kept: list[Any] = []
        removed = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") in policy.image_part_types:
                if not removed:
                    kept.append(None)  # the notice stands where the first image was
                removed += 1
            else:
                kept.append(part)
        if removed:
            notice = {"type": "text", "text": image_notice(removed)}
            kept = [notice if part is None else part for part in kept]
            message = {**message, "content": kept}
        messages.append(message)
    return {**body, "messages": messages}


def _removed(full: Mapping[str, Any], body: Mapping[str, Any], kept: Container[str]) -> list[str]:
    """The optional keys of `full` that `body` has not, and the parts inside the others it has
    not: an object's keys by their dotted path, a list's entries by their index in `full`."""
    removed: list[str] = []
    for key, value in full.items():
        if key in kept:
            continue
        if key not in body:
            removed.append(key)
        elif body[key] != value:
            removed += _removed_inside(key, value, body[key])
    return removed


def _removed_inside(path: str, was: Any, now: Any) -> list[str]:
    if isinstance(was, dict) and isinstance(now, dict):
        return [
            part
            for key, value in was.items()
            for part in (
                [f"{path}.{key}"]
                if key not in now
                else _removed_inside(f"{path}.{key}", value, now[key])
                if now[key] != value
                else []
            )
        ]
    if isinstance(was, list) and isinstance(now, list):
        left = list(now)
        removed = []
        for index, item in enumerate(was):
            if item in left:
                left.remove(item)
            else:
                removed.append(f"{path}[{index}]")
        return removed
    return []


def _without(body: Body, keys: tuple[str, ...] | list[str]) -> Body:
    return {key: value for key, value in body.items() if key not in keys}


def static_bodies(body: Body, policy: RecoveryPolicy) -> Iterator[Body]:
    """DESIGN's static list, built lazily from `body`: each a guess that only one more
    failure pays for."""
    if "stream_options" in body:
        yield _without(body, ["stream_options"])
    for key in body:
        if key not in policy.kept and key != "stream_options" and key not in _TOOL_KEYS:
            yield _without(body, [key])
    if count_images(body, policy):
        yield remove_images(body, policy)
    if "tools" in body:
        yield _without(body, _TOOL_KEYS)
    yield {key: value for key, value in body.items() if key in policy.kept}


# -- one turn's plan ----------------------------------------------------------------


def backoff_wait(backoffs: int, draw: float) -> float:
    """The wait before an identical retry when the provider named none, after `backoffs`
    earlier ones: `BACKOFF_BASE_SECONDS` doubled each time up to `MAX_BACKOFF_SECONDS`,
    less `draw` (uniform in [0, 1)) times `BACKOFF_JITTER` of it. A draw outside [0, 1]
    (or NaN) counts as 0: the wait stays within its bounds whatever supplies the draw."""
    exponential = min(BACKOFF_BASE_SECONDS * 2.0 ** min(backoffs, 64), MAX_BACKOFF_SECONDS)
    if not 0.0 <= draw <= 1.0:
        draw = 0.0
    return exponential * (1 - BACKOFF_JITTER * draw)


class NextBody(NamedTuple):
    """What the next attempt sends, and why."""

    body: Body
    verdict: Verdict
    dropped: list[str]
    """Keys of the full body the next body no longer has, and the parts inside the others
    it no longer has (`reasoning.effort`, `tools[1]`: `_removed`)."""
    images_removed: int
    delay: float
    """Seconds to wait before the next attempt: the wait the provider named, or the
    jittered `backoff_wait`; the wait actually used, and the `retry` event's `delay`."""


class RetryPlan:
    """One turn's retries: give it each rejection before commitment, get the next body
    or None (surface the rejection).

    With `total_timeout`, the plan knows the turn's deadline (counted from the plan's
    creation, which is the turn's subscription, on `clock`): a backoff whose wait would
    end at or after it is no retry, and the rejection surfaces at once, still
    `retryable`, rather than the deadline expiring during a wait for nothing.

    `random` draws the jitter of a computed backoff (uniform in [0, 1)); tests give
    their own to know each wait exactly."""

    def __init__(
        self,
        body: Body,
        policy: RecoveryPolicy,
        max_attempts: int = 5,
        total_timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        random: Callable[[], float] = _uniform,
    ) -> None:
        self.full = body
        self.policy = policy
        self.max_attempts = max_attempts
        self._clock = clock
        self._random = random
        self.deadline = None if total_timeout is None else clock() + total_timeout
        """When the turn's `total_timeout` expires, on `clock`; None without one."""
        self.current = body
        self.sent: list[Body] = [body]
        self.targeted = 0
        self.backoffs = 0
        self._static: Iterator[Body] | None = None
        self.last_verdict: Verdict | None = None

    @property
    def attempts(self) -> int:
        return len(self.sent) + self.backoffs

    def after(self, error: ErrorInfo) -> NextBody | None:
        """The body to send after `error` rejected the current one, or None."""
        verdict = classify(error, self.current, self.policy)
        self.last_verdict = verdict
        if self.attempts >= self.max_attempts:
            return None
        body: Body | None = None
        delay = 0.0
        if verdict.action == "backoff":
            if self.backoffs >= MAX_BACKOFF_RETRIES:
                return None
            named = verdict.delay
            if named is not None and named > self.policy.max_retry_after:
                return None
            if named is not None and named > 0:
                delay = named  # the provider's answer to this request: as given, as the SDKs do
            else:
                # None named, or 0 (a date already past): every stream refused at this
                # instant would come back at the next one. The SDKs back off then too.
                delay = backoff_wait(self.backoffs, self._random())
            if self.deadline is not None and self._clock() + delay >= self.deadline:
                return None  # the retry could not start before the turn's deadline
            self.backoffs += 1
            return self._next(self.current, verdict, delay)
        if verdict.action in ("drop", "images"):
            if self.targeted >= MAX_TARGETED_RETRIES:
                return None
            if verdict.action == "images":
                body = remove_images(self.current, self.policy)
            else:
                body = _without(self.current, verdict.drop)
                for old, new in verdict.rename.items():
                    body[new] = self.current[old]
                for key in dict.fromkeys(str(part[0]) for part in verdict.prune):
                    inner = [part[1:] for part in verdict.prune if part[0] == key]
                    body[key] = _pruned(self.current[key], inner)
            if self._was_sent(body):
                return None
            self.targeted += 1
        elif verdict.action == "static":
            if self._static is None:
                self._static = static_bodies(self.current, self.policy)
            body = next((b for b in self._static if not self._was_sent(b)), None)
        if body is None:
            return None
        self.sent.append(body)
        return self._next(body, verdict, delay)

    def _was_sent(self, body: Body) -> bool:
        return any(body == sent for sent in self.sent)

    def _next(self, body: Body, verdict: Verdict, delay: float) -> NextBody:
        self.current = body
        dropped = _removed(self.full, body, self.policy.kept)
        removed = count_images(self.full, self.policy) - count_images(body, self.policy)
        return NextBody(body, verdict, dropped, removed, delay)
