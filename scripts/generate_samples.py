"""Generate kernels: prompt a model with each problem and save its ModelNew.

    python scripts/generate_samples.py run_name=test level=1 num_samples=5 \\
      server_type=openai model_name=gpt-5.5 dataset_src=local num_workers=4

Keys and defaults: configs/generate.yaml. Output: runs/{run_name}/..._kernel.py, ..._raw_response.txt,
generation_log.jsonl and generate_config.yaml.
"""

from kernelbench_verified.config import run_script
from kernelbench_verified.generate.run import generate_run

if __name__ == "__main__":
    run_script("generate", generate_run)
