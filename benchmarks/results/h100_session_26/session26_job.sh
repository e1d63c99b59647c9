#!/usr/bin/env bash
# Session 26's device job, on main's copy in /tmp/repo26: the honest counts under main's judge (the 270
# references as their own candidates, the benchmark kernels, the exploit suite's clean fixtures) and
# whether a twin process tracks the clock's level; level 4 last as the longest. Steps as arguments, else:
set -u
steps=("$@")
[ $# -gt 0 ] || steps=(twin refs:2:1:100 refs:1:1:100 refs:3:1:50 bench exploit refs:4:1:20)
cd /tmp/repo26 && PYTHONPATH=/tmp/site:/tmp/repo26/src bash benchmarks/results/session12_call.sh /tmp/S26 "${steps[@]}"
echo ALL_DONE >> /tmp/S26/steps.log
