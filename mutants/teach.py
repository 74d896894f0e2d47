#!/usr/bin/env python3
"""A teaching run of one mutant: build it, run the check that catches it, show what went wrong.

Usage: mutants/teach.py NAME   (or `make teach MUTANT=NAME`)

Picks the mutant's first loom or shuttle check from manifest.toml (a `test` check when it has
none), runs it exactly as the gate does (mutants/run.py's command(), with BERTH_MUTANT=NAME),
and prints: what the mutant breaks, the model's own timeline of the failing execution (each
thread's operations in the order they happened, from berth_models::trace), and the checker's
raw output. Exit 0 when the check caught the mutant with its expected message, 1 otherwise.
"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

sys.dont_write_bytecode = True  # importing run.py must leave no __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (mutants/run.py: the gate's command() and ROOT)

TIMELINE_START = "==== timeline of the failing execution"
TIMELINE_END = "==== end of timeline"
RAW_LINES = 60


def pick_check(mutant):
    for check in mutant["checks"]:
        if check["checker"] in ("loom", "shuttle"):
            return check
    return mutant["checks"][0]


def timeline(out):
    """The first timeline in the output (the failing execution's), or None."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(TIMELINE_START):
            for j in range(i, len(lines)):
                if lines[j].startswith(TIMELINE_END):
                    return "\n".join(lines[i : j + 1])
            return "\n".join(lines[i:])
    return None


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: mutants/teach.py NAME   (make teach MUTANT=NAME)")
    name = sys.argv[1]
    manifest = tomllib.loads((run.ROOT / "mutants" / "manifest.toml").read_text())
    mutants = {m["name"]: m for m in manifest["mutant"]}
    if name not in mutants:
        raise SystemExit(f"unknown mutant {name!r}; the manifest has: {', '.join(sorted(mutants))}")
    mutant = mutants[name]
    check = pick_check(mutant)
    env, argv = run.command(check)
    full_env = dict(os.environ, BERTH_MUTANT=name, **env)
    # A student reads the panic message, not a backtrace (TEACH_BACKTRACE=1 keeps it).
    full_env["RUST_BACKTRACE"] = "1" if os.environ.get("TEACH_BACKTRACE") == "1" else "0"

    print(f"==== mutant {name} ({mutant['file']})")
    print(mutant["breaks"])
    print()
    shown_env = " ".join(f"{k}={v!r}" if " " in v else f"{k}={v}" for k, v in env.items() if v)
    print(f"==== the check: {check['checker']} {check['test']}::{check.get('filter', '')}, "
          f"expected failure message {check['expect']!r}")
    print(f"BERTH_MUTANT={name} {shown_env} {' '.join(argv)}")
    print("(building the mutant and running the checker; the first build takes minutes)", flush=True)
    proc = subprocess.run(argv, cwd=run.ROOT, env=full_env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    caught = proc.returncode != 0 and check["expect"] in out
    if "could not compile" in out or "error[E" in out:
        caught = False

    print()
    found = timeline(out)
    if found:
        print(found)
        print("Read it top to bottom: one column per model thread, each row one operation as it")
        print("returned (a `starts` row with no later row from that thread is a call that never")
        print("returned). Compare it with what the correct code allows; the walkthrough says why.")
    elif check["checker"] in ("loom", "shuttle"):
        print(f"(no timeline: the model {check['test']}::{check.get('filter', '')} does not record "
              "its operations yet; the raw output below is all there is)")
    else:
        print("(no timeline: this check is a real-thread test, not a model; the raw output below "
              "is all there is)")

    lines = out.splitlines()
    panics = [i for i, line in enumerate(lines) if " panicked at " in line]
    if panics:
        print()
        print("==== the failure, as the checker reported it")
        print("\n".join(lines[panics[0] : panics[0] + 2]))
    print()
    print(f"==== the checker's raw output (last {RAW_LINES} lines)")
    print("\n".join(out.splitlines()[-RAW_LINES:]))
    print()
    print(f"==== walkthrough: mutants/README.md, section 'The walkthroughs', entry `{name}`")
    if caught:
        print(f"caught: the check failed with {check['expect']!r}, as the gate expects")
        sys.exit(0)
    verdict = "passed (the mutant survived)" if proc.returncode == 0 else "failed without the expected message"
    print(f"NOT caught as expected: the check {verdict}")
    sys.exit(1)


if __name__ == "__main__":
    main()
