#!/usr/bin/env bash
# H200 session 7, second machine: one unattended job (logs to $1; each poll copies them into $OUT).
logs=${1:?logs}
mkdir -p "$logs"
cd "$(dirname "$0")/../.."
{
  time python3 -m kernelbench_verified.evaluate.pch /tmp/kbv_cold_builds/pch
  python3 - <<'PY'
import tempfile, pathlib
from torch.utils import cpp_extension as c
stop = c._run_ninja_build
c._run_ninja_build = lambda *a, **k: (_ for _ in ()).throw(StopIteration())
for cuda in (False, True):
    with tempfile.TemporaryDirectory() as d:
        try:
            c.load_inline("probe", cpp_sources="", cuda_sources="" if cuda else None, build_directory=d)
        except StopIteration:
            pass
        print("with_cuda", cuda, [l for l in pathlib.Path(d, "build.ninja").read_text().splitlines() if l.startswith(("cflags", "post_cflags"))])
PY
} > "$logs/pch_check.log" 2>&1
python3 benchmarks/cold_builds.py --passes pch --cpu-workers 16 --out "$logs/H200_cold_builds_pch.json" > "$logs/cold_builds_pch.log" 2>&1
for spec in "4 18 20" "3 16 50" "2 21 100"; do
    set -- $spec
    rm -rf /tmp/kbv_self_work
    python3 benchmarks/self_speedup.py --levels "$1" --subset "$2" "$3" --work /tmp/kbv_self_work \
        --out "$logs/self_speedup_L$1_p$2-$3.json" > "$logs/self_speedup_L$1_p$2-$3.log" 2>&1
    cp /tmp/kbv_self_work/runs/self_level$1/eval_results_hidden.json "$logs/self_level$1_p$2-$3_eval_results_hidden.json"
    cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json "$logs/self_level$1_p$2-$3_baseline_time_torch.json"
done
touch "$logs/ALL_DONE"
