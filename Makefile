# Two entry points: `make reproduce` (every paper at tiny scale) and `make test`.
# Both create or reuse .venv and install the project with the CPU torch pin.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= all
STAMP  := $(VENV)/.installed
# Where torch comes from: empty = the configured index (public PyPI: the CUDA build); the CPU build is on
# PyTorch's CPU index, TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=

.PHONY: reproduce test venv lint readme-table publish-store dvc-yaml pull remote diff explain site lock

$(STAMP): pyproject.toml requirements/cpu.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements/cpu.txt $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) torch
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements/cpu.txt -e '.[test]'
	touch $@

venv: $(STAMP)

reproduce: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)
	$(BIN)/snakemake --cores 1 --report results/report.html

# The suite runs on TEST_WORKERS pytest-xdist workers (TEST_WORKERS=0: one process), a test module per unit of
# work (tests/conftest.py groups the modules that run Snakemake in the repository root onto one worker).
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m methods.kernels.build  # compiled kernels (cached in csrc/build/; ~15 s when sources changed)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile)

# requirements/full.lock: the paper-scale environment (CUDA torch from PyPI, every package pinned with its
# sha256) that containers/Dockerfile installs; torch at the version of requirements/cpu.txt. Rerun after a
# change to pyproject.toml's dependencies (tests/workflow/test_container.py fails when it is stale).
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra full -c requirements/cpu.txt --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 --generate-hashes --custom-compile-command "make lock" \
		-o requirements/full.lock

# `snakemake --lint` itself is checked by tests/workflow/test_lint.py (one lint is accepted).
lint: $(STAMP)
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/ruff format --check
	$(BIN)/ruff check

# Publish the last tiny run (one clean commit, every paper): its claims files and usage into docs/run/,
# its papers table into README.md and each paper's claims table into src/methods/<paper>/README.md.
readme-table: $(STAMP)
	$(BIN)/icml25-readme-table results
	$(MAKE) publish-store

# ... and as a DVC store a fresh clone pulls without credentials (`make pull`): every tiny stage's outputs
# recorded in dvc.lock and copied, less what .dvcignore leaves out, into docs/run/store (the default remote);
# objects that no stage of dvc.lock uses any more are dropped. Commit dvc.lock and docs/run/ together.
publish-store: $(STAMP)
	$(BIN)/dvc commit --force dvc.yaml
	$(BIN)/dvc push --remote published dvc.yaml
	$(BIN)/dvc gc --workspace --cloud --remote published --force

# The published run as a static site in docs/ (index.html, a page per paper; GitHub Pages can serve docs/).
# make readme-table rebuilds it too; tests/site checks it is current and drives it in Chromium.
site: $(STAMP)
	$(BIN)/python -m methods.common.website

# dvc.yaml is generated from the workflow (a stage per paper, shared substrate, report), with full/dvc.yaml
# (the paper-scale stages, apart so that `dvc repro` never starts them) and .dvc/plots/ (main figures coloured
# by method); rerun after adding a paper. tests/workflow/test_dvc.py fails when one is stale.
dvc-yaml: $(STAMP)
	$(BIN)/python -m methods.common.dvc_stages

# Fetch shared results with DVC, check every restored file against dvc.lock, and record every pulled
# job for Snakemake as if it had run: afterwards `snakemake -n` has nothing to do, and a config or
# code change reruns exactly what it affects. Stages whose recorded config section or code differ
# from this checkout are not pulled; the refusal names the changed keys (methods.common.pull).
# dvc.lock paths must stay inside the checkout, and a pull removes only files of dvc.yaml's outs; no dvc.lock
# is an error. TARGETS=<paper ...> pulls only those papers; REMOTE=<name> picks another remote than the
# default (the published run, docs/run/store, unless `make remote` set another).
# Needs an installed environment (make venv); no dependency on it, so a pull never reinstalls.
pull:
	$(BIN)/icml25-pull $(if $(REMOTE),--remote $(REMOTE)) $(TARGETS)

# Point the project at a team's own DVC store (S3, a shared disk, an HTTP server) with one command: NAME
# (default `team`) becomes the default remote in .dvc/config.local, which git ignores, e.g.
#   make remote URL=s3://BUCKET/icml25-repro ENDPOINT=https://s3.example.org
# `make pull REMOTE=published` still reads the published run.
remote:
	$(if $(strip $(URL)),,$(error make remote: URL is empty; e.g. `make remote URL=s3://BUCKET/icml25-repro [ENDPOINT=https://s3.example.org] [NAME=team]`))
	$(BIN)/dvc remote add --local --default --force $(or $(NAME),team) $(URL)
	$(BIN)/dvc remote modify --local $(or $(NAME),team) verify true
	$(if $(ENDPOINT),$(BIN)/dvc remote modify --local $(or $(NAME),team) endpointurl $(ENDPOINT))

# Which verdicts changed between two runs: A and B are results folders (results, results_full), the
# published run (docs/run) or git revisions (their committed docs/run), e.g. `make diff A=HEAD~3 B=results`.
diff: $(STAMP)
	$(if $(strip $(A)),,$(error make diff: A is empty; e.g. `make diff A=HEAD~3 B=results` (folders, docs/run or git revisions)))
	$(if $(strip $(B)),,$(error make diff: B is empty; e.g. `make diff A=HEAD~3 B=results` (folders, docs/run or git revisions)))
	$(BIN)/icml25-diff "$(A)" "$(B)"

# How one claim's verdict follows from its numbers: the criterion with each seed's values put in, every
# null's substitution and outcome, the premise, the rule. RUN defaults to results (else docs/run).
explain: $(STAMP)
	$(BIN)/icml25-explain $(PAPER) $(CLAIM) $(if $(RUN),--run $(RUN))
