# kafka-migration: `make demo` runs a whole migration on Apache Kafka clusters; `make test` runs the tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= $(shell command -v python3.11 || command -v python3)
LOCK_HASH := $(shell cat requirements-lock.txt pyproject.toml | sha1sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(LOCK_HASH)
# The Apache Kafka jar set of the tests, demo and bench (harness/kafka/pom.xml), fetched once per pom.
KAFKA_POM := harness/kafka/pom.xml
KAFKA_VERSION := $(shell sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' $(KAFKA_POM))
KAFKA_STAMP := .kafka/$(KAFKA_VERSION)/.fetched-$(shell sha1sum $(KAFKA_POM) | cut -c1-12)
# The schema registry of the tests (Apicurio Registry, harness/registry/pom.xml), fetched and unpacked once per pom.
REGISTRY_POM := harness/registry/pom.xml
REGISTRY_VERSION := $(shell sed -n 's:.*<registry.version>\(.*\)</registry.version>.*:\1:p' $(REGISTRY_POM))
REGISTRY_STAMP := .registry/$(REGISTRY_VERSION)/.fetched-$(shell sha1sum $(REGISTRY_POM) | cut -c1-12)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help requirements venv kafka-jars registry clusters clusters-stop console console-types console-types-check console-lint system-deps compose-config demo test test-unit test-integration test-e2e mutate lint format lock clean bench executor-env docs docs-check

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): requirements-lock.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-deps -r requirements-lock.txt
	@# setuptools prints a notice about folders named like the package on every editable install of a flat
	@# layout: kept in a log, shown (with the error) only when the install fails.
	$(PY) -m pip install --quiet --no-deps -e . > $(VENV)/editable-install.log 2>&1 || { cat $(VENV)/editable-install.log; exit 1; }
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

# The console's API types (www/src/api/openapi.ts) are generated from the API's pydantic models through its OpenAPI
# description (www/openapi.json; console/openapi.py, then openapi-typescript) and checked in.
CONSOLE_TYPES := openapi.json src/api/openapi.ts

console-types: venv $(CONSOLE_MODULES) ## regenerate the console's API types from the API's models (commit them)
	$(PY) -m kafka_migration.airflow.console.openapi $(CONSOLE)/openapi.json
	cd $(CONSOLE) && npm run --silent types

console-types-check: venv $(CONSOLE_MODULES) ## fail when the checked-in API types differ from what the API's models give now
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && mkdir -p "$$scratch/src/api" \
	&& $(PY) -m kafka_migration.airflow.console.openapi "$$scratch/openapi.json" \
	&& (cd $(CONSOLE) && npx --no-install openapi-typescript "$$scratch/openapi.json" --output "$$scratch/src/api/openapi.ts" >/dev/null) \
	&& for f in $(CONSOLE_TYPES); do \
		if ! diff -u "$(CONSOLE)/$$f" "$$scratch/$$f" >"$$scratch/drift"; then head -40 "$$scratch/drift"; \
		echo "The console's API types are out of date ($(CONSOLE)/$$f): run make console-types and commit them."; exit 1; fi; done

console: console-types-check $(CONSOLE_BUNDLE) ## build the console's React bundle (npm ci, API types checked against the API, type check, vite build)

console-lint: $(CONSOLE_MODULES) ## the console's ESLint (typescript-eslint, React hooks) and TypeScript type check
	cd $(CONSOLE) && npm run --silent lint && npm run --silent typecheck

system-deps: ## Debian packages the tests use (a JDK 17, maven, postgresql, chromium, chromium-driver, docker-compose); installs the missing ones as root
	@present=""; missing=""; \
	check() { if eval "$$2" >/dev/null 2>&1; then present="$$present $$1"; else missing="$$missing $$1"; fi; }; \
	check openjdk-17-jdk-headless 'command -v java && command -v javac'; \
	check maven 'command -v mvn'; \
	check postgresql 'command -v initdb || ls /usr/lib/postgresql/*/bin/initdb'; \
	check chromium 'command -v chromium'; \
	check chromium-driver 'command -v chromedriver'; \
	check docker-compose 'docker compose version || command -v docker-compose'; \
	echo "system-deps: already there:$${present:- none}"; \
	if [ -z "$$missing" ]; then \
		echo "system-deps: nothing to install"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "system-deps: installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
			&& echo "system-deps: installed:$$missing"; \
	else \
		echo "system-deps: missing:$$missing; as root run: apt-get update && apt-get install -y --no-install-recommends$$missing"; \
		echo "(without them the tests that need them are skipped, or fail when CI is set)"; \
	fi

$(KAFKA_STAMP): $(KAFKA_POM) | $(STAMP)
	$(PY) -m harness.kafka jars

kafka-jars: $(KAFKA_STAMP) ## fetch the pinned Apache Kafka jars with Maven into .kafka/ (once, like the venv)

$(REGISTRY_STAMP): $(REGISTRY_POM) | $(STAMP)
	$(PY) -m harness.registry fetch

registry: $(REGISTRY_STAMP) ## fetch the pinned Apicurio Registry (the tests' schema registry) with Maven into .registry/ (once)

compose-config: ## validate docker-compose.yaml (docker compose config, no engine needed) and its unit tests
	@if docker compose version >/dev/null 2>&1; then docker compose config --quiet; \
	elif command -v docker-compose >/dev/null 2>&1; then docker-compose config --quiet; \
	else echo "docker compose / docker-compose missing: make system-deps"; exit 1; fi
	$(MAKE) --no-print-directory venv
	$(PY) -m pytest -q tests/unit/test_compose.py tests/unit/test_compose_scripts.py

requirements: ## check that the machine has what make demo needs (Python 3.11, Java 17, Maven, Node.js 20.19 with npm): one line naming what is missing
	@$(PYTHON) harness/requirements.py demo

demo: requirements venv kafka-jars console ## run the kafka_migration DAG on two Apache Kafka clusters and verify it (DEMO_BROKER=embedded: the fast embedded broker)
	$(PY) harness/demo.py

test: venv console lint docs-check system-deps kafka-jars registry ## lint, the docs built strictly, then every test tier (unit, integration, spark, end-to-end) on Apache Kafka
	$(PY) -m pytest

test-unit: venv ## fast tests without brokers or Spark
	$(PY) -m pytest -m "not integration and not spark and not e2e"

test-integration: venv kafka-jars registry ## tests against Apache Kafka brokers and schema registries (and spark-submit)
	$(PY) -m pytest -m "integration or spark"

test-e2e: venv console system-deps kafka-jars ## end-to-end tests through Airflow
	$(PY) -m pytest -m e2e

# Mutation testing (docs/development.md): mutmut 3.8.1 as [tool.mutmut] in pyproject.toml configures it, from a fresh
# mutants/ each time (mutmut keeps a survivor's verdict until its function changes, even when new tests would kill it).
MUTANTS ?=
MUTATE_JOBS ?= $(shell nproc)
mutate: venv ## mutation testing of the modules whose verdicts users sign, with their unit tests; fails on a survivor not in tests/mutation/equivalent.txt (MUTANTS='kafka_migration.run.losses.*': one module; minutes; not in make test)
	rm -rf mutants && mkdir mutants
	@echo "mutmut run $(MUTANTS) with $(MUTATE_JOBS) workers (its output: mutants/mutmut-run.log)"
	@nice -n 10 $(VENV)/bin/mutmut run --max-children $(MUTATE_JOBS) $(if $(MUTANTS),"$(MUTANTS)") > mutants/mutmut-run.log 2>&1 \
		|| { tail -c 4000 mutants/mutmut-run.log; echo; echo "mutmut run failed: mutants/mutmut-run.log"; exit 1; }
	@grep -ao '[0-9.]* mutations/second' mutants/mutmut-run.log | tail -1
	$(PY) -m tests.mutation.score $(if $(MUTANTS),--only "$(MUTANTS)")

CLUSTERS_KIND = $(or $(KIND),plaintext)
CLUSTERS_PORTS = $(or $(PORTS),19092$(comma)29092)
comma := ,
clusters: venv kafka-jars $(if $(REGISTRY),registry) ## start a local source (127.0.0.1:19092) and target (127.0.0.1:29092) in the background (KIND=sasl|mtls|acl; acl: the source holds SCRAM users, ACL bindings and quotas for access sync, their passwords in .clusters/scram-passwords.json; PORTS=S,T; WHICH=source|target: start only that one again, on its data; REGISTRY=1: a schema registry each, 127.0.0.1:18081 and :28081)
	$(PY) -m harness.kafka up --kind $(CLUSTERS_KIND) --ports $(CLUSTERS_PORTS)$(if $(WHICH), --which $(WHICH))
	$(if $(REGISTRY),$(PY) -m harness.registry up)

clusters-stop: ## stop the clusters (and registries) 'make clusters' started (WHICH=source|target: only that cluster, a clean shutdown; the other keeps running)
	$(if $(WHICH),,$(PY) -m harness.registry down)
	$(PY) -m harness.kafka down$(if $(WHICH), --which $(WHICH))

bench: venv kafka-jars ## benchmark: Spark copy/verify vs single-process baselines, local mode and a standalone cluster (ARGS=--quick: smoke run)
	$(PY) -m harness.bench $(ARGS)

executor-env: venv ## pack the executor environment for Spark clusters into dist/kafka-migration-executor-env.tar.gz
	$(VENV)/bin/kafka-migrate package-env --output dist/kafka-migration-executor-env.tar.gz

docs: venv ## build the documentation site from docs/ into site/ (open site/index.html)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build

docs-check: venv ## build the documentation site strictly: a broken link, a missing page or anchor fails
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

lint: venv console-lint ## ruff lint and format check; the console's ESLint and type check
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
	rm -rf $(VENV) .kafka .registry .state .pytest_cache .ruff_cache site $(CONSOLE)/node_modules $(CONSOLE)/dist
