#!/usr/bin/env bash
# H200 session 12: one device call's steps, each writing flat into $1, with the GPU's clocks,
# temperature and power logged every 200 ms beside them (`smi.csv`), every CPU's busy, idle and stolen
# time every 50 ms (`cpu_stat.log`). The device tool returns at most
# 8 files from $OUT, so give a folder under /tmp and tar it into $OUT afterwards.
#
#     bash benchmarks/results/session12_call.sh OUT self:2:1:50 rerun:2:1:50 self:3:1:50 ...
#
# self:L:A:B[:FILE]  problems A-B of level L as their own candidates, baselines timed as kernels are;
#              with FILE (a baseline_time_torch.json timed before), the baseline resumes from it
# rerun:L:A:B  the same candidates evaluated a second time against the same baseline: with `self`, it
#              tells drift between runs (time) from a difference between a baseline run and a
#              candidate run (their settings)
# nvcc:N       N of benchmarks/cold_builds.py's kernels built at once by torch's load_inline, each nvcc
#              phase timed (`nvcc --time`): where a cold build's seconds go
# launch:R     benchmarks/launch_bound.py, R rounds, with the CPU topology and steal time around it
# zero_trust   tests/test_zero_trust.py on CUDA (every attack through the judge's GPU clock)
# gpu_tests    tests/test_gpu.py's GPU-marked tests
# exploit      benchmarks/exploit_suite.py on CUDA, its table and every record it wrote
# seed:L:FILE... a baseline file of level L merged from the committed ones named (self:...:/tmp/seed_L.json)
# bench        benchmarks/eval_benchmark.py, one cold pass: the benchmark kernels' verdicts and records
# twin         benchmarks/twin_clock.py: one process's clock overhead alone, with and without a random
#              0-3 ms between trials, then two processes' in turn (a matmul call, then a launch-bound
#              one): whether the H200's clock level is a beat, and whether it is the machine's
# refs:L:A:B  problems A-B of level L as their own candidates, one sample each, no baseline: the judge's
#              verdicts and withheld times on honest code, as main's judge is now
# repeat:L:P:N[:K=V,...] problem P of level L as its own candidate, N samples one after another (each
#              in a fresh sandbox with its own calibration): whether one sample's calibration tracks the
#              drift of the one before it (benchmarks/clock_drift.py); K=V: eval overrides (an A/B of
#              settings such as flush_l2=false), named in the run's files
out=${1:?out}
shift
mkdir -p "$out"
cd "$(dirname "$0")/../.."
fields=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv,noheader > /dev/null 2>&1 || fields=${fields%,*}  # older drivers
nvidia-smi --query-gpu=$fields --format=csv -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
# Every CPU's busy, idle and stolen jiffies (cumulative, /proc/stat) every 50 ms, Unix time first:
# records say when each phase of trials ran (metadata.trial_phases_at), so the overhead's levels can be
# lined up with what the timed CPU and the whole machine were doing (benchmarks/clock_drift.py --cpu-log).
# /proc/cpuinfo's clock is no use here: the H200's virtual machine shows a nominal 2100 MHz (session 21).
while sleep 0.05; do
    echo "$(date +%s.%N | cut -c1-14) $(awk '/^cpu[0-9]/ {printf "%d,%d,%d ", $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat)"
done > "$out/cpu_stat.log" 2>&1 &
cpus=$!
# Which CPUs share a core (SMT siblings) or a socket: a busy CPU numbered next to the timed one slowed
# launch-bound calls on the H100 (session 22, busy_neighbours.py), and whether it shares a core is unknown.
{ lscpu -e; grep . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list; } > "$out/topology.txt" 2>&1
trap 'kill $smi $cpus 2> /dev/null' EXIT  # also when an outer `timeout` ends this script
step() { echo "$(date +%T.%N | cut -c1-12) $*" >> "$out/steps.log"; }
# self_candidates L A B N DIR: N samples of each of problems A-B of level L, each its reference as its own candidate
self_candidates() {
    python3 - "$@" <<'PY'
import sys
sys.path.insert(0, "src")
from kernelbench_verified.problems.load import get_problem, self_candidate
level, first, last, copies, run = *map(int, sys.argv[1:5]), sys.argv[5]
for pid in range(first, last + 1):
    source = self_candidate(get_problem(level, pid).path.read_text())
    for sample in range(copies):
        open(f"{run}/level_{level}_problem_{pid}_sample_{sample}_kernel.py", "w").write(source)
PY
}
declare -A runs  # a step given twice writes its second run's files with a suffix, not over the first's
for spec in "$@"; do
    IFS=: read -r what level first last seed <<< "$spec"
    runs[$spec]=$(( ${runs[$spec]:-0} + 1 ))
    again=""
    [ "${runs[$spec]}" -gt 1 ] && again="_run${runs[$spec]}"
    tag="L${level}_p${first}-${last}"
    work=/tmp/kbv_self_$tag
    step "start $spec"
    case $what in
    self)
        rm -rf "$work"
        if [ -n "$seed" ]; then mkdir -p "$work/timing/here" && cp "$seed" "$work/timing/here/baseline_time_torch.json"; fi
        python3 benchmarks/self_speedup.py --levels "$level" --subset "$first" "$last" --timing-path sandbox \
            --work "$work" --out "$out/self_$tag.json" > "$out/self_$tag.log" 2>&1
        rc=$?
        cp "$work/runs/self_level$level/eval_results_hidden.json" "$out/self_${tag}_eval_results_hidden.json"
        cp "$work/timing/here/baseline_time_torch.json" "$out/self_${tag}_baseline_time_torch.json"
        cp "$work/baseline_runs/baseline_time_torch_level$level/eval_results.json" "$out/self_${tag}_baseline_records.json"
        ;;
    rerun)
        rm -rf "$work/runs/rerun" && mkdir -p "$work/runs/rerun"
        cp "$work"/runs/self_level"$level"/*_kernel.py "$work/runs/rerun/"
        python3 scripts/eval_from_generations.py run_name=rerun "runs_dir=$work/runs" "level=$level" \
            use_hidden_tests=True "subset=[$first,$last]" > "$out/rerun_$tag.log" 2>&1
        rc=$?
        cp "$work/runs/rerun/eval_results_hidden.json" "$out/rerun_${tag}_eval_results_hidden.json"
        ;;
    nvcc)
        rm -rf /tmp/kbv_nvcc && mkdir -p /tmp/kbv_nvcc
        python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import cold_builds
for i, source in enumerate(cold_builds.kernel_sources($level)): open(f'/tmp/kbv_nvcc/k{i}.py', 'w').write(source)"
        builds=()
        for kernel in /tmp/kbv_nvcc/k*.py; do
            name=$(basename "$kernel" .py)
            TORCH_EXTENSIONS_DIR=/tmp/kbv_nvcc/ext_$name NVCC_APPEND_FLAGS="--time $out/nvcc_${level}_$name.csv" \
                python3 "$kernel" > "$out/nvcc_${level}_$name.log" 2>&1 &
            builds+=($!)
        done
        wait "${builds[@]}"  # not the clock logger
        rc=$?
        ;;
    launch)
        { lscpu -e; grep '^cpu ' /proc/stat; } > "$out/launch_host.txt" 2>&1
        python3 benchmarks/launch_bound.py --rounds "$level" --out "$out/launch_bound.json" > "$out/launch_bound.log" 2>&1
        rc=$?
        grep '^cpu ' /proc/stat >> "$out/launch_host.txt"  # steal is the 8th figure
        ;;
    zero_trust)
        KBV_ZERO_TRUST_DEVICE=cuda timeout 420 python3 -m pytest -q -rsx -p no:cacheprovider tests/test_zero_trust.py \
            > "$out/zero_trust_cuda.log" 2>&1
        rc=$?
        ;;
    gpu_tests)
        timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py > "$out/test_gpu.log" 2>&1
        rc=$?
        ;;
    exploit)
        timeout 420 python3 benchmarks/exploit_suite.py --device cuda --cpu-workers 16 --out "$out/exploit_suite$again.json" \
            --records-out "$out/exploit_records$again.json" > "$out/exploit_suite$again.log" 2>&1
        rc=$?
        ;;
    bench)
        timeout 480 python3 benchmarks/eval_benchmark.py --passes cold:1 --timeout 30 --cpu-workers 16 \
            --out "$out/eval_benchmark.json" > "$out/eval_benchmark.log" 2>&1
        rc=$?
        for level in 1 2; do cp /tmp/kbv_bench_runs/bench_level$level/eval_results_hidden.json "$out/bench_L${level}_eval_results_hidden.json"; done
        ;;
    repeat)
        run=repeat_L${level}_p$first${seed:+_${seed//[=,]/_}}
        rm -rf "/tmp/kbv_repeat/$run" && mkdir -p "/tmp/kbv_repeat/$run"
        self_candidates "$level" "$first" "$first" "$last" "/tmp/kbv_repeat/$run"
        python3 scripts/eval_from_generations.py run_name=$run runs_dir=/tmp/kbv_repeat "level=$level" \
            "num_samples=$last" use_hidden_tests=True "subset=[$first,$first]" ${seed//,/ } > "$out/$run.log" 2>&1
        rc=$?
        for results in "/tmp/kbv_repeat/$run"/eval_results*.json; do  # _hidden unless use_hidden_tests=false
            cp "$results" "$out/${run}_$(basename "$results")"
        done
        ;;
    twin)
        rc=0
        for arm in "1 matmul 0" "1 matmul 3" "2 matmul 0" "2 launches 0"; do
            read -r twins call jitter <<< "$arm"
            name=twin_${twins}_${call}_jitter$jitter
            timeout 240 python3 benchmarks/twin_clock.py --twins "$twins" --call "$call" --jitter-ms "$jitter" \
                --out "$out/$name.json" > "$out/$name.log" 2>&1 || rc=$?
        done
        ;;
    refs)
        run=refs_$tag$again
        rm -rf "/tmp/kbv_refs/$run" && mkdir -p "/tmp/kbv_refs/$run"
        self_candidates "$level" "$first" "$last" 1 "/tmp/kbv_refs/$run"
        python3 scripts/eval_from_generations.py run_name=$run runs_dir=/tmp/kbv_refs "level=$level" \
            use_hidden_tests=True "subset=[$first,$last]" > "$out/$run.log" 2>&1
        rc=$?
        cp "/tmp/kbv_refs/$run/eval_results_hidden.json" "$out/${run}_eval_results_hidden.json"
        ;;
    seed)
        python3 - "$level" ${spec#seed:*:} > "/tmp/seed_$level.json" <<'PY'
import json, sys
level, merged = f"level{sys.argv[1]}", {}
for path in sys.argv[2].split(":"):
    merged.update(json.load(open(path))[level])
print(json.dumps({level: merged, "fingerprint": json.load(open(path))["fingerprint"], "failures": {}}))
PY
        rc=$?
        ;;
    *) echo "unknown step $spec" >&2; rc=2 ;;
    esac
    step "end $spec rc=$rc"  # the step's own command, not the copies after it
done
