# Set-up is two commands: `make demo` and `make test`. Both create .venv themselves.
# `make demo` installs keyspace and its five dependencies only; `make test` adds
# the test extra (the other engines' clients, pytest, hypothesis, mypy, ruff, ...).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
VENV_STAMP := $(VENV)/.created
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test explore bench lint clean

$(VENV_STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "keyspace needs Python 3.11 or newer")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	touch $(VENV_STAMP)

$(DEMO_STAMP): pyproject.toml setup.py | $(VENV_STAMP)
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(TEST_STAMP): pyproject.toml setup.py | $(VENV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/keyspace demo demo-data

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(TEST_STAMP)
	bash scripts/run-tests.sh

# the same run with fresh random property-test examples (see tests/conftest.py)
explore: $(TEST_STAMP)
	KEYSPACE_HYPOTHESIS=explore bash scripts/run-tests.sh

bench: $(TEST_STAMP)
	bash scripts/run-bench.sh

clean:
	rm -rf $(VENV) demo-data .mypy_cache .ruff_cache .pytest_cache .hypothesis
