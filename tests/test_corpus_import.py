"""Importing a published corpus (import_kernels.py) and the leaderboard's claims audit.

The corpus (tests/fixtures/corpus/corpus.jsonl) holds honest kernels, a known hack (identity ReLU on
[0, 1) inputs), a kernel with an error-level static finding, rows without code or with code that does not
parse, a duplicate, a row of an unknown level, a problem with no shipped file and no reference, a
reference with other shapes, a corpus-only problem, and claims against eager, torch.compile and CUDA graphs.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from conftest import ROOT, TINY
from kernelbench_verified.config import load_config
from kernelbench_verified.corpus.importer import import_corpus
from kernelbench_verified.corpus.references import CONSTANTS, IDENTICAL, MODEL, NO_SHIPPED, compare_references
from kernelbench_verified.errors import UserError
from kernelbench_verified.leaderboard.claims import claims_audit
from kernelbench_verified.leaderboard.discovery import Baselines, find_runs, load_excluded, load_run_results

CORPUS = ROOT / "tests" / "fixtures" / "corpus" / "corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text().splitlines()]


def import_cfg(runs_dir: Path, source: Path, **extra):
    values = {"source": str(source), "name": "acme", "runs_dir": str(runs_dir),
              "problems_dir": str(TINY / "KernelBench"), **extra}
    return load_config("import", [f"{k}={v}" for k, v in values.items()])


def written(format_: str, folder: Path) -> Path:
    """The fixture corpus in one of the formats a corpus is published in."""
    if format_ == "jsonl":
        return CORPUS
    path = folder / f"corpus.{format_}"
    if format_ == "json":
        path.write_text(json.dumps({"rows": ROWS}))
    elif format_ == "csv":
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(ROWS[0]))
            writer.writeheader()
            writer.writerows([{k: "" if v is None else v for k, v in row.items()} for row in ROWS])
    else:
        pyarrow = pytest.importorskip("pyarrow")
        import pyarrow.parquet as parquet

        # A Parquet column has one type: ids as text ("1", "2_Matmul.py"), as such files hold them
        parquet.write_table(pyarrow.Table.from_pylist([{**r, "task_id": str(r["task_id"])} for r in ROWS]), path)
    return path


def files_of(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and p.name not in ("generate_config.yaml", "generation_config.yaml", "import_report.json")}


@pytest.mark.parametrize("format_", ["jsonl", "json", "csv", "parquet"])
def test_every_format_imports_the_same_runs_and_counts(tmp_path, format_):
    source = written(format_, tmp_path)
    assert import_corpus(import_cfg(tmp_path / "runs", source)) == 0
    report = json.loads((tmp_path / "runs" / "acme_corpus" / "import_report.json").read_text())
    assert report["rows"] == 12 and report["imported"] == 6
    assert {k: v for k, v in report["skipped"].items() if v} == {
        "no_code": 2, "unparseable": 1, "duplicate": 1, "bad_id": 1, "no_problem": 1}
    assert [r["row"] for r in report["skipped_rows"]["duplicate"]] == [2]
    level1 = report["levels"]["1"]
    assert level1["compared"] == {IDENTICAL: 2, CONSTANTS: 1, MODEL: 0, NO_SHIPPED: 0}
    assert level1["references"] == "corpus" and level1["differing"] == {CONSTANTS: [3]}
    assert report["levels"]["2"]["compared"][NO_SHIPPED] == 1
    run = tmp_path / "runs" / "acme_level1_test"
    assert sorted(p.name for p in run.glob("*_kernel.py")) == [
        f"level_1_problem_{p}_sample_{s}_kernel.py" for p, s in ((1, 0), (1, 1), (1, 2), (2, 0), (3, 0))]
    claims = json.loads((run / "claims.json").read_text())
    assert claims["1_1"] == [{"column": "speedup", "kind": "eager", "claimed": 40.0, "baseline": "baseline_time_torch"}]
    assert [c["kind"] for c in claims["2_0"]] == ["compile"]
    assert sorted((c["kind"], c["baseline"]) for c in claims["3_0"]) == [("cuda_graphs", None),
                                                                          ("eager", "baseline_time_torch")]
    corpus = tmp_path / "runs" / "acme_corpus"
    assert "batch_size = 8" in (corpus / "KernelBench" / "level1" / "3_Linear_GELU.py").read_text()
    assert (corpus / "KernelBench" / "level2" / "7_Tanh.py").is_file()
    assert "SEED = 1002007" in (corpus / "hidden_tests" / "level2" / "7_hidden.py").read_text()
    recorded = OmegaConf.load(run / "generate_config.yaml")
    assert recorded.model_name == "acme" and recorded.level == 1 and recorded.num_samples == 3
    assert (run / recorded.run_problems_dir).resolve() == (corpus / "KernelBench").resolve()
    assert recorded.source_sha256 == report["source_sha256"] and recorded["import"]["name"] == "acme"


def test_a_rerun_is_idempotent_and_another_source_under_the_name_is_refused(tmp_path):
    runs = tmp_path / "runs"
    import_corpus(import_cfg(runs, CORPUS))
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in runs.rglob("*") if p.is_file()}
    import_corpus(import_cfg(runs, CORPUS))
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in runs.rglob("*") if p.is_file()}
    changed = [p.name for p in before if before[p] != after[p]]
    assert set(before) == set(after) and changed == []
    other = written("json", tmp_path)
    with pytest.raises(UserError, match="holds an import of another source"):
        import_corpus(import_cfg(runs, other))


def test_references_shipped_judges_against_todays_problems(tmp_path):
    import_corpus(import_cfg(tmp_path / "runs", CORPUS, references="shipped"))
    recorded = OmegaConf.load(tmp_path / "runs" / "acme_level1_test" / "generate_config.yaml")
    assert recorded.references == "shipped" and recorded.run_problems_dir is None
    report = json.loads((tmp_path / "runs" / "acme_corpus" / "import_report.json").read_text())
    assert not (tmp_path / "runs" / "acme_corpus" / "KernelBench" / "level1").exists()
    assert report["skipped"]["no_problem"] == 2  # #99, and level 2's #7 has no shipped file


@pytest.mark.parametrize("override, message", [
    ("fields.kernel=source_code", "fields.kernel='source_code' is not a column of the source; its columns: baseline, code,"),
    ("claims={spd:eager}", "claims.spd is not a column of the source; its columns:"),
    ("references=mine", "references='mine' is not one of auto, corpus, shipped"),
])
def test_a_bad_field_map_is_one_line_naming_the_columns(tmp_path, override, message):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_kernels.py"), f"source={CORPUS}",
                             "name=acme", f"runs_dir={tmp_path}", override], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_missing_kernel_column_names_the_columns_there_are(tmp_path):
    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"level": 1, "task_id": 1, "text": "x"}) + "\n")
    with pytest.raises(UserError, match=r"no kernel column .* its columns: level, task_id, text"):
        import_corpus(import_cfg(tmp_path, source))


def test_reference_comparison_tells_constants_from_model_changes():
    shipped = (TINY / "KernelBench" / "level1" / "1_ReLU.py").read_text()
    assert compare_references(shipped + "\n# a comment\n", shipped) == IDENTICAL
    assert compare_references(shipped.replace("dim = 1024", "dim = 4096"), shipped) == CONSTANTS
    assert compare_references(shipped.replace("torch.relu(x)", "torch.relu(x) * 2"), shipped) == MODEL
    assert compare_references(shipped, None) == NO_SHIPPED


# ---------------------------------------------------------------- the audit against hand-computed figures

def _record(correct: bool, runtime: float, failed_case: str | None = None, static: str | None = None) -> dict:
    metadata = {"static_findings": [{"code": static, "severity": "error"}] if static else []}
    if failed_case:
        metadata.update(failed_case=failed_case, cases=[{"case": failed_case, "passed": False, "max_abs_diff": 2.5}])
    return {"sample_id": 0, "compiled": True, "correctness": correct, "eval_status": "correct" if correct else "incorrect",
            "runtime": runtime if correct else -1.0, "peak_memory": -1, "metadata": metadata}


def test_claims_audit_matches_hand_computed_figures(tmp_path):
    """Three problems, one sample each; eager baseline 4, 6, 3 ms and TF32 baseline 2, 3, 3 ms.
    #1 claims 5x, runs 2.5 ms: 1.6x eager, 0.8x TF32: lost at tf32. Its hidden run times it at 1 ms (2x),
       which does not bring it back: each step applies on top of the one before.
    #2 claims 8x, runs 1 ms: 6x, 3x, fails D4 under hidden tests (|out - ref| 2.5): lost at hidden.
    #3 claims 2x, runs 1.5 ms: 2x, 2x TF32, hidden-correct, but patches a timer (monkey_patch): lost at static.
    So no claim survives every step.
    #3 also claims 3x against CUDA graphs: not compared."""
    runs = tmp_path / "runs"
    import_corpus(import_cfg(runs, CORPUS))  # for the folders; its records are replaced below
    run = runs / "acme_level1_test"
    for path in run.glob("*_kernel.py"):
        path.unlink()
    (run / "claims.json").write_text(json.dumps({
        "1_0": [{"column": "speedup", "kind": "eager", "claimed": 5.0, "baseline": "baseline_time_torch"}],
        "2_0": [{"column": "speedup", "kind": "eager", "claimed": 8.0, "baseline": "baseline_time_torch"}],
        "3_0": [{"column": "speedup", "kind": "eager", "claimed": 2.0, "baseline": "baseline_time_torch"},
                {"column": "speedup_cuda_graphs", "kind": "cuda_graphs", "claimed": 3.0, "baseline": None}]}))
    (run / "eval_results.json").write_text(json.dumps({
        "1_0": _record(True, 2.5), "2_0": _record(True, 1.0), "3_0": _record(True, 1.5, static="monkey_patch")}))
    (run / "eval_results_hidden.json").write_text(json.dumps({
        "1_0": _record(True, 1.0), "2_0": _record(False, -1, failed_case="D4"),
        "3_0": _record(True, 1.5, static="monkey_patch")}))
    names = {1: "1_ReLU.py", 2: "2_Matmul.py", 3: "3_Linear_GELU.py"}
    for mode, means in (("baseline_time_torch", (4.0, 6.0, 3.0)), ("baseline_time_torch_tf32", (2.0, 3.0, 3.0))):
        path = runs / "acme_corpus" / "timing" / "cpu" / f"{mode}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"level1": {names[p]: {"mean": m} for p, m in zip((1, 2, 3), means)}}))
    loaded = [load_run_results(r, []) for r in find_runs(runs, ["acme_level1_test"])]
    warnings = []
    audit = claims_audit(loaded, Baselines(tmp_path / "none", "cpu"), load_excluded("none"),
                         OmegaConf.create({"hardware": "cpu"}), warnings)
    rows = {r["pid"]: r for r in audit["rows"]}
    assert rows[1]["speedup"] == pytest.approx({"claimed": 5.0, "retimed": 1.6, "tf32": 0.8, "hidden": 2.0,
                                                "static": 2.0})
    assert rows[1]["lost_at"] == "tf32" and rows[1]["reason"] == "0.8x is no speedup"
    assert not rows[1]["survives"]["hidden"] and not rows[1]["survives"]["static"]
    assert rows[2]["speedup"] == {"claimed": 8.0, "retimed": 6.0, "tf32": 3.0, "hidden": None, "static": None}
    assert rows[2]["lost_at"] == "hidden" and rows[2]["reason"] == "incorrect on D4 (max |out - ref| 2.5)"
    assert rows[3]["speedup"]["tf32"] == 2.0 and rows[3]["speedup"]["static"] is None
    assert rows[3]["lost_at"] == "static" and rows[3]["reason"] == "error-level static findings: monkey_patch"
    assert [(r["pid"], r["kind"]) for r in audit["not_compared"]] == [(3, "cuda_graphs")]
    assert "a baseline this harness does not time" in audit["not_compared"][0]["reason"]
    overall = audit["summaries"][-1]
    assert overall["label"] == "all" and overall["claims"] == 3
    steps = overall["steps"]
    assert steps["claimed"]["geomean"] == pytest.approx((5 * 8 * 2) ** (1 / 3))
    assert steps["retimed"]["geomean"] == pytest.approx((1.6 * 6 * 2) ** (1 / 3))
    assert steps["tf32"]["geomean"] == pytest.approx((0.8 * 3 * 2) ** (1 / 3))
    assert steps["hidden"]["geomean"] == pytest.approx(2.0) and steps["hidden"]["counted"] == 2
    assert steps["static"]["geomean"] == pytest.approx(2.0) and steps["static"]["counted"] == 1
    assert [steps[k]["survive"] for k in ("claimed", "retimed", "tf32", "hidden", "static")] == \
        pytest.approx([1, 1, 2 / 3, 1 / 3, 0])
    assert [r["pid"] for r in audit["largest_failed"]] == [2, 1, 3]  # by claim, largest first
    assert audit["summaries"][0]["label"] == "level 1"


# ---------------------------------------------------------------- end to end on the CPU

def script(name: str, *args, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], capture_output=True, text=True,
                            timeout=600, cwd=cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_import_evaluate_and_audit_end_to_end(tmp_path):
    """Import -> evaluate (standard and hidden, CPU) -> baseline of the corpus's own problems -> leaderboard
    and analysis; no problems_dir= or hidden_tests_dir= anywhere after the import."""
    cheap = ["device=cpu", "num_perf_trials=3", "num_warmup=1", "num_cpu_workers=1",
             f"kernel_eval_build_dir={tmp_path / 'builds'}", "runs_dir=runs"]
    imported = script("import_kernels.py", f"source={CORPUS}", "name=acme", f"problems_dir={TINY / 'KernelBench'}",
                      cwd=tmp_path)
    printed = [line.strip() for line in imported.stdout.splitlines()]
    for hidden in ("False", "True"):
        step = f"run_name=acme_level1_test level=1 num_samples=3 use_hidden_tests={hidden}"
        assert f"python scripts/eval_from_generations.py {step}" in printed  # the importer says what to run next
        script("eval_from_generations.py", *step.split(), *cheap, cwd=tmp_path)
    assert "python scripts/generate_baseline_time.py run_name=acme_level1_test" in printed
    script("generate_baseline_time.py", "run_name=acme_level1_test", "runs_dir=runs", "device=cpu",
           "timing_path=process", "modes=[baseline_time_torch,baseline_time_torch_tf32]", "num_perf_trials=3",
           cwd=tmp_path)
    runs = tmp_path / "runs"
    hidden = json.loads((runs / "acme_level1_test" / "eval_results_hidden.json").read_text())
    assert hidden["1_1"]["correctness"] is False  # the identity shortcut fails a hidden distribution
    assert hidden["3_0"]["correctness"] is True   # honest, on the corpus's own (smaller) shapes
    page = script("generate_leaderboard.py", "--runs_dir", "runs", "--hardware", "cpu", "--use_hidden_eval",
                  "--out", "lb.html", cwd=tmp_path)
    assert "acme_level2_test has neither" in page.stderr  # level 2 not evaluated: left out, not refused
    data = (tmp_path / "lb.html").read_text()
    assert "Claims audit" in data and "claims_audit" in data
    loaded = [r for run in find_runs(runs) if (r := load_run_results(run, [])) is not None]
    audit = claims_audit(loaded, Baselines(tmp_path / "none", "cpu"), load_excluded("none"),
                         OmegaConf.create({"hardware": "cpu"}), [])
    rows = {(r["pid"], r["sid"]): r for r in audit["rows"]}
    baseline = json.loads((runs / "acme_corpus" / "timing" / "cpu" / "baseline_time_torch_tf32.json").read_text())
    standard = json.loads((runs / "acme_level1_test" / "eval_results.json").read_text())
    expected = baseline["level1"]["1_ReLU.py"]["mean"] / standard["1_0"]["runtime"]
    assert rows[(1, 0)]["speedup"]["tf32"] == pytest.approx(expected, rel=1e-9)
    assert rows[(1, 1)]["speedup"]["hidden"] is None and rows[(1, 1)]["claimed"] == 40.0
    patched = rows[(1, 2)]  # the static checker removes it whatever the CPU's timings make of it before
    assert patched["speedup"]["static"] is None and not patched["survives"]["static"]
    if patched["lost_at"] == "static":
        assert "monkey_patch" in patched["reason"]
    else:
        assert patched["lost_at"] in ("retimed", "tf32", "hidden") and patched["reason"].endswith("is no speedup")
    not_compared = {(r["pid"], r["kind"]) for r in audit["not_compared"]}
    assert not_compared == {(2, "compile"), (3, "cuda_graphs")}  # no compile baseline timed; graphs never
    analysis = script("benchmark_eval_analysis.py", "run_name=acme_level1_test", "runs_dir=runs", "level=1",
                      "hardware=cpu", "use_hidden_eval=True", cwd=tmp_path)
    assert "claims audit: with hidden-test correctness" in analysis.stdout
    assert math.isfinite(audit["summaries"][-1]["steps"]["claimed"]["geomean"])
