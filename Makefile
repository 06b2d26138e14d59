# `make demo` streams one chat turn; `make test` runs linters, types and tests.
# Both create .venv and install what they need on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rxllm stream --provider openai "What's the weather in Paris? Think first, then call the tool."
	@echo
	@echo "# A recovered turn: the local provider refuses 'temperature' before any output; rxllm retries without it."
	$(BIN)/rxllm stream --provider local --model fault/reject_param --param temperature=0.2 --no-tools "Say hello."

lint: $(STAMP)
	$(BIN)/ruff check rxllm tests benchmarks
	$(BIN)/ruff format --check rxllm tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
