#!/bin/bash
# The queue and channel probes on the 16-core machine: wall time, CPU and context switches per
# value (getrusage), berth's blocking wait against the same queue spun on like crossbeam's.
set -u
cd .devbench/bin
{ nproc; grep -m1 'model name' /proc/cpuinfo; cat /proc/loadavg; } 
for rep in 1 2 3; do
  for shape in "1 1 16" "2 2 1024" "4 4 1024" "4 4 16" "8 1 16" "1 8 16"; do
    for q in berth berth_spin crossbeam; do ./queue_probe $q $shape 1000000; done
  done
done
for rep in 1 2 3; do
  for case in "unbounded spsc 1000000" "unbounded mpsc 1000000" "unbounded mpmc 1000000" "b0 spsc 100000" "b0 mpmc 100000" "b1024 spsc 1000000" "b1 spsc 200000"; do
    for lib in berth crossbeam kanal std; do
      set -- $case
      [ $lib = std ] && [ $2 = mpmc ] && continue
      timeout 30 ./chan_probe $lib $case
    done
  done
done
cat /proc/loadavg
