# Self-Attention, by Hand. `make build` and `make test` do all their own set-up.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
# The oldest Python every pinned requirement installs on: pyproject.toml's requires-python, the one place it is set.
PYTHON_MIN := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)"$$/\1/p' pyproject.toml)
# Empty when $(PYTHON) is new enough, else the one line `make` stops with (expanded only by the .venv recipe).
PYTHON_TOO_OLD = $(shell $(PYTHON) -c 'import sys; need = tuple(int(x) for x in "$(PYTHON_MIN)".split(".")); \
	sys.stdout.write("" if sys.version_info[:3] >= need else "%s is Python %s; the pinned requirements need Python $(PYTHON_MIN) or newer (run make PYTHON=/path/to/python3.x)" % (sys.executable, sys.version.split()[0]))' \
	2>/dev/null || echo "$(PYTHON) does not run; the pinned requirements need Python $(PYTHON_MIN) or newer (run make PYTHON=/path/to/python3.x)")
VENV := .venv
BIN := $(VENV)/bin
# Marks a virtual environment that holds exactly requirements.txt.
VENV_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
SITE := _build/html

.PHONY: help venv assets browser build lint test test-unit test-browser bench live lock clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV_STAMP): requirements.txt pyproject.toml
	$(if $(PYTHON_TOO_OLD),$(error $(PYTHON_TOO_OLD)))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

venv: $(VENV_STAMP) ## Create .venv with the pinned requirements and the package

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

assets: $(NPM_STAMP) ## Install the browser assets the site serves (npm, from package-lock.json)

browser: ## Make sure a Chromium is available for the browser tests
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else $(BIN)/playwright install chromium; fi

# Builds of one commit are byte-identical: _ext/site_build dates the pages ("last updated",
# copyright year) from the last commit's time (SOURCE_DATE_EPOCH, unless it is set).
build: $(VENV_STAMP) $(NPM_STAMP) ## Build the site into _build/html (warnings are errors)
	$(BIN)/jupyter-book build . --builder html --warningiserror --nitpick --keep-going

lint: $(VENV_STAMP) ## Check the code with ruff (configured in pyproject.toml)
	$(BIN)/ruff check

test-unit: $(VENV_STAMP) ## Run the fast tests (no browser, no book build)
	$(BIN)/pytest -m "not browser and not slow"

test-browser: build browser ## Run the browser tests against the built site
	$(BIN)/pytest -m "browser or slow"

test: lint test-unit test-browser ## Run ruff, then every test (builds the book)

# tools/, benchmarks/ and _ext/ are imported from the repository root: `python -m` puts it on sys.path.
bench: $(VENV_STAMP) $(NPM_STAMP) browser ## Run the benchmarks and rewrite benchmarks/results.md
	$(BIN)/python -m benchmarks

live: $(VENV_STAMP) $(NPM_STAMP) ## Serve the book with live code on a local Jupyter server; prints the URL to open
	$(BIN)/python -m tools.live --site $(SITE)

lock: ## Regenerate requirements.txt from requirements.in
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet pip-tools
	.venv-lock/bin/pip-compile --quiet --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links --annotation-style=line -o requirements.txt requirements.in
	rm -rf .venv-lock

clean: ## Remove the built site (keeps .venv and node_modules)
	rm -rf _build
