# The profiling guide. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEVICE ?= auto
STEP ?=
STRICT_GPU ?=
# Worker processes `make test` runs the tests in (pytest-xdist); 0: all in one process. Each
# worker takes whole groups (tests/conftest.py: a file, the files that share traces, all the
# browser tests), handed out in the suite's own order (--no-loadscope-reorder: the browser tests
# first, the tests that wait for a background job last), so two workers import no trace twice
# and start one Chromium; on two cores that beats one process (benchmarks/commands.md).
TEST_WORKERS ?= 2
# Which edition `make serve` serves: en (mkdocs.yml) or ja (mkdocs.ja.yml). Not LANG: that
# variable already holds the shell's locale.
EDITION ?= en
MKDOCS_CONFIG_en := mkdocs.yml
MKDOCS_CONFIG_ja := mkdocs.ja.yml
# Debian's Chromium: the browser tests run its headless build (less CPU per page); the screenshots
# and the one test a headless build cannot make use the full browser (tests/browser/conftest.py).
CHROMIUM := /usr/bin/chromium /usr/bin/chromium-headless-shell
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# The site needs only requirements/site.txt; tests and captures need requirements/dev.txt.
# --no-compile: pip would byte-compile every file it installs (torch's thousands, about a minute
# on two cores); Python compiles the modules a command actually imports the first time instead.
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check --no-compile
SITE_STAMP := $(VENV)/.site-installed
DEV_STAMP := $(VENV)/.dev-installed

export NO_MKDOCS_2_WARNING := 1
# Packages are installed without byte-compiling (see PIP_INSTALL): Python compiles each module the
# first time a command imports it and keeps the .pyc. With PYTHONDONTWRITEBYTECODE set in the
# environment it would keep nothing, and every process would compile what it imports anew (torch
# alone: about 2.6 s of CPU per process; pytest's collection: about 30 s). The virtual
# environment is the project's own, so its commands always keep their bytecode.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help setup serve site test lint artifacts derive screenshots clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  Options: DEVICE=auto|cuda|cpu  STEP=<slug>  STRICT_GPU=1  EDITION=en|ja (serve)  TEST_WORKERS=0|N (test)"

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(SITE_STAMP): requirements/site.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -r requirements/site.txt
	touch $@

$(DEV_STAMP): requirements/dev.txt requirements/site.txt $(SITE_STAMP)
	$(PIP_INSTALL) -r requirements/dev.txt
	touch $@

$(CHROMIUM) &:
	@echo "Installing Debian's chromium and chromium-headless-shell for the browser tests"
	@# Where the headless build cannot be installed, the tests run the full browser (slower).
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-headless-shell >/dev/null \
	  || { test -x /usr/bin/chromium && echo "chromium-headless-shell not installed: the browser tests use chromium"; }

setup: $(DEV_STAMP) $(CHROMIUM) ## Create .venv with every pinned package, install chromium

serve: $(SITE_STAMP) ## Serve the site at http://127.0.0.1:8000 from the committed artifacts (EDITION=ja: the Japanese edition)
	@test -n "$(MKDOCS_CONFIG_$(EDITION))" || { echo "EDITION must be en or ja, not '$(EDITION)'"; exit 2; }
	$(PY) -m mkdocs serve -f $(MKDOCS_CONFIG_$(EDITION)) --dev-addr 127.0.0.1:8000

site: $(SITE_STAMP) ## Build both editions into site/ and site/ja/ (STRICT_GPU=1: fail while CUDA artifacts are missing)
	PROFILING_GUIDE_STRICT_GPU=$(STRICT_GPU) $(PY) -m mkdocs build --strict
	PROFILING_GUIDE_STRICT_GPU=$(STRICT_GPU) $(PY) -m mkdocs build --strict -f mkdocs.ja.yml

test: $(DEV_STAMP) $(CHROMIUM) ## Run every test, ruff included (sets up first if needed)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

lint: $(DEV_STAMP) ## ruff check and format check
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

artifacts: $(DEV_STAMP) ## Capture traces and derive everything (DEVICE=auto|cuda|cpu STEP=slug)
	@# GPU-only packages (Liger's Triton kernels) when the capture will run on CUDA.
	@if [ "$(DEVICE)" = cuda ] || { [ "$(DEVICE)" = auto ] && \
	    $(PY) -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; }; then \
	  $(PY) -m pip install --quiet -r requirements/gpu.txt; fi
	$(PY) -m generators artifacts --device $(DEVICE) $(if $(STEP),--step $(STEP))

derive: $(SITE_STAMP) ## Re-derive tables, values and figures from the committed traces
	$(PY) -m generators derive

screenshots: $(DEV_STAMP) $(CHROMIUM) ## Remake the Perfetto UI screenshots (artifacts/perfetto-ui/) from the committed traces
	$(PY) -m generators.perfetto_shots

clean: ## Remove the built site and caches (keeps .venv and artifacts)
	rm -rf site .pytest_cache .ruff_cache test-results
