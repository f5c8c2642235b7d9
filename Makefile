# Trimtab: `make demo` compacts a page in a real headless Chromium; `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The page `make demo` shows; any URL or file path works: make demo URL=https://...
URL    ?= host/demo/outdoor-shop.html

.PHONY: demo test lint bench screenshot install uninstall chromium clean

# One venv for everything; re-installed when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: Trimtab needs Python 3.11 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)." >&2; exit 1; }
	@$(PYTHON) -m venv $(VENV) || \
	  { echo "error: could not create $(VENV); on Debian: apt-get install python3-venv" >&2; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint]'
	@touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test,lint,bench]'
	@touch $@

# Debian's chromium, installed with apt when missing and we are root; otherwise a clear error.
chromium:
	@if [ -n "$$TRIMTAB_CHROME" ] || command -v chromium >/dev/null 2>&1 \
	   || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium with apt-get ..." >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
	  || { echo "error: apt-get could not install chromium" >&2; exit 1; }; \
	else \
	  echo "error: no Chromium found. Install it (Debian: sudo apt-get install chromium)" \
	       "or point TRIMTAB_CHROME at a Chrome/Chromium binary." >&2; exit 1; \
	fi

demo: $(VENV)/.installed chromium
	$(BIN)/trimtab inspect "$(URL)" --stats

# Test processes (pytest-xdist), each with its own Chromium. Four by default: on this
# project's 2-core machine a test often waits on a browser, a host or a page's timer.
# With three the cores were still idle a seventh of the run, most in its first minutes,
# when the long state machines hold three of the processes; a fourth fills that (fresh
# clones, nothing else running, medians: pytest 11m50s with four runs of three, 10m40s
# with three runs of four; once 10m30s with five, which leaves less room under load).
# TEST_WORKERS=N runs N, 0 runs the tests in this process.
TEST_WORKERS ?= 4

# A machine may set PYTHONDONTWRITEBYTECODE (this project's CI machine does): then no
# run keeps a compiled module, and every later run compiles them all again. The tests
# let Python keep them (__pycache__, which git ignores): from the second run in a clone,
# each test process collects the tests in 3.8 s of CPU instead of 9.4. (In a fresh
# clone the run's CPU did not change measurably: 1,337 s against 1,329 s.)
test: export PYTHONDONTWRITEBYTECODE :=
test: $(VENV)/.installed chromium lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

lint: $(VENV)/.installed
	$(BIN)/ruff check host pycdp_bridge tests
	$(BIN)/ruff format --check host pycdp_bridge tests
	$(BIN)/mypy host pycdp_bridge

# The README's pictures of the side panel, taken from the real panel (tests/panel_screenshot.py).
screenshot: $(VENV)/.installed chromium
	$(BIN)/python -m tests.panel_screenshot

bench: $(VENV)/.installed-bench chromium
	$(BIN)/python -m tests.bench

install: $(VENV)/.installed
	$(BIN)/trimtab install

uninstall: $(VENV)/.installed
	$(BIN)/trimtab uninstall

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench-results test-artifacts
