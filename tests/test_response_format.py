"""`ChatRequest.response_format`: one portable setting for the form of the answer, written
by each wire in its own form, checked where it is given, and carried across a fallback in
each provider's form.

What each provider's reference says of the forms (quoted where a test relies on them):

- OpenAI Chat Completions `response_format`: "Setting to `{ "type": "json_schema",
  "json_schema": {...} }` enables Structured Outputs which ensures the model will match
  your supplied JSON schema. ... Setting to `{ "type": "json_object" }` enables JSON
  mode"; `json_schema` holds `name` (required), `description`, `schema`, `strict`.
- Responses: `text.format`, the same types, the schema's fields flat beside `type`
  (`{"type": "json_schema", "name", "schema", "strict"}`); `text` also holds `verbosity`.
- Anthropic (platform.claude.com, build-with-claude/structured-outputs): "JSON outputs
  (`output_config.format`)", generally available; "The `output_format` parameter has
  moved to `output_config.format`, and beta headers are no longer required." The format
  is `{"type": "json_schema", "schema": ...}`, its one type (anthropic SDK's
  `JSONOutputFormatParam`: `type: Required[Literal["json_schema"]]`, `schema`): there
  is no JSON mode without a schema.
- Gemini `generationConfig`: `responseJsonSchema`, "an alternative to `responseSchema`
  that accepts JSON Schema. If set, `responseSchema` must be omitted, but
  `responseMimeType` is required and must be set to `application/json`."
- DeepSeek's Chat Completions: "Set the `response_format` parameter to `{'type':
  'json_object'}`" (api-docs.deepseek.com/guides/json_mode); a schema is refused, 422
  "response_format.type `json_schema` is unavailable now"
  (tests/rejections_extra/deepseek__422_response_format_json_schema_unavailable.json).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest
from pydantic import BaseModel, Field

import rxllm
from rxllm.request import JsonSchema
from tests.support import Recorder, Serve

KEY = "sk-response-format-test-0123456789abcdef"
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
WEATHER = JsonSchema(name="weather", schema=SCHEMA)

GEMINI_ANSWER = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"{}"}]},'
    b'"finishReason":"STOP"}]}\n\n'
)
RESPONSES_ANSWER = b"".join(
    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    for event in (
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": "{}",
        },
        {
            "type": "response.completed",
            "response": {"id": "r", "status": "completed", "output": []},
        },
    )
)
ANSWERS = {":streamGenerateContent": GEMINI_ANSWER, "/responses": RESPONSES_ANSWER}

CHAT_JSON = {"response_format": {"type": "json_object"}}
CHAT_SCHEMA = {
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": SCHEMA},
    }
}
# What each wire writes for "json" and for WEATHER (no entry: a ConfigError there).
FORMS: dict[str, dict[str, dict[str, Any]]] = {
    "openai": {"json": CHAT_JSON, "schema": CHAT_SCHEMA},
    "openai-responses": {
        "json": {"text": {"format": {"type": "json_object"}}},
        "schema": {
            "text": {"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA}}
        },
    },
    "anthropic": {
        "schema": {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}},
    },
    "google": {
        "json": {"generationConfig": {"responseMimeType": "application/json"}},
        "schema": {
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": SCHEMA,
            }
        },
    },
}
# The keys the field may write, on any wire: none of another wire's is ever sent.
OUTPUT_KEYS = {"response_format", "text", "output_config", "output_format", "generationConfig"}


def ask(**fields: Any) -> rxllm.ChatRequest:
    return rxllm.ChatRequest(
        model="m", messages=[rxllm.Message.user("The weather in Paris, as JSON?")], **fields
    )


async def sent(serve: Serve, provider: str, request: rxllm.ChatRequest) -> dict[str, Any]:
    """The body `provider` sent for `request` to a loopback endpoint of its wire, which
    answered one complete turn."""
    recorder = Recorder(answers=ANSWERS)
    options = {"allow_private_network": True} if provider == "custom" else {}
    async with rxllm.provider(
        provider, api_key=KEY, base_url=await serve(recorder.handle), **options
    ) as p:
        record = await p.complete(request)
    assert record.ok, record.terminal
    [only] = recorder.requests
    body: dict[str, Any] = only["body"]
    return body


def written(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key in OUTPUT_KEYS}


# -- each wire's own form ---------------------------------------------------------------

WIRE_CASES = [(provider, form) for provider, forms in FORMS.items() for form in forms]


@pytest.mark.parametrize(("provider", "form"), WIRE_CASES)
async def test_each_wire_writes_the_format_in_its_own_form(
    serve: Serve, provider: str, form: str
) -> None:
    output = "json" if form == "json" else WEATHER
    body = await sent(serve, provider, ask(response_format=output))
    assert written(body) == FORMS[provider][form]


@pytest.mark.parametrize("provider", sorted(FORMS))
async def test_unset_and_text_write_nothing(serve: Serve, provider: str) -> None:
    """Plain text is every provider's default: nothing is sent for it, and OpenAI's
    `{"type": "text"}` reads as the field unset."""
    for request in (ask(), ask(response_format={"type": "text"})):
        assert request.response_format is None
        assert not written(await sent(serve, provider, request))


async def test_the_description_and_strict_go_where_openai_takes_them(serve: Serve) -> None:
    """OpenAI's wires carry them (only when set); Anthropic and Gemini have no place for
    the name, the description or `strict`: they always follow the schema."""
    output = JsonSchema(name="weather", schema=SCHEMA, description="today's", strict=True)
    fields = {"name": "weather", "description": "today's", "schema": SCHEMA, "strict": True}
    chat = await sent(serve, "openai", ask(response_format=output))
    assert chat["response_format"] == {"type": "json_schema", "json_schema": fields}
    responses = await sent(serve, "openai-responses", ask(response_format=output))
    assert responses["text"] == {"format": {"type": "json_schema", **fields}}
    anthropic = await sent(serve, "anthropic", ask(response_format=output))
    assert written(anthropic) == FORMS["anthropic"]["schema"]
    google = await sent(serve, "google", ask(response_format=output))
    assert written(google) == FORMS["google"]["schema"]


# -- the chat presets -------------------------------------------------------------------

CHAT_PRESETS = [
    "openai",
    "azure-openai",
    "openrouter",
    "nvidia",
    "moonshot",
    "groq",
    "mistral",
    "vllm",
    "ollama",
    "llamacpp",
    "xai",
    "zai",
    "together",
    "snowflake",
    "custom",
]


@pytest.mark.parametrize("provider", CHAT_PRESETS)
async def test_each_chat_preset_writes_the_chat_form(serve: Serve, provider: str) -> None:
    """Every compatible endpoint takes Chat Completions' `response_format` by its
    reference (Ollama's /v1 lists it among its "Supported request fields"; vLLM,
    llama-server, Groq, Mistral, Together, xAI, OpenRouter document both types); one that
    refuses a type answers 400 naming the key, which a degraded retry drops (below)."""
    assert written(await sent(serve, provider, ask(response_format="json"))) == CHAT_JSON
    assert written(await sent(serve, provider, ask(response_format=WEATHER))) == CHAT_SCHEMA


async def test_deepseek_takes_json_mode(serve: Serve) -> None:
    body = await sent(serve, "deepseek", ask(response_format="json"))
    assert written(body) == CHAT_JSON


async def test_deepseek_refuses_a_schema_before_sending(serve: Serve) -> None:
    """ "response_format.type `json_schema` is unavailable now": a ConfigError at the
    call, which a fallback skips, rather than a 422 whose degraded retry answers in
    prose."""
    recorder = Recorder()
    async with rxllm.provider("deepseek", api_key=KEY, base_url=await serve(recorder.handle)) as p:
        with pytest.raises(rxllm.ConfigError, match="deepseek takes no JSON Schema"):
            await p.complete(ask(response_format=WEATHER))
    assert not recorder.requests


# -- Anthropic's schema-only format ----------------------------------------------------


async def test_anthropic_refuses_json_mode_before_sending(serve: Serve) -> None:
    """Its one format type is `json_schema`, and its objects must be closed
    (`additionalProperties: false`): `{"type": "object"}` would allow only `{}`. So JSON
    mode is a ConfigError at the call, not a request."""
    recorder = Recorder()
    async with rxllm.provider("anthropic", api_key=KEY, base_url=await serve(recorder.handle)) as p:
        with pytest.raises(rxllm.ConfigError, match="anthropic has no JSON mode without a schema"):
            await p.complete(ask(response_format="json"))
    assert not recorder.requests


# -- the SDKs' dicts and pydantic models ----------------------------------------------


class Weather(BaseModel):
    city: str
    celsius: float


@pytest.mark.parametrize(
    ("given", "value"),
    [
        ({"type": "text"}, None),
        ({"type": "json_object"}, "json"),
        (
            {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}},
            WEATHER,
        ),
        (
            {
                "type": "json_schema",
                "json_schema": {
                    "name": "weather",
                    "description": "today's",
                    "schema": SCHEMA,
                    "strict": True,
                },
            },
            JsonSchema(name="weather", description="today's", schema=SCHEMA, strict=True),
        ),
        ({"type": "json_schema", "name": "weather", "schema": SCHEMA}, WEATHER),
        (
            {"type": "json_schema", "name": "weather", "schema": SCHEMA, "strict": False},
            JsonSchema(name="weather", schema=SCHEMA, strict=False),
        ),
        ({"name": "weather", "schema": SCHEMA}, WEATHER),
        (  # Anthropic's `output_config.format`, which names no schema
            {"type": "json_schema", "schema": SCHEMA},
            JsonSchema(name="response", schema=SCHEMA),
        ),
        (
            {"type": "json_schema", "schema": {**SCHEMA, "title": "Paris weather"}},
            JsonSchema(name="Paris_weather", schema={**SCHEMA, "title": "Paris weather"}),
        ),
        ("json", "json"),
        (WEATHER, WEATHER),
    ],
)
def test_the_sdks_format_dicts_read_as_the_field(given: Any, value: Any) -> None:
    """Chat Completions' `response_format` and the Responses `text.format`, as their
    users write them."""
    assert ask(response_format=given).response_format == value


def test_a_pydantic_model_class_is_its_json_schema_named_after_it() -> None:
    output = ask(response_format=Weather).response_format
    assert output == JsonSchema(name="Weather", schema=Weather.model_json_schema())


Item = TypeVar("Item")


class Page(BaseModel, Generic[Item]):
    """A generic model: its class name, `Page[int]`, is no name OpenAI takes."""

    items: list[Item]


def test_a_generic_model_class_is_named_as_openai_takes_names() -> None:
    output = ask(response_format=Page[int]).response_format
    assert isinstance(output, JsonSchema) and output.name == "Page_int_"


@pytest.mark.parametrize("dump", ["python", "json"])
def test_a_request_with_a_schema_loads_back_from_its_dump(dump: str) -> None:
    request = ask(response_format=WEATHER)
    if dump == "json":
        again = rxllm.ChatRequest.model_validate_json(request.model_dump_json())
    else:
        again = rxllm.ChatRequest.model_validate(request.model_dump())
    assert again == request
    assert request.model_dump()["response_format"]["schema"] == SCHEMA


class Place(BaseModel):
    city: str = Field(min_length=1, description="Where.")


class Forecast(BaseModel):
    place: Place
    celsius: float = Field(ge=-90, le=60)
    days: list[str] = Field(min_length=2)


async def test_anthropic_gets_a_model_schema_with_closed_objects(serve: Serve) -> None:
    """Anthropic's JSON outputs refuse an object without `additionalProperties: false`
    and numerical, string and array constraints (400); a pydantic model's schema says
    neither, so every object is closed and the constraints go into the description,
    as Anthropic's SDKs send them. The schema given is left as it was."""
    given = Forecast.model_json_schema()
    body = await sent(serve, "anthropic", ask(response_format=Forecast))
    schema = body["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Place"]["additionalProperties"] is False
    city = schema["$defs"]["Place"]["properties"]["city"]
    assert city == {"description": "Where.\n\n{minLength: 1}", "title": "City", "type": "string"}
    celsius = schema["properties"]["celsius"]
    assert "minimum" not in celsius and "maximum" not in celsius
    assert celsius["description"] in ("{minimum: -90, maximum: 60}", "{maximum: 60, minimum: -90}")
    assert schema["properties"]["days"]["description"] == "{minItems: 2}"
    assert given == Forecast.model_json_schema() and "additionalProperties" not in given


async def test_anthropic_keeps_a_schema_that_sets_its_own_additional_properties(
    serve: Serve,
) -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}
    body = await sent(serve, "anthropic", ask(response_format={"name": "m", "schema": schema}))
    assert body["output_config"]["format"]["schema"] == schema


@pytest.mark.parametrize("provider", sorted(FORMS))
async def test_an_sdks_dict_reaches_each_wire_in_its_own_form(serve: Serve, provider: str) -> None:
    """The openai SDK's chat dict, given once, goes to Anthropic and Gemini as theirs."""
    given = {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}}
    body = await sent(serve, provider, ask(response_format=given))
    assert written(body) == FORMS[provider]["schema"]


async def test_a_pydantic_model_reaches_gemini_as_its_schema(serve: Serve) -> None:
    body = await sent(serve, "google", ask(response_format=Weather))
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": Weather.model_json_schema(),
    }


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"type": "json_schema", "json_schema": {"schema": SCHEMA}}, "has no name"),
        ({"type": "grammar", "grammar": "root ::= x"}, "is not a format the field holds"),
        ({"type": "json_object", "schema": SCHEMA}, "is not a format the field holds"),
        (
            {"type": "json_schema", "json_schema": {"name": "w", "schema": {}, "x": 1}},
            "is not a format the field holds",
        ),
        ({"type": "json_schema", "name": "w"}, "is not a format the field holds"),
        ({"name": "a name with spaces", "schema": SCHEMA}, "should match pattern"),
        ("text", "response_format takes 'json'.*got 'text'; leave it unset for text"),
    ],
)
def test_a_format_the_field_cannot_hold_is_refused_at_construction(given: Any, says: str) -> None:
    """Another format (a grammar, vLLM's `structural_tag`, Together's schema beside
    `json_object`) goes in params, in the form of the provider it is sent to."""
    with pytest.raises(ValueError, match=says):
        ask(response_format=given)


async def test_another_format_in_params_goes_as_given(serve: Serve) -> None:
    own = {"type": "json_object", "schema": SCHEMA}  # Together's older form
    body = await sent(serve, "together", ask(params={"response_format": own}))
    assert body["response_format"] == own


# -- set twice --------------------------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(FORMS))
@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"response_format": {"type": "json_object"}}, "params['response_format']"),
        ({"text": {"format": {"type": "json_object"}}}, "params['text']['format']"),
        (
            {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}},
            "params['output_config']['format']",
        ),
        ({"output_format": {"type": "json_schema", "schema": SCHEMA}}, "params['output_format']"),
        ({"responseMimeType": "application/json"}, "params['responseMimeType']"),
        ({"response_schema": {"type": "OBJECT"}}, "params['response_schema']"),
        (
            {"generationConfig": {"responseJsonSchema": SCHEMA}},
            "params['generationConfig']['responseJsonSchema']",
        ),
        (
            {"generation_config": {"response_mime_type": "text/plain"}},
            "params['generation_config']['response_mime_type']",
        ),
    ],
)
async def test_the_format_also_in_params_is_set_twice(
    serve: Serve, provider: str, params: dict[str, Any], where: str
) -> None:
    """Under any wire's name, on every wire: a fallback shares one request, and one
    wire's form is another's 400 or a key a degraded retry drops, the answer in prose."""
    with pytest.raises(rxllm.ConfigError, match="response_format is set twice") as raised:
        await sent(serve, provider, ask(response_format=WEATHER, params=params))
    assert where in str(raised.value)


async def test_the_responses_verbosity_stays_beside_the_format(serve: Serve) -> None:
    body = await sent(
        serve,
        "openai-responses",
        ask(response_format="json", params={"text": {"verbosity": "low"}}),
    )
    assert body["text"] == {"verbosity": "low", "format": {"type": "json_object"}}


async def test_anthropics_effort_stays_beside_the_format(serve: Serve) -> None:
    body = await sent(
        serve,
        "anthropic",
        ask(response_format=WEATHER, params={"output_config": {"effort": "low"}}),
    )
    assert body["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA},
    }


@pytest.mark.parametrize(
    "params",
    [{"temperature": 0.2}, {"generationConfig": {"temperature": 0.2}}],
)
async def test_geminis_other_generation_settings_stay_beside_the_format(
    serve: Serve, params: dict[str, Any]
) -> None:
    body = await sent(serve, "google", ask(response_format="json", params=params))
    assert body["generationConfig"] == {"temperature": 0.2, "responseMimeType": "application/json"}


async def test_other_settings_of_those_keys_alone_are_no_format(serve: Serve) -> None:
    """A `text` with only `verbosity`, an `output_config` with only `effort`, go as given
    with the field unset."""
    responses = await sent(serve, "openai-responses", ask(params={"text": {"verbosity": "low"}}))
    assert responses["text"] == {"verbosity": "low"}
    anthropic = await sent(serve, "anthropic", ask(params={"output_config": {"effort": "low"}}))
    assert anthropic["output_config"] == {"effort": "low"}


# -- across a fallback, and through a degraded retry --------------------------------------

OPENAI_OVERLOADED = (
    503,
    {"error": {"message": "The engine is currently overloaded", "type": "server_error"}},
)
ANTHROPIC_OVERLOADED = (
    529,
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
)


async def test_a_fallback_sends_each_provider_its_own_form(serve: Serve) -> None:
    """OpenAI chat overloaded, then Anthropic overloaded, then Gemini: each gets the
    schema as it reads it (with OpenAI's `response_format` in params, Anthropic would
    answer 400 "Extra inputs are not permitted", Gemini "Unknown name")."""
    openai, anthropic, google = (
        Recorder(OPENAI_OVERLOADED),
        Recorder(ANTHROPIC_OVERLOADED),
        Recorder(answers=ANSWERS),
    )
    legs = [
        rxllm.provider(name, api_key=KEY, base_url=await serve(recorder.handle), max_attempts=1)
        for name, recorder in (("openai", openai), ("anthropic", anthropic), ("google", google))
    ]
    events = [e async for e in rxllm.fallback(legs).astream(ask(response_format=Weather))]
    for leg in legs:
        await leg.aclose()
    assert events[-1].type == "done" and events[-1].provider == "google"
    assert [e.next_provider for e in events if e.type == "retry"] == ["anthropic", "google"]
    schema = Weather.model_json_schema()
    [to_openai], [to_anthropic], [to_google] = (r.requests for r in (openai, anthropic, google))
    assert written(to_openai["body"]) == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Weather", "schema": schema},
        }
    }
    closed = {**schema, "additionalProperties": False}  # as Anthropic takes objects
    assert written(to_anthropic["body"]) == {
        "output_config": {"format": {"type": "json_schema", "schema": closed}}
    }
    assert written(to_google["body"]) == {
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema}
    }


async def test_a_fallback_skips_anthropic_for_json_mode(serve: Serve) -> None:
    """The leg that cannot express the request is skipped at the call: nothing reaches
    Anthropic, and Gemini answers in JSON mode."""
    openai, anthropic, google = Recorder(OPENAI_OVERLOADED), Recorder(), Recorder(answers=ANSWERS)
    legs = [
        rxllm.provider(name, api_key=KEY, base_url=await serve(recorder.handle), max_attempts=1)
        for name, recorder in (("openai", openai), ("anthropic", anthropic), ("google", google))
    ]
    record = await rxllm.fallback(legs).complete(ask(response_format="json"))
    for leg in legs:
        await leg.aclose()
    assert record.ok and record.provider == "google"
    assert not anthropic.requests
    assert written(openai.requests[0]["body"]) == CHAT_JSON
    assert written(google.requests[0]["body"]) == FORMS["google"]["json"]


REJECTIONS = Path(__file__).parent / "rejections_extra"


async def test_a_degraded_retry_drops_the_format_by_its_body_key(serve: Serve) -> None:
    """Cerebras refuses a schema's keywords ("Unsupported JSON schema fields: {'minItems',
    'items'}", param `response_format`): the retry drops `response_format`, as it would the
    key given in params, and says so in its `retry` event."""
    case = json.loads(
        (
            REJECTIONS / "cerebras__unsupported_json_schema_fields_param_response_format.json"
        ).read_text()
    )
    recorder = Recorder((case["status"], json.loads(case["body"])))
    async with rxllm.provider(
        "custom", api_key=KEY, base_url=await serve(recorder.handle), allow_private_network=True
    ) as p:
        events = [e async for e in p.astream(ask(response_format=WEATHER))]
    assert events[-1].type == "done"
    [retry] = [e for e in events if e.type == "retry"]
    assert retry.dropped == ["response_format"] and retry.reason.status == 400
    first, second = (r["body"] for r in recorder.requests)
    assert first["response_format"] == CHAT_SCHEMA["response_format"]
    assert "response_format" not in second and second["messages"] == first["messages"]


# -- the command line -----------------------------------------------------------------


async def run_cli(*args: str) -> tuple[int, str]:
    """`rxllm stream` as a user runs it, without blocking the loop that serves it: its
    exit status and stderr."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rxllm.cli",
        "stream",
        "The weather in Paris?",
        "--no-tools",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(child.communicate(), timeout=120)
    assert b"Traceback" not in err, err.decode()
    assert child.returncode is not None
    return child.returncode, err.decode()


async def test_the_cli_sends_a_schema_file_named_after_it(serve: Serve, tmp_path: Path) -> None:
    recorder = Recorder(answers=ANSWERS)
    url = await serve(recorder.handle)
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(SCHEMA))
    args = ("--api-key", KEY, "--base-url", url, "--json-schema", str(path))
    code, err = await run_cli("--provider", "openai", *args)
    assert code == 0, err
    code, err = await run_cli(
        "--provider", "google", "--json-mode", "--api-key", KEY, "--base-url", url
    )
    assert code == 0, err
    to_openai, to_google = (r["body"] for r in recorder.requests)
    assert written(to_openai) == CHAT_SCHEMA
    assert written(to_google) == FORMS["google"]["json"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            '{"type": "json_schema", "json_schema": {"schema": {}}}',
            "--json-schema: response_format",
        ),
        ("[1, 2]", "a JSON Schema is an object"),
        ("{", "not JSON"),
        ('{"type": "text"}', "asks for plain text"),
    ],
)
async def test_the_cli_refuses_a_schema_file_it_cannot_send(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "weather.json"
    path.write_text(content)
    code, err = await run_cli("--json-schema", str(path))
    assert code == 2 and says in err
