"""The scripts' command line (bad input, --help, --cfg job, -m sweeps), and resuming a run that was killed."""

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, TINY, load_config, make_run, tiny_overrides
from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.load import source_sha256

SCRIPT = ROOT / "scripts" / "eval_from_generations.py"


def run_script(*args, timeout=120):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("overrides, message", [
    (["level=7"], "unknown level 7"),
    (["precision=fp64"], "precision='fp64' is not one of"),
    (["num_samples=0"], "num_samples=0 must be an integer >= 1"),
    (["no_such_key=1"], "unknown config key 'no_such_key'"),
    (["use_hidden_tests=maybe"], "use_hidden_tests='maybe' is not a boolean"),
    (["gpu_arch=[Kepler2]"], "unknown gpu_arch 'Kepler2'"),
    (["subset=[1,2,3]"], "subset="),
    (["static_check=strict"], "static_check='strict' is not one of"),
    (["spare_sandboxes=-1"], "spare_sandboxes=-1 must be an integer >= 0"),
])
def test_bad_config_values_give_one_line_errors(tmp_path, overrides, message, monkeypatch, capsys):
    """In this process (the script's own wiring is the subprocess tests' below): each case would
    otherwise pay a torch import."""
    from kernelbench_verified.cli import run_script as run
    from kernelbench_verified.evaluate.run import evaluate_run

    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    base = [o for o in tiny_overrides(tmp_path, "r") if o.split("=")[0] not in {x.split("=")[0] for x in overrides}]
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *base, *overrides])
    with pytest.raises(SystemExit) as exit_:
        run("eval", evaluate_run, "Doc.", None)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_missing_run_folder_and_required_keys(tmp_path):
    result = run_script(*tiny_overrides(tmp_path, "nothing_here"))
    assert result.returncode == 2 and "run folder" in result.stderr and "not found" in result.stderr
    result = run_script("level=1")
    assert result.returncode == 2 and "missing required config key(s): run_name" in result.stderr


def test_malformed_result_file_is_reported_and_left_untouched(tmp_path):
    run_dir = make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    broken = run_dir / "eval_results.json"
    broken.write_text("{ not json")
    result = run_script(*tiny_overrides(tmp_path, "r"))
    assert result.returncode == 2 and "is not valid JSON" in result.stderr
    assert broken.read_text() == "{ not json"


def test_missing_hidden_tests_are_named(tmp_path):
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    result = run_script(*tiny_overrides(tmp_path, "r", hidden_tests_dir=str(tmp_path / "none"),
                                        use_hidden_tests=True))
    assert result.returncode == 2 and "no hidden tests for level 1" in result.stderr


def test_killed_run_resumes_without_reevaluating_finished_samples(tmp_path):
    run_dir = make_run(tmp_path, "r", {(1, 0): "relu_correct", (1, 1): "relu_sleeps_forever",
                                        (1, 2): "relu_correct"})
    results = run_dir / "eval_results.json"
    process = subprocess.Popen([sys.executable, str(SCRIPT), *tiny_overrides(tmp_path, "r", num_samples=3, subset="[1,1]")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and "1_0" in json.loads(results.read_text())):
        time.sleep(0.5)
    judges = [pid for pid in children(process.pid) if "multiprocessing.spawn" in command_line(pid)]
    process.kill()  # the evaluator alone, as `kill -9 PID` does: its judge must not judge on unread
    process.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(map(running, judges)):
        time.sleep(0.2)
    survivors = [pid for pid in judges if running(pid)]
    os.killpg(process.pid, signal.SIGKILL)
    assert judges and not survivors, f"judge processes {judges}, alive after their evaluator was killed: {survivors}"
    first = json.loads(results.read_text())
    assert list(first) == ["1_0"] and first["1_0"]["eval_status"] == "correct"

    (run_dir / "level_1_problem_1_sample_1_kernel.py").write_text(
        (ROOT / "examples/tiny/kernels/relu_correct.py").read_text())
    result = run_script(*tiny_overrides(tmp_path, "r", num_samples=3, subset="[1,1]"))
    assert result.returncode == 0, result.stderr
    assert "2 kernel(s) to evaluate, 1 already done" in result.stdout
    final = json.loads(results.read_text())
    assert final["1_0"] == first["1_0"]
    assert [final[k]["eval_status"] for k in ("1_0", "1_1", "1_2")] == ["correct"] * 3


def test_a_record_of_another_version_of_the_problem_file_is_evaluated_again(tmp_path):
    """A re-run resumes a sample only if its record was judged against the same problem file: after the
    reference changes (or problems_dir= points elsewhere) the old verdict is no evidence."""
    problems = tmp_path / "KernelBench"
    shutil.copytree(TINY / "KernelBench", problems)
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    overrides = tiny_overrides(tmp_path, "r", subset="[1,1]", problems_dir=str(problems))
    assert run_script(*overrides).returncode == 0
    again = run_script(*overrides)
    assert "0 kernel(s) to evaluate, 1 already done" in again.stdout
    reference = next((problems / "level1").glob("1_*.py"))
    reference.write_text(reference.read_text() + "\n# the reference, edited\n")
    edited = run_script(*overrides)
    assert edited.returncode == 0 and "1 kernel(s) to evaluate, 0 already done" in edited.stdout
    record = json.loads((tmp_path / "r" / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct" and record["metadata"]["problem_sha256"] == source_sha256(reference)


def test_huggingface_source_without_datasets_or_network_is_one_clear_line(tmp_path):
    """datasets is not a test dependency: the script must say how to get it (offline it says it could
    not load the dataset); either way one line, exit 2."""
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    overrides = [o for o in tiny_overrides(tmp_path, "r") if not o.startswith("problems_dir=")]
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    result = subprocess.run([sys.executable, str(SCRIPT), *overrides, "dataset_src=huggingface"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert ("pip install datasets" in result.stderr) or ("use dataset_src=local" in result.stderr)


def test_judge_processes_start_sandboxes_before_importing_torch():
    """A judge process re-imports the eval script (multiprocessing's spawn) and then runs
    evaluate.worker.judge_worker: neither may import torch, or the first kernel of every run waits
    for two torch imports in a row instead of overlapping them."""
    code = ("import runpy, sys; runpy.run_path(sys.argv[1], run_name='__mp_main__'); "
            "import kernelbench_verified.evaluate.worker; print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "False"


def test_local_mode_never_imports_ray_and_ray_mode_without_it_says_how_to_install(tmp_path):
    """Ray is an optional extra: the eval path imports it only in eval_mode=ray, and without it that mode
    stops with one line naming the extra."""
    code = ("import sys; import kernelbench_verified.evaluate.run as run; print('ray' in sys.modules); "
            "sys.modules['ray'] = None; from kernelbench_verified import cluster\n"
            "try:\n    cluster.import_ray()\nexcept Exception as e:\n    print(e)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == ["False", 'eval_mode=ray needs Ray: pip install -e ".[ray]"']


@pytest.mark.parametrize("word, value", [("F", False), ("T", True), ("false", False), ("True", True), ("0", False),
                                         ("yes", True)])
def test_upstream_booleans_mean_what_they_say(word, value):
    """pydra's T/F and the usual spellings: `use_hidden_tests=F` must never read as true."""
    cfg = load_config("eval", ["run_name=x", "level=1", f"use_hidden_tests={word}", f"verbose={word}"])
    assert cfg.use_hidden_tests is value and cfg.verbose is value


def test_a_value_that_is_not_a_boolean_names_its_key():
    with pytest.raises(UserError, match=r"measure_performance='sometimes' is not a boolean"):
        load_config("eval", ["run_name=x", "level=1", "measure_performance=sometimes"])


def test_upstream_tuple_subset_parses():
    assert tuple(load_config("eval", ["run_name=x", "level=1", "subset=(1,10)"]).subset) == (1, 10)


def test_an_unknown_key_names_the_close_ones():
    with pytest.raises(UserError, match=r"unknown config key 'use_hiden_tests' \(did you mean use_hidden_tests"):
        load_config("eval", ["run_name=x", "level=1", "use_hiden_tests=True"])


# The command line every Hydra script shares (cli.run_script): --help, --cfg job, -m.

HYDRA_SCRIPTS = {"generate_samples.py": "generate", "eval_from_generations.py": "eval",
                 "generate_baseline_time.py": "baseline", "benchmark_eval_analysis.py": "analysis",
                 "export_upstream.py": "export_upstream"}


def run_without_torch(script, *args):
    """A script run where importing torch fails, as on a machine where torch is slow or broken."""
    code = ("import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code, str(script), *args], capture_output=True, text=True,
                          timeout=120)


def written(value) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("script, config", HYDRA_SCRIPTS.items())
def test_help_names_every_key_with_its_default_and_needs_no_torch(script, config):
    from omegaconf import OmegaConf

    result = run_without_torch(ROOT / "scripts" / script, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    purpose = ast.get_docstring(ast.parse((ROOT / "scripts" / script).read_text())).splitlines()[0]
    assert result.stdout.startswith(f"usage: {script} ") and purpose in result.stdout
    assert "--cfg job" in result.stdout and "-m, --multirun" in result.stdout
    defaults = OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / f"{config}.yaml"), resolve=False)
    for key, value in defaults.items():
        if isinstance(value, dict):
            assert f"  {key}=" in result.stdout or f"  {key}.{next(iter(value))}=" in result.stdout, key
        elif isinstance(value, list):
            assert f"  {key}=[" in result.stdout, key
        else:
            assert f"  {key}={written(value)} " in result.stdout or f"  {key}={written(value)}\n" in result.stdout, key


def test_help_gives_each_key_the_comments_of_its_config_file(monkeypatch):
    from kernelbench_verified.cli import script_help

    monkeypatch.setenv("COLUMNS", "100")  # the help wraps to the terminal: this test reads one at 100 columns
    text = script_help("eval", "Evaluate.", None, "eval_from_generations.py")
    assert re.search(r"^  timeout=180 +seconds a kernel may take from start to finish before it is killed$", text, re.M)
    flat = " ".join(text.split())
    assert "nvcc builds of a torch extension take 30-60 s" in flat  # a comment's second line
    assert "jail_limits.host_memory_gb=64 host memory of the kernel's processes" in flat
    assert "-m, --multirun not taken by this script" in flat
    modes = " ".join(script_help("baseline", None, None, "x.py").split())
    assert "- baseline_time_torch_bf16: model and floating-point inputs in bfloat16" in modes  # a list item's


@pytest.mark.parametrize("config", sorted(p.stem for p in (ROOT / "configs").glob("*.yaml")))
def test_every_key_of_every_config_says_what_it_means(config):
    """The config files are the only place a key is described: --help shows their comments."""
    from kernelbench_verified.cli import config_keys

    assert [doc.key for doc in config_keys(config) if not doc.meaning] == []


RECORDING_SCRIPT = '''"""Records each job it runs."""
import os
import time
from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script
from kernelbench_verified.errors import UserError


def main(cfg):
    if cfg.run_name == "fails":
        raise UserError("this job fails")
    if cfg.run_name == "sleeps":
        (Path(cfg.runs_dir) / "sleeper.pid").write_text(str(os.getpid()))
        time.sleep(60)
    with open(Path(cfg.runs_dir) / "jobs.log", "a") as log:
        log.write(f"{cfg.run_name} {cfg.level} {list(cfg.subset)}\\n")


run_script("eval", main, __doc__, Sweeps(lambda cfg: [Path(cfg.runs_dir) / cfg.run_name], "one run_name a job"))
'''


def run_recorder(tmp_path, *args):
    script = tmp_path / "record_jobs.py"
    script.write_text(RECORDING_SCRIPT)
    return subprocess.run([sys.executable, str(script), f"runs_dir={tmp_path}", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_cfg_job_prints_the_composed_config_and_runs_nothing(tmp_path):
    from omegaconf import OmegaConf

    result = run_without_torch(SCRIPT, "level=2", "precision=bf16", "run_name=r_level${level}", "--cfg", "job")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    cfg = OmegaConf.create(result.stdout)
    assert (cfg.level, cfg.precision, cfg.run_name, cfg.use_hidden_tests) == (2, "bf16", "r_level2", False)
    printed = run_recorder(tmp_path, "run_name=a", "level=1", "--cfg", "job")
    assert printed.returncode == 0 and "run_name: a" in printed.stdout
    assert not (tmp_path / "jobs.log").exists()
    assert run_recorder(tmp_path, "run_name=a", "level=1").returncode == 0  # the same command runs without it
    assert (tmp_path / "jobs.log").read_text() == "a 1 [None, None]\n"
    unfinished = run_recorder(tmp_path, "level=1", "--cfg", "job")  # the required run_name not given yet
    assert unfinished.returncode == 0 and "run_name: ???" in unfinished.stdout
    assert "run_name" in unfinished.stderr and len(unfinished.stderr.strip().splitlines()) == 1
    refused = run_recorder(tmp_path, "run_name=a", "level=1", "--cfg", "hydra")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "--cfg job" in refused.stderr and refused.stdout == ""


def test_multirun_runs_one_job_per_combination_in_order(tmp_path):
    result = run_recorder(tmp_path, "-m", "level=1,2", "run_name=a_${level},b_${level}", "subset=[1,10]")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "jobs.log").read_text().splitlines() == [
        "a_1 1 [1, 10]", "b_1 1 [1, 10]", "a_2 2 [1, 10]", "b_2 2 [1, 10]"]
    assert "-m job 4/4: level=2 run_name=b_" in result.stdout


def test_multirun_stops_at_the_first_job_that_fails(tmp_path):
    result = run_recorder(tmp_path, "-m", "run_name=a,fails,b", "level=1")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: this job fails"
    assert (tmp_path / "jobs.log").read_text().splitlines() == ["a 1 [None, None]"]


def test_a_killed_sweep_takes_its_running_job_with_it(tmp_path):
    """A job left running after its sweep was killed would go on writing results nobody waits for."""
    script = tmp_path / "record_jobs.py"
    script.write_text(RECORDING_SCRIPT)
    sweep = subprocess.Popen([sys.executable, str(script), "-m", f"runs_dir={tmp_path}", "run_name=sleeps,b",
                              "level=1"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid_file, deadline = tmp_path / "sleeper.pid", time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    job = int(pid_file.read_text())
    sweep.kill()
    sweep.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and running(job):
        time.sleep(0.1)
    if running(job):
        os.kill(job, signal.SIGKILL)
        pytest.fail("the job outlived its sweep")
    assert not (tmp_path / "jobs.log").exists()


def children(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except FileNotFoundError:
        return ""


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_sweep_whose_jobs_would_write_one_place_is_refused_before_any_runs(tmp_path):
    result = run_recorder(tmp_path, "-m", "level=1,2,3", "run_name=a")
    assert result.returncode == 2 and not (tmp_path / "jobs.log").exists()
    assert result.stderr.strip() == (f"error: -m: jobs level=1 and level=2 would both write {tmp_path / 'a'}: "
                                     "one run_name a job")


@pytest.mark.parametrize("script, overrides, message", [
    ("eval_from_generations.py", ["level=1,2", "run_name=x"], "would both write runs/x/eval_results.json: give each "
                                                             "job its own run_name"),
    ("generate_samples.py", ["model_name=a,b", "run_name=x", "level=1"], "would both write runs/x: give each job "
                                                                         "its own run_name"),
    ("generate_baseline_time.py", ["level=1,2"], "time several levels or modes in one job (level=[1,2,3]"),
    ("export_upstream.py", ["use_hidden_eval=false,true", "run_name=x", "level=1"], "would both write "
                                                                                    "runs/x_upstream"),
])
def test_each_script_refuses_sweeps_that_would_mix_results(tmp_path, script, overrides, message):
    """eval_results.json is keyed {pid}_{sid}, without the level: two levels in one run would mix."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "-m", *overrides],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)  # relative paths: in tmp
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_a_sweep_with_a_run_name_per_level_shows_each_jobs_config():
    from omegaconf import OmegaConf

    result = run_script("-m", "--cfg", "job", "level=1,2", "run_name=x_level${level}", "subset=[1,10]")
    assert result.returncode == 0, result.stderr
    jobs = result.stdout.split("# -m job ")[1:]
    configs = [OmegaConf.create(job.partition("\n")[2]) for job in jobs]
    assert [(c.run_name, c.level, list(c.subset)) for c in configs] == [("x_level1", 1, [1, 10]),
                                                                         ("x_level2", 2, [1, 10])]


def test_without_m_a_comma_is_an_error_that_names_m():
    with pytest.raises(UserError, match=r"Ambiguous value for argument 'level=1,2': add -m"):
        load_config("eval", ["run_name=x", "level=1,2"])


def test_a_script_without_sweeps_refuses_m_and_unknown_options_in_one_line(monkeypatch, capsys):
    from kernelbench_verified.cli import run_script as run

    for argv, message in ((["-m", "level=1,2", "run_name=x"], "takes no sweep (-m): run one command per"),
                          (["--info"], "unknown option '--info'")):
        monkeypatch.setattr(sys, "argv", ["x.py", *argv])
        with pytest.raises(SystemExit) as exit_:
            run("eval", lambda cfg: pytest.fail("the job ran"), "Doc.", None)
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


@pytest.mark.parametrize("script, default", [("generate_leaderboard.py", "(default: baseline_time_torch_tf32)"),
                                             ("generate_hidden_inputs.py", "(default: auto)"),
                                             ("validate_problems.py", "(default: results/problems)"),
                                             ("compare_verdicts.py", "(default: none)")])
def test_argparse_scripts_answer_help_with_purpose_and_defaults_without_torch(script, default):
    result = run_without_torch(ROOT / "scripts" / script, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    first_line = ast.get_docstring(ast.parse((ROOT / "scripts" / script).read_text())).splitlines()[0]
    assert first_line in result.stdout and default in " ".join(result.stdout.split())
    lines = result.stdout.partition("options:")[2].partition("\n\n")[0].splitlines()
    for line, after in zip(lines, lines[1:] + [""]):  # an option's help is beside it or on the next line
        if line.startswith("  -"):
            assert re.search(r"\S\s{2,}\S", line.strip()) or after.startswith(" " * 8), f"no help: {line}"
