#!/usr/bin/env bash
# Session 25's device job: main's copy in /tmp/repo25, branch pause-spares-l3 (patched) in /tmp/repo25b.
set -u
main=/tmp/repo25 branch=/tmp/repo25b
run() { local dir=$1; shift; (cd "$dir" && PYTHONPATH=/tmp/site:$dir/src bash benchmarks/results/session12_call.sh "$@"); }
run $main /tmp/S25 zero_trust repeat:1:95:24 repeat:1:63:1 repeat:1:76:1 repeat:1:87:1 exploit self:3:19:42
run $branch /tmp/S25b rerun:3:19:42
run $main /tmp/S25c rerun:3:19:42 self:4:1:20 bench self:2:1:50
echo ALL_DONE >> /tmp/S25c/steps.log
