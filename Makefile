# Every target installs what it needs first; `make local` and `make test` work on a fresh clone.
# `make local` installs only what local mode needs (requirements-local.txt, npm dependencies without the
# CDK CLI); every other target installs the whole toolchain (requirements-dev.txt, all of package.json).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check
PORT ?= 3000
STAGE ?= dev
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install install-local browser oci-tools local test test-fast test-deep test-deploy lint typecheck synth policies docs bench bench-large deploy clean

install: $(VENV)/.installed node_modules/.installed

install-local: $(VENV)/.installed-local node_modules/.installed-local

# The client (client/, the `arca` command) is installed editable, with the dependencies it declares; the
# Lambda package (lambdas/arca) editable too, without dependencies (requirements.txt pins them).
$(VENV)/.installed-local: requirements.txt requirements-local.txt client/pyproject.toml pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) -r requirements-local.txt
	$(PIP) -e ./client
	$(PIP) --no-deps -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-local requirements-dev.txt
	$(PIP) -r requirements-dev.txt
	touch $@

# npm ci empties node_modules first, so a full install leaves both marks and a local one only its own.
node_modules/.installed-local: package.json package-lock.json
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@ node_modules/.installed-local

# Headless Chromium for the console's browser tests (tests/console), from the Debian packages: Playwright
# drives it at /usr/bin/chromium and never downloads a browser of its own. Installed only when missing.
browser:
	@test -x /usr/bin/chromium || { \
		echo "installing Chromium from the Debian packages (once, ~20 s)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Real OCI tools for tests/oci: skopeo (a client) and docker-registry (distribution, the reference registry), from the
# Debian packages. Installed only when missing; tests/oci installs them itself when run without make.
oci-tools:
	@command -v skopeo >/dev/null && command -v docker-registry >/dev/null || { \
		echo "installing skopeo and docker-registry from the Debian packages (once)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq skopeo docker-registry >/dev/null; }

local: install-local
	$(PY) -m local.server --port $(PORT) $(if $(VERBOSE),--verbose)

test: install browser oci-tools
	$(PY) -m pytest -q -n 2 --dist loadgroup

# A real `cdk deploy` of both stacks to LocalStack on 127.0.0.1, then the `arca` CLI against the deployed API
# (deploy/run.py). The first run builds .deploy-cache/ (~5 min); later runs reuse it.
test-deploy: install
	$(PY) -m deploy.run

# The reference-model test at length (tests/model/profiles.py, profile `deep`): 200 random sequences of 50 steps
# on each machine instead of `make test`'s 16 fixed ones of 40; a failure prints its shrunk steps and its seed.
test-deep: install
	ARCA_MODEL_PROFILE=deep $(PY) -m pytest -q -p no:xdist -p no:logging tests/integration/test_reference_model.py

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

# The functions' roles as synthesized, for the IAM check of local mode and the tests (local/policies.json).
policies: install
	$(PY) -m infra.policies

# The figures the docs quote about the API and the stacks (docs/infra.md), from the synthesized templates.
docs: install
	$(PY) -m infra.figures

bench: install
	$(PY) -m bench

# Large transfers in local mode (1 GiB in parts, --parallel 1 and 8, a killed upload resumed): several minutes.
bench-large: install
	$(PY) -m bench.transfers --mib 1024

deploy: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npx --no-install cdk deploy --all -c stage=$(STAGE)

clean:
	rm -rf cdk.out .pytest_cache .hypothesis .deploy-cache/run
