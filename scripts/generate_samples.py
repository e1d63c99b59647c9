"""Generate kernels: prompt a model with each problem and save its ModelNew.

    python scripts/generate_samples.py run_name=test level=1 num_samples=5 \\
      server_type=openai model_name=gpt-5.5 dataset_src=local num_workers=4

Keys and defaults: configs/generate.yaml. Output: runs/{run_name}/..._kernel.py, ..._raw_response.txt,
generation_log.jsonl and generate_config.yaml.
"""

from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script


def generate(cfg):
    from kernelbench_verified.generate.run import generate_run  # imports torch: not for --help

    return generate_run(cfg)


def run_folder(cfg) -> list:
    """What one job writes: the run folder (a kernel found there counts as done, whichever model wrote it)."""
    return [Path(cfg.runs_dir) / str(cfg.run_name)]


SWEEPS = Sweeps(run_folder, "give each job its own run_name, e.g. -m model_name=a,b level=1,2 "
                            "'run_name=${model_name}_level${level}_test'")

if __name__ == "__main__":
    run_script("generate", generate, __doc__, SWEEPS)
