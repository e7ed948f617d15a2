VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo lint typecheck unit conformance api bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

test: $(STAMP) lint typecheck unit conformance api

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy praxo_actors supervisors

unit: $(STAMP)
	$(PY) -m pytest -q

conformance: $(STAMP)
	$(PY) -m conformance

api: $(STAMP)
	$(PY) -m api.check

demo: $(STAMP)
	$(PY) -m praxo_actors.cli demo

bench: $(STAMP)
	$(VENV)/bin/praxo-actors bench

clean:
	rm -rf $(VENV) .praxo build dist *.egg-info
