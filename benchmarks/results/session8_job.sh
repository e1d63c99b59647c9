#!/usr/bin/env bash
# H200 session 8: one unattended job (logs to $1; each poll copies them into $OUT).
logs=${1:?logs}
mkdir -p "$logs"
cd "$(dirname "$0")/../.."
step() { echo "$(date +%T) $*" >> "$logs/steps.log"; }
step pch_check
{ time python3 -m kernelbench_verified.evaluate.pch /tmp/kbv_cold_builds/pch; } > "$logs/pch_check.log" 2>&1
step cold_builds  # pch first: the nopch pass empties the build folder, header included
python3 benchmarks/cold_builds.py --passes pch nopch --cpu-workers 16 --out "$logs/H200_cold_builds.json" > "$logs/cold_builds.log" 2>&1
step launch_bound
python3 benchmarks/launch_bound.py --out "$logs/launch_bound.json" > "$logs/launch_bound.log" 2>&1
for spec in "4 18 20" "3 16 50" "2 21 100"; do
    set -- $spec
    step "self_speedup L$1 $2-$3"
    rm -rf /tmp/kbv_self_work
    python3 benchmarks/self_speedup.py --levels "$1" --subset "$2" "$3" --work /tmp/kbv_self_work \
        --out "$logs/self_speedup_L$1_p$2-$3.json" > "$logs/self_speedup_L$1_p$2-$3.log" 2>&1
    cp /tmp/kbv_self_work/runs/self_level$1/eval_results_hidden.json "$logs/self_level$1_p$2-$3_eval_results_hidden.json"
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_level$1_p$2-$3_baseline_time_torch.json"
done
step done
touch "$logs/ALL_DONE"
