# Two commands do everything on a fresh Debian/Ubuntu machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DATA ?= data

.PHONY: run test lint unit bench clean

run: $(STAMP)
	$(VENV)/bin/svoyak serve --simulate --data $(DATA)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

$(STAMP): pyproject.toml scripts/bootstrap.sh
	scripts/bootstrap.sh
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
