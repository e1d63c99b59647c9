"""eval_mode=ray on a real Ray cluster started by the test: a head and two worker nodes on this machine,
each worker with one fake GPU, the judges on device=cpu. The verdicts must be those of local mode; a
worker node killed mid-run costs nothing (its sample is retried on the other); a driver killed mid-run
resumes."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run
from kernelbench_verified.measure.fingerprints import compare_fingerprints

ray = pytest.importorskip("ray", reason='Ray is the optional extra: pip install -e ".[ray]"')
from ray.cluster_utils import Cluster  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "eval_from_generations.py")
KERNELS = {(1, 0): "relu_correct", (1, 1): "relu_identity_shortcut", (1, 2): "relu_raises",
           (2, 0): "matmul_correct", (4, 0): "cross_entropy_correct"}


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0})
    workers = [cluster.add_node(num_cpus=2, num_gpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    yield cluster, workers
    cluster.shutdown()


def statuses(run_dir, name: str = "eval_results.json") -> dict:
    return {k: r["eval_status"] for k, r in json.loads((run_dir / name).read_text()).items()}


# The verdicts local mode gives these kernels with hidden tests (test_eval_verdicts.py judges each of them
# in local mode: the identity shortcut fails D4, relu_raises is a runtime error).
LOCAL_VERDICTS = {"1_0": "correct", "1_1": "incorrect", "1_2": "runtime_error", "2_0": "correct", "4_0": "correct"}


def test_ray_mode_gives_the_verdicts_of_local_mode(tmp_path, cluster):
    on_ray = make_run(tmp_path, "ray_run", KERNELS)
    evaluate_run(load_config("eval", tiny_overrides(tmp_path, "ray_run", eval_mode="ray", ray_address=cluster[0].address,
                                                    num_samples=3, subset="[1,4]", device="cpu", static_check="off",
                                                    use_hidden_tests=True)))
    hidden = "eval_results_hidden.json"
    found = statuses(on_ray, hidden)
    assert {k: v for k, v in found.items() if v != "missing_kernel"} == LOCAL_VERDICTS
    assert len(found) == 4 * 3  # every slot of the subset, the empty ones as missing_kernel
    records = json.loads((on_ray / hidden).read_text())
    assert records["1_0"]["runtime"] > 0 and records["1_0"]["metadata"]["device"].startswith("ray:")
    assert len(json.loads((on_ray / "eval_fingerprint.json").read_text())) == 2  # one entry per judge


@pytest.mark.parametrize("timing_path", ["sandbox", "process"])
def test_baselines_on_ray_are_the_local_files_with_the_same_fingerprints(tmp_path, cluster, timing_path):
    """generate_baseline_time.py eval_mode=ray: every problem and mode timed by the cluster's workers
    (on the sandbox path, its judges), written by the driver in the same format, with the fingerprints
    local mode writes."""
    from conftest import TINY

    baseline_script = os.path.join(os.path.dirname(SCRIPT), "generate_baseline_time.py")
    # Two problems: each is timed apart, so two show as much as the four (at half of the 80 s on CI's CPUs).
    # One mode: the TF32 one, whose setting differs from the process default, so its fingerprint shows
    # that a mode's settings reach the cluster's workers.
    common = [f"problems_dir={TINY / 'KernelBench'}", "level=1", "subset=[1,2]", "num_perf_trials=3",
              "num_warmup=1", "device=cpu", "hardware=here", "modes=[baseline_time_torch_tf32]",
              f"timing_path={timing_path}"]
    for mode, extra in (("local", []), ("ray", ["eval_mode=ray", f"ray_address={cluster[0].address}"])):
        done = subprocess.run([sys.executable, baseline_script, *common, f"out_dir={tmp_path / mode}", *extra],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    for name in ("baseline_time_torch_tf32",):
        local, on_ray = (json.loads((tmp_path / m / "here" / f"{name}.json").read_text()) for m in ("local", "ray"))
        assert sorted(on_ray["level1"]) == sorted(local["level1"]) and len(on_ray["level1"]) == 2, \
            (on_ray.get("failures"), local.get("failures"))
        assert all(e["mean"] > 0 and e["device"].startswith("ray:") for e in on_ray["level1"].values())
        assert compare_fingerprints(on_ray["fingerprint"], local["fingerprint"]) == []  # all but the date


def slow_run(tmp_path, name: str, count: int):
    """`count` correct samples that each take about 6 s in their first call."""
    run_dir = make_run(tmp_path, name, {})
    slow = (
        "import time\nimport torch\nimport torch.nn as nn\n\n\n"
        "class ModelNew(nn.Module):\n    slept = False\n\n    def forward(self, x):\n"
        "        if not ModelNew.slept:\n            ModelNew.slept = True\n            time.sleep(6)\n"
        "        return torch.relu(x)\n")
    for sid in range(count):
        (run_dir / f"level_1_problem_1_sample_{sid}_kernel.py").write_text(slow)
    return run_dir


def start_driver(tmp_path, name: str, count: int, address: str) -> subprocess.Popen:
    overrides = tiny_overrides(tmp_path, name, num_samples=count, subset="[1,1]", device="cpu",
                               static_check="off", eval_mode="ray", ray_address=address, timeout=120,
                               num_perf_trials=3)
    return subprocess.Popen([sys.executable, SCRIPT, *overrides], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_for_records(run_dir, count: int, seconds: float) -> int:
    deadline, done = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        path = run_dir / "eval_results.json"
        done = len(json.loads(path.read_text())) if path.is_file() else 0
        if done >= count:
            break
        time.sleep(0.5)
    return done


def test_builds_are_ray_tasks_and_reach_the_judges_through_the_object_store(tmp_path, cluster):
    """build_cache=True ray_ship_builds=True: each distinct build is a Ray task, a kernel that does not
    compile is recorded from its build alone, and the judges evaluate from a copy that came through
    Ray's object store into a folder of their own (as on nodes that share no disk). The C++ extension
    takes 15 s or more to build from torch/extension.h; its judge loaded it in seconds, so it did not."""
    run_dir = make_run(tmp_path, "shipped", {(1, 0): "relu_cpp", (1, 1): "relu_correct", (1, 2): "relu_compile_error"})
    code = evaluate_run(load_config("eval", tiny_overrides(
        tmp_path, "shipped", num_samples=3, subset="[1,1]", device="cpu", static_check="off", eval_mode="ray",
        ray_address=cluster[0].address, build_cache=True, ray_ship_builds=True)))
    assert code == 0
    assert statuses(run_dir) == {"1_0": "correct", "1_1": "correct", "1_2": "compile_error"}
    records = json.loads((run_dir / "eval_results.json").read_text())
    shipped = records["1_0"]["metadata"]
    assert shipped["build_shipped_bytes"] > 10_000 and "kbv_shipped_builds_" in shipped["build_dir"]
    assert shipped["phase_seconds"]["start_and_load"] < 8, shipped["phase_seconds"]
    assert "ray_attempt" not in records["1_2"]["metadata"]  # recorded from its build, never sent to a judge
    assert "extension build failed" in records["1_2"]["metadata"]["error"]


def test_a_killed_driver_resumes_and_a_killed_node_costs_nothing(tmp_path, cluster):
    head, workers = cluster
    run_dir = slow_run(tmp_path, "slow", 6)
    driver = start_driver(tmp_path, "slow", 6, head.address)
    assert wait_for_records(run_dir, 2, 240) >= 2, driver.communicate()[0][-3000:]
    driver.send_signal(signal.SIGKILL)  # the driver dies with samples in flight
    driver.wait()
    kept = statuses(run_dir)
    assert kept and set(kept.values()) == {"correct"}

    driver = start_driver(tmp_path, "slow", 6, head.address)
    assert wait_for_records(run_dir, len(kept) + 1, 240) > len(kept)  # the judges are up, each on a 6 s sample
    head.remove_node(workers[1], allow_graceful=False)
    output, _ = driver.communicate(timeout=600)
    assert driver.returncode == 0, output[-3000:]
    assert f"{len(kept)} already done" in output
    final = statuses(run_dir)
    assert sorted(final) == [f"1_{sid}" for sid in range(6)]
    assert set(final.values()) == {"correct"}, final  # the killed node's sample was retried, not lost
    records = json.loads((run_dir / "eval_results.json").read_text()).values()
    assert sorted(r["metadata"]["ray_attempt"] for r in records)[-1] == 2  # one sample did run on the dead node


def test_a_shipped_build_keeps_its_files_and_times_and_nothing_else(tmp_path):
    """Ninja rebuilds an output that looks older than its log says, so times travel to the nanosecond;
    links and paths outside the folder (the build process is the kernel's) never arrive."""
    import io
    import tarfile

    from kernelbench_verified.evaluate.ray_cluster import MTIMES, pack_build, unpack_build

    build = tmp_path / "build"
    (build / "ext").mkdir(parents=True)
    (build / "ext" / "ext.so").write_bytes(b"\x7fELF")
    os.utime(build / "ext" / "ext.so", ns=(1_700_000_000_123_456_789,) * 2)
    (build / "ext" / "link").symlink_to("/etc/passwd")
    unpack_build(pack_build(build), tmp_path / "shipped")
    assert (tmp_path / "shipped" / "ext" / "ext.so").stat().st_mtime_ns == 1_700_000_000_123_456_789
    assert not (tmp_path / "shipped" / "ext" / "link").exists()

    hostile = io.BytesIO()
    with tarfile.open(fileobj=hostile, mode="w:gz") as archive:
        for name, data in (("../escaped", b"x"), (MTIMES, json.dumps({"../escaped": 0}).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "inner").mkdir()
    with pytest.raises(ValueError, match="cannot be unpacked"):
        unpack_build(hostile.getvalue(), tmp_path / "inner" / "target")
    assert not (tmp_path / "escaped").exists() and list((tmp_path / "inner").iterdir()) == []
