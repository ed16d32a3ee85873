# Two commands: `make run` and `make test`. Everything they need, they install.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test lint setup setup-dev mcp-clients mcp1 frontend schema api-types demo bench bench-autonomy bench-instructions bench-packs bench-policy bench-browser bench-responsiveness cluster worker chromium test-python test-frontend clean

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PIP) install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

# The 1.x-era MCP peers of the live tests (requirements-mcp1.txt): the reference servers mcp-server-time and
# mcp-server-git, and mcp 1.x's own client as an agent of the gateway. They pin mcp 1.x and Coach runs on mcp 2.x,
# so they have a venv of their own; the tests start them from it as stdio commands and subprocesses
# (tests/support/mcp1.py).
VENV_MCP1 := .venv-mcp1

$(VENV_MCP1)/.installed: requirements-mcp1.txt
	test -x $(VENV_MCP1)/bin/python || $(PYTHON) -m venv $(VENV_MCP1)
	$(VENV_MCP1)/bin/pip install --disable-pip-version-check -q -r requirements-mcp1.txt
	touch $@

mcp1: $(VENV_MCP1)/.installed

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The real MCP clients and servers of the gateway's live tests (tests/mcp_clients/package.json: the MCP Inspector's
# CLI, the reference server `everything`); the Python reference servers are .venv-mcp1's (above).
tests/mcp_clients/node_modules/.installed: tests/mcp_clients/package.json tests/mcp_clients/package-lock.json
	cd tests/mcp_clients && npm ci --no-audit --no-fund --loglevel=error
	touch $@

mcp-clients: tests/mcp_clients/node_modules/.installed

frontend/dist/index.html: frontend/node_modules/.installed $(shell find frontend/src frontend/index.html frontend/vite.config.ts -type f 2>/dev/null)
	cd frontend && npm run build --silent

setup: $(VENV)/.runtime frontend/dist/index.html
setup-dev: setup $(VENV)/.dev chromium mcp-clients mcp1

frontend: frontend/dist/index.html

# Debian's Chromium for the browser tests; test tools may not download browsers here.
chromium:
	@test -x $(CHROMIUM) || { echo "installing chromium (apt)"; (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || sudo sh -c 'apt-get update -qq && apt-get install -y -qq chromium >/dev/null'; }

schema: $(VENV)/.runtime
	$(VENV)/bin/flask --app wsgi migrate

# The contract (docs/api.md "The contract"): the server's OpenAPI document, checked in as frontend/src/api/openapi.json,
# and the web app's types generated from it (frontend/src/api/schema.d.ts). Run it after changing an API schema;
# tests/api/test_contract.py and frontend/src/api/schema.test.ts fail until it has run.
api-types: $(VENV)/.runtime frontend/node_modules/.installed
	$(PY) -m api.openapi_document frontend/src/api/openapi.json
	cd frontend && npm run --silent gen:api

# demo credentials unless you set your own; the first admin is only created when no user exists yet
DEMO_EMAIL := admin@coach.local
DEMO_PASSWORD := coach-demo

# the demo's Service check calls this server on 127.0.0.1, which outbound requests refuse unless allowed
# (set COACH_OUTBOUND_ALLOW yourself, even to an empty value, to override). wsgi.py starts Coach's MCP process (asgi.py,
# :5100) beside the web process (:5000); Ctrl-C stops both
run: setup
	COACH_ADMIN_EMAIL="$${COACH_ADMIN_EMAIL:-$(DEMO_EMAIL)}" COACH_ADMIN_PASSWORD="$${COACH_ADMIN_PASSWORD:-$(DEMO_PASSWORD)}" \
		COACH_OUTBOUND_ALLOW="$${COACH_OUTBOUND_ALLOW-127.0.0.1}" \
		COACH_MCP_STDIO_ALLOW="$${COACH_MCP_STDIO_ALLOW-$(abspath $(PY)) $(CURDIR)/demo/orders_mcp.py}" \
		$(abspath $(PY)) wsgi.py

# Several machines, on this one (README "Several machines"): nginx on :8000 with sticky sessions, two servers
# (:5001, :5002) and their MCP processes (:5101, :5102; nginx routes /mcp to them), two Celery workers, PostgreSQL and
# Redis as found on the machine (override the URLs below). The MCP processes' internal token is made per start.
CLUSTER_DIR ?= $(CURDIR)/instance/cluster
CLUSTER_PORT ?= 8000
CLUSTER_DATABASE_URL ?= postgresql://postgres@127.0.0.1:5432/coach_cluster
CLUSTER_REDIS ?= redis://127.0.0.1:6379
CLUSTER_ENV = COACH_CLUSTER_DIR="$(CLUSTER_DIR)" COACH_CLUSTER_PORT=$(CLUSTER_PORT) \
	COACH_DATABASE_URL="$${COACH_DATABASE_URL:-$(CLUSTER_DATABASE_URL)}" \
	COACH_MESSAGE_QUEUE="$${COACH_MESSAGE_QUEUE:-$(CLUSTER_REDIS)/0}" COACH_BROKER_URL="$${COACH_BROKER_URL:-$(CLUSTER_REDIS)/1}" \
	COACH_INSTANCE_DIR="$(CLUSTER_DIR)" COACH_DEMO=0 COACH_PUBLIC_ORIGINS="$${COACH_PUBLIC_ORIGINS-}" \
	COACH_ADMIN_EMAIL="$${COACH_ADMIN_EMAIL:-$(DEMO_EMAIL)}" COACH_ADMIN_PASSWORD="$${COACH_ADMIN_PASSWORD:-$(DEMO_PASSWORD)}" \
	COACH_OUTBOUND_ALLOW="$${COACH_OUTBOUND_ALLOW-127.0.0.1}" \
	COACH_MCP_TOKEN="$${COACH_MCP_TOKEN:-$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(32))')}"

cluster: setup
	@command -v nginx >/dev/null || { echo "installing nginx (apt)"; (apt-get update -qq && apt-get install -y -qq nginx >/dev/null) || sudo sh -c 'apt-get update -qq && apt-get install -y -qq nginx >/dev/null'; }
	$(CLUSTER_ENV) $(PY) config/cluster/prepare.py
	$(CLUSTER_ENV) PATH="$$PATH:/usr/sbin" $(VENV)/bin/honcho start -f config/cluster/Procfile -d $(CURDIR)

# One Celery worker for the servers of this machine's settings (COACH_BROKER_URL, COACH_MESSAGE_QUEUE, the database).
worker: setup
	$(PY) -m celery -A services.worker worker --loglevel=INFO

test: setup-dev
	$(MAKE) --no-print-directory lint test-frontend test-python

# The Python tree's linter and formatter (ruff.toml: `ruff format` fixes what the format check finds), the import
# contracts (.importlinter: api above services above core, core free of frameworks), the type checker (mypy.ini:
# strict on core/, checked on services/ and api/; its cache in .mypy_cache makes a rerun fast), and the web app's
# ESLint (frontend/eslint.config.js) and type check (tsc --noEmit).
lint: $(VENV)/.dev frontend/node_modules/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	cd frontend && npm run --silent lint && npm run --silent typecheck

# In parallel (pytest-xdist), a test file per worker at a time: each worker has its own SQLite template and
# PostgreSQL database, and a module's tests that share a module-scoped fixture (a live server, the authorization
# matrix's world) stay together. TEST_WORKERS=1 runs them one after another.
TEST_WORKERS ?= 3
test-python:
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

test-frontend: frontend/node_modules/.installed
	cd frontend && npm test --silent

$(VENV)/.bench: requirements-bench.txt $(VENV)/.dev
	$(PIP) install --disable-pip-version-check -q -r requirements-bench.txt
	touch $@

# In-process beside LangGraph, then the real server under each async mode, then an agent step's overhead per loop
# iteration against the scripted LLM server (see README "Benchmarks").
bench: setup-dev $(VENV)/.bench
	$(PY) bench/coaching_throughput.py $(BENCH_ARGS)
	$(PY) bench/agent_overhead.py $(BENCH_ARGS)

# AUTO readiness and demotion tests simulated at known acceptance rates (docs/autonomy.md); plain Python.
bench-autonomy: setup-dev
	$(PY) bench/autonomy.py --chart docs/autonomy-readiness.svg $(BENCH_ARGS)

# Instructions per decision under valgrind's callgrind, Coach beside LangGraph: repeatable on a busy machine.
bench-instructions: setup-dev $(VENV)/.bench
	$(PY) bench/instructions.py

# The web app in Chromium: key press -> next suggestion on screen (50 decisions), and the queue page's load.
bench-browser: setup-dev
	$(PY) bench/browser.py

# Correction packs, simulated with the core functions: decisions until a step's acceptance is high, with and
# without packs, and whether an unrelated correction undoes a learned rule (no database, a few seconds).
bench-packs: setup-dev
	$(PY) bench/packs.py $(BENCH_ARGS)

# Policy evaluation p50/p99 with 0, 20 and 200 rules: the compiled rule set alone, with the explanation, and through
# the service (the revision read that validates the per-process cache) on SQLite. Plain Python, a few seconds.
bench-policy: setup-dev
	$(PY) bench/policy.py $(BENCH_ARGS)

# /healthz latency while runaway code, costly conditions, logins and large bodies are served (the live server).
bench-responsiveness: setup-dev
	$(PY) bench/responsiveness.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(VENV_MCP1) frontend/node_modules frontend/dist tests/mcp_clients/node_modules instance .pytest_cache
