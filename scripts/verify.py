#!/usr/bin/env python3
"""`make verify`: every checker in turn, with progress as it goes and a summary table at the end.

Each step is a make target run as a child process, its whole output kept in
target/verify/<step>.log (the last lines are printed when a step fails). Every step runs even
after one fails, so the table is complete; the exit status is 1 if any step failed.

Budgets (VERIFY_BUDGET):
  default  fits in about an hour on the 2-core machine: shuttle at 2,000 schedules per model
           and scheduler (10x make test), loom at 3 preemptions, the Miri matrix's default
           rows (miri/matrix.toml), each fuzz target for 30 s.
  long     the nightly-sized run: shuttle at 20,000, loom at 4 preemptions, every Miri row with
           64 seeds, each fuzz target for 10 minutes. Hours.

Usage: scripts/verify.py [STEP ...]   (default: every step; `--list` names them)
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "target" / "verify"

BUDGETS = {
    "default": {
        "SHUTTLE_ITERATIONS": "2000",
        "LOOM_MAX_PREEMPTIONS": "3",
        "MIRI_BUDGET": "default",
        "FUZZ_SECS": "30",
    },
    "long": {
        "SHUTTLE_ITERATIONS": "20000",
        "LOOM_MAX_PREEMPTIONS": "4",
        "MIRI_BUDGET": "long",
        "FUZZ_SECS": "600",
    },
}

# (step, checker as the summary names it, make target, what it runs)
STEPS = [
    ("lint", "rustfmt, clippy, rustdoc, API snapshot, doc examples, unsafe inventory",
     ["fmt-check", "unsafe-inventory", "clippy", "doc", "api-check", "doc-examples"], "static checks"),
    ("unit", "cargo test (stress, proptest, linearizability, doctests)", ["unit"], "tests"),
    ("examples", "examples", ["examples"], "examples"),
    ("loom", "loom (both parkers)", ["loom"], "models"),
    ("shuttle", "shuttle (random + PCT)", ["shuttle"], "models"),
    ("mutants", "mutant gate", ["mutants"], "checks"),
    ("miri", "Miri matrix", ["miri"], "runs"),
    ("tsan", "ThreadSanitizer", ["tsan"], "tests"),
    ("fuzz", "libFuzzer", ["fuzz"], "targets"),
    ("msrv", "MSRV build", ["msrv"], "builds"),
]


def count(step, out):
    """What the step checked, read off its output."""
    if step == "mutants":
        m = re.search(r"(\d+) checks over (\d+) mutants", out)
        return f"{m.group(1)} checks / {m.group(2)} mutants" if m else "?"
    if step == "miri":
        rows = len(re.findall(r"^miri row .* passed", out, re.M))
        tests = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", out))
        return f"{rows} rows, {tests} test runs"
    if step == "fuzz":
        return f"{len(re.findall(r'^fuzz: ', out, re.M))} targets"
    if step == "msrv":
        return "2 feature sets"
    if step == "lint":
        return "6 checks"
    if step == "examples":
        return f"{len(re.findall(r'^example: ', out, re.M))} examples"
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", out))
    return f"{passed} tests"


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        for name, checker, _, _ in STEPS:
            print(f"{name:<10} {checker}")
        return
    budget = os.environ.get("VERIFY_BUDGET", "default")
    if budget not in BUDGETS:
        raise SystemExit(f"VERIFY_BUDGET must be one of {sorted(BUDGETS)}, not {budget!r}")
    steps = [s for s in STEPS if not args or s[0] in args]
    unknown = set(args) - {s[0] for s in STEPS}
    if unknown:
        raise SystemExit(f"unknown steps {sorted(unknown)}; --list names them")
    env = dict(os.environ, **BUDGETS[budget])
    LOGS.mkdir(parents=True, exist_ok=True)
    print(f"make verify: budget {budget} ({', '.join(f'{k}={v}' for k, v in BUDGETS[budget].items())})")
    print(f"logs in {LOGS.relative_to(ROOT)}/\n", flush=True)
    rows = []
    start_all = time.monotonic()
    for i, (name, checker, targets, _) in enumerate(steps, 1):
        print(f"[{i}/{len(steps)}] {name}: {checker} ...", flush=True)
        log = LOGS / f"{name}.log"
        start = time.monotonic()
        with open(log, "w") as f:
            proc = subprocess.run(["make", "--no-print-directory", *targets], cwd=ROOT, env=env,
                                  stdout=f, stderr=subprocess.STDOUT)
        took = time.monotonic() - start
        out = log.read_text(errors="replace")
        ok = proc.returncode == 0
        rows.append((name, checker, "passed" if ok else "FAILED", count(name, out), took))
        print(f"      {'passed' if ok else 'FAILED'} in {took / 60:.1f} min ({rows[-1][3]})", flush=True)
        if not ok:
            print("      last lines of its log:")
            for line in out.splitlines()[-30:]:
                print(f"      | {line}")
            print(flush=True)
    total = time.monotonic() - start_all
    print(f"\n| step | checker | result | count | time |")
    print(f"|---|---|---|---|---:|")
    for name, checker, result, what, took in rows:
        print(f"| {name} | {checker} | {result} | {what} | {took / 60:.1f} min |")
    print(f"\ntotal {total / 60:.1f} min, budget {budget}")
    failed = [r[0] for r in rows if r[2] != "passed"]
    if failed:
        print(f"make verify FAILED: {', '.join(failed)}")
        sys.exit(1)
    print("make verify: all passed")


if __name__ == "__main__":
    main()
