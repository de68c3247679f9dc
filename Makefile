# Two commands for a fresh machine with Python 3.11 and pip: `make check` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: check check-all test bench figures clean venv docs

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,sweep,oracle,gpu]'
	@# torchsort (an oracle comparison, optional) compiles its C++ extension against the installed torch;
	@# with nvcc on PATH it asks for a CUDA build, so it is built with /usr/local/bin left out of PATH.
	-env PATH="$(CURDIR)/$(VENV)/bin:/usr/bin:/bin" $(PY) -m pip install --quiet --no-build-isolation torchsort==0.1.10
	touch $(STAMP)

# The claims report: reports/claims.json, reports/claims.md and the rate plots in figures/out/.
check: $(STAMP)
	$(PY) -m theory.cli check $(PYTEST_ARGS)
	$(PY) -m theory.cli report --quiet

# The same with the heavy reproductions marked slow.
check-all: $(STAMP)
	$(PY) -m theory.cli check -m "slow or not slow" $(PYTEST_ARGS)
	$(PY) -m theory.cli report --quiet

# Everything CI runs: unit, property and control tests, the doctests and the default checks.
test: $(STAMP)
	$(PY) -m pytest tests $(PYTEST_ARGS)
	$(PY) -m pytest --doctest-modules theory $(PYTEST_ARGS)
	$(PY) -m theory.cli check $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	-$(PY) -m pip install --quiet wheel && $(PY) -m pip install --quiet --no-build-isolation iisignature==0.24
	$(PY) benchmarks/publish.py

figures: $(STAMP)
	$(PY) -m theory.cli plots --gallery

# The documentation site, docs/_build/html/index.html: API reference, one page per paper from the
# claims report (run `make check` first, or this target runs it), errata, gallery, benchmarks,
# how-tos. Warnings are errors; the examples in the pages run as doctests.
docs: $(STAMP)
	$(PY) -m pip install --quiet -e '.[docs]'
	test -f reports/claims.json || $(PY) -m theory.cli check $(PYTEST_ARGS)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	$(PY) -m sphinx -W --keep-going -q -b doctest docs docs/_build/doctest
	$(PY) -m pytest -q -p no:cacheprovider tests/test_docs_site.py tests/test_docs_pages.py

clean:
	rm -rf $(VENV) reports figures/out docs/_build docs/_generated
