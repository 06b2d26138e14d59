# `make demo` streams one chat turn; `make test` runs linters, types, the docs build and tests.
# Both create .venv and install what they need on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs bench clean

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

# The docs site (mkdocs.yml -> site/, git-ignored); --strict turns every warning, a
# broken link or a docstring mkdocstrings cannot read, into a failure. Offline.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint docs
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build site *.egg-info .mypy_cache .ruff_cache .pytest_cache
