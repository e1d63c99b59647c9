#!/usr/bin/env bash
# Every GPU measurement the repo commits, as one unattended sequence on a 2-GPU Hopper machine. This is
# how the H200 figures under results/ and benchmarks/results/ were taken:
#
#     bash benchmarks/gpu_session.sh LOGDIR
#
# Each step logs to LOGDIR/NN_step.log and appends "step <tab> seconds <tab> exit code" to
# LOGDIR/steps.tsv; a failing step does not stop the next. LOGDIR/DONE marks the end. Baselines are
# timed on both GPUs at once unless the interference check finds one GPU slowed by the other's work.
set -u
logs=${1:?usage: gpu_session.sh LOGDIR}
mkdir -p "$logs" benchmarks/results
n=0
step() {
    local name=$1 started=$SECONDS rc
    shift
    n=$((n + 1))
    "$@" >"$(printf '%s/%02d_%s.log' "$logs" "$n" "$name")" 2>&1
    rc=$?
    printf '%s\t%d\t%d\n' "$name" $((SECONDS - started)) $rc >>"$logs/steps.tsv"
}
environment() {
    nvidia-smi && nvidia-smi topo -m
    python3 -c 'import torch, transformers; print(torch.__version__, torch.version.cuda, transformers.__version__)'
}
baselines() {  # level by level: a cut-short session keeps whole levels
    for level in "$@"; do
        python3 scripts/generate_baseline_time.py "level=$level" "num_gpu_devices=$gpus" || return
    done
}

step environment environment
step interference python3 benchmarks/multi_gpu_interference.py --gpus 2 --out "$logs/interference.json"
gpus=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["independent_gpus"])' \
    "$logs/interference.json" 2>/dev/null || echo 1)
echo "baselines on $gpus GPU(s)" >>"$logs/steps.tsv"
step gpu_tests python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py tests/test_baseline.py
step eval_benchmark python3 benchmarks/eval_benchmark.py --passes cold:2 warm:1 warm:2 --timeout 30 \
    --cpu-workers 16 --out benchmarks/results/H200_eval_benchmark.json
step exploit_suite python3 benchmarks/exploit_suite.py --timeout 30 --cpu-workers 16 \
    --out benchmarks/results/H200_exploit_suite.json
step validate_level4 python3 scripts/validate_problems.py --level 4
step baselines baselines 1 2 3 4
step baseline_repeat python3 scripts/generate_baseline_time.py level=1 modes=[baseline_time_torch_tf32] \
    out_dir=benchmarks/results/timing_repeat "num_gpu_devices=$gpus"
step baseline_figures python3 benchmarks/baseline_figures.py --hardware H200 \
    --repeat results/timing/H200/baseline_time_torch_tf32.json \
    benchmarks/results/timing_repeat/H200/baseline_time_torch_tf32.json \
    --out benchmarks/results/H200_baseline_figures.json
touch "$logs/DONE"
