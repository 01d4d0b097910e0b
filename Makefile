PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install bytecode sandbox-tools browser fleet-servers cli-agents cxdb-ui a11y test lint bench clean e2e-live

install: $(BIN)/orchestra sandbox-tools browser fleet-servers cli-agents cxdb-ui a11y

$(BIN)/orchestra: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,fleet,otel,acp]'
	$(MAKE) --no-print-directory bytecode
	@touch $(BIN)/orchestra

# Orchestra's own modules compiled once, as pip does for an installed package: an editable install leaves them to
# be compiled on import, and where PYTHONDONTWRITEBYTECODE is set (CI) every `orchestra` process compiled all of
# them again (0.3 s each). Only what changed since is compiled again. The code attrs generates for each class
# is cached beside it (orchestra_cli/attrs_bytecode.py), filled here for the same reason.
PACKAGES := orchestra_core orchestra_adapters orchestra_cli
bytecode:
	@$(BIN)/python -m compileall -q $(PACKAGES)
	@$(BIN)/python -m orchestra_cli.attrs_bytecode >/dev/null

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

# Debian's chromium for the web view's browser tests (tests/e2e/web, driven by Playwright for Python with
# executable_path=/usr/bin/chromium, never `playwright install`): installed with apt-get when missing and we are
# root; never fails the install (without it, those tests skip and say why).
browser:
	@[ -x /usr/bin/chromium ] || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "installing chromium (the web view's browser tests)"; \
	        apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 || \
	        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; } || \
	        echo "warning: could not install chromium; the web view's browser tests will be skipped"; \
	    else \
	        echo "note: /usr/bin/chromium is not installed; the web view's browser tests need it (apt-get install chromium)"; \
	    fi; \
	}

# Debian's redis-server and postgresql for the fleet's tests (tests/support/fleet_servers.py starts throwaway
# servers on loopback and in a temporary directory; the system services are never started): installed with
# apt-get when missing and we are root; never fails the install (without them, those tests skip and say why,
# or fail under CI=1).
fleet-servers:
	@{ command -v redis-server >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "installing redis-server and postgresql (the fleet's tests)"; \
	        apt-get install -y -q --no-install-recommends redis-server postgresql >/dev/null 2>&1 || \
	        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends redis-server postgresql >/dev/null 2>&1; } || \
	        echo "warning: could not install redis-server and postgresql; the fleet's tests will be skipped"; \
	    else \
	        echo "note: redis-server and postgresql are not installed; the fleet's tests need them (apt-get install redis-server postgresql)"; \
	    fi; \
	}

# The real Claude Code, Codex and Gemini CLIs and the Claude Code ACP adapter (pinned in
# tests/cli_agents/package-lock.json) that the CLI and ACP agent backends' tests run offline against fake provider
# APIs: installed again only when one is missing or older than the lock; without npm, a note (those tests skip, or
# fail under CI=1 and say why).
CLI_AGENTS := tests/cli_agents
CLI_AGENT_BINS := claude codex gemini claude-code-acp
cli-agents: $(BIN)/orchestra
	@if [ -z "$$(for bin in $(CLI_AGENT_BINS); do [ -x $(CLI_AGENTS)/node_modules/.bin/$$bin ] || echo $$bin; done)" ] && \
	    [ ! $(CLI_AGENTS)/package-lock.json -nt $(CLI_AGENTS)/node_modules/.bin/claude ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
	    echo "installing the Claude Code, Codex and Gemini CLIs and claude-code-acp into $(CLI_AGENTS)/node_modules"; \
	    npm ci --prefix $(CLI_AGENTS) --no-audit --no-fund --loglevel=error && \
	    touch $(CLI_AGENTS)/node_modules/.bin/claude; \
	else \
	    echo "note: npm is not installed; the tests that run the real claude, codex, gemini and claude-code-acp need it (make install)"; \
	fi

# React 18 (pinned in tests/cxdb_ui/package-lock.json, the version the CXDB UI uses) whose UMD builds host the
# CXDB turn renderers in the browser tests (tests/e2e/web/test_cxdb_renderers.py); without npm, a note.
CXDB_UI := tests/cxdb_ui
cxdb-ui:
	@if [ -f $(CXDB_UI)/node_modules/react/umd/react.development.js ] && \
	    [ ! $(CXDB_UI)/package-lock.json -nt $(CXDB_UI)/node_modules/react/umd/react.development.js ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
	    echo "installing React 18 for the CXDB renderer tests into $(CXDB_UI)/node_modules"; \
	    npm ci --prefix $(CXDB_UI) --no-audit --no-fund --loglevel=error && \
	    touch $(CXDB_UI)/node_modules/react/umd/react.development.js; \
	else \
	    echo "note: npm is not installed; the CXDB renderer browser tests need React 18 from it (make install)"; \
	fi

# axe-core (pinned in tests/a11y/package-lock.json), the accessibility rules the web view's browser tests run
# (tests/e2e/web/test_axe.py); without npm, a note.
A11Y := tests/a11y
a11y:
	@if [ -f $(A11Y)/node_modules/axe-core/axe.min.js ] && \
	    [ ! $(A11Y)/package-lock.json -nt $(A11Y)/node_modules/axe-core/axe.min.js ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
	    echo "installing axe-core for the accessibility tests into $(A11Y)/node_modules"; \
	    npm ci --prefix $(A11Y) --no-audit --no-fund --loglevel=error && \
	    touch $(A11Y)/node_modules/axe-core/axe.min.js; \
	else \
	    echo "note: npm is not installed; the accessibility browser tests need axe-core from it (make install)"; \
	fi

# Two test workers per core (at most 16): most tests wait on the processes they start (git, orchestra, the CLI
# agents, the fleet's servers), so one worker per core left a third of the CPU idle (on 2 cores: 13 min against 10).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); w=$$((n * 2)); [ $$w -gt 16 ] && w=16; echo $$w)
# The fleet's end-to-end tests run after the rest, alone: each starts Celery workers beside its Redis and PostgreSQL
# and times a lost worker's pickup, which three other test workers' load pushed past what the tests allow.
# The web view's screenshots (both themes, the live agents box) are kept in build/screenshots for a person to look at.
test: bytecode
	ORCHESTRA_WEB_SCREENSHOTS=$${ORCHESTRA_WEB_SCREENSHOTS:-$(CURDIR)/build/screenshots} \
	    $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --ignore=tests/e2e/fleet
	$(BIN)/python -m pytest -q tests/e2e/fleet

lint:
	$(BIN)/python -m ruff check orchestra_core orchestra_adapters orchestra_cli tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m mypy

# The adversarial PR review (examples/pr-review) with real models: keys from the environment (ANTHROPIC_API_KEY,
# OPENROUTER_API_KEY), one reviewer through Claude Code when `claude` is installed (yours on PATH, else the pinned
# one of make install). Skipped, with a message saying which keys are missing, without them.
e2e-live:
	@[ -x $(BIN)/orchestra ] || { echo "e2e-live: run make install first"; exit 2; }
	@if [ -n "$${ANTHROPIC_API_KEY:-}" ] && [ -n "$${OPENROUTER_API_KEY:-}" ]; then \
	    $(BIN)/python -c "import langchain_anthropic, langchain_openai" 2>/dev/null || \
	    $(BIN)/python -m pip install --quiet -e '.[anthropic,openai]'; \
	fi
	@PATH="$(CURDIR)/$(BIN):$$PATH:$(CURDIR)/$(CLI_AGENTS)/node_modules/.bin" ORCHESTRA="$(CURDIR)/$(BIN)/orchestra" \
	    sh examples/pr-review/run-live.sh $(DIR)

# The generated 100,000-file repository is made once per bench run (bench/large_repo.py, shared_repo), in a
# directory every script is told of and which goes when the run ends.
bench:
	@repos=$$(mktemp -d -t orchestra-bench-repos-XXXXXX) && trap 'rm -rf "$$repos"' EXIT && \
	for script in bench/bench_*.py; do ORCHESTRA_BENCH_REPOS=$$repos $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
