"""The twenty-fourth round of unseen rejections (tests/rejections_extra, 12 cases), and what
three mechanisms read wrong.

1. A server's own part said full is its capacity, not the prompt's size. "Worker thread is
   full" surfaced as the conversation's size (ContextLengthError at 400): "thread is full" was
   read as a conversation thread full. bisheng's WorkFlowTaskBusyError (10540, "Server thread
   count is full, please try again later", "服务器线程数已满, 请稍候再试") is what it means: no
   worker thread of the server is free now (its celery workers busy, dataelement/bisheng#1518).
   A thread is the conversation only where nothing or a determiner names it ("This thread is
   already full"); one another noun names (worker, server, inference thread) is the server's,
   as any store of the server's said full is: a wait frees it.
2. The request's bytes over a limit (a 413, "Request Entity Too Large", "payload too large")
   surfaced whatever the body held. Inline base64 images are what makes a chat body large: the
   reports are of screenshots and webcam pictures piling up (open-webui#3273, wandb/openui#150,
   earendil-works/pi#401 and #2734, anthropics/claude-code#43056), and the clients that meet it
   shed or bound the images (microsoft/vscode#252745, screenpipe/screenpipe#6869,
   boldsoftware/shelley#213). Where images were sent and the size is not counted in tokens nor
   of the context, the turn goes again without them; without images it surfaces as before.
3. A capability's phrase that a message of the history holds ("Cannot pass both content and
   thinking in an assistant message with tool calls!", gpt-oss's template in LM Studio) dropped
   the tools; and a thought signature refused (Vertex's "Thought signature is not valid")
   walked the static list. Both are the conversation's, which no key mends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import rxllm
from rxllm.degradation import RecoveryPolicy, Verdict
from rxllm.errors import ContextLengthError, error_for
from rxllm.events import ErrorInfo, Retry
from tests.rejection_rounds import assert_reads_as_its_file_says, both_ways, openai_error
from tests.test_probe_rejections_7 import TOOLS, body, frame, response
from tests.test_probe_rejections_19 import action_counts

# none 8, drop 2, images 2
ROUND_TWENTY_FOUR = (
    "9router_gemini__400_thought_signature_is_not_valid_reset_after_30s",
    "anthropic__413_request_too_large_request_exceeds_the_maximum_size_images",
    "antigravity_vertex_claude__400_tool_use_ids_without_tool_result_blocks",
    "deepseek__400_this_response_format_type_is_unavailable_now",
    "groq__400_messages_assistant_property_reasoning_content_is_unsupported",
    "groq__400_messages_property_timestamp_is_unsupported",
    "litellm_bedrock__400_temperature_and_top_p_cannot_both_be_specified",
    "lmstudio__400_jinja_cannot_pass_both_content_and_thinking_with_tool_calls",
    "lmstudio__400_jinja_only_user_and_assistant_roles_are_supported",
    "nginx__413_request_entity_too_large_after_webcam_pictures",
    "openai__413_request_entity_too_large_request_too_large_screenshot",
    "sub2api__404_model_not_supported_by_any_configured_account_in_this_group",
)


def test_the_cases_are_round_twenty_fours() -> None:
    assert len(set(ROUND_TWENTY_FOUR)) == 12
    assert action_counts(ROUND_TWENTY_FOUR) == {"none": 8, "drop": 2, "images": 2}


@pytest.mark.parametrize("case_name", ROUND_TWENTY_FOUR)
def test_each_case_reads_as_its_file_says(case_name: str) -> None:
    assert_reads_as_its_file_says(case_name)


# -- 1. a server's part said full is a wait --------------------------------------------------

PLAIN = body(temperature=0.5)
BUSY = [
    "Worker thread is full",
    "Worker thread is full, please try again later",
    "The inference thread is full",
    # bisheng's WorkFlowTaskBusyError, in its two languages
    "Server thread count is full, please try again later",
    "服务器线程数已满\uff0c请稍候再试",
]


@pytest.mark.parametrize("message", BUSY)
@pytest.mark.parametrize("status", [400, 500, 503])
def test_a_servers_thread_full_backs_off(message: str, status: int) -> None:
    read = response(status, openai_error(message), PLAIN)
    assert (read.action, read.drop) == ("backoff", ())


@pytest.mark.parametrize("message", BUSY)
def test_a_servers_thread_full_backs_off_in_a_frame(message: str) -> None:
    assert frame({"message": message}, PLAIN).action == "backoff"


@pytest.mark.parametrize("message", BUSY)
def test_a_servers_thread_full_is_no_context_length_error(message: str) -> None:
    info = ErrorInfo(kind="rejected", message=message, status=400, provider="p")
    assert not isinstance(error_for(info), ContextLengthError)


@pytest.mark.parametrize(
    "message", ["This thread is already full", "Thread is full", "Your thread is full."]
)
def test_a_conversation_thread_full_is_still_its_size(message: str) -> None:
    """Guards: the thread a determiner or nothing names is the conversation."""
    read = response(400, openai_error(message), PLAIN)
    assert (read.action, read.drop) == ("surface", ())
    info = ErrorInfo(kind="rejected", message=message, status=400, provider="p")
    assert isinstance(error_for(info), ContextLengthError)


# -- 2. the body's bytes over a limit, with images sent ------------------------------------

WITH_IMAGES = body(images=True, temperature=0.5)
ANTHROPIC_413 = json.dumps(
    {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}
)
NGINX_413 = (
    "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
    "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)
BYTES_OVER = [
    (413, NGINX_413),
    (413, ANTHROPIC_413),
    (413, json.dumps(openai_error("Request Entity Too Large", code="request_too_large"))),
    (413, "Payload Too Large"),
    (413, ""),
    # the words where another status carries them
    (400, json.dumps(openai_error("Request body too large"))),
    (400, json.dumps(openai_error("Request payload size exceeds the limit: 4194304 bytes."))),
]


@pytest.mark.parametrize(("status", "text"), BYTES_OVER)
def test_the_bodys_bytes_over_with_images_retry_without_them(status: int, text: str) -> None:
    read = response(status, text, WITH_IMAGES)
    assert (read.action, read.drop) == ("images", ())


@pytest.mark.parametrize(("status", "text"), BYTES_OVER)
def test_the_bodys_bytes_over_without_images_surface(status: int, text: str) -> None:
    """Guards: nothing to shed, the size surfaces as before."""
    assert response(status, text, PLAIN).action == "surface"


def test_the_bodys_bytes_over_in_a_frame_with_images() -> None:
    assert frame({"message": "Request Entity Too Large"}, WITH_IMAGES).action == "images"


@pytest.mark.parametrize(
    ("status", "payload"),
    [
        # a size counted in tokens: the prompt's, text and images alike (GitHub Models)
        (
            413,
            {
                "error": {
                    "code": "tokens_limit_reached",
                    "message": "Request body too large for gpt-4o model. Max size: 8000 tokens.",
                }
            },
        ),
        # a rate limit's size (Groq's 413 on tokens per minute)
        (
            413,
            openai_error(
                "Request too large for model `llama-3.3-70b-versatile` on tokens per minute "
                "(TPM): Limit 6000, Requested 14810, please reduce your message size and try "
                "again.",
                code="rate_limit_exceeded",
            ),
        ),
        # the context, whatever the status
        (413, openai_error("This model's maximum context length is 8192 tokens.")),
        (400, openai_error("prompt is too long: 210000 tokens > 200000 maximum")),
        (400, openai_error("Request too large", code="context_length_exceeded")),
    ],
)
def test_a_size_in_tokens_surfaces_with_images(status: int, payload: Any) -> None:
    assert response(status, payload, WITH_IMAGES).action == "surface"


def test_a_policy_that_degrades_nothing_surfaces_the_413() -> None:
    anthropic = rxllm.provider("anthropic", api_key="k").wire.recovery
    assert response(413, ANTHROPIC_413, WITH_IMAGES, anthropic).action == "surface"


PNG = "data:image/png;base64,iVBORw0KGgo="


async def test_a_turn_too_large_with_images_goes_again_without_them(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    """Over the wire: nginx refuses the body that holds the images, and the one without
    them is served; the retry says how many images went."""
    from tests.test_rejections import OK_STREAMS

    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        if "image_url" in json.dumps(bodies[-1]):
            return web.Response(status=413, text=NGINX_413, content_type="text/html")
        return web.Response(
            body=OK_STREAMS["openai"], headers={"Content-Type": "text/event-stream"}
        )

    url = await serve(handler)
    request = rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("what is in these?", images=[PNG, PNG])]
    )
    async with rxllm.provider(
        "custom", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    assert len(bodies) == 2
    assert "image_url" not in json.dumps(bodies[1])
    retries = [event for event in events if isinstance(event, Retry)]
    assert len(retries) == 1
    assert events[-1].type == "done"


async def test_a_turn_too_large_without_images_surfaces(
    serve: Callable[[Any], Awaitable[str]],
) -> None:
    bodies: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        return web.Response(status=413, text=NGINX_413, content_type="text/html")

    url = await serve(handler)
    request = rxllm.ChatRequest(model="m", messages=[rxllm.Message.user("hi")])
    async with rxllm.provider(
        "custom", api_key="k", base_url=url, allow_private_network=True
    ) as provider:
        events = [event async for event in provider.astream(request)]
    assert len(bodies) == 1
    assert events[-1].type == "error"


# -- 3. what a message of the history holds --------------------------------------------------

WITH_TOOLS = body(tools=TOOLS, tool_choice="auto", reasoning_effort="high")


@pytest.mark.parametrize(
    "message",
    [
        'Error rendering prompt with jinja template: "Cannot pass both content and thinking in '
        "an assistant message with tool calls! Put the analysis message in one or the other, "
        'but not both.".',
        "Messages with tool calls are not supported when the content is empty",
        "Unable to submit request because Thought signature is not valid.",
        "thought_signature is not valid for this request",
    ],
)
def test_what_a_message_holds_is_the_conversation(message: str) -> None:
    assert both_ways(message, WITH_TOOLS) == [("surface", ())] * 2


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the capability refused, no message holding it
        ("Tool calls are not supported by this model", ("drop", ("tools", "tool_choice"))),
        ("This model does not support function calling", ("drop", ("tools", "tool_choice"))),
        # thinking refused as a setting, not a signature
        ("thinking is not supported for this model", ("drop", ("reasoning_effort",))),
    ],
)
def test_near_what_a_message_holds(message: str, expected: Any) -> None:
    """Guards: the same phrases where nothing says a message holds them."""
    assert both_ways(message, WITH_TOOLS) == [expected, expected]


# -- the new readings read hostile inputs in linear time -------------------------------------

_HOSTILE = {
    "threads before full": "worker thread " * 2_340 + "is full",
    "determiners before a thread": "the " * 8_190 + "thread is full",
    "messages before a phrase": "message with " * 2_520 + "tool calls are not supported",
    "apostrophes before a phrase": "message's " * 3_276 + "tool calls cannot be used",
    "signatures": "thought signature " * 1_820,
    "threads in Chinese": "线程数" * 10_922,
}


@pytest.mark.parametrize("text", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_the_new_readings_take_linear_time(text: str) -> None:
    policy = RecoveryPolicy(degrade=True)
    verdicts: list[Verdict] = []

    def read() -> None:
        verdicts.append(frame(text, WITH_IMAGES, policy))
        verdicts.append(response(413, {"error": {"message": text}}, WITH_IMAGES, policy))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a hang guard: linear is well under a second here
    assert len(verdicts) == 2
