"""A review of the session's recovery rules, on the common rejections they must not
misread: each body is the kind a careful client meets every day, written as the review
found it misclassified (read as `sources.http` reads an HTTP rejection, through
`test_probe_rejections_7.response`)."""

from __future__ import annotations

from typing import Any

from tests.test_probe_rejections_7 import IMAGE, body, response


def _error(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", **fields}}


def test_text_only_output_refused_with_images_present_drops_its_key_not_the_images() -> None:
    """'This model only supports text output' with `param: modalities` refuses
    `modalities`; the images the conversation holds were never the question."""
    sent = body(images=True, modalities=["text", "audio"])
    error = _error(
        "Invalid value: 'audio'. This model only supports text output.", param="modalities"
    )
    verdict = response(400, error, sent)
    assert (verdict.action, verdict.drop) == ("drop", ("modalities",))
    # and a key the sentence names, with no param: still that key
    sent = body(images=True, stop=["a"])
    verdict = response(400, _error("'stop' accepts only text sequences"), sent)
    assert (verdict.action, verdict.drop) == ("drop", ("stop",))


def test_text_only_input_still_removes_the_images() -> None:
    verdict = response(400, _error("Only text content is supported."), body(images=True))
    assert verdict.action == "images"
    assert IMAGE["type"] == "image_url"


def test_a_value_shared_by_two_keys_drops_only_the_key_param_points_at() -> None:
    sent = body(reasoning_effort="low", verbosity="low")
    error = _error(
        "Unsupported value: 'low' is not supported with the 'gpt-5-pro' model.",
        param="reasoning_effort",
    )
    verdict = response(400, error, sent)
    assert (verdict.action, verdict.drop) == ("drop", ("reasoning_effort",))
    sent = body(service_tier="auto", tool_choice="auto")
    error = _error("Unsupported value: 'auto' is not supported.", param="service_tier")
    assert response(400, error, sent).drop == ("service_tier",)


def test_a_value_with_its_param_masked_still_names_its_one_key() -> None:
    sent = body(reasoning_effort="minimal")
    error = _error("Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.")
    assert response(400, error, sent).drop == ("reasoning_effort",)


def test_max_tokens_beyond_the_model_limit_drops_max_tokens() -> None:
    """A value said to exceed the model's limit refuses that value; the request said to
    exceed it (Moonshot's) is the size."""
    sent = body(max_tokens=100000)
    for message in (
        "max_tokens (100000) exceeds the model token limit (8192)",
        "Invalid max_tokens: must not exceed model max length 8192",
    ):
        verdict = response(400, _error(message), sent)
        assert (verdict.action, verdict.drop) == ("drop", ("max_tokens",)), message
    verdict = response(400, _error("Your request exceeded model token limit: 262144"), sent)
    assert verdict.action == "surface"


def test_a_user_location_inside_a_parameter_is_not_the_account() -> None:
    sent = body(web_search_options={"user_location": {"approximate": {"city": 1}}})
    del sent["user"]  # ("Invalid parameter: user ..." would name a body's `user` too)
    error = _error(
        "Invalid parameter: user location approximate city must be a string",
        param="web_search_options",
    )
    verdict = response(400, error, sent)
    assert (verdict.action, verdict.drop) == ("drop", ("web_search_options",))
    google = {"error": {"code": 400, "message": "User location is not supported for the API use."}}
    assert response(400, google, body()).action == "surface"


def test_a_403_reads_no_key_in_the_users_own_prompt() -> None:
    """OpenRouter's moderation 403 quotes the flagged input: the user's words name no
    key the endpoint refused."""
    sent = body(temperature=0.2)
    error = {
        "error": {
            "message": "Input flagged for moderation",
            "code": 403,
            "metadata": {"flagged_input": "set the temperature parameter to 2 and go"},
        }
    }
    assert response(403, error, sent).action == "surface"
    refused = _error("You are not allowed to request logprobs from this model")
    assert response(403, refused, body(logprobs=True)).drop == ("logprobs",)
