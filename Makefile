# kafka-migration: `make demo` runs a whole migration on embedded clusters; `make test` runs the tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= $(shell command -v python3.11 || command -v python3)
LOCK_HASH := $(shell cat requirements-lock.txt pyproject.toml | sha1sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(LOCK_HASH)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help venv console system-deps compose-config demo test test-unit test-integration test-e2e lint format lock clean bench executor-env

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): requirements-lock.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-deps -r requirements-lock.txt
	$(PY) -m pip install --quiet --no-deps -e . 2>&1 | grep -v Warning || true
	$(PY) -c 'import kafka_migration, spark_jobs'
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP) ## create .venv and install the pinned dependencies (idempotent)

# The operator's console: a React bundle the Airflow UI loads from the plugin (kafka_migration/airflow/console/www).
CONSOLE := kafka_migration/airflow/console/www
CONSOLE_BUNDLE := $(CONSOLE)/dist/console.umd.cjs
CONSOLE_MODULES := $(CONSOLE)/node_modules/.installed-$(shell cat $(CONSOLE)/package-lock.json | sha1sum | cut -c1-12)

$(CONSOLE_MODULES): $(CONSOLE)/package-lock.json $(CONSOLE)/package.json
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js 20.19 or later with npm (Debian: apt-get install nodejs npm)"; exit 1; }
	cd $(CONSOLE) && npm ci --no-audit --no-fund --loglevel=error
	@rm -f $(CONSOLE)/node_modules/.installed-*
	@touch $@

$(CONSOLE_BUNDLE): $(CONSOLE_MODULES) $(CONSOLE)/vite.config.ts $(CONSOLE)/tsconfig.json $(shell find $(CONSOLE)/src -type f 2>/dev/null)
	cd $(CONSOLE) && npm run --silent build

console: $(CONSOLE_BUNDLE) ## build the console's React bundle (npm ci from the lockfile, type check, vite build)

system-deps: ## Debian packages the tests use: chromium (browser tests), docker-compose (compose file check); as root
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	{ docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || missing="$$missing docker-compose"; \
	if [ -z "$$missing" ]; then \
		echo "system-deps: chromium and docker compose present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	else \
		echo "missing:$$missing; as root run: apt-get update && apt-get install -y --no-install-recommends$$missing"; \
		echo "(without them the browser and compose-config tests are skipped, or fail when CI is set)"; \
	fi

compose-config: ## validate docker-compose.yaml (docker compose config, no engine needed) and its unit tests
	@if docker compose version >/dev/null 2>&1; then docker compose config --quiet; \
	elif command -v docker-compose >/dev/null 2>&1; then docker-compose config --quiet; \
	else echo "docker compose / docker-compose missing: make system-deps"; exit 1; fi
	$(MAKE) --no-print-directory venv
	$(PY) -m pytest -q tests/unit/test_compose.py tests/unit/test_compose_scripts.py

demo: venv console ## run the kafka_migration DAG on two embedded clusters and verify it
	$(PY) harness/demo.py

test: venv console lint system-deps ## lint, then every test tier (unit, integration, spark, end-to-end)
	$(PY) -m pytest

test-unit: venv ## fast tests without brokers or Spark
	$(PY) -m pytest -m "not integration and not spark and not e2e"

test-integration: venv ## tests against embedded brokers (and spark-submit)
	$(PY) -m pytest -m "integration or spark"

test-e2e: venv console system-deps ## end-to-end tests through Airflow
	$(PY) -m pytest -m e2e

bench: venv ## benchmark: Spark copy/verify vs single-process baselines, local mode and a standalone cluster (ARGS=--quick: smoke run)
	$(PY) -m harness.bench $(ARGS)

executor-env: venv ## pack the executor environment for Spark clusters into dist/kafka-migration-executor-env.tar.gz
	$(VENV)/bin/kafka-migrate package-env --output dist/kafka-migration-executor-env.tar.gz

lint: venv ## ruff lint and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: venv ## apply ruff fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

lock: ## re-resolve requirements.txt into requirements-lock.txt
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.txt
	(echo "# Complete resolved dependency set, installed with pip --no-deps (see requirements.txt). Regenerate: make lock"; \
	 .lock-venv/bin/pip freeze --exclude-editable | grep -v '^pyspark-client==') > requirements-lock.txt
	rm -rf .lock-venv

clean: ## remove the virtualenv and local state
	rm -rf $(VENV) .state .pytest_cache .ruff_cache $(CONSOLE)/node_modules $(CONSOLE)/dist
