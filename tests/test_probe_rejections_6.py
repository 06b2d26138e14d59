"""The families behind the sixth batch of real rejections, in wordings no case holds.

The cases themselves are in tests/rejections_extra (replayed by test_probe_rejections_2):
a key named only by its refused value (OpenAI's "Unsupported value: 'minimal'" with its
`param` masked), a field refused inside a key and named by its path (vLLM's
`tools.0.function.strict`, MiniMax's `thinking.type`), a pair of keys refused only together
where the structured `param` points at one of them (OpenAI, Ark), and image input refused
in Chinese. Here each family is read in other words, beside the words that must name
nothing: the values a provider would accept, a path that is a URL's, a pair with no pointer.
"""

from __future__ import annotations

from typing import Any

import pytest

from rxllm.degradation import RecoveryPolicy, Verdict, classify
from rxllm.events import ErrorInfo

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def body(images: bool = False, **params: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "hi"}]
    return {
        "model": "m",
        "messages": [{"role": "user", "content": content + ([IMAGE] if images else [])}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "seed": 7,
        "user": "case-user",
        **params,
    }


def verdict(message: str, sent: dict[str, Any], param: str | None = None) -> Verdict:
    error = ErrorInfo(
        kind="http", message=message, status=400, provider="p", retryable=False, param=param
    )
    return classify(error, sent, RecoveryPolicy(degrade=True))


@pytest.mark.parametrize(
    ("message", "sent", "dropped"),
    [
        # the refused value names the key that holds it, at the top or one level down
        (
            "Invalid value: 'xhigh'. Supported values are: 'low', 'medium', and 'high'.",
            body(reasoning_effort="xhigh", verbosity="high"),
            ("reasoning_effort",),
        ),
        (
            "Unsupported value: 'minimal' is not supported with this model.",
            body(reasoning={"effort": "minimal"}, temperature=0.2),
            ("reasoning",),
        ),
        # ... and the values a provider would accept name nothing
        (
            "Unsupported value: 'ultra' for this model (allowed: low, high). "
            "Valid values are 'low' and 'high'.",
            body(service_tier="ultra", verbosity="low", reasoning_effort="high"),
            ("service_tier",),
        ),
        # a field refused inside a key, named by its path: the key that holds it goes
        (
            "Invalid 'tools[0].function.strict': boolean not supported by this backend",
            body(tools=TOOLS, tool_choice="auto", temperature=0.2),
            ("tools", "tool_choice"),
        ),
        (
            "response_format.json_schema.strict: Extra inputs are not permitted",
            body(response_format={"type": "json_schema"}, temperature=0.2),
            ("response_format",),
        ),
        (
            "thinking.budget_tokens: Input should be greater than or equal to 1024",
            body(thinking={"type": "enabled", "budget_tokens": 64}, temperature=1.0),
            ("thinking",),
        ),
    ],
)
def test_key_named_by_its_value_or_path(
    message: str, sent: dict[str, Any], dropped: tuple[str, ...]
) -> None:
    result = verdict(message, sent)
    assert result.action == "drop" and result.drop == dropped, result


def test_a_path_in_a_url_names_no_key() -> None:
    sent = body(tools=TOOLS, stop=["\n"])
    result = verdict("Bad request, see https://docs.example.com/tools.html#stop.sequences", sent)
    assert result.action == "static", result


@pytest.mark.parametrize(
    ("message", "param", "dropped"),
    [
        # the structured param points at one key of a pair refused together: it goes alone
        (
            "max_tokens and max_completion_tokens are mutually exclusive.",
            "max_completion_tokens",
            ("max_completion_tokens",),
        ),
        (
            "Invalid combination of reasoning_effort and thinking: high + disabled",
            "reasoning_effort",
            ("reasoning_effort",),
        ),
        # no pointer: the pair goes together, as either alone is accepted
        (
            "`temperature` and `top_p` cannot be used together for this model.",
            None,
            ("temperature", "top_p"),
        ),
    ],
)
def test_pair_refused_together(message: str, param: str | None, dropped: tuple[str, ...]) -> None:
    sent = body(
        max_tokens=512,
        max_completion_tokens=512,
        reasoning_effort="high",
        thinking={"type": "disabled"},
        temperature=0.2,
        top_p=0.9,
    )
    result = verdict(message, sent, param=param)
    assert result.action == "drop" and result.drop == dropped, result


@pytest.mark.parametrize(
    "message",
    [
        "该模型不支持图片输入。请更换模型",
        "当前模型暂不支持视觉理解",
        "このモデルは画像入力をサポートしていません。",
        "이 모델은 이미지 입력을 지원하지 않습니다.",
    ],
)
def test_images_refused_in_chinese_japanese_korean(message: str) -> None:
    assert verdict(message, body(images=True)).action == "images"
    # without images in the body the same words refuse nothing it can remove
    assert verdict(message, body()).action != "images"
