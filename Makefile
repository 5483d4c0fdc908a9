# Every target installs what it needs first; `make local` and `make test` work on a fresh clone.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 3000
STAGE ?= dev
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install browser local test test-fast lint typecheck synth bench deploy clean

install: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Headless Chromium for the console's browser tests (tests/console), from the Debian packages: Playwright
# drives it at /usr/bin/chromium and never downloads a browser of its own. Installed only when missing.
browser:
	@test -x /usr/bin/chromium || { \
		echo "installing Chromium from the Debian packages (once, ~20 s)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

local: install
	$(PY) -m local.server --port $(PORT)

test: install browser
	$(PY) -m pytest -q -n 2 --dist loadgroup

test-fast: install
	$(PY) -m pytest -q -m "not e2e" -x

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy lambdas/arca
	MYPYPATH=client $(VENV)/bin/mypy --strict -p arca_client

# Both stacks of the stage: Arca-$(STAGE)-storage and Arca-$(STAGE).
synth: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npx --no-install cdk synth --quiet -c stage=$(STAGE)

bench: install
	$(PY) -m bench

deploy: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npx --no-install cdk deploy --all -c stage=$(STAGE)

clean:
	rm -rf cdk.out .pytest_cache .hypothesis
