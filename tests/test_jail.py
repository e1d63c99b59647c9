"""The kernel jail, measured by attacks (tests/fixtures/jail/): each attack runs as a sample through the
real eval script, then the files, the records and the process table are checked, never what the kernel
says about itself. Also the jail's own pieces: seccomp, the environment, refused kernel paths."""

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelbench_verified.evaluate import cgroups, jail, pch, seccomp

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ROOT / "tests" / "fixtures" / "jail"
PROBLEMS = ROOT / "tests" / "fixtures" / "problems"
SCRIPT = ROOT / "scripts" / "eval_from_generations.py"
SECRET = "sk-canary-8f3a1c55e0d94b7b"
MARKER = "KBV_ATTACK"
# Samples of problem 1 (ReLU): the attacks, then honest kernels that must still be judged correctly
# after them (no daemon, forged record or killed sandbox may reach them).
ATTACK_FILES = sorted(p.name for p in ATTACKS.glob("jail_*.py"))
HONEST = ROOT / "examples" / "tiny" / "kernels" / "relu_correct.py"
# What each attack may end as: its forward is correct, so either it is contained and correct, or a
# limit stopped it. Never a forged status.
ENDINGS = {
    "jail_memory_hog.py": {"correct", "runtime_error", "resource_limit", "out_of_memory"},
    "jail_fork_bomb.py": {"correct", "resource_limit"},
    "jail_disk_fill.py": {"correct", "resource_limit"},
    "jail_log_flood.py": {"resource_limit"},
    "jail_cpu_burn.py": {"resource_limit", "timeout"},
    "jail_leak_secrets_error.py": {"load_error", "runtime_error"},
}
LIMITS = {"host_memory_gb": 3, "processes": 200, "file_mb": 128, "cpu_seconds": 8, "log_mb": 4,
          "job_mb": 64, "tmp_mb": 64, "build_mb": 64}

pytestmark = pytest.mark.skipif(jail.available() is not None, reason=f"no jail here: {jail.available()}")


def tree_digest(folder: Path) -> dict:
    """Every file under `folder` with the hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def marked_processes() -> list[str]:
    """Processes on this host whose command line or environment carries the attacks' marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        for name in ("cmdline", "environ"):
            try:
                data = Path(f"/proc/{entry}/{name}").read_bytes()
            except OSError:
                continue
            if MARKER.encode() in data:
                found.append(f"{entry}: {Path(f'/proc/{entry}/cmdline').read_bytes()[:120]!r}")
                break
    return found


@pytest.fixture(scope="module")
def attacked_world(tmp_path_factory):
    """A checkout-like world (problems, hidden tests, another run with its records and kernels, a
    build cache) in which every attack ran as a sample of one run."""
    world = tmp_path_factory.mktemp("world")
    shutil.copytree(PROBLEMS, world / "problems")
    victim = world / "runs" / "victim_run"
    victim.mkdir(parents=True)
    (victim / "eval_results.json").write_text(json.dumps({"1_0": {"correctness": False, "runtime": -1.0}}))
    shutil.copy(HONEST, victim / "level_1_problem_1_sample_0_kernel.py")
    other_build = world / "cache" / "kernel_builds" / "0123456789abcdef0123"
    other_build.mkdir(parents=True)
    (other_build / "relu.so").write_bytes(b"\x7fELF not really")
    run = world / "runs" / "attack_run"
    run.mkdir()
    samples = ATTACK_FILES + [HONEST.name, HONEST.name]
    for sid, name in enumerate(samples):
        source = ATTACKS / name if name.startswith("jail_") else HONEST
        shutil.copy(source, run / f"level_1_problem_1_sample_{sid}_kernel.py")
    for leftover in Path("/tmp").glob("kbv_attack_*"):
        leftover.unlink()
    cgroups_before = sandbox_cgroups()
    before = tree_digest(world)
    env = dict(os.environ, OPENAI_API_KEY=SECRET, ANTHROPIC_API_KEY=SECRET, HF_TOKEN=SECRET,
               **{cgroups.OWNER_ENV: OWNER})  # its cgroups, told from those of runs beside this one
    overrides = {"run_name": "attack_run", "runs_dir": str(world / "runs"), "level": 1, "subset": "[1,1]",
                 "num_samples": len(samples), "problems_dir": str(world / "problems"),
                 "hidden_tests_dir": str(world / "problems" / "hidden_tests"), "use_hidden_tests": True,
                 "kernel_eval_build_dir": str(world / "cache" / "kernel_builds"), "device": "cpu",
                 "num_perf_trials": 3, "num_warmup": 1, "timeout": 60, "static_check": "off",
                 **{f"jail_limits.{k}": v for k, v in LIMITS.items()}}
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(SCRIPT), *(f"{k}={v}" for k, v in overrides.items())],
                            capture_output=True, text=True, env=env, cwd=world, timeout=1200)
    time.sleep(1.0)  # a surviving daemon would have run on by now
    records = json.loads((run / "eval_results_hidden.json").read_text())
    return {"world": world, "run": run, "before": before, "records": records, "samples": samples,
            "result": result, "seconds": time.monotonic() - started,
            "new_cgroups": sandbox_cgroups() - cgroups_before}


OWNER = f"eval{os.getpid()}"  # the tag of the attack run's sandbox cgroups (alive while this test runs)


def sandbox_cgroups() -> set:
    hierarchy = cgroups.locate()[0]
    return set(hierarchy.parent.glob(f"{OWNER}_sandbox_*")) if hierarchy else set()


def test_the_run_itself_finished(attacked_world):
    result = attacked_world["result"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(attacked_world["records"]) == len(attacked_world["samples"])


def test_nothing_outside_the_attack_run_changed(attacked_world):
    world, before = attacked_world["world"], attacked_world["before"]
    after = tree_digest(world)
    outside = lambda d: {k: v for k, v in d.items() if not k.startswith("runs/attack_run/")}  # noqa: E731
    assert outside(after) == outside(before)
    kernels = {k: v for k, v in before.items() if k.startswith("runs/attack_run/level_")}
    assert {k: after[k] for k in kernels} == kernels, "a kernel file of the run was swapped"


def test_the_precompiled_header_folder_was_a_target_and_stayed_empty(attacked_world):
    # jail_poison_pch.py tries to plant a header there; the run makes none (too few C++ builds), so any
    # file in it came from a kernel.
    if not pch.is_gcc("c++"):
        pytest.skip("no GCC here: there is no precompiled header folder to attack")
    folders = list((attacked_world["world"] / "cache" / "kernel_builds" / "pch").glob("*"))
    assert folders, "the run mounted no header folder, so the attack had no target"
    assert [p for folder in folders for p in folder.rglob("*") if p.name != ".lock"] == []


def test_no_process_of_any_attack_survives(attacked_world):
    assert marked_processes() == []
    assert not list(Path("/tmp").glob("kbv_attack_*")), "an attack wrote into the host's /tmp"
    for record in attacked_world["records"].values():
        assert not record["metadata"].get("jail_survivors"), record["metadata"]["jail_survivors"]


def test_every_record_is_the_judges_and_later_samples_are_unharmed(attacked_world):
    records, samples = attacked_world["records"], attacked_world["samples"]
    for sid, name in enumerate(samples):
        record = records[f"1_{sid}"]
        allowed = ENDINGS.get(name, {"correct"})
        assert record["eval_status"] in allowed, (name, record["eval_status"], record["metadata"].get("error"))
        assert record["metadata"]["sandbox"] == "jail"
        if record["eval_status"] == "correct":
            assert record["runtime"] != 0.001 and record["metadata"]["cases"], name
            assert all(case["passed"] for case in record["metadata"]["cases"])
    assert records[f"1_{len(samples) - 1}"]["eval_status"] == "correct"


def test_limits_end_their_samples_with_the_limit_named(attacked_world):
    records, samples = attacked_world["records"], attacked_world["samples"]
    by_name = {name: records[f"1_{sid}"] for sid, name in enumerate(samples)}
    assert "log_size" in by_name["jail_log_flood.py"]["metadata"]["error"]
    cpu = by_name["jail_cpu_burn.py"]
    assert cpu["eval_status"] == "timeout" or "cpu_time" in cpu["metadata"]["error"]


def test_host_memory_is_capped_by_the_sandbox_cgroup(attacked_world):
    """The hog takes 8 GiB against a 3 GiB cap: with a cgroup per sandbox the OS kills it and the judge
    names the limit; without one (RLIMIT_DATA, CPU runs) its allocations fail and it stays contained."""
    records, samples = attacked_world["records"], attacked_world["samples"]
    hog = records[f"1_{samples.index('jail_memory_hog.py')}"]
    mechanism = hog["metadata"]["host_memory_limit"]
    if cgroups.locate()[0] is None:
        assert mechanism.startswith("RLIMIT_DATA 3 GiB"), mechanism
        assert hog["eval_status"] in ("correct", "runtime_error", "out_of_memory")
        return
    assert mechanism.startswith("cgroup v") and "3 GiB" in mechanism, mechanism
    # Killed at the cap, or (no swap, a loaded machine) out of CPU time reclaiming pages there: either
    # way the judge names the memory cap.
    assert hog["eval_status"] == "resource_limit" and hog["metadata"]["error"].startswith("host_memory:")
    assert hog["metadata"]["host_memory_peak_bytes"] <= 3 << 30
    honest = records[f"1_{len(samples) - 1}"]
    assert 0 < honest["metadata"]["host_memory_peak_bytes"] < 3 << 30
    assert not attacked_world["new_cgroups"], "a sandbox's cgroup outlived the run"


def test_the_secret_reaches_no_file(attacked_world):
    for path in attacked_world["world"].rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the API key leaked into {path}"


# ---------------------------------------------------------------- the pieces


def run_jailed(code: str, tmp_path: Path, uid: int = jail.JAIL_UID_BASE + 7) -> subprocess.CompletedProcess:
    """`code` run after jail.enter, the way a sandbox runs a kernel."""
    build = tmp_path / "build"
    spec = {"uid": uid, "staging_dir": str(tmp_path / "root"), "build_dir": str(build), "max_processes": 64,
            "max_file_mb": 8, "max_cpu_seconds": 20, "max_host_memory_gb": 2, "job_mb": 16, "tmp_mb": 16}
    program = (f"import json, sys; from kernelbench_verified.evaluate import jail; jail.enter(json.loads({json.dumps(json.dumps(spec))}))\n"
               + code)
    env = jail.allowed_environment(dict(os.environ, OPENAI_API_KEY=SECRET))
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([*jail.unshare_command(), sys.executable, "-c", program], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)


def test_jailed_process_sees_only_its_runtime_and_its_own_folders(tmp_path):
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    result = run_jailed(
        "import os\n"
        f"print(os.getuid(), os.getpid(), sorted(os.listdir('/')), os.path.exists({str(secret_file)!r}))\n"
        f"print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
        f"print(os.path.exists({str(ROOT / 'KernelBench')!r}), os.path.exists({str(ROOT / 'hidden_tests')!r}))\n"
        "open('/job/x', 'w').write('ok'); open('/tmp/y', 'w').write('ok')\n"
        "try:\n    open('/usr/z', 'w')\nexcept OSError as e:\n    print('ro', e.errno)\n"
        "print('KEY' in ''.join(os.environ), open('/proc/self/environ','rb').read().count(b'sk-canary'))\n"
        "import getpass, pwd; print(getpass.getuser(), len(pwd.getpwall()))\n",  # torch.compile asks
        tmp_path)
    assert result.returncode == 0, result.stderr
    first, pids, hidden, readonly, env, user = result.stdout.splitlines()
    uid, pid, _ = first.split(" ", 2)
    if os.geteuid() == 0:
        assert int(uid) == jail.JAIL_UID_BASE + 7
    assert pid == "1" and first.endswith("False")
    assert pids == "['1']"  # the sandbox alone: nothing of the host
    assert hidden == "False False"
    assert readonly == "ro 30"
    assert env == "False 0"
    assert user == "kernel 2"  # its own name, and no host user listed


def test_seccomp_refuses_ptrace_mounts_and_new_namespaces(tmp_path):
    result = run_jailed(
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def errno_of(rc):\n    return ctypes.get_errno() if rc != 0 else 0\n"
        "print(errno_of(libc.ptrace(16, 1, 0, 0)))\n"  # PTRACE_ATTACH
        "print(errno_of(libc.unshare(0x10000000)))\n"  # CLONE_NEWUSER
        "print(errno_of(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    os._exit(0)\n"
        "os.waitpid(pid, 0); print('fork ok')\n"
        "import threading; t = threading.Thread(target=lambda: None); t.start(); t.join(); print('thread ok')\n",
        tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "1", "1", "fork", "ok", "thread", "ok"]  # EPERM three times


def test_a_jailed_process_cannot_raise_its_priority(tmp_path, monkeypatch):
    """Builds start niced (placement.lower_build_priority), and a jailed process cannot take the judges'
    priority back, whatever RLIMIT_NICE the host gives it (this host's is already 0, so the limit the
    jail sets is checked as well)."""
    result = run_jailed("import os\nos.setpriority(os.PRIO_PROCESS, 0, 10)\n"
                        "try:\n    os.setpriority(os.PRIO_PROCESS, 0, 0)\nexcept OSError as e:\n    print('refused', e.errno)\n"
                        "print(os.getpriority(os.PRIO_PROCESS, 0))\n", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["refused", "13", "10"]  # EACCES
    set_limits = {}
    monkeypatch.setattr(jail.resource, "setrlimit", lambda which, values: set_limits.__setitem__(which, values))
    jail._set_limits({"max_processes": 64, "max_file_mb": 64, "max_cpu_seconds": 60})
    assert set_limits[resource.RLIMIT_NICE] == (0, 0)


def speculation_lines(status: str) -> dict:
    return dict(line.split(":\t", 1) for line in status.splitlines() if line.startswith(("Seccomp", "Speculation")))


def test_jail_leaves_speculation_mitigations_as_the_host_sets_them(tmp_path):
    """Where the host's mode is `seccomp`, a filter without SPEC_ALLOW forces speculation mitigations on the
    sandbox alone, so the same code would run slower there than as a baseline. (Here and on the H200 the
    mode is not `seccomp`: this guards the hosts where it is.)"""
    result = run_jailed("print(open('/proc/self/status').read())", tmp_path)
    assert result.returncode == 0, result.stderr
    jailed, host = speculation_lines(result.stdout), speculation_lines(Path("/proc/self/status").read_text())
    assert jailed.pop("Seccomp") == "2" and jailed.pop("Seccomp_filters") == "1"  # filtered, once
    assert jailed == {k: v for k, v in host.items() if k.startswith("Speculation")}


def test_seccomp_program_is_well_formed_for_each_architecture():
    for arch in ("x86_64", "aarch64"):
        program = seccomp.seccomp_program(arch)
        assert len(program) % 8 == 0 and len(program) // 8 < 4096


def test_allowed_environment_drops_secrets():
    env = jail.allowed_environment({"PATH": "/usr/bin", "OPENAI_API_KEY": SECRET, "HOME": "/root",
                                    "CUDA_VISIBLE_DEVICES": "0", "AWS_SECRET_ACCESS_KEY": SECRET,
                                    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                                    "TORCH_HUB_TOKEN": SECRET, "NVIDIA_API_KEY": SECRET})
    assert env == {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0",
                   "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_everything_a_jailed_process_starts_ends_with_it(tmp_path):
    """A double-forked, setsid daemon dies with the sandbox, because the sandbox is pid 1 of its namespace."""
    result = run_jailed(
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        os.execv('/bin/sleep', ['/bin/sleep', '300', 'KBV_ATTACK'])\n    os._exit(0)\n"
        "time.sleep(0.5); print('parent done')\n", tmp_path)
    assert result.returncode == 0, result.stderr
    time.sleep(0.5)
    assert marked_processes() == []


def test_kernel_symlinks_and_files_outside_the_run_are_refused(tmp_path, tiny_config):
    from kernelbench_verified.evaluate.run import evaluate_run

    run = tmp_path / "symlinked"
    run.mkdir()
    (run / "level_1_problem_1_sample_0_kernel.py").symlink_to(HONEST)
    evaluate_run(tiny_config(tmp_path, "symlinked", num_samples=1, subset="[1,1]"))
    record = json.loads((run / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "refused_kernel" and "symbolic link" in record["metadata"]["error"]


@pytest.mark.parametrize("name", ["../escape", "a/b", ".hidden", "", "x" * 300])
def test_run_names_that_leave_runs_dir_are_refused(name, tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), f"run_name={name}", "level=1",
                             f"runs_dir={tmp_path}"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "run_name=" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_run_folder_that_is_not_there_is_refused_before_torch_loads(tmp_path):
    result = subprocess.run([sys.executable, "-X", "importtime", str(SCRIPT), "run_name=typo", "level=1",
                             f"runs_dir={tmp_path}"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "run folder" in result.stderr and "not found" in result.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")]
    assert "omegaconf" in imported and "torch" not in imported


def test_sandbox_none_is_recorded_in_every_record(tmp_path, tiny_config):
    from conftest import make_run
    from kernelbench_verified.evaluate.run import evaluate_run

    make_run(tmp_path, "unjailed", {(1, 0): "relu_correct"})
    evaluate_run(tiny_config(tmp_path, "unjailed", num_samples=1, subset="[1,1]", sandbox="none"))
    record = json.loads((tmp_path / "unjailed" / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct" and record["metadata"]["sandbox"] == "none"


def test_cpu_time_spent_reclaiming_at_the_memory_cap_is_named_host_memory():
    """Without swap, a hog at its cgroup's cap can use up its CPU time in reclaim before the OOM killer
    acts (seen in CI): the judge names the memory cap then, and plain CPU burn stays cpu_time."""
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.launch import Sandbox

    def named(reached_cap: bool) -> str:
        cgroup = SimpleNamespace(hit_limit=lambda: False, reached_cap=lambda: reached_cap, limit_bytes=3 << 30)
        watch = SimpleNamespace(exceeded=False, folder=Path("/nonexistent"), limit=1 << 30, most_cpu_seconds=25.0,
                                most_processes=1)
        sandbox = SimpleNamespace(cgroup=cgroup, limit_watch=watch, pump=None,
                                  limits={"max_cpu_seconds": 25, "max_processes": 64, "build_mb": 1024})
        return Sandbox.limit_exceeded(sandbox)

    assert named(True).startswith("host_memory: the kernel's processes reached 3 GiB")
    assert named(False).startswith("cpu_time: a process of the kernel used 25 CPU seconds")


def test_sandbox_limit_signal_names_the_limit():
    from kernelbench_verified.evaluate.exchange import describe_exit

    assert describe_exit(-signal.SIGXCPU, "")[0] == "resource_limit"
    assert "file_size" in describe_exit(-signal.SIGXFSZ, "")[1]
    assert describe_exit(-signal.SIGSEGV, "")[0] == "crashed"
    assert describe_exit(200, "") == ("crashed", "the kernel's process exited with code 200 before finishing")


@pytest.mark.skipif(cgroups.locate()[0] is None, reason=f"no memory cgroup here: {cgroups.locate()[1]}")
def test_a_sandbox_cgroup_kills_past_its_cap_and_leaves_nothing():
    cgroup = cgroups.SandboxCgroup(cgroups.locate()[0], 7, 256 << 20, owner="test_cap")
    child = subprocess.run([sys.executable, "-c", f"open({cgroup.procs_file!r}, 'w').write('0')\n"
                            "import time; block = bytearray(600 << 20); time.sleep(30)"], timeout=60)
    assert child.returncode == -signal.SIGKILL and cgroup.hit_limit() and cgroup.reached_cap()
    assert cgroup.peak_bytes() <= 256 << 20 and cgroup.processes() == []
    cgroup.remove()
    assert not cgroup.path.exists()
    below = cgroups.SandboxCgroup(cgroups.locate()[0], 7, 256 << 20, owner="test_cap")
    child = subprocess.run([sys.executable, "-c", f"open({below.procs_file!r}, 'w').write('0')\n"
                            "block = bytearray(32 << 20)"], timeout=60)
    assert child.returncode == 0 and not below.reached_cap() and not below.hit_limit()
    below.remove()


@pytest.mark.skipif(cgroups.locate()[0] is None, reason=f"no memory cgroup here: {cgroups.locate()[1]}")
def test_an_evaluator_removes_the_cgroups_a_killed_one_left():
    """A SIGKILLed evaluator cannot remove its sandboxes' cgroups; the next one does, and leaves those
    of a live evaluator alone."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    hierarchy = cgroups.locate()[0]
    orphan = cgroups.SandboxCgroup(hierarchy, 11, 256 << 20, owner=f"eval{dead}")
    alive = cgroups.SandboxCgroup(hierarchy, 12, 256 << 20, owner=f"eval{os.getppid()}")
    try:
        assert cgroups.remove_left_behind(f"eval{os.getpid()}") >= 1
        assert not orphan.path.exists() and alive.path.exists()
    finally:
        alive.remove()


def test_without_root_the_jail_refuses_with_one_line(monkeypatch):
    """The jail needs root (a uid of its own per kernel); elsewhere it says so instead of starting half a jail."""
    monkeypatch.setattr(jail.os, "geteuid", lambda: 1000)
    assert jail.available() == "the jail needs root (each kernel gets a uid of its own)"


def test_jailed_and_unjailed_runs_never_share_a_build(tmp_path, tiny_config):
    """A build records the folder it was made in (/build in the jail), and torch rebuilds a moved one:
    on the H200 every CUDA kernel of an unjailed run after a jailed one rebuilt past its timeout."""
    from conftest import make_run
    from kernelbench_verified.evaluate.run import evaluate_run

    make_run(tmp_path, "both", {(1, 0): "relu_correct"})
    folders = []
    for sandbox in ("jail", "none"):
        evaluate_run(tiny_config(tmp_path, "both", subset="[1,1]", sandbox=sandbox, use_hidden_tests=sandbox == "none"))
        name = "eval_results_hidden.json" if sandbox == "none" else "eval_results.json"
        record = json.loads((tmp_path / "both" / name).read_text())["1_0"]
        assert record["eval_status"] == "correct"
        folders.append(record["metadata"]["build_dir"])
    assert folders[0] != folders[1]


def test_processes_of_a_uid_are_found_from_the_real_uid_of_each_status_file():
    """The scan after each sandbox (and its limit watch) reads every process's real uid; a zombie or
    another uid's process is not listed."""
    from kernelbench_verified.evaluate.launch import _status_field, processes_of_uid, usage_of_uid

    assert _status_field("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nThreads:\t3\n", "Uid") == "1000\t1000\t1000\t1000"
    assert _status_field("Name:\tx\n", "Uid") == ""
    assert os.getpid() in processes_of_uid(os.getuid())
    unused = max(os.getuid(), 1) + 987654
    assert processes_of_uid(unused) == [] and usage_of_uid(unused) == (0, 0.0)
