PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install sandbox-tools test lint bench clean

install: $(BIN)/orchestra sandbox-tools

$(BIN)/orchestra: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp]'
	@touch $(BIN)/orchestra

# bubblewrap for the optional sandbox (`sandbox: {kind: bubblewrap}`): installed with apt-get when missing and we
# are root; never fails the install (without it, the sandbox tests skip and say why).
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "installing bubblewrap (the optional sandbox)"; \
	        apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; } || \
	        echo "warning: could not install bubblewrap; sandbox tests will be skipped"; \
	    else \
	        echo "note: bubblewrap (bwrap) is not installed; the optional sandbox and its tests need it"; \
	    fi; \
	}

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
