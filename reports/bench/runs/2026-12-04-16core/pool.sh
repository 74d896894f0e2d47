#!/bin/bash
# The pool and deque benchmarks on 16 cores with the default budget (the published run's times).
set -u
export CRITERION_HOME=$PWD/.devbench/crit
mkdir -p $OUT/p
{ nproc; cat /proc/loadavg; } | tee $OUT/p/machine.txt
for b in pool deque; do
  t0=$(date +%s)
  timeout $([ $b = pool ] && echo 210 || echo 60) .devbench/bin/$b --bench > $OUT/p/$b.log 2>&1; echo "$b rc=$? $(( $(date +%s) - t0 )) s"
done
cat /proc/loadavg | tee -a $OUT/p/machine.txt
cp -r $CRITERION_HOME $OUT/p/crit
tar czf $OUT/pool.tgz -C $OUT p && rm -rf $OUT/p
