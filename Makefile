# hitforge: `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit services-start services-stop clean bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hitforge demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The whole suite twice: on the embedded default (SQLite + kombu's SQLAlchemy
# broker), then on PostgreSQL + Redis. scripts/test-services.sh installs them
# and Chromium (apt) when missing and starts private instances on spare ports.
test: $(STAMP) lint typecheck
	scripts/test-services.sh start
	set -a; eval "$$(scripts/test-services.sh env)"; set +a; \
	  $(BIN)/pytest -q && HITFORGE_TEST_BACKEND=postgres $(BIN)/pytest -q; rc=$$?; \
	  scripts/test-services.sh stop; exit $$rc

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
