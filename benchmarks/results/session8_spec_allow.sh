set -x
python3 benchmarks/seccomp_speculation.py --rounds 2 --out $OUT/seccomp_speculation.json > $OUT/seccomp_speculation.log 2>&1
cat $OUT/seccomp_speculation.log
(python3 -m pytest -q -p no:cacheprovider tests/test_jail.py -k "speculation" 2>&1 | tail -5) > $OUT/pytest_speculation.log; cat $OUT/pytest_speculation.log
rm -rf /tmp/kbv_self_work
timeout 240 python3 benchmarks/self_speedup.py --levels 3 --subset 15 24 --work /tmp/kbv_self_work --out $OUT/self_speedup_L3_p15-24.json > $OUT/self_speedup_L3_p15-24.log 2>&1
tail -c 800 $OUT/self_speedup_L3_p15-24.log
cp /tmp/kbv_self_work/runs/self_level3/eval_results_hidden.json $OUT/self_level3_p15-24_eval_results_hidden.json
cp /tmp/kbv_self_work/timing/here/baseline_time_torch.json $OUT/self_level3_p15-24_baseline_time_torch.json
