"""The loop behind scripts/validate_harness.py: run the chosen steps in order, each through the same
scripts a user runs, and record each step's section of the GPU's summary as soon as it finishes.

Everything a step produces (run folders, baselines, builds, logs) lives under
{work_dir}/{GPU}-{commit}/, so a validation cut short and started again on the same checkout resumes:
the evaluator and the baseline script skip what they already recorded. The summary and the
identical-code bounds are the only files written outside it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from omegaconf import DictConfig
from tqdm import tqdm

from ..config import parse_subset, require_choice, require_int
from ..errors import UserError
from ..paths import CHECKOUT_ROOT
from ..results import read_json, write_json_atomic
from . import exploits, gpu_tests, references, summary, throughput


class Validation:
    """One validation's settings, where it works and what it writes."""

    def __init__(self, cfg: DictConfig):
        import torch

        from ..problems.validation import hardware_label

        self.steps = [str(s) for s in cfg.steps]
        unknown = [s for s in self.steps if s not in summary.STEPS]
        if unknown:
            raise UserError(f"steps: unknown step(s) {', '.join(unknown)}; choose from {', '.join(summary.STEPS)}")
        self.levels = sorted({int(level) for level in cfg.levels})
        if not all(1 <= level <= 4 for level in self.levels):
            raise UserError(f"levels={list(cfg.levels)} must be levels 1 to 4")
        self.device = require_choice(cfg, "device", ("auto", "cuda", "cpu"))
        if self.device == "cuda" and not torch.cuda.is_available():
            raise UserError("device=cuda but no CUDA GPU is visible (device=cpu runs the steps on the CPU)")
        on_gpu = self.device != "cpu" and torch.cuda.is_available()
        self.gpu = hardware_label(torch.device("cuda" if on_gpu else "cpu"))
        self.device_name = torch.cuda.get_device_name(0) if on_gpu else "cpu"
        self.quick, self.quick_problems = bool(cfg.quick), require_int(cfg, "quick_problems", 1)
        self.cpu_workers, self.timeout = require_int(cfg, "num_cpu_workers", 1), require_int(cfg, "timeout", 1)
        self.test_timeout = require_int(cfg, "test_timeout", 1)
        self.subset = parse_subset(cfg.subset)
        self.problems_dir = cfg.problems_dir
        self.hidden_tests_dir = cfg.hidden_tests_dir
        self.summary_path = summary.summary_path(Path(cfg.out_dir), self.gpu)
        self.bounds_path = Path(cfg.identical_code_dir) / f"{self.gpu}.json"
        self.docs = Path(cfg.docs) if cfg.docs else None
        self.readme = Path(cfg.readme) if cfg.readme else None
        self.commit = summary.git_commit(tuple(p for p in (self.summary_path, self.bounds_path, self.docs,
                                                           self.readme) if p is not None))
        self.work = Path(cfg.work_dir) / f"{self.gpu}-{(self.commit or 'nogit').replace('+changes', '-changes')[:20]}"
        self.settings = {"levels": self.levels, "quick": self.quick, "subset": list(self.subset),
                         "num_cpu_workers": self.cpu_workers}

    def header(self) -> dict:
        return {"gpu": self.gpu, "device_name": self.device_name, "fingerprint": fingerprint(self.device_name)}

    def script(self, name: str, overrides: list[str], log: Path) -> None:
        """Run scripts/{name} as a user would; its output goes to `log`, its progress bars to the terminal."""
        log.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, str(CHECKOUT_ROOT / "scripts" / name), *overrides, f"device={self.device}"]
        with open(log, "a") as out:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            done = subprocess.run(command, cwd=CHECKOUT_ROOT, stdout=out, stderr=subprocess.STDOUT if
                                  not sys.stderr.isatty() else None)
        if done.returncode != 0:
            raise UserError(f"{name} exited with {done.returncode}; its output is in {log}")


def fingerprint(device_name: str) -> dict:
    import platform

    import torch

    return {"device_name": device_name, "torch": torch.__version__, "cuda": torch.version.cuda,
            "python": platform.python_version(), "cpus": _cpu_count()}


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_gpu_tests(v: Validation) -> dict:
    results = {}
    for name in tqdm(gpu_tests.SUITES, desc="gpu_tests", unit="suite"):
        (v.work / "logs").mkdir(parents=True, exist_ok=True)
        results[name] = gpu_tests.run_suite(name, v.work / "logs" / f"pytest_{name}.log", v.test_timeout)
    return gpu_tests.section(results)


def run_exploits(v: Validation) -> dict:
    entries = exploits.fixtures()
    work = v.work / "exploits"
    run_dir = work / exploits.RUN_NAME
    run_dir.mkdir(parents=True, exist_ok=True)
    num_samples = exploits.place_samples(entries, run_dir)
    overrides = exploits.eval_overrides(entries, work, num_samples, v.device, v.cpu_workers, v.timeout, "warn")
    v.script("eval_from_generations.py", [o for o in overrides if not o.startswith("device=")], v.work / "logs" / "exploits.log")
    rows = exploits.rows_of(entries, read_json(run_dir / "eval_results_hidden.json", "exploit suite records"))
    write_json_atomic(work / "rows.json", rows)
    exploits.print_table(rows)
    return exploits.section(rows)


def level_problems(v: Validation, level: int) -> list:
    from ..problems.load import list_problems

    problems = list_problems(level, v.problems_dir, v.subset)
    return problems[:v.quick_problems] if v.quick else problems


def run_references(v: Validation) -> dict:
    figures, by_name = {}, {}
    timing = v.work / "timing"
    for level in tqdm(v.levels, desc="references", unit="level"):
        problems = level_problems(v, level)
        if not problems:
            continue
        run_dir = v.work / "references" / f"level{level}"
        references.write_candidates(run_dir, level, problems)
        subset = [f"subset=[{problems[0].pid},{problems[-1].pid}]"] + \
            ([f"problems_dir={v.problems_dir}"] if v.problems_dir else [])
        log = v.work / "logs" / f"references_level{level}.log"
        v.script("generate_baseline_time.py", [f"level={level}", *subset, f"out_dir={timing}", "hardware=here",
                                               f"modes=[{references.BASELINE_MODE}]", "timing_path=sandbox",
                                               f"sandbox_runs_dir={v.work / 'baseline_runs'}"], log)
        v.script("eval_from_generations.py", [f"run_name={run_dir.name}", f"runs_dir={run_dir.parent}",
                                              f"level={level}", *subset, "use_hidden_tests=True",
                                              f"num_cpu_workers={v.cpu_workers}", f"timeout={v.timeout}"]
                 + ([f"hidden_tests_dir={v.hidden_tests_dir}"] if v.hidden_tests_dir else []), log)
        records = read_json(run_dir / "eval_results_hidden.json", "reference records")
        baseline = read_json(timing / "here" / f"{references.BASELINE_MODE}.json", "baseline").get(f"level{level}", {})
        figures[level] = references.level_figures(level, records, baseline, problems)
        by_name.update({f"L{level}/{p.pid}": p for p in problems})
    if v.device != "cpu" and v.gpu != "cpu":
        references.write_bounds(v.bounds_path, v.gpu, figures, by_name)
    return references.section(figures)


def honest_records(v: Validation) -> list[dict]:
    """Every honest record this validation made: the references and the clean and honest fixtures."""
    from . import clock

    found = []
    for path in sorted((v.work / "references").glob("level*/eval_results_hidden.json")):
        found += clock.honest_timed(read_json(path, "reference records"))
    rows_path = v.work / "exploits" / "rows.json"
    if rows_path.is_file():
        keys = {r["key"] for r in read_json(rows_path, "exploit suite rows") if r["kind"] in ("clean", "honest")}
        records = read_json(v.work / "exploits" / exploits.RUN_NAME / "eval_results_hidden.json", "exploit records")
        found += clock.honest_timed({k: r for k, r in records.items() if k in keys})
    return found


def run_clock(v: Validation) -> dict:
    from . import clock

    records = honest_records(v)
    if not records:
        raise UserError("steps=[clock] needs honest CUDA-timed records: run the references or exploits step "
                        "first on this checkout and GPU")
    return clock.section(records)


def run_throughput(v: Validation) -> dict:
    passes = []
    builds = v.work / "throughput" / "builds"
    for name in tqdm(throughput.PASSES, desc="throughput", unit="pass"):
        if name == "cold":
            import shutil

            shutil.rmtree(builds, ignore_errors=True)
        started, records = time.monotonic(), []
        for level in throughput.levels():
            run_dir = v.work / "throughput" / f"{name}_level{level}"
            overrides = throughput.prepare_run(run_dir, level) + [
                f"kernel_eval_build_dir={builds}", f"num_cpu_workers={v.cpu_workers}", f"timeout={v.timeout}"]
            v.script("eval_from_generations.py", overrides, v.work / "logs" / f"throughput_{name}.log")
            records += read_json(run_dir / "eval_results_hidden.json", "throughput records").values()
        passes.append(throughput.pass_figures(name, time.monotonic() - started, records))
    return throughput.section(passes)


STEP_FUNCTIONS = {"gpu_tests": run_gpu_tests, "exploits": run_exploits, "references": run_references,
                  "clock": run_clock, "throughput": run_throughput}


def validate_harness(cfg: DictConfig) -> int:
    """Run the configured steps; returns 1 when a step found a defect (an attack missed, an honest
    sample rejected or withheld, a test failing), else 0."""
    v = Validation(cfg)
    print(f"validating the harness on {v.device_name} ({v.gpu}): steps {', '.join(v.steps)}; work in {v.work}")
    for step in v.steps:
        started = time.monotonic()
        section = STEP_FUNCTIONS[step](v)
        summary.record_section(v.summary_path, v.header(), step, section, dict(v.settings), v.commit)
        print(f"{step}: done in {time.monotonic() - started:.0f} s; {v.summary_path} updated")
    if v.docs or v.readme:  # every GPU's summary in out_dir (never a CPU run's)
        from .render import render_files

        for path in render_files(v.summary_path.parent, v.docs, v.readme):
            print(f"wrote {path}")
    document = summary.load(v.summary_path)
    defects = defects_of(document)
    print(json.dumps({"summary": str(v.summary_path), "defects": defects}, indent=2))
    return 1 if defects else 0


def defects_of(document: dict) -> list[str]:
    """What in a summary a user must not cite as clean: missed attacks, honest samples rejected,
    withheld or failing D5 or a shape variant, failing suites."""
    sections, found = document.get("sections", {}), []
    ex = sections.get("exploits", {})
    found += [f"attack missed: {name}" for name in ex.get("attacks_missed", [])]
    for kind in ("clean", "honest"):
        found += [f"{kind} fixture rejected: {n}" for n in ex.get(kind, {}).get("rejected", [])]
        found += [f"{kind} fixture's time withheld: {n}" for n in ex.get(kind, {}).get("withheld", [])]
        found += [f"{kind} fixture failed D5: {n}" for n in ex.get(kind, {}).get("d5_failed", [])]
    for level, figures in sections.get("references", {}).get("levels", {}).items():
        found += [f"reference rejected: {line}" for line in figures.get("rejected", [])]
        found += [f"reference's time withheld: {line}" for line in figures.get("withheld", [])]
        found += [f"reference failed: {line}" for line in figures.get("robustness_failed", [])]
    for name, suite in sections.get("gpu_tests", {}).get("suites", {}).items():
        if suite.get("exit_code") != 0:
            found.append(f"{name} tests: {suite.get('failed', 0)} failed, {suite.get('errors', 0)} errors "
                         f"(exit {suite.get('exit_code')})")
    return found


