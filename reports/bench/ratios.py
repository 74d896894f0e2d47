#!/usr/bin/env python3
"""Summarise the berth-bench criterion results as a markdown table.

Usage: python3 reports/bench/ratios.py [CRITERION_DIR]

CRITERION_DIR defaults to $CARGO_TARGET_DIR/criterion when CARGO_TARGET_DIR is set, else to
<repository root>/target/criterion. Criterion 0.8 writes one directory per benchmark,
<group>/<function>/new/{benchmark.json,estimates.json}; the group is the configuration
(e.g. p4c4_cap1024) and the function is "berth" or "crossbeam". For every configuration this
prints both median times and crossbeam/berth (> 1 means berth is faster).

Python 3 standard library only.
"""

import json
import os
import re
import sys
from pathlib import Path

BERTH = "berth"
CROSSBEAM = "crossbeam"


def default_dir():
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        return Path(target) / "criterion"
    return Path(__file__).resolve().parent.parent.parent / "target" / "criterion"


def load(criterion_dir):
    """{group: {function: median_ns}} from every <...>/new/estimates.json under criterion_dir."""
    results = {}
    for estimates in sorted(criterion_dir.rglob("new/estimates.json")):
        new_dir = estimates.parent
        group = function = None
        meta = new_dir / "benchmark.json"
        if meta.is_file():
            with open(meta) as f:
                info = json.load(f)
            group, function = info.get("group_id"), info.get("function_id")
        if not group or not function:
            # Fall back on the layout: <criterion_dir>/<group...>/<function>/new/estimates.json
            rel = new_dir.parent.relative_to(criterion_dir)
            if len(rel.parts) < 2:
                continue
            group, function = "/".join(rel.parts[:-1]), rel.parts[-1]
        with open(estimates) as f:
            median_ns = json.load(f)["median"]["point_estimate"]
        results.setdefault(group, {})[function] = float(median_ns)
    return results


def sort_key(group):
    m = re.fullmatch(r"p(\d+)c(\d+)_cap(\d+)", group)
    if m:
        return (0, tuple(int(x) for x in m.groups()), group)
    return (1, (), group)


def fmt_time(ns):
    if ns is None:
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.1f} ns"


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    criterion_dir = Path(argv[1]) if len(argv) == 2 else default_dir()
    if not criterion_dir.is_dir():
        print(f"ratios.py: no criterion directory at {criterion_dir}", file=sys.stderr)
        return 1
    results = load(criterion_dir)
    groups = [g for g in results if BERTH in results[g] or CROSSBEAM in results[g]]
    if not groups:
        print(f"ratios.py: no berth/crossbeam estimates under {criterion_dir}", file=sys.stderr)
        return 1

    print("| configuration | berth median | crossbeam median | crossbeam/berth |")
    print("|---|---:|---:|---:|")
    for group in sorted(groups, key=sort_key):
        berth = results[group].get(BERTH)
        crossbeam = results[group].get(CROSSBEAM)
        ratio = f"{crossbeam / berth:.2f}" if berth and crossbeam else "–"
        print(f"| {group} | {fmt_time(berth)} | {fmt_time(crossbeam)} | {ratio} |")
    print()
    print("crossbeam/berth > 1 means berth is faster (median time per iteration).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
