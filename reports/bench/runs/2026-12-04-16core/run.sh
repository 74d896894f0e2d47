#!/bin/bash
# Many-core run of the berth-bench suite on the lent 16-core machine, from binaries built on
# the 2-vCPU machine (no Rust there). Writes $OUT/report.tgz (report.py's output, criterion's
# raw output, the wait JSON, the logs).
set -u
start=$(date +%s); budget=${BUDGET_S:-500}
root=$PWD
export CARGO_TARGET_DIR=$root/.devbench/target
export CRITERION_HOME=$CARGO_TARGET_DIR/criterion
export BERTH_WAIT_JSON=$CARGO_TARGET_DIR/berth-wait/wait.json
export BENCH_BUDGET=quick
CRIT_ARGS="--warm-up-time 0.5 --measurement-time 1"
export BERTH_BENCH_COMMAND="BENCH_BUDGET=quick <bench> --bench $CRIT_ARGS (binaries of berth-bench built at commit $COMMIT by cargo bench on the 2-vCPU machine, stripped, run one after another on the 16-core device machine)"
mkdir -p $CARGO_TARGET_DIR $OUT/r
{ nproc; uname -a; grep -m1 'model name' /proc/cpuinfo; cat /proc/loadavg; python3 -V; ldd --version | head -1; } > $OUT/r/machine.txt 2>&1
cat $OUT/r/machine.txt
python3 reports/bench/report.py before
for b in queues channels deque pool select async_channels wait; do
  left=$(( budget - ($(date +%s) - start) - 25 ))
  if [ $left -lt 10 ]; then echo "SKIP $b: out of time" | tee -a $OUT/r/skipped.txt; continue; fi
  echo "== $b ($left s left)"
  t0=$(date +%s)
  if [ $b = wait ]; then args="--bench"; else args="--bench $CRIT_ARGS"; fi
  timeout $left .devbench/bin/$b $args > $OUT/r/$b.log 2>&1; rc=$?
  echo "$b rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/r/times.txt
  grep -E "^[a-z_0-9]+/[a-z_0-9]+ +time:|panicked|error" $OUT/r/$b.log | head -3
done
python3 reports/bench/report.py after --keep-record --out $OUT/r/report > $OUT/r/report.log 2>&1; echo "report rc=$?"
tail -5 $OUT/r/report.log
cp -r $CRITERION_HOME $OUT/r/criterion; cp $BERTH_WAIT_JSON $OUT/r/ 2>/dev/null; cp $CARGO_TARGET_DIR/berth-bench/run.json $OUT/r/ 2>/dev/null
tar czf $OUT/report.tgz -C $OUT r && rm -rf $OUT/r
ls -la $OUT; echo "total $(( $(date +%s) - start )) s"
