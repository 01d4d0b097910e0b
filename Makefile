PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install test lint bench clean

install: $(BIN)/orchestra

$(BIN)/orchestra: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp]'
	@touch $(BIN)/orchestra

test:
	$(BIN)/python -m pytest -q -n auto

lint:
	$(BIN)/python -m ruff check orchestra_core orchestra_adapters orchestra_cli tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m mypy

bench:
	@for script in bench/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
