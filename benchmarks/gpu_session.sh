#!/usr/bin/env bash
# Every GPU measurement the repo commits, as one unattended sequence on a Hopper machine. This is how
# the H200 figures under results/ and benchmarks/results/ were taken:
#
#     bash benchmarks/gpu_session.sh LOGDIR [STEP ...]
#
# With no STEP it runs them all (a 2-GPU machine for the interference check and the 2-GPU passes).
# Each step logs to LOGDIR/NN_step.log and appends "step <tab> seconds <tab> exit code" to
# LOGDIR/steps.tsv; a failing step does not stop the next. LOGDIR/DONE marks the end. Baselines are
# timed on both GPUs at once unless the interference check finds one GPU slowed by the other's work.
set -u
logs=${1:?usage: gpu_session.sh LOGDIR [STEP ...]}
shift
ALL_STEPS="environment interference gpu_tests jail_tests eval_benchmark eval_unjailed cold_builds exploit_suite self_speedup static_check
validate_level4 baselines baseline_repeat baseline_figures"
steps=${*:-$ALL_STEPS}
mkdir -p "$logs" benchmarks/results
n=0
gpus=1

environment() {
    nvidia-smi && nvidia-smi topo -m
    python3 -c 'import torch, transformers; print(torch.__version__, torch.version.cuda, transformers.__version__)'
}
interference() {
    python3 benchmarks/multi_gpu_interference.py --gpus 2 --out "$logs/interference.json" || return
    gpus=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["independent_gpus"])' \
        "$logs/interference.json")
}
gpu_tests() { python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py tests/test_baseline.py; }
jail_tests() { python3 -m pytest -q -p no:cacheprovider tests/test_jail.py; }
eval_benchmark() {
    local passes=${EVAL_PASSES:-"cold:1 warm:1 repeat:1"}
    [ -z "${EVAL_PASSES:-}" ] && [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && passes="cold:2 warm:1 repeat:1 warm:2"
    python3 benchmarks/eval_benchmark.py --passes $passes --timeout 30 --cpu-workers 16 \
        --out "$logs/H200_eval_benchmark.json"
}
eval_unjailed() {  # the same warm passes with sandbox=none: what the jail costs per kernel
    python3 benchmarks/eval_benchmark.py --passes warm:1 repeat:1 --timeout 30 --cpu-workers 16 --sandbox none \
        --out "$logs/H200_eval_benchmark_unjailed.json"
}
cold_builds() {  # 18 distinct load_inline kernels, cold: without, with a new and with a kept precompiled header
    python3 benchmarks/cold_builds.py --passes nopch cold pch --cpu-workers 16 --out "$logs/H200_cold_builds.json"
}
exploit_suite() {
    python3 benchmarks/exploit_suite.py --timeout 60 --cpu-workers 16 --out "$logs/H200_exploit_suite.json"
}
self_speedup() {  # identical code must score 1.00x and never be rejected (SELF_LEVELS, default 1 2 3 4;
    # SELF_TIMING_PATH=process times the baseline in a plain process)
    rm -rf /tmp/kbv_self_work  # a fresh baseline and fresh records, never a resumed earlier pass
    python3 benchmarks/self_speedup.py --levels ${SELF_LEVELS:-1 2 3 4} --out "$logs/self_speedup.json" \
        --work /tmp/kbv_self_work --timing-path "${SELF_TIMING_PATH:-sandbox}"
    local rc=$?
    # Every record and the baseline, flat in LOGDIR (the device tool returns no deeply nested folder).
    for records in /tmp/kbv_self_work/runs/*/eval_results_hidden.json; do
        [ -f "$records" ] && cp "$records" "$logs/$(basename "$(dirname "$records")")_eval_results_hidden.json"
    done
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_baseline_time_torch.json" 2>/dev/null
    return $rc
}
static_check() { python3 benchmarks/static_check_benchmark.py; }
validate_level4() { python3 scripts/validate_problems.py --level 4; }
# Baselines resume from the files they find; the committed ones are of timing_path=process, which the
# default (sandbox) path refuses to extend, so a re-time writes elsewhere first (BASELINE_OUT, e.g. a
# folder under /tmp that outlives the device's calls) and is copied over results/timing when complete.
baselines() {  # level by level: a cut-short session keeps whole levels
    for level in ${BASELINE_LEVELS:-1 2 3 4}; do
        python3 scripts/generate_baseline_time.py "level=$level" "num_gpu_devices=$gpus" \
            "out_dir=${BASELINE_OUT:-results/timing}" ${BASELINE_MODES:+"modes=$BASELINE_MODES"} || return
    done
}
baseline_repeat() {
    python3 scripts/generate_baseline_time.py level=1 modes=[baseline_time_torch_tf32] \
        "out_dir=${BASELINE_REPEAT_OUT:-benchmarks/results/timing_repeat}" "num_gpu_devices=$gpus"
}
baseline_figures() {
    python3 benchmarks/baseline_figures.py --hardware H200 \
        --repeat results/timing/H200/baseline_time_torch_tf32.json \
        benchmarks/results/timing_repeat/H200/baseline_time_torch_tf32.json \
        --out benchmarks/results/H200_baseline_figures.json
}

for name in $steps; do
    case " $(echo $ALL_STEPS) " in *" $name "*) ;; *) echo "unknown step $name (steps: $ALL_STEPS)" >&2; exit 2;; esac
    n=$((n + 1))
    started=$SECONDS
    "$name" >"$(printf '%s/%02d_%s.log' "$logs" "$n" "$name")" 2>&1
    rc=$?
    printf '%s\t%d\t%d\n' "$name" $((SECONDS - started)) $rc >>"$logs/steps.tsv"
    {  # what a step left behind: nothing of the harness may outlive it or hold GPU memory
        echo "== after $name"
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>&1
        ps -eo pid,ppid,uid,etimes,rss,args | awk '$3 >= 2000000 || /evaluate[.](sandbox|jail)/'
    } >>"$logs/processes.log"
done
touch "$logs/DONE"
