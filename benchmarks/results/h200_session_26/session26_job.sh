#!/usr/bin/env bash
# Session 26's device job, on main's copy in /tmp/repo26: whether a twin process tracks the clock's level,
# then the honest counts under main's judge (the 270 references as their own candidates, the benchmark
# kernels, the exploit suite's clean fixtures), level 4 last as the longest.
set -u
cd /tmp/repo26 && PYTHONPATH=/tmp/site:/tmp/repo26/src bash benchmarks/results/session12_call.sh /tmp/S26 \
    twin refs:2:1:100 refs:1:1:100 refs:3:1:50 bench exploit refs:4:1:20
echo ALL_DONE >> /tmp/S26/steps.log
