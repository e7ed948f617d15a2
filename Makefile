VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CLI_STAMP := $(VENV)/.installed-cli

.PHONY: test demo lint typecheck unit conformance api pykka-suite docs bench fuzz dist dist-check clean

# The tests cover the CLI, so they get the `cli` extra too; `docs` builds the site.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,cli,docs]'
	touch $(STAMP) $(CLI_STAMP)

# Just what the demo needs: the package and its `cli` extra (rich).
$(CLI_STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -e '.[cli]'
	touch $(CLI_STAMP)

test: $(STAMP) lint typecheck unit conformance api pykka-suite docs

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

# Pykka's own test suite, from its sdist, against MNActor; skipped (exit 0) without network.
pykka-suite: $(STAMP)
	$(PY) scripts/pykka_suite.py

# The documentation site, into site/ (git-ignored); --strict: a broken link, anchor or API
# reference fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The sdist and the wheel in dist/, checked by twine and by scripts/check_dist.py (py.typed in,
# tests out). `python -m build` gets hatchling from the package index.
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(VENV)/bin/twine check --strict dist/*
	$(PY) scripts/check_dist.py dist

# The built wheel installed in a fresh venv (its dependencies from the package index), running
# the README's quick start there: CI runs it after `make test`.
dist-check: dist
	$(PY) scripts/check_dist.py --fresh-venv dist

demo: $(CLI_STAMP)
	$(PY) -m praxo_actors demo

bench: $(STAMP)
	$(VENV)/bin/praxo-actors bench

# The adversarial suite's fuzz targets at 10,000 examples each and its corpora at full size,
# and the runtime's model-based test over 250 sequences of 25 steps (at least 5,000 steps,
# counted; a failing sequence is shrunk), nightly-style: not part of `make test`, whose run of
# the same tests is a fraction of it. A target may take minutes (the model-based one, tens).
fuzz: $(STAMP)
	PRAXO_FUZZ_EXAMPLES=10000 $(PY) -m pytest -q tests/adversarial/test_fuzz_entry_points.py --timeout=3600
	PRAXO_PATH_CORPUS_SCALE=8 $(PY) -m pytest -q tests/adversarial/test_path_corpus.py --timeout=3600
	PRAXO_FORGERY_SAMPLE=100000 $(PY) -m pytest -q tests/adversarial/test_session_log_forgeries.py --timeout=3600
	PRAXO_MODEL_EXAMPLES=250 PRAXO_MODEL_STEPS=25 PRAXO_MODEL_MIN_STEPS=5000 PRAXO_MODEL_SHRINK=1 \
		PRAXO_MODEL_TIMEOUT=14400 $(PY) -m pytest -q tests/chaos/test_model_based.py

clean:
	rm -rf $(VENV) .praxo build dist site *.egg-info
