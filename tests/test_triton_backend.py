"""backend=triton: the prompt and the extraction of generation, the backend the evaluator reads from the
run, and the per-kernel Triton cache warmed once before any judged run. Triton itself needs a GPU; here
a kernel stands in for its JIT by writing into TRITON_CACHE_DIR, and the records and the cache folder
are checked after the run."""

import json
import shutil

import pytest

from conftest import KERNELS, TINY, load_config, make_run, tiny_overrides
from kernelbench_verified.errors import UserError
from kernelbench_verified.evaluate.run import evaluate_run
from kernelbench_verified.generate.extraction import extract_kernel
from kernelbench_verified.generate.prompts import PromptOptions, build_prompt

PROBLEM = (TINY / "KernelBench" / "level1" / "1_ReLU.py").read_text()

TRITON_ANSWER = '''Here is my kernel.

```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
```

For comparison, the plain PyTorch version:

```python
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
```
'''

# Stands in for Triton's JIT: each call "compiles" into TRITON_CACHE_DIR (one file per process), and the
# kernel is only right when that cache already held a compiled file when it was imported, i.e. when the
# judged run started from the warmed cache.
FAKE_JIT_KERNEL = '''import os
from pathlib import Path

import torch
import torch.nn as nn

CACHE = Path(os.environ["TRITON_CACHE_DIR"])
WARM_AT_IMPORT = any(CACHE.glob("compiled_*"))


class ModelNew(nn.Module):
    def forward(self, x):
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / f"compiled_{os.getpid()}").write_text("jit output")
        return torch.clamp_min(x, 0.0) + (0.0 if WARM_AT_IMPORT else 1.0)
'''


def test_the_triton_prompt_asks_for_triton_and_shows_a_triton_example():
    triton = build_prompt(PROBLEM, False, PromptOptions(backend="triton", prompt_option="few_shot"))
    cuda = build_prompt(PROBLEM, False, PromptOptions())
    assert "written in Triton" in triton and triton.count("@triton.jit\ndef") == 2 and "load_inline" not in triton
    assert "load_inline" in cuda and "@triton.jit" not in cuda


def test_triton_extraction_prefers_the_block_with_a_triton_kernel():
    assert "relu_kernel[" in extract_kernel(TRITON_ANSWER, "triton").code
    assert "relu_kernel" not in extract_kernel(TRITON_ANSWER, "cuda").code  # the last ModelNew block, as always


def _findings(run_dir, key="1_0", name="eval_results.json"):
    record = json.loads((run_dir / name).read_text())[key]
    return record, {f["code"] for f in record["metadata"].get("static_findings", [])}


def test_the_run_backend_comes_from_its_generation_config(tmp_path):
    run_dir = make_run(tmp_path, "from_config", {(1, 0): "relu_correct"})
    (run_dir / "generate_config.yaml").write_text("run_name: from_config\nbackend: triton\n")
    assert evaluate_run(load_config("eval", tiny_overrides(tmp_path, "from_config"))) == 0
    record, codes = _findings(run_dir)
    assert record["metadata"]["backend"] == "triton" and "backend_mismatch" in codes
    assert record["eval_status"] == "correct"  # a warning: the verdict is the judge's


@pytest.mark.parametrize("config, message", [("backend: [unclosed\n", "not readable YAML"),
                                             ("backend: rocm\n", "records backend='rocm'")])
def test_a_bad_recorded_backend_is_one_clear_error(tmp_path, config, message):
    run_dir = make_run(tmp_path, "bad", {(1, 0): "relu_correct"})
    (run_dir / "generate_config.yaml").write_text(config)
    with pytest.raises(UserError, match=message):
        evaluate_run(load_config("eval", tiny_overrides(tmp_path, "bad")))
    assert not (run_dir / "eval_results.json").exists()


def test_the_triton_cache_is_warmed_once_and_never_written_by_a_judged_run(tmp_path):
    run_dir = tmp_path / "warm"
    run_dir.mkdir()
    (run_dir / "level_1_problem_1_sample_0_kernel.py").write_text(FAKE_JIT_KERNEL)
    builds = tmp_path / "builds"
    for hidden in (False, True):  # the standard evaluation, then the hidden one, of the same source
        overrides = tiny_overrides(tmp_path, "warm", backend="triton", use_hidden_tests=hidden)
        assert evaluate_run(load_config("eval", overrides)) == 0
    standard, _ = _findings(run_dir)
    hidden, _ = _findings(run_dir, name="eval_results_hidden.json")
    assert standard["eval_status"] == hidden["eval_status"] == "correct"  # both started warm
    assert standard["metadata"]["triton_cache"]["warmed"] is True
    assert hidden["metadata"]["triton_cache"]["reused"] is True
    (cache,) = [p for p in builds.glob("*/triton") if p.is_dir()]
    assert len(list(cache.glob("compiled_*"))) == 1  # the warm-up's file only: judged runs wrote to copies
    assert (builds / "outcomes" / f"{cache.parent.name}.triton.json").is_file()


def test_a_cuda_run_does_not_warm_a_kernel_without_triton(tmp_path):
    run_dir = make_run(tmp_path, "plain", {(1, 0): "relu_correct"})
    shutil.copy(KERNELS / "relu_correct.py", run_dir / "level_1_problem_1_sample_1_kernel.py")
    assert evaluate_run(load_config("eval", tiny_overrides(tmp_path, "plain", num_samples=2))) == 0
    record, _ = _findings(run_dir)
    assert "triton_cache" not in record["metadata"]


def test_the_clean_triton_softmax_fixture_is_the_prompt_example_verbatim():
    """The exploit suite runs that fixture on the GPU, so the prompt's Triton example is checked there."""
    from conftest import ROOT
    from kernelbench_verified.generate.extraction import code_blocks
    from kernelbench_verified.generate.prompts import TRITON_SOFTMAX_EXAMPLE

    (answer,) = [body for _, body in code_blocks(TRITON_SOFTMAX_EXAMPLE) if "class ModelNew" in body]
    fixture = (ROOT / "tests" / "fixtures" / "clean" / "triton_softmax_rows.py").read_text()
    assert fixture.endswith(answer)
