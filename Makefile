# Set-up and the two commands of the README. A virtual environment in .venv holds everything.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test clean-demo

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# A CPU build of torch when none is importable (on a GPU box, install your CUDA torch first).
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

install: $(VENV)/.installed

# The main job on the embedded example: evaluate a run of example kernels (correct ones and
# reward hacks) against small problems with the hidden distributions, on the CPU when there is no GPU.
demo: install
	rm -rf runs/demo && mkdir -p runs/demo
	for spec in 1:0:relu_correct 1:1:relu_identity_shortcut 2:0:matmul_correct 2:1:relu_raises \
	            3:0:linear_gelu_correct 4:0:cross_entropy_correct; do \
	  set -- $$(echo $$spec | tr : ' '); \
	  cp examples/tiny/kernels/$$3.py runs/demo/level_1_problem_$$1_sample_$$2_kernel.py; \
	done
	$(BIN)/python scripts/eval_from_generations.py run_name=demo level=1 num_samples=2 \
	  problems_dir=examples/tiny/KernelBench hidden_tests_dir=examples/tiny/hidden_tests \
	  use_hidden_tests=True verbose=True

test: install
	$(BIN)/python -m pytest -q
