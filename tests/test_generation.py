"""Generation without a network: the replay provider, resume, extraction, config errors, pacing."""

import json
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
import yaml

from conftest import KERNELS, ROOT, TINY
from kernelbench_verified.config import load_config
from kernelbench_verified.errors import UserError
from kernelbench_verified.generate.extraction import extract_kernel
from kernelbench_verified.generate.run import QueryPacer, generate_run, provider_settings

RESPONSES = TINY / "responses"
SCRIPT = ROOT / "scripts" / "generate_samples.py"


def replay_config(runs_dir, replay_dir=RESPONSES, **extra):
    values = {"run_name": "r", "runs_dir": str(runs_dir), "level": 1, "num_samples": 2,
              "server_type": "replay", "replay_dir": str(replay_dir), "problems_dir": str(TINY / "KernelBench"),
              **extra}
    return load_config("generate", [f"{k}={v}" for k, v in values.items()])


def read_log(run_dir):
    return [json.loads(line) for line in (run_dir / "generation_log.jsonl").read_text().splitlines()]


def test_replay_of_the_shipped_responses(tmp_path, capsys):
    assert generate_run(replay_config(tmp_path, log_prompt=True)) == 0
    run_dir = tmp_path / "r"
    kernels = sorted(p.name for p in run_dir.glob("*_kernel.py"))
    assert len(kernels) == 7 and "level_1_problem_2_sample_1_kernel.py" not in kernels  # answered with prose only
    for raw in RESPONSES.glob("*_raw_response.txt"):  # every answer is kept as it came
        assert (run_dir / raw.name).read_text() == raw.read_text()
    assert "return x.clone()" in (run_dir / "level_1_problem_1_sample_1_kernel.py").read_text()
    cpp_beside_python = (run_dir / "level_1_problem_3_sample_1_kernel.py").read_text()
    assert cpp_beside_python.startswith("import math") and "__device__" not in cpp_beside_python
    assert "Applies ReLU elementwise" in (run_dir / "level_1_problem_1_sample_0_prompt.txt").read_text()
    log = {(e["problem"], e["sample"]): e for e in read_log(run_dir)}
    assert len(log) == 8 and log[(2, 1)]["status"] == "no_code" and log[(2, 1)]["error"]
    assert {e["status"] for k, e in log.items() if k != (2, 1)} == {"ok"}
    saved = yaml.safe_load((run_dir / "generate_config.yaml").read_text())
    assert saved["server_type"] == "replay" and saved["num_samples"] == 2
    # Upstream's tools read the same config under their name.
    assert (run_dir / "generation_config.yaml").read_text() == (run_dir / "generate_config.yaml").read_text()
    assert "done 7, failed 1 (no_code 1), skipped 0; tokens in 0, out 0" in capsys.readouterr().out


def test_replay_of_kernel_files_and_of_missing_ones(tmp_path):
    replay_dir = tmp_path / "kernels"
    replay_dir.mkdir()
    shutil.copy(KERNELS / "relu_correct.py", replay_dir / "level_1_problem_1_sample_0_kernel.py")
    assert generate_run(replay_config(tmp_path, replay_dir, subset="[1,1]")) == 1
    kernel = tmp_path / "r" / "level_1_problem_1_sample_0_kernel.py"
    assert kernel.read_text().strip() == (KERNELS / "relu_correct.py").read_text().strip()
    missing = [e for e in read_log(tmp_path / "r") if e["sample"] == 1]
    assert missing[0]["status"] == "request_failed" and "level_1_problem_1_sample_1_raw_response.txt" in missing[0]["error"]


def test_resume_skips_samples_that_have_a_kernel(tmp_path, capsys):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    existing = run_dir / "level_1_problem_1_sample_0_kernel.py"
    existing.write_text("# written by an earlier run\n")
    generate_run(replay_config(tmp_path))
    assert existing.read_text() == "# written by an earlier run\n"
    assert (1, 0) not in {(e["problem"], e["sample"]) for e in read_log(run_dir)}
    assert "skipped 1" in capsys.readouterr().out
    generate_run(replay_config(tmp_path))  # only the answer without code is tried again
    retried = read_log(run_dir)[7:]
    assert [(e["problem"], e["sample"], e["status"]) for e in retried] == [(2, 1, "no_code")]


@pytest.mark.parametrize("overrides, message", [
    (["server_type=nonsense"], "unknown server_type='nonsense'"),
    (["server_type=openai", "model_name=gpt-5.5"], "needs an API key: set OPENAI_API_KEY"),
    (["server_type=anthropic", "model_name=c", "api_key_env=KBV_NO_SUCH_KEY"], "set KBV_NO_SUCH_KEY"),
    (["server_type=vllm"], "needs model_name"),
    (["server_type=replay", "replay_dir=/no/such/dir"], "replay_dir /no/such/dir is not a directory"),
    (["server_type=anthropic", "model_name=c", "thinking_budget=4096", "max_tokens=2048"], "must be below max_tokens"),
    (["server_type=anthropic", "model_name=c", "api=responses"], "api='responses' is not supported"),
    (["num_workers=0"], "num_workers=0 must be an integer >= 1"),
    (["prompt_option=two_shot"], "prompt_option='two_shot' is not one of zero_shot, one_shot, few_shot, cot"),
])
def test_bad_settings_stop_before_any_work(tmp_path, monkeypatch, overrides, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    cfg = load_config("generate", ["run_name=r", f"runs_dir={tmp_path}", "level=1",
                                   f"problems_dir={TINY / 'KernelBench'}", f"replay_dir={RESPONSES}",
                                   "server_type=replay", *overrides])
    with pytest.raises(UserError, match=re.escape(message)):
        generate_run(cfg)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("server_type, key, endpoint", [
    ("google", "GEMINI_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai/"),
    ("fireworks", "FIREWORKS_API_KEY", "https://api.fireworks.ai/inference/v1"),   # upstream's name
    ("sambanova", "SAMBANOVA_API_KEY", "https://api.sambanova.ai/v1"),
    ("moonshot", "MOONSHOT_API_KEY", "https://api.moonshot.ai/v1"),
])
def test_upstream_server_types_read_their_key_and_default_endpoint(monkeypatch, server_type, key, endpoint):
    cfg = load_config("generate", ["run_name=r", "level=1", f"server_type={server_type}", "model_name=m"])
    monkeypatch.delenv(key, raising=False)
    with pytest.raises(UserError, match=f"needs an API key: set {key}"):
        provider_settings(cfg)
    monkeypatch.setenv(key, "k-test")
    settings = provider_settings(cfg)
    assert (settings.api_key, settings.base_url) == ("k-test", endpoint)


def test_the_script_reports_a_missing_key_in_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    args = ["run_name=test", f"runs_dir={tmp_path}", "level=1", "num_samples=5", "server_type=openai",
            "model_name=gpt-5.5", "dataset_src=local", "num_workers=4"]
    result = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and "needs an API key: set OPENAI_API_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "test").exists()


FENCED = "```python\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n```"


@pytest.mark.parametrize("answer, expected_start", [
    (f"Intro.\n\n{FENCED}\n\nOutro.", "import torch"),
    (FENCED.replace("```python", "```py"), "import torch"),
    (FENCED.replace("```python", "```"), "import torch"),
    (FENCED.replace("```python", "```Python3"), "import torch"),
    ("```cpp\n__global__ void k() {}\n```\nand the module:\n" + FENCED, "import torch"),
    ("Draft:\n```python\nclass ModelNew:\n    draft = 1\n```\nFinal:\n```python\nclass ModelNew:\n    final = 1\n```",
     "class ModelNew:\n    final = 1"),
    ("```python\n# test helper\nprint(1)\n```\n" + FENCED + "\n```python\nModelNew()(x)\n```", "import torch"),
    ("<think>\n```python\nclass ModelNew:\n    thought = 1\n```\n</think>\n" + FENCED, "import torch"),
    ("````python\nsrc = '''\n```\n'''\nclass ModelNew:\n    pass\n````", "src = '''\n```\n'''"),
    ("Cut off by max_tokens:\n```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward", "import torch"),
    ("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n", "import torch"),
])
def test_extraction_takes_the_kernel_block(answer, expected_start):
    extraction = extract_kernel(answer)
    assert extraction.ok, extraction.error
    assert extraction.code.startswith(expected_start) and "class ModelNew" in extraction.code
    assert "```" not in extraction.code.replace("'''\n```\n'''", "")


@pytest.mark.parametrize("answer, error", [
    ("I cannot help with that.", "no code block in the response"),
    ("", "no code block in the response"),
    ("```cuda\n__global__ void k() {}\n```", "no python code block (found only: cuda)"),
    ("```python\ndef helper():\n    pass\n```", "1 python code block(s) but none defines class ModelNew"),
    ("<think>```python\nclass ModelNew: pass\n```</think>\nNo answer.", "no code block in the response"),
])
def test_extraction_failures_are_reported_not_raised(answer, error):
    extraction = extract_kernel(answer)
    assert not extraction.ok and extraction.error == error


def test_query_pacer_spaces_request_starts_across_threads():
    pacer, starts, lock = QueryPacer(0.05), [], threading.Lock()

    def request():
        pacer.wait()
        with lock:
            starts.append(time.monotonic())

    threads = [threading.Thread(target=request) for _ in range(5)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    starts.sort()
    # The k-th request may not start before k intervals have passed. (Gaps between two observed starts
    # are no measure: a thread the OS runs late shrinks the gap after it, as a loaded CI machine showed.)
    assert len(starts) == 5 and all(start >= began + k * 0.05 - 1e-3 for k, start in enumerate(starts))
