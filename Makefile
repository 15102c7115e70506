# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs the project into it the first time.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/modecfg demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/config_bench.py
	$(BIN)/python bench/modes_bench.py
	$(BIN)/python bench/float32_bench.py
	$(BIN)/python bench/nanguard_bench.py
	$(BIN)/python bench/testvalue_bench.py
	$(BIN)/python bench/profile_bench.py

$(VENV)/.dev: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.dev

lint: $(VENV)/.dev
	$(BIN)/ruff check modecfg tests bench
	$(BIN)/ruff format --check modecfg tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
