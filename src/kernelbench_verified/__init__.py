"""KernelBench-Verified: honest evaluation of LLM-written GPU kernels."""

from pathlib import Path

__version__ = "0.1.0"

# The repository root when the package is used from a checkout (pip install -e .).
REPO_ROOT = Path(__file__).resolve().parents[2]
