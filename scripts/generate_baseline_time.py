"""Time every reference Model, as the evaluator times kernels, in each baseline mode.

    python scripts/generate_baseline_time.py level=[1,2,3] num_gpu_devices=4

Keys and defaults: configs/baseline.yaml. Results: results/timing/{HW}/{mode}.json, each with an
environment fingerprint; a re-run resumes.
"""

from kernelbench_verified.baseline.run import generate_baselines
from kernelbench_verified.config import run_script

if __name__ == "__main__":
    run_script("baseline", generate_baselines)
