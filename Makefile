# Set-up and the two commands of the README. A virtual environment in .venv holds everything.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test validate

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# A CPU build of torch when none is importable (on a GPU box, install your CUDA torch first).
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

install: $(VENV)/.installed

# The main job on the embedded example, end to end with no API key and no GPU: replay shipped LLM
# answers for small example problems (generate), evaluate them with the hidden distributions (on the
# CPU when there is no GPU), time the PyTorch baselines of those problems, and write the leaderboard.
DEMO_RUN := replay-demo_level1_test
TINY := examples/tiny
demo: install
	$(BIN)/python scripts/generate_samples.py run_name=$(DEMO_RUN) level=1 num_samples=2 \
	  server_type=replay model_name=replay-demo replay_dir=$(TINY)/responses problems_dir=$(TINY)/KernelBench
	$(BIN)/python scripts/eval_from_generations.py run_name=$(DEMO_RUN) level=1 num_samples=2 \
	  problems_dir=$(TINY)/KernelBench hidden_tests_dir=$(TINY)/hidden_tests use_hidden_tests=True verbose=True
	$(BIN)/python scripts/generate_baseline_time.py level=1 problems_dir=$(TINY)/KernelBench \
	  out_dir=runs/demo_timing modes=[baseline_time_torch,baseline_time_torch_tf32]
	$(BIN)/python scripts/generate_leaderboard.py --use_hidden_eval --baseline baseline_time_torch_tf32 \
	  --runs $(DEMO_RUN) --timing_dir runs/demo_timing \
	  --degenerate_file $(TINY)/degenerate_problems.json --out runs/demo_leaderboard.html

# Two workers, each taking whole test files (a file's shared runs stay on one worker), in the order
# tests/conftest.py gives them: the longest first, so both finish together. -rs: every skipped test says
# why (the browser test without Chromium); the slowest 15, for CI's 20 minutes.
test: install
	$(BIN)/python -m pytest -q -rs --durations=15 -n 2 --dist loadfile --no-loadscope-reorder

# On a GPU box: validate the harness itself and write results/validation/{GPU}.json (docs/validation.md).
# Extra keys go through VALIDATE, e.g. make validate VALIDATE="levels=[2] quick=true".
validate: install
	$(BIN)/python scripts/validate_harness.py $(VALIDATE)
