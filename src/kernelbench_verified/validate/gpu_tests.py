"""The test suites that need the GPU box itself, run with pytest and reduced to their counts:

  gpu         the GPU-marked tests (the CUDA paths of timing, transport, memory and baselines)
  jail        the OS jail: namespaces, uid, seccomp, limits, what a kernel can reach
  zero_trust  every attack of tests/test_zero_trust.py through the judge, on CUDA (the GPU's clock too)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from ..paths import CHECKOUT_ROOT

SUITES = {"gpu": (["-m", "gpu", "tests/test_gpu.py", "tests/test_baseline.py"], {}),
          "jail": (["tests/test_jail.py"], {}),
          "zero_trust": (["tests/test_zero_trust.py"], {"KBV_ZERO_TRUST_DEVICE": "cuda"})}
OUTCOMES = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def counts(output: str) -> dict:
    """pytest's closing counts ("3 passed, 1 skipped in 2.1s") as {"passed": 3, "skipped": 1, ...}."""
    found = dict.fromkeys(OUTCOMES, 0)
    lines = [line for line in output.strip().splitlines() if " in " in line and _COUNT.search(line)]
    for number, outcome in _COUNT.findall(lines[-1] if lines else ""):
        found["errors" if outcome.startswith("error") else outcome] += int(number)
    return found


def run_suite(name: str, log_path, timeout: int) -> dict:
    """One suite under pytest; its counts, exit code and the failing tests' names."""
    arguments, environment = SUITES[name]
    command = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *arguments]
    try:
        done = subprocess.run(command, cwd=CHECKOUT_ROOT, env={**os.environ, **environment}, capture_output=True,
                              text=True, timeout=timeout)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = f"{exc.stdout or ''}\ntimed out after {timeout} s", -1
    log_path.write_text(output if isinstance(output, str) else output.decode(errors="replace"))
    failing = sorted({m for m in re.findall(r"^(?:FAILED|ERROR) (\S+)", output, flags=re.M)})
    return {**counts(output), "exit_code": code, "failing": failing}


def section(results: dict) -> dict:
    return {"suites": results, "all_passed": all(r["exit_code"] == 0 for r in results.values())}
