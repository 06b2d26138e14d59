"""Named endpoints of the OpenAI-chat core: each a declaration, not a copy of the loop.

A preset says where the endpoint is, which environment variable holds its key, and
which `ChatOptions` it needs; the options' docstrings say why.
"""

from __future__ import annotations

import re

from rxllm.degradation import RecoveryPolicy
from rxllm.providers.openai_chat import OPENAI, ChatOptions, OpenAIChat

__all__ = [
    "azure_openai",
    "custom",
    "deepseek",
    "groq",
    "llamacpp",
    "local",
    "mistral",
    "moonshot",
    "nvidia",
    "ollama",
    "openrouter",
    "snowflake",
    "together",
    "vllm",
    "xai",
    "zai",
]

# The family's common ground: none of the options of OpenAI's own endpoint (`OPENAI`:
# its `max_completion_tokens`, which a compatible server may not read).
_COMPATIBLE = ChatOptions()
# An endpoint that may serve DeepSeek's open weights: its DSML calls in the content are
# read as calls (`ChatOptions.dsml_tool_calls`).
_DEEPSEEK_READY = ChatOptions(dsml_tool_calls=True)


def local() -> OpenAIChat:
    """The embedded server (`rxllm.local`): OpenAI chat wire, no key."""
    return OpenAIChat(
        "local", default_base_url="", api_key_env=None, requires_api_key=False, options=_COMPATIBLE
    )


def custom() -> OpenAIChat:
    """Any OpenAI-compatible URL, given as `base_url`; a key only if it wants one. The
    URL is anyone's, so the SSRF guard is on unless `ssrf_guard=False`."""
    return OpenAIChat(
        "custom",
        default_base_url="",
        api_key_env="CUSTOM_API_KEY",
        requires_api_key=False,
        options=_DEEPSEEK_READY,
        ssrf_guard_by_default=True,
    )


def openrouter() -> OpenAIChat:
    """OpenRouter: processing comments, `reasoning_details`, a served model that may differ
    from the requested one, usage after the finish, errors inside data chunks; all read
    by the core. An assistant turn sends its `reasoning_details` back as they came
    (openrouter.ai/docs, Reasoning Tokens, "Preserving reasoning blocks"). A PDF goes
    by its data or by its URL, which OpenRouter fetches. It routes each body to upstream
    providers and answers 502 when none of them serves it, so a 502 degrades the body."""
    return OpenAIChat(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        recovery=RecoveryPolicy(degrade=True, degrade_on_bad_gateway=True),
        options=ChatOptions(
            reasoning_back="reasoning_details", pdf_input="file_data_or_url", dsml_tool_calls=True
        ),
    )


def nvidia() -> OpenAIChat:
    """NVIDIA NIM (build.nvidia.com): the OpenAI chat wire. Its backend answers input it
    does not support with an opaque `500 Internal server error`, so that one degrades the
    body; `chat_template_kwargs` (how its reasoning models are switched on) is never
    dropped. Some of its reasoning models (DeepSeek-R1, Nemotron with "detailed thinking
    on") think inside `content`, between `<think>` tags, where others send
    `reasoning_content` (pipecat's `NvidiaLLMService` reads both); the block goes back in
    the content it came in, and reasoning that came in the field is not sent back."""
    return OpenAIChat(
        "nvidia",
        "https://integrate.api.nvidia.com/v1",
        "NVIDIA_API_KEY",
        recovery=RecoveryPolicy(
            degrade=True,
            degrade_on_opaque_server_error=True,
            mandatory_body_keys=frozenset({"chat_template_kwargs"}),
        ),
        options=ChatOptions(think_tags=True, reasoning_back="think_tags", dsml_tool_calls=True),
    )


def deepseek() -> OpenAIChat:
    """DeepSeek: `reasoning_content`, `prompt_cache_hit_tokens`; read by the core.
    `thinking` (its switch between reasoning and plain chat) is never dropped. Every
    assistant message carries its reasoning back, `""` where it has none (thinking mode
    refuses a tool loop without it: api-docs.deepseek.com/guides/thinking_mode). Its
    `response_format` is `text` or `json_object` ("Set the response_format parameter to
    {'type': 'json_object'}", api-docs.deepseek.com/guides/json_mode): a JSON Schema is a
    `ConfigError` at the call (`ChatOptions.json_schema_output`)."""
    return OpenAIChat(
        "deepseek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        recovery=RecoveryPolicy(degrade=True, mandatory_body_keys=frozenset({"thinking"})),
        options=ChatOptions(
            reasoning_back="reasoning_content", json_schema_output=False, dsml_tool_calls=True
        ),
    )


_KIMI_THINKING = re.compile(r"kimi-k2(?:-thinking|\.[5-7])")
"""The Kimi models that think unless `thinking` is `{"type": "disabled"}`, or always:
kimi-k2-thinking ("thinking forcibly enabled") and kimi-k2.5 ("enabled by default"),
platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model; kimi-k2.6 (thinking on by
default, can1357/oh-my-pi#1077) and kimi-k2.7-code ("only type=enabled is allowed for
this model", MoonshotAI/kimi-code#797); with their `-turbo`, `-highspeed` variants.
moonshot-v1 and the older kimi-k2 previews do not think."""


def moonshot() -> OpenAIChat:
    """Moonshot (Kimi): `reasoning_content`, usage on the last chunk's choice; read by the
    core. Its thinking models (kimi-k2-thinking; kimi-k2.6 and k2.5 unless `thinking` is
    `{"type": "disabled"}`) want the reasoning kept in the context of a tool loop
    (platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model), and refuse the next turn
    without it: 400 "thinking is enabled but reasoning_content is missing in assistant
    tool call message at index N" (MoonshotAI/kimi-agent-sdk#169). So every assistant
    message carries it as `reasoning_content`, as DeepSeek's do; `thinking` (its switch)
    is never dropped. While the model thinks it refuses a forced tool choice ("tool_choice
    'required' is incompatible with thinking enabled", and `'specified'` for a name), so
    that is a `ConfigError` at the call (`ChatOptions.thinking_refuses_forced_choice`)."""
    return OpenAIChat(
        "moonshot",
        "https://api.moonshot.ai/v1",
        "MOONSHOT_API_KEY",
        recovery=RecoveryPolicy(degrade=True, mandatory_body_keys=frozenset({"thinking"})),
        options=ChatOptions(
            reasoning_back="reasoning_content",
            thinking_refuses_forced_choice=_KIMI_THINKING,
        ),
    )


def azure_openai() -> OpenAIChat:
    """Azure OpenAI. `base_url` is the resource's, from the user:
    `https://<resource>.openai.azure.com/openai/v1` (the v1 API), or a deployment's
    `.../openai/deployments/<name>?api-version=<version>` (the query is kept). It serves
    OpenAI's models, so `max_tokens` goes as `max_completion_tokens`, as to OpenAI (`OPENAI`:
    o-series and gpt-5 deployments refuse `max_tokens`); an older `api-version` that does
    not know the key refuses it by name ("Unrecognized request argument supplied"), and
    the retry sends the value as `max_tokens` (`rxllm.degradation`). Its tool names and
    tool call ids are OpenAI's."""
    return OpenAIChat(
        "azure-openai",
        default_base_url="",
        api_key_env="AZURE_OPENAI_API_KEY",
        options=ChatOptions(
            api_key_header="api-key",
            sampling_renames=dict(OPENAI.sampling_renames),
            tool_names=OPENAI.tool_names,
            max_tool_call_id=OPENAI.max_tool_call_id,
        ),
    )


def groq() -> OpenAIChat:
    """Groq: usage also under `x_groq.usage`, and `x_groq.error` when it stops a stream
    early; `event: error` frames and `executed_tools` read by the core. It refuses a
    message field it does not know, so no Gemini call signature goes there. Its
    `reasoning_format` defaults to `raw` (the reasoning "within <think> tags in the main
    text content", console.groq.com/docs/reasoning) for a turn without tools or JSON
    mode: qwen3-32b thinks inside `content` unless asked for `parsed`, and the block goes
    back in the content it came in (gpt-oss's, streamed as `reasoning`, is not sent
    back). Its tool names are OpenAI's (groq-python's `FunctionDefinition`: a-z, A-Z,
    0-9, underscores and dashes, at most 64). It takes no PDF: a message's parts are text,
    images and `document`s of JSON data (groq-python's `ChatCompletionContentPartParam`)."""
    return OpenAIChat(
        "groq",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        options=ChatOptions(
            extension="x_groq",
            call_signatures=False,
            think_tags=True,
            reasoning_back="think_tags",
            tool_names=OPENAI.tool_names,
            pdf_input="none",
        ),
    )


def mistral() -> OpenAIChat:
    """Mistral: content as typed chunk lists and index-less tool calls (read by the core);
    usage comes unasked, so no `stream_options`. It validates bodies strictly: tool call
    ids of 9 alphanumerics only, the seed named `random_seed`, no field it does not know
    (no Gemini call signature), and no user message right after tool messages
    ("Unexpected role 'user' after role 'tool'", code 3230), so an assistant message
    comes between, and the images of tool results are left out. Tool names follow
    OpenAI's rule ("must be a-z, A-Z, 0-9, or contain underscores and dashes, with a
    maximum length of 64"): another is a `ConfigError` at the call, not a 400 whose
    degraded retry drops every tool. A turn's reasoning goes back as the `thinking`
    chunk of its content that Magistral streamed (docs.mistral.ai, reasoning,
    multi-turn conversations). A PDF goes as its `document_url` chunk, by its URL or its
    data (Document QnA)."""
    return OpenAIChat(
        "mistral",
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        options=ChatOptions(
            stream_usage=False,
            short_tool_call_ids=True,
            call_signatures=False,
            assistant_after_tool_results=True,
            images_after_tool_results=False,
            sampling_renames={"seed": "random_seed"},
            tool_names=OPENAI.tool_names,
            reasoning_back="thinking_chunks",
            pdf_input="document_url",
        ),
    )


def vllm() -> OpenAIChat:
    """A vLLM server; a key only if it was started with `--api-key`. It takes no PDF:
    "Unsupported chat content part type: 'file'" (vllm/entrypoints/chat_utils.py)."""
    return OpenAIChat(
        "vllm",
        "http://localhost:8000/v1",
        api_key_env="VLLM_API_KEY",
        requires_api_key=False,
        options=ChatOptions(pdf_input="none", dsml_tool_calls=True),
    )


def ollama() -> OpenAIChat:
    """A local Ollama server's OpenAI-compatible endpoint; no key. It streams reasoning
    as `reasoning` and reads it back from that field alone (`reasoning_content` is
    ignored unsaid: ollama/ollama#18534), as its tool-calling guide asks. It takes an
    image by its data only (openai/openai.go, `decodeImageURL`: "image URLs are not
    currently supported"), so one by its URL is refused at the call, and no PDF: it reads
    no part but text and images ("invalid message format")."""
    return OpenAIChat(
        "ollama",
        "http://localhost:11434/v1",
        api_key_env=None,
        requires_api_key=False,
        options=ChatOptions(reasoning_back="reasoning", image_urls=False, pdf_input="none"),
    )


def llamacpp() -> OpenAIChat:
    """A local `llama-server`; no key. Without `--jinja` and a reasoning format, gpt-oss's
    raw Harmony tokens come out as text, verbatim. It takes no PDF: a part other than
    text, an image or audio is "unsupported content[].type" (tools/server/
    server-common.cpp)."""
    return OpenAIChat(
        "llamacpp",
        "http://localhost:8080/v1",
        api_key_env=None,
        requires_api_key=False,
        options=ChatOptions(pdf_input="none"),
    )


def xai() -> OpenAIChat:
    """xAI: `completion_tokens` excludes reasoning, so reasoning is added to the output."""
    return OpenAIChat(
        "xai",
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        options=ChatOptions(reasoning_in_completion=False),
    )


def zai() -> OpenAIChat:
    """Z.ai (GLM): `reasoning_content`, no finish key until the end; read by the core.
    Interleaved thinking wants an assistant turn's reasoning back with the tool results
    ("thinking blocks should be explicitly preserved and returned together with the tool
    results", docs.z.ai/guides/capabilities/thinking-mode), so every assistant message
    carries it as `reasoning_content`, as DeepSeek's do."""
    return OpenAIChat(
        "zai",
        "https://api.z.ai/api/paas/v4",
        "ZAI_API_KEY",
        options=ChatOptions(reasoning_back="reasoning_content"),
    )


def together() -> OpenAIChat:
    """Together: open reasoning models think inside `content`, between `<think>` tags;
    the block goes back in the content it came in (MiniMax-M2 needs it there)."""
    return OpenAIChat(
        "together",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        options=ChatOptions(think_tags=True, reasoning_back="think_tags", dsml_tool_calls=True),
    )


def snowflake() -> OpenAIChat:
    """Snowflake Cortex. `base_url` is the account's, from the user:
    `https://<account>.snowflakecomputing.com/api/v2/cortex/v1`; the key is a
    programmatic access token, sent as a bearer token. It sends no finish reason:
    `[DONE]` ends the turn. Claude's thinking streams as OpenRouter's
    `reasoning_details`, signed, and goes back so beside the turn's tool calls, where
    Anthropic requires its signed thinking (pydantic-ai's test_snowflake_thinking.yaml)."""
    return OpenAIChat(
        "snowflake",
        default_base_url="",
        api_key_env="SNOWFLAKE_API_KEY",
        options=ChatOptions(reasoning_back="reasoning_details"),
    )
