"""What `import rxllm` does and does not do, which its CPU cost depends on.

Each check runs in a fresh interpreter (this one has imported everything). No time is
asserted: `python -m benchmarks.scale --scenario import` measures that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rxllm import request, secrets

_ROOT = Path(__file__).resolve().parent.parent

# Modules a plain chat stream does not need: each loads on first use.
_NOT_AT_IMPORT = (
    "rxllm.cli",
    "rxllm.display",
    "rxllm.local",
    "rxllm.serving",
    "rxllm.testing",
    "rxllm.viz",
    "rxllm.providers.openai_chat",  # wire protocols load when a provider is named
    "rxllm.providers.anthropic",
    "matplotlib",
    "opentelemetry",
    "redis",
    "IPython",
    "html",  # only an HTML error page is unescaped
    "reactivex.operators",  # only `rxllm.replay` uses RxPY's operators
    "rxllm.sources.replay",  # and reads a recording
    "rxllm.pipeline.sniff",  # and sniffs its wire
)


# Modules read only on rare paths (an error body, a rejection, a redirect or headers of the
# user's own): their patterns compile on first use, through `re`'s own cache.
_NO_PATTERN_AT_IMPORT = ("rxllm.error_body", "rxllm.degradation", "rxllm.sources.redirects")


def _fresh(code: str) -> object:
    """What `code` prints as JSON, run by a fresh interpreter from the repository root."""
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=_ROOT
    )
    return json.loads(out.stdout)


def test_import_loads_nothing_a_chat_stream_does_not_need() -> None:
    modules = _fresh("import json, sys, rxllm; print(json.dumps(sorted(sys.modules)))")
    assert isinstance(modules, list)
    loaded = [name for name in _NOT_AT_IMPORT if name in modules]
    assert loaded == []


def test_event_models_build_their_schema_on_first_use_and_request_models_at_import() -> None:
    """Events are built with `make` on the hot path, so no stream needs their pydantic
    schema (only `model_validate`, `model_dump` and `EventAdapter` do). A request is
    validated on every turn, so its models are built at import, not by the first turn."""
    complete = _fresh(
        "import json, rxllm\n"
        "from rxllm.events import EventAdapter\n"
        "names = [n for n in rxllm.__all__ if hasattr(getattr(rxllm, n), 'model_fields')]\n"
        "built = {n: getattr(rxllm, n).__pydantic_complete__ for n in names}\n"
        "built['EventAdapter'] = EventAdapter.pydantic_complete\n"
        "print(json.dumps(built))"
    )
    assert isinstance(complete, dict)
    eager = {
        "ChatRequest",
        "ImagePart",
        "JsonSchema",
        "Message",
        "ReasoningPart",
        "ServerToolPart",
        "TextPart",
        "Tool",
        "ToolCall",
    }
    assert {name for name, built in complete.items() if built} == eager


def test_a_turn_record_needs_no_event_schema() -> None:
    """`complete()` folds the events into a `StreamRecord` with `make`: the first turn
    does not pay for building the record's schema (every event type is in it)."""
    complete = _fresh(
        "import json\n"
        "from rxllm.events import Done, StreamRecord, TextDelta, Usage, UsageUpdate\n"
        "from rxllm.pipeline.record import RecordBuilder\n"
        "builder = RecordBuilder('openai', 'm')\n"
        "builder.add(TextDelta.make(provider='openai', text='hi'))\n"
        "builder.add(UsageUpdate.make(provider='openai', usage=Usage.of(input_tokens=1)))\n"
        "builder.add(Done.make(provider='openai', stop_reason='stop'))\n"
        "record = builder.build()\n"
        "assert record.text == 'hi' and record.ok and len(record.attempts) == 1\n"
        "print(json.dumps(StreamRecord.__pydantic_complete__))"
    )
    assert complete is False


def test_import_keeps_rxllm_logging_off_until_the_user_turns_it_on() -> None:
    """`logger.disable("rxllm")` runs at import (loguru's advice for libraries), not on
    first use, so a user's `logger.enable("rxllm")` after the import is never undone."""
    seen = _fresh(
        "import json, sys\n"
        "from loguru import logger\n"
        "seen = []\n"
        "logger.remove()\n"
        "logger.add(lambda message: seen.append(message.record['message']))\n"
        "log = lambda text: exec('logger.warning(text)', "
        "{'__name__': 'rxllm.probe', 'logger': logger, 'text': text})\n"
        "import rxllm\n"
        "log('after import')\n"
        "logger.enable('rxllm')\n"
        "rxllm.provider('openai', api_key='k').http_request(\n"
        "    rxllm.ChatRequest(model='m', messages=[rxllm.Message.user('hi')]))\n"
        "log('enabled, after first use')\n"
        "print(json.dumps(seen))"
    )
    assert seen == ["enabled, after first use"]


def test_import_compiles_no_pattern_that_only_a_rare_path_reads() -> None:
    """Compiling a pattern is parsing it in Python: those of an error, a rejection, a
    redirect, an image part and a credential written in a URL cost `import rxllm` 23 M
    instructions (benchmarks/README.md, twenty-fourth round), and a turn that succeeds
    reads none of them. What every provider reads (`secrets._BASIC`, on its base URL)
    and what a stream reads still compile at import."""
    compiled = _fresh(
        "import json, re, sys\n"
        "seen, compile = [], re.compile\n"
        "def recording(pattern, flags=0):\n"
        "    seen.append([sys._getframe(1).f_globals.get('__name__'), str(pattern)])\n"
        "    return compile(pattern, flags)\n"
        "re.compile = recording\n"
        "import rxllm\n"
        "print(json.dumps(seen))"
    )
    assert isinstance(compiled, list)
    modules = {module for module, _ in compiled}
    assert [module for module in _NO_PATTERN_AT_IMPORT if module in modules] == []
    rare = {  # as text, or compiled (as they were)
        getattr(pattern, "pattern", pattern)
        for pattern in (
            secrets._URL_PASSWORD,
            secrets._QUERY_CREDENTIAL,
            secrets._LOWER_HEX,
            request._IMAGE_URL,
        )
    }
    assert [pattern for _, pattern in compiled if pattern in rare] == []
    assert ["rxllm.secrets", secrets._BASIC.pattern] in compiled  # the test sees compiles
