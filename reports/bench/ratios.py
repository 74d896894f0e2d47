#!/usr/bin/env python3
"""Summarise the berth-bench criterion results as markdown tables.

Usage: python3 reports/bench/ratios.py [CRITERION_DIR]

CRITERION_DIR defaults to $CARGO_TARGET_DIR/criterion when CARGO_TARGET_DIR is set, else to
<repository root>/target/criterion. Criterion 0.8 writes one directory per benchmark,
<group>/<function>/new/{benchmark.json,estimates.json}; the group is the configuration and the
function is the contender ("berth" or a competitor).

Two tables, each only when it has rows:

- queue groups (benches/queues.rs, e.g. p4c4_cap1024; any group that is not a channel group and
  has no contender but "berth" and "crossbeam"): berth median, crossbeam median, crossbeam/berth;
- every other group, e.g. the channel groups of benches/channels.rs (chan_b1024_mpsc4x1), with
  any number of contenders: every contender's median, then competitor/berth for each competitor
  ("–" where a group lacks that contender, e.g. std in the MPMC groups), and a last row with the
  geometric mean of each ratio column over the groups that have it.

In every ratio, > 1 means berth is faster (median time per iteration).

Python 3 standard library only.
"""

import json
import math
import os
import re
import sys
from pathlib import Path

BERTH = "berth"
CROSSBEAM = "crossbeam"
# Column order for the contenders of the multi-contender table; others follow alphabetically.
KNOWN_COMPETITORS = ("crossbeam", "flume", "kanal", "std")
CHANNEL_FLAVOURS = {"b0": 0, "b1": 1, "b1024": 2, "unbounded": 3}
CHANNEL_SHAPES = {"spsc": 0, "mpsc": 1, "mpmc": 2}


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
    m = re.fullmatch(r"chan_([a-z0-9]+)_([a-z]+)(\d+)x(\d+)", group)
    if m and m.group(1) in CHANNEL_FLAVOURS and m.group(2) in CHANNEL_SHAPES:
        key = (
            CHANNEL_FLAVOURS[m.group(1)],
            CHANNEL_SHAPES[m.group(2)],
            int(m.group(3)),
            int(m.group(4)),
        )
        return (1, key, group)
    return (2, (), group)


def is_queue_group(group, functions):
    return not group.startswith("chan_") and set(functions) <= {BERTH, CROSSBEAM}


def competitor_order(names):
    known = [n for n in KNOWN_COMPETITORS if n in names]
    return known + sorted(n for n in names if n not in KNOWN_COMPETITORS)


def fmt_time(ns):
    if ns is None:
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.1f} ns"


def ratio(competitor_ns, berth_ns):
    return competitor_ns / berth_ns if competitor_ns and berth_ns else None


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}"


def print_queue_table(results, groups):
    print("| configuration | berth median | crossbeam median | crossbeam/berth |")
    print("|---|---:|---:|---:|")
    for group in groups:
        berth = results[group].get(BERTH)
        crossbeam = results[group].get(CROSSBEAM)
        print(
            f"| {group} | {fmt_time(berth)} | {fmt_time(crossbeam)} "
            f"| {fmt_ratio(ratio(crossbeam, berth))} |"
        )
    print()
    print("crossbeam/berth > 1 means berth is faster (median time per iteration).")


def print_multi_table(results, groups):
    competitors = competitor_order(
        {f for g in groups for f in results[g] if f != BERTH}
    )
    header = ["configuration", f"{BERTH} median"]
    header += [f"{c} median" for c in competitors]
    header += [f"{c}/{BERTH}" for c in competitors]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    logs = {c: [] for c in competitors}
    for group in groups:
        medians = results[group]
        berth = medians.get(BERTH)
        cells = [group, fmt_time(berth)]
        cells += [fmt_time(medians.get(c)) for c in competitors]
        for c in competitors:
            r = ratio(medians.get(c), berth)
            if r is not None:
                logs[c].append(math.log(r))
            cells.append(fmt_ratio(r))
        print("| " + " | ".join(cells) + " |")
    geomeans = [
        fmt_ratio(math.exp(sum(logs[c]) / len(logs[c])) if logs[c] else None)
        for c in competitors
    ]
    blanks = [""] * (1 + len(competitors))
    print("| geometric mean | " + " | ".join(blanks + geomeans) + " |")
    print()
    print(
        f"competitor/{BERTH} > 1 means berth is faster (median time per iteration); "
        "– means the group has no such contender."
    )


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    criterion_dir = Path(argv[1]) if len(argv) == 2 else default_dir()
    if not criterion_dir.is_dir():
        print(f"ratios.py: no criterion directory at {criterion_dir}", file=sys.stderr)
        return 1
    results = load(criterion_dir)
    contenders = {BERTH, *KNOWN_COMPETITORS}
    groups = sorted((g for g in results if contenders & set(results[g])), key=sort_key)
    if not groups:
        print(f"ratios.py: no berth-bench estimates under {criterion_dir}", file=sys.stderr)
        return 1

    queue_groups = [g for g in groups if is_queue_group(g, results[g])]
    other_groups = [g for g in groups if not is_queue_group(g, results[g])]
    if queue_groups:
        print_queue_table(results, queue_groups)
    if other_groups:
        if queue_groups:
            print()
        print_multi_table(results, other_groups)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
