#!/usr/bin/env python3
"""The Miri matrix (`make miri`): the rows of miri/matrix.toml for MIRI_BUDGET, one after another.

Each row is one `cargo +nightly miri test -p berth ...` with its aliasing model, parker and
seeds; a row passes when cargo exits 0. Every row runs even after one fails, then a table of
rows, results, test counts and times is printed; the exit status is 1 if any row failed.

Usage: miri/run.py [ROW ...]      (default: every row of the budget; --list prints them)
Environment: MIRI_BUDGET (default|long), CARGO, NIGHTLY (default +nightly), MIRI_EXTRA_FLAGS
(appended to MIRIFLAGS, e.g. -Zmiri-seed=3 to rerun one schedule).
"""

import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE_FLAGS = ["-Zmiri-strict-provenance"]


def commands(row, budget):
    """The (description, argv, env) of each cargo invocation of a row."""
    flags = list(BASE_FLAGS)
    if row["aliasing"] == "tree":
        flags.append("-Zmiri-tree-borrows")
    elif row["aliasing"] != "stacked":
        raise SystemExit(f"row {row['name']}: aliasing must be stacked or tree")
    seeds = row.get("seeds_long", row["seeds"]) if budget == "long" else row["seeds"]
    if seeds:
        flags.append(f"-Zmiri-many-seeds=0..{seeds}")
    flags += os.environ.get("MIRI_EXTRA_FLAGS", "").split()
    env = {
        "MIRIFLAGS": " ".join(flags),
        "BERTH_PARKER": row["parker"],
        "CARGO_TARGET_DIR": str(ROOT / "target" / "miri"),
    }
    cargo = [os.environ.get("CARGO", "cargo"), os.environ.get("NIGHTLY", "+nightly"), "miri", "test", "-p", "berth"]
    if row["tests"] == "all":
        yield "every test target", cargo + ["--features", "futures", "--no-fail-fast"], env
        return
    for t in row["tests"]:
        yield (f"{t['test']} {' '.join(t['filters'])}",
               cargo + ["--test", t["test"], "--", *t["filters"]], env)


def main():
    budget = os.environ.get("MIRI_BUDGET", "default")
    matrix = tomllib.loads((ROOT / "miri" / "matrix.toml").read_text())
    rows = [r for r in matrix["row"] if budget in r["budgets"]]
    if sys.argv[1:] == ["--list"]:
        for r in rows:
            for what, _, env in commands(r, budget):
                print(f"{r['name']:<22} {what:<70} MIRIFLAGS={env['MIRIFLAGS']!r} BERTH_PARKER={env['BERTH_PARKER']}")
        return
    wanted = set(sys.argv[1:])
    if wanted:
        unknown = wanted - {r["name"] for r in matrix["row"]}
        if unknown:
            raise SystemExit(f"unknown rows {sorted(unknown)}")
        rows = [r for r in matrix["row"] if r["name"] in wanted]
    summary = []
    for r in rows:
        start = time.monotonic()
        ok, tests, failures = True, 0, []
        for what, argv, env in commands(r, budget):
            print(f"miri {r['name']}: {what} (MIRIFLAGS={env['MIRIFLAGS']!r}, "
                  f"BERTH_PARKER={env['BERTH_PARKER']})", flush=True)
            proc = subprocess.run(argv, cwd=ROOT, env=dict(os.environ, **env),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            sys.stdout.write(proc.stdout)
            tests += sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", proc.stdout))
            if proc.returncode != 0:
                ok = False
                failures.append(what)
        took = time.monotonic() - start
        verdict = "passed" if ok else f"FAILED ({'; '.join(failures)})"
        print(f"miri row {r['name']} {verdict}: {tests} test runs in {took / 60:.1f} min\n", flush=True)
        summary.append((r["name"], verdict, tests, took))
    print(f"| row | result | test runs | time |\n|---|---|---:|---:|")
    for name, verdict, tests, took in summary:
        print(f"| {name} | {verdict} | {tests} | {took / 60:.1f} min |")
    if any(v != "passed" for _, v, _, _ in summary):
        sys.exit(1)


if __name__ == "__main__":
    main()
