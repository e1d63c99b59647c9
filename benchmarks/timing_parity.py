"""Where a kernel's time in the judge differs from the same code's baseline time: each difference
between the two set-ups, one at a time, on the same references in one process.

    python benchmarks/timing_parity.py --level 1 --problems 5 26 18 62 [--trials 100] [--out parity.json]

Variants, each timed by measure.timing's timed_call (what baselines and kernels both use):
  plain          time_function on one input set (how baselines are timed)
  fresh_local    new input values written into the same buffers before every call, in this process
  idle_gap       plain calls with the GPU left idle 2 ms before each (the judge's round trip)
  peer_context   another process's CUDA context runs a small kernel before each call
  judge_inputs   the inputs live in another process (as the judge's do today), mapped here by CUDA IPC;
                 that process writes fresh values before each call
  local_inputs   the inputs live here, the other process writes fresh values into them through CUDA IPC
  export_outputs plain calls, each output exported by CUDA IPC and released before the next (as the
                 sandbox's replies do)
  plain_again    plain once more: the drift over the problem's variants
Prints each variant's median against plain per problem, the geometric mean per variant, and the mean
SM clock nvidia-smi saw during each variant.
"""

import argparse
import json
import math
import multiprocessing
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

from kernelbench_verified.evaluate.transport import export_values, import_values, release_exports  # noqa: E402
from kernelbench_verified.measure.timing import TrialTools, time_function, timed_call  # noqa: E402
from kernelbench_verified.problems.inputs import Case, build_model, case_inputs  # noqa: E402
from kernelbench_verified.problems.load import get_problem, load_module  # noqa: E402

VARIANTS = ("plain", "fresh_local", "idle_gap", "peer_context", "judge_inputs", "local_inputs",
            "export_outputs", "plain_again")
SEED = 42


def inputs_of(module, trial: int, device) -> list:
    return case_inputs(Case(f"trial_{trial}", SEED * 1000 + trial), module, None, device, torch.float32)


def write_into(buffers: list, values: list) -> None:
    for buffer, value in zip(buffers, values):
        if isinstance(buffer, torch.Tensor):
            buffer.copy_(value)


def peer(connection, problem_path: str) -> None:
    """The other process: owns or maps input buffers and writes fresh values on request."""
    device = torch.device("cuda:0")
    module = load_module(problem_path, "parity_peer")
    scratch = torch.empty(1 << 18, device=device)
    buffers = None
    while True:
        op, argument = connection.recv()
        if op == "own":  # allocate the inputs here and export them
            buffers = inputs_of(module, 0, device)
            torch.cuda.synchronize()
            connection.send(export_values(buffers)[0])
        elif op == "map":  # map the other side's inputs
            buffers = import_values(argument)
            connection.send("mapped")
        elif op == "write":
            write_into(buffers, inputs_of(module, argument, device))
            torch.cuda.synchronize()
            connection.send("written")
        elif op == "touch":
            scratch.fill_(argument)
            torch.cuda.synchronize()
            connection.send("touched")
        elif op == "drop":
            buffers = None
            torch.cuda.ipc_collect()
            connection.send("dropped")
        elif op == "stop":
            return


def loop(model, buffers, device, tools, trials: int, warmup: int, before=None, after=None) -> list[float]:
    times = []
    with torch.no_grad():
        for index in range(-warmup, trials):
            if before:
                before(index)
            output, ms = timed_call(lambda: model(*buffers), device, tools)
            if after:
                after(output)
            del output
            if index >= 0:
                times.append(ms)
    return times


def sm_clock_sampler() -> subprocess.Popen:
    return subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,temperature.gpu,power.draw",
                             "--format=csv,noheader,nounits", "-lms", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def mean_clock(sampler: subprocess.Popen) -> dict:
    sampler.terminate()
    rows = [line.split(",") for line in sampler.communicate()[0].splitlines() if line.count(",") == 2]
    try:
        values = [[float(v) for v in row] for row in rows]
    except ValueError:
        return {}
    if not values:
        return {}
    return {"sm_mhz": statistics.fmean(v[0] for v in values), "temp_c": max(v[1] for v in values),
            "power_w": statistics.fmean(v[2] for v in values)}


def time_variants(problem, connection, trials: int, warmup: int) -> dict:
    device = torch.device("cuda:0")
    module = load_module(problem.path, f"parity_{problem.pid}")
    model = build_model(module.Model, module, SEED, device, torch.float32)
    tools = TrialTools(device, flush_l2=True)
    local = inputs_of(module, 0, device)
    ask = lambda op, argument=None: (connection.send((op, argument)), connection.recv())[1]  # noqa: E731
    results = {}
    for variant in VARIANTS:
        sampler = sm_clock_sampler()
        if variant in ("plain", "plain_again"):
            with torch.no_grad():
                times = None
                stats = time_function(lambda: model(*local), device, trials, warmup, True)
        elif variant == "fresh_local":
            times = loop(model, local, device, tools, trials, warmup,
                         before=lambda i: (write_into(local, inputs_of(module, i + 100, device)),
                                           torch.cuda.synchronize()))
        elif variant == "idle_gap":
            times = loop(model, local, device, tools, trials, warmup, before=lambda i: time.sleep(0.002))
        elif variant == "peer_context":
            times = loop(model, local, device, tools, trials, warmup, before=lambda i: ask("touch", float(i)))
        elif variant == "judge_inputs":
            mapped = import_values(ask("own"))
            times = loop(model, mapped, device, tools, trials, warmup, before=lambda i: ask("write", i + 100))
            del mapped
            torch.cuda.ipc_collect()
            ask("drop")
        elif variant == "local_inputs":
            descs, _ = export_values(local)
            ask("map", descs)
            times = loop(model, local, device, tools, trials, warmup, before=lambda i: ask("write", i + 100))
            ask("drop")
            release_exports([])
        elif variant == "export_outputs":
            times = loop(model, local, device, tools, trials, warmup, before=lambda i: release_exports([]),
                         after=lambda out: export_values(out if isinstance(out, (list, tuple)) else [out]))
            release_exports([])
        median = statistics.median(times) if times is not None else stats["median"]
        results[variant] = dict(median_ms=median, **mean_clock(sampler))
    return results


def report(per_problem: dict) -> dict:
    summary = {}
    for variant in VARIANTS[1:]:
        ratios = [r[variant]["median_ms"] / r["plain"]["median_ms"] for r in per_problem.values()]
        summary[variant] = math.exp(statistics.fmean(math.log(x) for x in ratios))
    print("\nproblem".ljust(28) + "plain ms".rjust(10) + "".join(v[:12].rjust(13) for v in VARIANTS[1:]))
    for name, r in per_problem.items():
        print(name[:27].ljust(27) + f"{r['plain']['median_ms']:10.3f}"
              + "".join(f"{r[v]['median_ms'] / r['plain']['median_ms']:13.4f}" for v in VARIANTS[1:]))
    print("geomean time / plain".ljust(37) + "".join(f"{summary[v]:13.4f}" for v in VARIANTS[1:]))
    clocks = {v: statistics.fmean(r[v].get("sm_mhz", float("nan")) for r in per_problem.values()) for v in VARIANTS}
    print("mean SM clock (MHz), plain first".ljust(27) + "".join(f"{clocks[v]:13.0f}" for v in VARIANTS))
    return {"ratio_to_plain_geomean": summary, "sm_mhz": clocks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--problems", type=int, nargs="+", default=[5, 26, 18, 62, 33, 99, 10, 56])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("timing_parity.py: needs a CUDA device (it compares GPU timing set-ups)")
    context = multiprocessing.get_context("spawn")
    per_problem = {}
    for pid in args.problems:
        problem = get_problem(args.level, pid)
        ours, theirs = context.Pipe()
        helper = context.Process(target=peer, args=(theirs, str(problem.path)), daemon=True)
        helper.start()
        try:
            per_problem[f"L{args.level}/{problem.filename}"] = time_variants(problem, ours, args.trials, args.warmup)
        finally:
            ours.send(("stop", None))
            helper.join(30)
        torch.cuda.empty_cache()
        print(f"L{args.level}/{pid} done", file=sys.stderr, flush=True)
    summary = report(per_problem)
    if args.out:
        args.out.write_text(json.dumps({"problems": per_problem, **summary}, indent=1))


if __name__ == "__main__":
    main()
