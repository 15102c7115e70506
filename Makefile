# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs the project into it the first time.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint docs mutate clean pymc bytecode

# pip's own output (and setuptools' notes on editable installs) goes to a log, shown if it fails.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@echo "installing modecfg and what it needs into $(VENV) (pip's log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install --upgrade pip > $(VENV)/install.log 2>&1 \
	  && $(BIN)/python -m pip install -e '.[test]' >> $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

# modecfg's bytecode written, as pip writes an installed package's: an editable install writes
# none, and where PYTHONDONTWRITEBYTECODE is set (as in many images and shells) no import writes
# it either, so that every process would compile modecfg's source again: `import modecfg` then
# takes 70-90 ms where it takes 13 ms from bytecode. Only what changed is compiled again.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q modecfg modecfg_autoload.py modecfg_pytest.py

demo: bytecode
	$(BIN)/modecfg demo

# One worker per core; each test file on one worker, so its module fixtures compile once.
test: bytecode
	$(BIN)/python -m pytest -q -n auto --dist loadfile

bench: bytecode
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
	$(BIN)/ruff check modecfg modecfg_autoload.py modecfg_pytest.py tests bench tools
	$(BIN)/ruff format --check modecfg modecfg_autoload.py modecfg_pytest.py tests bench tools
	$(BIN)/mypy

# The documentation site, built as CI builds it: a broken link or a page outside the nav fails.
docs: $(VENV)/.dev
	$(BIN)/mkdocs build --strict --site-dir .cache/site

# PyMC 6 with modecfg: PyMC 6 needs Python 3.12+ (and PyTensor 3.3), so its environment is
# .venv-newest, built on the newest Python found here (python3.13, python3.12, pyenv's). Then:
# .venv-newest/bin/python your_model.py
NEWEST ?= $(shell for p in python3.13 python3.12 $$(ls -d $$(pyenv root 2>/dev/null || echo $$HOME/.pyenv)/versions/3.1[23]*/bin/python3 2>/dev/null); do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && { command -v $$p; break; }; done)
pymc:
	@test -n "$(NEWEST)" || { echo "PyMC 6 needs Python 3.12 or newer, and none is here (pyenv install 3.12)"; exit 1; }
	$(MAKE) .venv-newest/.installed PYTHON=$(NEWEST) VENV=.venv-newest
	@echo "installing PyMC 6 into .venv-newest (pip's log: .venv-newest/install.log)"
	@.venv-newest/bin/python -m pip install -e '.[test,pymc]' >> .venv-newest/install.log 2>&1 || { cat .venv-newest/install.log; exit 1; }
	.venv-newest/bin/python -c "import modecfg, pymc, pytensor; print('PyMC', pymc.__version__, 'with modecfg', modecfg.__version__, 'on PyTensor', pytensor.__version__)"

# Mutation testing of the core modules (not part of CI): all of them, or MODULE=store (tools/mutate.py).
mutate: $(VENV)/.dev
	$(BIN)/python tools/mutate.py $(MODULE)

clean:
	rm -rf $(VENV) .venv-newest .venv-313 .pytest_cache .hypothesis build *.egg-info mutants
