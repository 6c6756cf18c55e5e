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
# make pdf: the printed book (tools/pdf.py), which the site then links (_ext/publish).
PDF := _build/pdf/self-attention-by-hand.pdf
# make publish: the GitHub repository the published pages launch Binder from (origin's
# owner/name unless given: make publish PUBLISH_REPOSITORY=owner/name).
PUBLISH_REPOSITORY ?= $(shell git remote get-url origin 2>/dev/null | sed -nE 's#^.*github\.com[:/]([^/]+/[^/]+)$$#\1#p' | sed 's/\.git$$//')

.PHONY: help venv assets browser build pdf print-book publish push-pages push-binder-ref binder-env lint test test-unit test-variations test-browser bench live lock clean

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
# tools/build.py runs Jupyter Book's Sphinx build (warnings are errors, nitpicky, keep going) in
# _build/staging and publishes it to _build/html only when it succeeds. One build of the tree at a time:
# every target that writes _build/ holds its lock (tools/buildlock.py), and a second one waits.
build: $(VENV_STAMP) $(NPM_STAMP) ## Build the site into _build/html (warnings are errors; a failed build publishes nothing)
	$(BIN)/python -m tools.build

# The HTML build executes the chapters, one process per core, into the execution cache; the
# single-page build (jupyter-book's, which reads in one process) then takes every chapter's outputs
# from that cache. The site is then rebuilt with BOOK_PDF, which copies the PDF into it and links
# it from every page. All of it under one hold of the build's lock: no other build publishes in between.
pdf: $(VENV_STAMP) $(NPM_STAMP) browser ## Print the book to _build/pdf/ (Chromium) and build the site linking it
	$(BIN)/python -m tools.buildlock $(MAKE) --no-print-directory print-book

# make pdf's steps (make pdf runs them holding the lock; the builds inside find it their own).
print-book: $(VENV_STAMP) $(NPM_STAMP)
	$(MAKE) --no-print-directory build
	$(BIN)/jupyter-book build . --builder singlehtml --warningiserror --nitpick --keep-going
	$(BIN)/python -m tools.pdf --site _build/singlehtml --out $(PDF)
	BOOK_PDF=$(PDF) $(MAKE) --no-print-directory build

publish: $(VENV_STAMP) ## Build and print the book for origin's GitHub repository, then push it to its gh-pages branch
	@test -n "$(PUBLISH_REPOSITORY)" || { echo "origin is not on GitHub: make publish PUBLISH_REPOSITORY=owner/name" >&2; exit 2; }
	@$(PUSH_BINDER_REF)
	BOOK_REPOSITORY=$(PUBLISH_REPOSITORY) $(BIN)/python -m tools.buildlock \
		$(SHELL) -c '$(MAKE) --no-print-directory pdf && $(MAKE) --no-print-directory push-pages'

# .nojekyll: GitHub Pages would otherwise run Jekyll, which drops _static/, _images/ and _sources/.
push-pages: $(VENV_STAMP) ## Push _build/html as it is to origin's gh-pages branch (make publish builds it first)
	$(BIN)/python -m tools.buildlock $(BIN)/ghp-import --no-jekyll --push --force --branch gh-pages --remote origin \
		--message "Publish the book built from $$(git rev-parse --short HEAD)" $(SITE)

# Binder launches the tag binder-<hash of binder/> (_ext/publish/binder_ref.py), cached once built: pushed
# to origin, at this commit, when origin has no such tag (the workflow does the same on GitHub).
PUSH_BINDER_REF = ref=$$($(PYTHON) _ext/publish/binder_ref.py); \
	if git ls-remote --exit-code --tags origin "refs/tags/$$ref" >/dev/null; then echo "origin has $$ref"; \
	else git push --quiet origin "HEAD:refs/tags/$$ref" && echo "pushed $$ref to origin"; fi
push-binder-ref: ## Push the tag Binder launches (named by binder/) to origin, unless origin has it
	@$(PUSH_BINDER_REF)

# zizmor audits the workflow's security offline (no GitHub API): actions pinned to commits, no persisted credentials.
lint: $(VENV_STAMP) ## Check the code with ruff (configured in pyproject.toml) and the workflow with actionlint and zizmor
	$(BIN)/ruff check
	$(BIN)/actionlint -shellcheck=$(BIN)/shellcheck
	$(BIN)/zizmor --offline --no-progress --quiet .github/workflows

# Two workers (pytest-xdist), each taking whole test files: the machine the book is built on has two cores.
PYTEST := $(BIN)/pytest -n 2 --dist loadfile

test-unit: $(VENV_STAMP) ## Run the fast tests (no browser, no book build)
	$(PYTEST) -m "not browser and not slow"

# The fast tests with other machines' arithmetic (book/checking.md): OpenBLAS on one thread, on two, and with the
# kernels of older x86-64 CPUs; numpy without the SIMD loops of its AVX512 targets, then without AVX2's too (the
# targets this machine has, as numpy names them: NPY_DISABLE_CPU_FEATURES refuses the baseline and unknown names);
# then combinations. Not part of `make test`: seven runs of the fast tests, 15 to 35 minutes here (two busy cores).
test-variations: $(VENV_STAMP) ## Run the fast tests under other BLAS kernels and threads, and without numpy's AVX512 and AVX2 loops
	@targets() { $(BIN)/python -c 'import sys; from numpy._core._multiarray_umath import __cpu_dispatch__ as d, \
		__cpu_features__ as f; print(" ".join(t for t in d if f.get(t) and (sys.argv[1] == "all" or t == "X86_V4" \
		or t.startswith("AVX512"))))' "$$1"; }; \
	avx512="NPY_DISABLE_CPU_FEATURES=$$(targets avx512)"; simd="NPY_DISABLE_CPU_FEATURES=$$(targets all)"; \
	run() { echo "== $$*"; env "$$@" $(PYTEST) -q -m "not browser and not slow"; }; \
	run OPENBLAS_NUM_THREADS=1 && run OPENBLAS_NUM_THREADS=2 && run OPENBLAS_CORETYPE=Sandybridge \
		&& run "$$avx512" && run "$$simd" \
		&& run "$$simd" OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=1 \
		&& run "$$avx512" OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=2

# The Binder environment (mostly downloads) is installed while the book is built and printed.
test-browser: $(VENV_STAMP) browser ## Build and print the book, then run the browser and slow tests
	$(MAKE) --no-print-directory -j2 --output-sync=target pdf binder-env
	$(PYTEST) -m "browser or slow" --durations=15

binder-env: $(VENV_STAMP) ## Install binder/ as repo2docker does into .venv-binder (the Binder tests use it)
	$(BIN)/python -m tools.binder

test: lint test-unit test-browser ## Run ruff, then every test (builds the book)

# tools/, benchmarks/ and _ext/ are imported from the repository root: `python -m` puts it on sys.path.
bench: $(VENV_STAMP) $(NPM_STAMP) browser ## Run the benchmarks and rewrite benchmarks/results.md
	$(BIN)/python -m benchmarks

live: $(VENV_STAMP) $(NPM_STAMP) ## Serve the book with live code on a local Jupyter server; prints the URL to open
	$(BIN)/python -m tools.live --site $(SITE)

lock: ## Regenerate requirements.txt and binder/requirements.txt from their .in files
	$(PYTHON) -m venv .venv-lock
	# pip 26 makes pip-compile write `-e .` as the absolute file:// URL of this clone.
	.venv-lock/bin/pip install --quiet "pip<26" pip-tools
	.venv-lock/bin/pip-compile --quiet --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links --annotation-style=line -o requirements.txt requirements.in
	# Binder pins what it shares with the build at the build's versions (pip refuses -e in constraints).
	grep -v '^-e' requirements.txt > .venv-lock/constraints.txt
	.venv-lock/bin/pip-compile --quiet --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links --annotation-style=line -c .venv-lock/constraints.txt \
		-o binder/requirements.txt binder/requirements.in
	grep '^myst-nb==' requirements.txt | sed 's/ *#.*/  # installed --no-deps by binder\/postBuild/' > binder/nodeps.txt
	rm -rf .venv-lock

clean: ## Remove the built site (keeps .venv and node_modules)
	rm -rf _build
