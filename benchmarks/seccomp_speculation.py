"""What the jail's seccomp filter costs launch-bound code, with and without SPEC_ALLOW.

    python benchmarks/seccomp_speculation.py [--rounds 3] [--device cuda]

Linux forces speculation mitigations (speculative store bypass, indirect branches) on a process that
installs a seccomp filter without SECCOMP_FILTER_FLAG_SPEC_ALLOW, where the host's mitigation mode is
the default `seccomp`/`prctl`. Each measurement is a fresh process that installs the jail's filter (or
none), then times a pure-Python loop and a launch-bound torch loop (many tiny ops, then a sync). Prints
the medians per setting and the process's Speculation_Store_Bypass line from /proc/self/status.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ("no filter", "filter, SPEC_ALLOW", "filter, no SPEC_ALLOW")


def speculation_status() -> str:
    lines = Path("/proc/self/status").read_text().splitlines()
    return "; ".join(line.split(":", 1)[1].strip() for line in lines if line.startswith("Speculation"))


def measure(setting: str, device: str) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from kernelbench_verified.evaluate import jail
    if setting != "no filter":
        jail._libc.prctl(jail.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        jail.install_seccomp((jail.SECCOMP_FILTER_FLAG_SPEC_ALLOW,) if "SPEC_ALLOW," in setting else (0,))
    started = time.perf_counter()
    table = {}
    for i in range(2_000_000):
        table[i & 1023] = table.get(i & 1023, 0) + i
    python_ms = (time.perf_counter() - started) * 1e3
    import torch
    x = torch.zeros(16, device=device)
    for _ in range(200):  # warm-up
        x.add_(1)
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(5000):
        x.add_(1).mul_(0.5)
    if device == "cuda":
        torch.cuda.synchronize()
    ops_ms = (time.perf_counter() - started) * 1e3
    return {"python_ms": python_ms, "torch_ops_ms": ops_ms, "speculation": speculation_status()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cuda" if Path("/dev/nvidia0").exists() else "cpu")
    parser.add_argument("--setting", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.setting:
        print(json.dumps(measure(args.setting, args.device)))
        return
    for path in Path("/sys/devices/system/cpu/vulnerabilities").glob("spec*"):
        print(f"host {path.name}: {path.read_text().strip()}")
    results = {setting: [] for setting in SETTINGS}
    for _ in range(args.rounds):
        for setting in SETTINGS:
            out = subprocess.run([sys.executable, __file__, "--setting", setting, "--device", args.device],
                                 check=True, capture_output=True, text=True, env=dict(os.environ))
            results[setting].append(json.loads(out.stdout.strip().splitlines()[-1]))
    report = {}
    for setting, runs in results.items():
        report[setting] = {key: round(statistics.median(r[key] for r in runs), 1) for key in ("python_ms", "torch_ops_ms")}
        report[setting]["speculation"] = runs[0]["speculation"]
        print(f"{setting:>22}: python loop {report[setting]['python_ms']:7.1f} ms, "
              f"10k {args.device} ops {report[setting]['torch_ops_ms']:7.1f} ms  [{report[setting]['speculation']}]")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
