"""Import a published corpus of kernels, with the speedups it claims, as run folders.

    python scripts/import_kernels.py source=corpus.jsonl name=acme [fields.kernel=code] [references=auto]

Keys and defaults: configs/import.yaml. Output: runs/{name}_level{L}_test/ (kernels, claims.json,
generate_config.yaml) and runs/{name}_corpus/ (import_report.json; the corpus's problems and hidden tests
when its references are used). Nothing from the corpus is executed. docs/audit.md.
"""

from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script


def import_kernels(cfg):
    from kernelbench_verified.corpus.importer import import_corpus

    return import_corpus(cfg)


def corpus_folder(cfg) -> list:
    """What one job writes: the corpus's folder (its runs are named after it too)."""
    return [Path(cfg.runs_dir) / f"{cfg.name}_corpus"]


SWEEPS = Sweeps(corpus_folder, "give each source its own name, e.g. -m source=a.jsonl,b.jsonl 'name=${source}'")

if __name__ == "__main__":
    run_script("import", import_kernels, __doc__, SWEEPS)
