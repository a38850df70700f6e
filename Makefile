# Two entry points: `make reproduce` (every paper at tiny scale) and `make test`.
# Both create or reuse .venv and install the project with the CPU torch pin.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= all
STAMP  := $(VENV)/.installed

.PHONY: reproduce test venv lint readme-table

$(STAMP): pyproject.toml requirements/cpu.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements/cpu.txt torch
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements/cpu.txt -e '.[test]'
	touch $@

venv: $(STAMP)

reproduce: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)
	$(BIN)/snakemake --cores 1 --report results/report.html

test: $(STAMP)
	$(BIN)/python -m methods.kernels.build  # compiled kernels (cached in csrc/build/; ~15 s when sources changed)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest

# `snakemake --lint` itself is checked by tests/workflow/test_lint.py (one lint is accepted).
lint: $(STAMP)
	$(BIN)/snakefmt --check Snakefile workflow/rules

# Splice the papers table of the last tiny run into README.md.
readme-table: $(STAMP)
	$(BIN)/python -m methods.common.report papers-table results/papers_table.md README.md
