# pilid: the commands the README shows. `make help` lists them.
PYTHON ?= python
# The committed records: make tables/figures/reproduction rebuild the committed outputs from them.
RESULTS ?= results/records
SMOKE_RESULTS ?= results/smoke

.PHONY: help install test test-full lint format tables figures reproduction artifacts bench smoke docs

help:
	@echo "install  pip install torch==2.13.0 (the CPU wheel), then -e '.[dev]'"
	@echo "test     the fast lane: behaviour against references, configs composed in-process (a few minutes)"
	@echo "test-full  the rest: command line, launchers, end-to-end runs, every estimator check (slow)"
	@echo "lint     ruff check + ruff format --check"
	@echo "format   ruff format + ruff check --fix"
	@echo "tables   LaTeX/Markdown tables of the paper from $(RESULTS) into $(TABLES)"
	@echo "figures  the paper's figures (+ paper vs ours) from $(RESULTS) into $(FIGURES)"
	@echo "reproduction  $(REPRODUCTION) (ours beside the paper, verdicts) + the paper-vs-ours figure"
	@echo "artifacts  list the artefacts of $(RESULTS) the figures read (to git add -f)"
	@echo "bench    benchmark scripts (ratios measured in one run)"
	@echo "smoke    every experiment, tiny, end to end, into $(SMOKE_RESULTS)"
	@echo "docs     the documentation site into docs/_build/html (pip install -e '.[docs]')"

# torch first, pinned: the CPU wheel of torch 2.13.0 lies on local disk, and any other torch
# request (pip resolving the package's "torch>=2.1") pulls a multi-GB CUDA build.
install:
	$(PYTHON) -m pip install torch==2.13.0
	$(PYTHON) -m pip install -e ".[dev]"

# Tests in TEST_WORKERS processes (pytest-xdist; "auto": one per core), each with one BLAS/torch
# thread unless OMP_NUM_THREADS says otherwise: two multi-threaded torch processes on the same
# cores slow each other by up to 100x. `make test` is the fast lane (the tests not marked slow);
# `make test-full` runs the others (a test of more than ~2 s: the command line in a subprocess,
# an end-to-end run, a long training, the launchers, the byte-for-byte rebuild, every estimator
# check). CI (.ci/run) runs both.
TEST_WORKERS ?= auto
PYTEST = OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(PYTHON) -m pytest -q -n $(TEST_WORKERS) --dist worksteal
test:
	$(PYTEST) -m "not slow"

.PHONY: test-full
test-full:
	$(PYTEST) -m slow

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

TABLES ?= results/tables
FIGURES ?= results/figures
REPRODUCTION ?= REPRODUCTION.md
SMOKE_EXPERIMENTS ?= smoke_sim_regression smoke_sim_classification smoke_init_significance \
	smoke_real_data smoke_skill_shapes smoke_spambase_interactions

tables:
	$(PYTHON) -m pilid.report tables --results $(RESULTS) --out $(TABLES)

figures:
	$(PYTHON) -m pilid.report figures --results $(RESULTS) --out $(FIGURES)

reproduction:
	$(PYTHON) -m pilid.report reproduction --results $(RESULTS) --out $(REPRODUCTION) \
		--figures $(FIGURES) --tables $(TABLES)

# The artefact files the figures read (commit them with the records: they are git-ignored).
artifacts:
	$(PYTHON) -m pilid.report artifacts --results $(RESULTS)

bench:
	$(PYTHON) benchmarks/bench_pilid.py
	$(PYTHON) benchmarks/bench_trials.py
	$(PYTHON) benchmarks/bench_baselines.py
	$(PYTHON) benchmarks/bench_bagging.py
	$(PYTHON) benchmarks/bench_deep_categorical.py
	$(PYTHON) benchmarks/bench_scale.py --quick

# A fresh scratch directory each time, so that the smoke run exercises every step.
smoke:
	rm -rf $(SMOKE_RESULTS)
	set -e; for experiment in $(SMOKE_EXPERIMENTS); do \
		$(PYTHON) -m pilid.run -m experiment=$$experiment results_dir=$(SMOKE_RESULTS) \
			hydra.sweep.dir=$(SMOKE_RESULTS)/multirun/$$experiment; \
	done
	$(PYTHON) -m pilid.report tables --results $(SMOKE_RESULTS) --out $(SMOKE_RESULTS)/tables
	$(PYTHON) -m pilid.report figures --results $(SMOKE_RESULTS) --out $(SMOKE_RESULTS)/figures

# The documentation site (docs/): warnings are errors; the gallery runs examples/ (a few seconds each).
docs:
	$(PYTHON) -m sphinx -W --keep-going -b html docs docs/_build/html
