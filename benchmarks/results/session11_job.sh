#!/usr/bin/env bash
# H200 session 11: one unattended job (logs to $1; each poll tars them into $OUT). The open
# measurements of benchmarks/results/h200_session_10/README.md, most telling first.
logs=${1:?logs}
mkdir -p "$logs"
cd "$(dirname "$0")/../.."
step() { echo "$(date +%T) $*" >> "$logs/steps.log"; }
self_sandbox() {  # identical code against baselines timed as kernels are; $1 level, $2 tag, rest: --subset
    level=$1; tag=$2; shift 2
    step "self_speedup L$level $tag"
    rm -rf /tmp/kbv_self_work
    python3 benchmarks/self_speedup.py --levels "$level" "$@" --timing-path sandbox --work /tmp/kbv_self_work \
        --out "$logs/self_L${level}_$tag.json" > "$logs/self_L${level}_$tag.log" 2>&1
    cp /tmp/kbv_self_work/runs/self_level$level/eval_results_hidden.json "$logs/self_L${level}_${tag}_eval_results_hidden.json"
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_L${level}_${tag}_baseline_time_torch.json"
    (cd /tmp/kbv_self_work && find baseline_runs -name '*.json' | tar czf "$logs/self_L${level}_${tag}_baseline_runs.tgz" -T -)
}
step "zero_trust cuda"
KBV_ZERO_TRUST_DEVICE=cuda python3 -m pytest -q -p no:cacheprovider tests/test_zero_trust.py > "$logs/zero_trust_cuda.log" 2>&1
self_sandbox 2 p1-50 --subset 1 50
step "exploit_suite"
python3 benchmarks/exploit_suite.py --timeout 60 --cpu-workers 16 --out "$logs/exploit_suite.json" --records-out "$logs/exploit_suite_records.json" > "$logs/exploit_suite.log" 2>&1
self_sandbox 2 p51-100 --subset 51 100
self_sandbox 3 all
step "cold_builds 8 workers"
python3 -m kernelbench_verified.evaluate.pch /tmp/kbv_cold_builds/pch > "$logs/pch_check.log" 2>&1
python3 benchmarks/cold_builds.py --passes pch --cpu-workers 8 --out "$logs/H200_cold_builds_8_workers.json" \
    > "$logs/cold_builds_8_workers.log" 2>&1
self_sandbox 1 p36-100 --subset 36 100
step done
touch "$logs/ALL_DONE"
