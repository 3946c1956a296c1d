# Two commands on a fresh machine with Python 3.11+:
#   make all    set up .venv, then run the paper's targets (snakemake --cores $(CORES) all)
#   make test   set up .venv, then run the test suite
#   make bench  the benchmark suite, scaling study and end-to-end timings (results/benchmarks/)
PYTHON ?= python3
VENV ?= .venv
CORES ?= 16
TORCH ?= 2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.otfs-installed

.PHONY: setup all available test lint bench clean-results

$(STAMP): pyproject.toml envs/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of PyTorch, for feature extraction (a bare `torch` would pull a CUDA build).
	$(BIN)/python -m pip install --quiet torch==$(TORCH)
	$(BIN)/python -m pip install --quiet -c envs/requirements.txt -e '.[test,extraction]'
	touch $@

setup: $(STAMP)

all: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) all

available: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) available

test: $(STAMP)
	$(BIN)/python -m pytest

# Benchmarks time this machine: run them alone, with its physical cores.
BENCH_CORES ?= $(shell nproc)
bench: $(STAMP)
	$(BIN)/snakemake --cores $(BENCH_CORES) bench time_profile

lint: $(STAMP)
	$(BIN)/ruff check src tests workflow/scripts
	$(BIN)/snakemake --lint

clean-results:
	rm -rf results logs
