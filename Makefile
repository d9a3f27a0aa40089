# hitforge: `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit services-start services-stop clean bench cdn-libraries test-tools

# Each step says what it is doing, and pip lists every package as it fetches and
# installs it (with its download bar on a terminal): the first install takes minutes.
$(STAMP): pyproject.toml
	@echo "==> [1/3] creating the virtual environment $(VENV)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] upgrading pip"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "==> [3/3] installing hitforge and its dependencies (a few minutes the first time)"
	@$(BIN)/python -m pip install --progress-bar on --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)
	@echo "==> installed; next: $(BIN)/hitforge"

# jQuery, jQuery UI, Bootstrap and Font Awesome for HIT pages that load them from public CDNs
# (server/cdn/package.json, installed with npm; the script skips it when already up to date).
cdn-libraries:
	@scripts/cdn-libraries.sh

# axe-core for the browser tests' accessibility checks (tests/browser/axe/package.json, npm).
test-tools:
	@scripts/test-tools.sh

demo: $(STAMP) cdn-libraries
	@echo "==> running the demo campaign (server, Celery worker, simulated crowd)"
	$(BIN)/hitforge demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The whole suite twice, at once: on the embedded default (SQLite + kombu's
# SQLAlchemy broker) and on PostgreSQL + Redis (scripts/test-both-backends.sh).
# scripts/test-services.sh installs them and Chromium (apt) when missing and
# starts private instances on spare ports.
test: $(STAMP) cdn-libraries test-tools lint typecheck
	scripts/test-services.sh start
	set -a; eval "$$(scripts/test-services.sh env)"; set +a; \
	  BIN=$(BIN) scripts/test-both-backends.sh; rc=$$?; \
	  scripts/test-services.sh stop; exit $$rc

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
