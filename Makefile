# Two commands do everything on a fresh Debian/Ubuntu machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
# `make run` installs only what running needs; `make test` adds the development tools.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
DATA ?= data
PORT ?= 8080
HOST ?= 0.0.0.0
PIP := $(VENV)/bin/pip install -qq --disable-pip-version-check
VENDOR := webui/static/vendor/socket.io.min.js
AXE := webui/node_modules/axe-core/axe.min.js

.PHONY: run test test-box test-arm64 lint unit bench clean vendor screenshots image

run: $(RUN_STAMP) vendor
	$(VENV)/bin/svoyak serve --simulate --data $(DATA) --host $(HOST) --port $(PORT)

# The tests run on TEST_JOBS workers (pytest-xdist; TEST_JOBS=1 runs them in one process), a
# whole test file on one worker (a file's module fixtures are made once; tests/conftest.py
# hands out the longest files first). Most of the slow tests wait on QEMU, subprocesses,
# browsers and sleeps rather than on a core, so two workers on two cores halve the suite
# (times in docs/performance.md).
TEST_JOBS ?= 2
PYTEST_JOBS := $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder)

test: $(STAMP) vendor $(AXE)
	scripts/webui-deps.sh --browser
	scripts/test-deps.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest $(PYTEST_JOBS)

# site.yml on an arm64 tree under qemu (slow; not part of `make test`, which runs the quick
# arm64 smoke test). Its time is in docs/appliance.md.
test-arm64: $(STAMP)
	scripts/test-deps.sh
	SVOYAK_TEST_ARCH=arm64 $(VENV)/bin/pytest tests/test_provisioning.py

# The box booted in QEMU from a disk made of the provisioned tree (tests/box/; what it checks
# and its times are in docs/appliance.md, "Booted in QEMU"). Slow the first time (site.yml,
# the kernel module build), cached afterwards. BOX_TESTS picks some (default: all).
BOX_TESTS ?= $(addprefix tests/box/box_,boot.py kiosk.py buttons.py wifi.py rooms.py faults.py)
test-box: $(STAMP) vendor
	scripts/test-deps.sh
	scripts/test-box-deps.sh
	$(VENV)/bin/pytest -p no:cacheprovider $(BOX_TESTS)

$(RUN_STAMP): pyproject.toml scripts/bootstrap.sh
	@scripts/bootstrap.sh
	@python3 -m venv $(VENV)
	@echo "installing the box's Python packages into $(VENV)"
	@$(PIP) -e .
	@touch $@

$(STAMP): $(RUN_STAMP)
	$(PIP) -e '.[dev]'
	touch $@

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# Front-end packages from the npm registry (lock file), copied into webui/static/vendor.
# The running box's packages are installed in a directory of their own (build/webui-run),
# so `make run` never wipes webui/node_modules, where the tests' axe-core (a dev
# dependency) lives: `npm ci` empties the node_modules it installs into.
RUN_NODE := build/webui-run
vendor: $(VENDOR)

$(VENDOR): webui/package.json webui/package-lock.json webui/build.mjs
	@scripts/webui-deps.sh
	@mkdir -p $(RUN_NODE) && cp webui/package.json webui/package-lock.json $(RUN_NODE)/
	@cd $(RUN_NODE) && npm ci --omit=dev --no-audit --no-fund --silent
	@node webui/build.mjs $(RUN_NODE)/node_modules

$(AXE): webui/package.json webui/package-lock.json
	scripts/webui-deps.sh
	cd webui && npm ci --no-audit --no-fund --silent
	touch $@

screenshots: $(STAMP) vendor $(AXE)
	scripts/webui-deps.sh --browser
	$(PY) -m webui.screenshots docs/screenshots

# The SD-card image from the official Raspberry Pi OS Lite image (docs/appliance.md).
image: $(STAMP)
	@test -n "$(BASE)" || { echo "usage: make image BASE=path/to/raspios-bookworm-arm64-lite.img.xz"; exit 2; }
	image-build/build.sh "$(BASE)" build/image

clean:
	rm -rf $(VENV) build *.egg-info
