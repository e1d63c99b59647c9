#!/usr/bin/env bash
# H200 session 7, one unattended job (logs to $1; each poll copies them into the device tool's $OUT).
logs=${1:?logs}
mkdir -p "$logs"
cd "$(dirname "$0")/../.."
bash benchmarks/gpu_session.sh "$logs" environment cold_builds
python3 benchmarks/cold_builds.py --passes pch --cpu-workers 8 --out "$logs/H200_cold_builds_8workers.json" \
    > "$logs/cold_builds_8workers.log" 2>&1
for spec in "4 18 20" "3 16 50" "2 21 100"; do
    set -- $spec
    rm -rf /tmp/kbv_self_work
    python3 benchmarks/self_speedup.py --levels "$1" --subset "$2" "$3" --work /tmp/kbv_self_work \
        --out "$logs/self_speedup_L$1_p$2-$3.json" > "$logs/self_speedup_L$1_p$2-$3.log" 2>&1
    cp /tmp/kbv_self_work/runs/self_level$1/eval_results_hidden.json "$logs/self_level$1_p$2-$3_eval_results_hidden.json"
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_level$1_p$2-$3_baseline_time_torch.json"
done
bash benchmarks/gpu_session.sh "$logs/suite" exploit_suite
touch "$logs/ALL_DONE"
