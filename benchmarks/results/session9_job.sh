#!/usr/bin/env bash
# H200, next session: one unattended job (logs to $1; each poll copies them into $OUT). The open
# measurements of benchmarks/results/h200_session_8/README.md, most telling first.
logs=${1:?logs}
mkdir -p "$logs"
cd "$(dirname "$0")/../.."
step() { echo "$(date +%T) $*" >> "$logs/steps.log"; }
self_sandbox() {  # identical code against baselines timed as kernels are (timing_path=sandbox)
    level=$1
    step "self_speedup sandbox L$level"
    rm -rf /tmp/kbv_self_work
    python3 benchmarks/self_speedup.py --levels "$level" --timing-path sandbox --work /tmp/kbv_self_work \
        --out "$logs/self_speedup_sandbox_L$level.json" > "$logs/self_speedup_sandbox_L$level.log" 2>&1
    cp /tmp/kbv_self_work/runs/self_level$level/eval_results_hidden.json "$logs/self_sandbox_level${level}_eval_results_hidden.json"
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_sandbox_level${level}_baseline_time_torch.json"
    (cd /tmp/kbv_self_work && find baseline_runs -name '*.json' | tar czf "$logs/self_sandbox_level${level}_baseline_runs.tgz" -T -)
}
self_sandbox 2
self_sandbox 1
step "cold_builds 8 workers"  # whether builds that end sooner let the GPU work while the rest build
python3 -m kernelbench_verified.evaluate.pch /tmp/kbv_cold_builds/pch > "$logs/pch_check.log" 2>&1
python3 benchmarks/cold_builds.py --passes pch --cpu-workers 8 --out "$logs/H200_cold_builds_8_workers.json" \
    > "$logs/cold_builds_8_workers.log" 2>&1
self_sandbox 3  # last: launch-bound models spread with the host's CPU whatever the path
step done
touch "$logs/ALL_DONE"
