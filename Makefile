# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs the project into it the first time.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint mutate clean

# pip's own output (and setuptools' notes on editable installs) goes to a log, shown if it fails.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@echo "installing modecfg and what it needs into $(VENV) (pip's log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install --upgrade pip > $(VENV)/install.log 2>&1 \
	  && $(BIN)/python -m pip install -e '.[test]' >> $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/modecfg demo

# One worker per core; each test file on one worker, so its module fixtures compile once.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/config_bench.py
	$(BIN)/python bench/override_ladder.py
	$(BIN)/python bench/modes_bench.py
	$(BIN)/python bench/float32_bench.py
	$(BIN)/python bench/nanguard_bench.py
	$(BIN)/python bench/compare_bench.py
	$(BIN)/python bench/testvalue_bench.py
	$(BIN)/python bench/profile_bench.py
	$(BIN)/python bench/cache_bench.py
	$(BIN)/python bench/device_bench.py

$(VENV)/.dev: $(STAMP)
	@$(BIN)/python -m pip install -e '.[dev]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $(VENV)/.dev

lint: $(VENV)/.dev
	$(BIN)/ruff check modecfg modecfg_autoload.py tests bench tools
	$(BIN)/ruff format --check modecfg modecfg_autoload.py tests bench tools
	$(BIN)/mypy

# Mutation testing of the core modules (not part of CI): all of them, or MODULE=store (tools/mutate.py).
mutate: $(VENV)/.dev
	$(BIN)/python tools/mutate.py $(MODULE)

clean:
	rm -rf $(VENV) .venv-newest .venv-313 .pytest_cache .hypothesis build *.egg-info mutants
