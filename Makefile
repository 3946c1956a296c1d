# Two commands on a fresh machine with Python 3.11+:
#   make all    set up .venv, then run the paper's targets (snakemake --cores $(CORES) all)
#   make test   set up .venv, then run the test suite (make test-fast: the tests that start no process)
#   make bench  the benchmark suite, scaling study and end-to-end timings (results/benchmarks/)
#   make slurm-packages   Debian's SLURM, munge and MariaDB, for the SLURM test (root)
#   make browser-packages Debian's headless Chromium, for the report's browser test (root)
#   OTFS_TEST_SLURM=1 make test   also runs the test on a local SLURM cluster (CI does)
PYTHON ?= python3
VENV ?= .venv
# the machine's cores (make all CORES=4 sets them)
CORES ?= $(shell nproc)
TORCH ?= 2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.otfs-installed

.PHONY: setup all available test test-fast lint bench clean-results slurm-packages browser-packages

$(STAMP): pyproject.toml workflow/pyproject.toml benchmarks/pyproject.toml envs/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of PyTorch, for feature extraction (a bare `torch` would pull a CUDA build).
	$(BIN)/python -m pip install --quiet torch==$(TORCH)
	# The library (src/otfs), the pipeline package beside the workflow (workflow/lib/otfs_workflow) and the
	# benchmark suite (benchmarks/otfs_benchmarks).
	$(BIN)/python -m pip install --quiet -c envs/requirements.txt -e '.[test,extraction,related,skada]' -e ./workflow \
		-e ./benchmarks
	touch $@

setup: $(STAMP)

all: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) all

available: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) available

# pytest-xdist: one worker per core (at most 4); tests/conftest.py keeps the tests that share a
# pipeline run, or a module's fixture, in one worker.
TEST_WORKERS ?= auto
# make test: every test, in one session (the fast tests fill the workers' time while the others wait on their
# processes). make test-fast: the tests that start no process (no Snakemake, no fresh interpreter, no tool) and
# take under 30 s each, under 2 minutes, while editing code; tests/conftest.py fails an unmarked test that starts
# one, so that set stays fast.
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup
test: $(STAMP)
	$(PYTEST)

test-fast: $(STAMP)
	$(PYTEST) -m "not pipeline and not subprocess and not slurm and not slow"

# Benchmarks time this machine: run them alone, with its physical cores.
BENCH_CORES ?= $(shell nproc)
bench: $(STAMP)
	$(BIN)/snakemake --cores $(BENCH_CORES) bench time_profile

# Installed only where missing; the test starts and stops the daemons itself.
SLURM_PACKAGES := slurmctld slurmd slurmdbd slurm-client munge mariadb-server
slurm-packages:
	@if command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v mariadbd >/dev/null \
		&& command -v slurmdbd >/dev/null; then echo "SLURM packages present"; else \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q --no-install-recommends $(SLURM_PACKAGES) \
		|| { apt-get update -q && apt-get install -y -q --no-install-recommends $(SLURM_PACKAGES); }; fi

# Debian's headless Chromium, for the test that opens the HTML report as a person sees it (root).
browser-packages:
	@if command -v chromium >/dev/null; then echo "Chromium present"; else \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q --no-install-recommends chromium \
		|| { apt-get update -q && apt-get install -y -q --no-install-recommends chromium; }; fi

lint: $(STAMP)
	$(BIN)/ruff check src tests workflow/scripts workflow/lib benchmarks
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint

clean-results:
	rm -rf results logs
