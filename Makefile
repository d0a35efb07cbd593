# pilid: the commands the README shows. `make help` lists them.
PYTHON ?= python
RESULTS ?= results/runs
SMOKE_RESULTS ?= results/smoke

.PHONY: help install test lint format tables figures bench smoke

help:
	@echo "install  pip install -e '.[dev]'"
	@echo "test     run the test suite (CPU, < 10 min on 2 cores)"
	@echo "lint     ruff check + ruff format --check"
	@echo "format   ruff format + ruff check --fix"
	@echo "tables   LaTeX/Markdown tables of the paper from stored results"
	@echo "figures  the paper's figures from stored results"
	@echo "bench    benchmark scripts (ratios measured in one run)"
	@echo "smoke    every experiment, tiny, end to end, into $(SMOKE_RESULTS)"

install:
	$(PYTHON) -m pip install -e ".[dev]"

test:
	$(PYTHON) -m pytest -q

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

tables:
	@echo "make tables: not implemented yet (issue: paper tables)" >&2; exit 1

figures:
	@echo "make figures: not implemented yet (issue: paper figures)" >&2; exit 1

bench:
	$(PYTHON) scripts/bench_pilid.py
	$(PYTHON) scripts/bench_trials.py
	$(PYTHON) scripts/bench_baselines.py

smoke:
	@echo "make smoke: not implemented yet (issue: paper tables)" >&2; exit 1
