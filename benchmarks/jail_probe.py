"""Which parts of the kernel jail CUDA IPC survives, on this machine: a sandbox started the way the
evaluator starts one (jail.command) exports a CUDA tensor, the judge-side parent maps it.

    python benchmarks/jail_probe.py [VARIANT ...]

A variant leaves out one part of the jail (patched into the jail's setup or the child): full, no-seccomp,
no-limits, host-shm (the host's /dev/shm instead of a private one), host-dev, no-pivot, no-ipc-ns; or adds
what the evaluator's sandbox does first: +nulls (30 exports released by the sandbox, as the former null trials did),
+tools (timed calls with the L2 flush), +cvd (CUDA_VISIBLE_DEVICES=0). Parts join with "+".
Prints one line per variant.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelbench_verified.evaluate import jail  # noqa: E402

SETUP_PATCHES = {
    "no-limits": "jail._set_limits = lambda spec: None",
    "host-shm": ("_dev = jail._build_dev\n"
                 "def _build_dev(dev, mb):\n    _dev(dev, mb)\n"
                 "    jail._mount('/dev/shm', str(dev / 'shm'), None, jail.MS_BIND)\n"
                 "jail._build_dev = _build_dev"),
    "host-dev": "jail._build_dev = lambda dev, mb: (dev.mkdir(), jail._mount('/dev', str(dev), None, jail.MS_BIND | jail.MS_REC))",
    "no-uid": "jail._drop_privileges = lambda uid: jail._libc.prctl(jail.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)",
    "no-pivot": ("jail._build_root = lambda root, spec: jail._mount('proc', '/proc', 'proc', 0)\n"
                 "jail._pivot = lambda root: None\njail.JOB_DIR = '/tmp'"),
}
# What the sandbox does before its first export, one prelude per variant part.
CHILD_PRELUDES = {
    "nulls": ("from kernelbench_verified.evaluate.transport import release_exports\n"
              "for _ in range(30):\n    export_values([torch.empty(1 << 20, device='cuda')]); release_exports([])\n"),
    "tools": ("from kernelbench_verified.measure.timing import TrialTools, timed_call\n"
              "tools = TrialTools(torch.device('cuda'), True)\n"
              "for _ in range(3):\n    timed_call(lambda: torch.ones(8, device='cuda'), torch.device('cuda'), tools)\n"),
}
CHILD = """
import json, sys
{confine}
import torch
from kernelbench_verified.evaluate.transport import export_values
{prelude}
x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
print(json.dumps(export_values([x])[0]), flush=True)
sys.stdin.readline()
"""


def probe(variant: str) -> str:
    import torch

    from kernelbench_verified.evaluate.transport import import_values

    work = Path(tempfile.mkdtemp(prefix="kbv_probe_"))
    uid = int(variant.split("-")[1]) if variant.startswith("uid-") else jail.JAIL_UID_BASE + 99
    spec = {"uid": uid, "staging_dir": str(work / "root"), "build_dir": str(work / "build"),
            "max_processes": 4096, "max_file_mb": 1024, "max_cpu_seconds": 600, "max_host_memory_gb": None,
            "job_mb": 64, "tmp_mb": 64}
    parts = variant.split("+")
    env = dict(os.environ) if "full-env" in parts else jail.allowed_environment(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    if "cvd" in parts:  # bound to one GPU the way the evaluator binds its children
        env["CUDA_VISIBLE_DEVICES"] = "0"
    confine = "" if "no-seccomp" in parts else "from kernelbench_verified.evaluate import jail; jail.confine()"
    patches = "\n".join(SETUP_PATCHES.get(part, "") for part in parts)
    setup = (f"from kernelbench_verified.evaluate import jail\n{patches}\n"
             "import sys; sys.argv = ['jail'] + sys.argv[1:]\njail.main()")
    wrapper = jail.unshare_command()
    if "no-ipc-ns" in parts:
        wrapper = [w for w in wrapper if w != "--ipc"]
    command = wrapper + [sys.executable, "-c", setup, json.dumps(spec), "--",
                         sys.executable, "-c", CHILD.format(confine=confine, prelude="".join(CHILD_PRELUDES.get(p, "") for p in parts))]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=work)
    line = child.stdout.readline()
    try:
        if not line:
            return "child failed: " + (child.stderr.read().strip().splitlines() or ["?"])[-1][:300]
        tensor = import_values(json.loads(line))[0]
        ok = bool(torch.equal(tensor.cpu(), torch.arange(1 << 20, dtype=torch.float32)))
        return "IPC ok" if ok else "IPC mapped wrong values"
    except Exception as exc:  # the point is to print what failed
        return f"IPC failed: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
    finally:
        try:
            child.stdin.write("\n")
            child.stdin.flush()
        except BrokenPipeError:
            pass
        child.wait(timeout=30)


def main() -> None:
    import torch

    torch.ones(1, device="cuda")  # the judge's context exists before any sandbox exports memory
    variants = sys.argv[1:] or ["full", "no-seccomp", "no-limits", "host-shm", "host-dev", "no-pivot", "no-ipc-ns"]
    for variant in variants:
        print(f"{variant:12} {probe(variant)}", flush=True)


if __name__ == "__main__":
    main()
