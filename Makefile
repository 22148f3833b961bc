# Set-up is two commands: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test explore bench lint clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "keyspace needs Python 3.11 or newer")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/keyspace demo demo-data

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(STAMP)
	bash scripts/run-tests.sh

# the same run with fresh random property-test examples (see tests/conftest.py)
explore: $(STAMP)
	KEYSPACE_HYPOTHESIS=explore bash scripts/run-tests.sh

bench: $(STAMP)
	bash scripts/run-bench.sh

clean:
	rm -rf $(VENV) demo-data .mypy_cache .ruff_cache .pytest_cache .hypothesis
