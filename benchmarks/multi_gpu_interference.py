"""Does timing on one GPU change while another GPU of the host is busy? Prints figures.

    python benchmarks/multi_gpu_interference.py [--gpus 2] [--gib 6]

Each phase starts one process per GPU used, bound with CUDA_VISIBLE_DEVICES as the evaluator binds its
judges, and times a memory-bound op (ReLU over --gib GiB, fp32) and a compute-bound one (4096^2 fp32
matmul) with the evaluator's time_function. Phases: every GPU alone, one after the other; then all
GPUs at once. If the concurrent times differ from the solo ones, kernels judged on several GPUs at
once are timed differently from kernels judged alone. --out writes the rows and "independent_gpus":
the number of GPUs that can time at once without slowing one another by more than --tolerance.
"""

import argparse
import json
import multiprocessing as mp
import os
import sys


def measure(gpu: int, gib: float, trials: int, barrier, results) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    import torch

    from kernelbench_verified.evaluate.record import pci_address
    from kernelbench_verified.measure.timing import time_function

    device = torch.device("cuda:0")
    bus = pci_address(device)
    x = torch.randn(int(gib * (1 << 30) / 4), device=device)
    a, b = torch.randn(4096, 4096, device=device), torch.randn(4096, 4096, device=device)
    torch.cuda.synchronize(device)
    barrier.wait()  # concurrent phase: every GPU starts timing together
    relu = time_function(lambda: torch.relu(x), device, trials)
    matmul = time_function(lambda: a @ b, device, trials)
    results.put((gpu, bus, relu["median"], matmul["median"]))


def phase(gpus: list[int], gib: float, trials: int) -> list[tuple]:
    ctx = mp.get_context("spawn")
    results, barrier = ctx.Queue(), ctx.Barrier(len(gpus))
    processes = [ctx.Process(target=measure, args=(g, gib, trials, barrier, results)) for g in gpus]
    for process in processes:
        process.start()
    rows = [results.get() for _ in processes]
    for process in processes:
        process.join()
    return sorted(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--gib", type=float, default=6.0)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--tolerance", type=float, default=0.05, help="relative slowdown still independent")
    parser.add_argument("--out")
    args = parser.parse_args()
    gpus = list(range(args.gpus))
    print(f"{'phase':12} {'gpu':>3} {'pci address':>12} {'relu ms':>9} {'matmul ms':>9}")
    rows = []
    for name, groups in (("alone", [[g] for g in gpus]), ("concurrent", [gpus])):
        for group in groups:
            for gpu, bus, relu_ms, matmul_ms in phase(group, args.gib, args.trials):
                print(f"{name:12} {gpu:3d} {bus:>12} {relu_ms:9.3f} {matmul_ms:9.3f}", flush=True)
                rows.append({"phase": name, "gpu": gpu, "pci_address": bus, "relu_ms": relu_ms, "matmul_ms": matmul_ms})
    alone = {r["gpu"]: r for r in rows if r["phase"] == "alone"}
    slowdowns = [max(r[k] / alone[r["gpu"]][k] for k in ("relu_ms", "matmul_ms"))
                 for r in rows if r["phase"] == "concurrent"]
    independent = len(gpus) if max(slowdowns) <= 1 + args.tolerance else 1
    print(f"worst concurrent / alone: {max(slowdowns):.3f} -> {independent} GPU(s) can time at once")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows, "worst_slowdown": max(slowdowns), "independent_gpus": independent}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
