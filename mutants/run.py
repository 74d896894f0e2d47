#!/usr/bin/env python3
"""The mutant gate: every mutant in manifest.toml must be caught by each of its checks.

A check catches a mutant only if the test fails AND its output contains the expected message.
A mutant that does not compile, or whose test passes, or fails with another message, fails the
gate. Usage: mutants/run.py [NAME ...]   (default: every mutant)
"""

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def command(check):
    test, filt = check["test"], check.get("filter", "")
    if check["checker"] == "loom":
        env = {
            "RUSTFLAGS": "--cfg loom",
            "CARGO_TARGET_DIR": str(ROOT / "target" / "loom"),
            "LOOM_MAX_PREEMPTIONS": os.environ.get("LOOM_MAX_PREEMPTIONS", "3"),
            "BERTH_PARKER": check.get("parker", ""),
        }
        argv = ["cargo", "test", "-p", "berth-models", "--release", "--test", test, "--", filt]
    elif check["checker"] == "shuttle":
        env = {
            "RUSTFLAGS": "--cfg shuttle",
            "CARGO_TARGET_DIR": str(ROOT / "target" / "shuttle"),
            "SHUTTLE_ITERATIONS": os.environ.get("SHUTTLE_ITERATIONS", "200"),
            "BERTH_PARKER": check.get("parker", ""),
        }
        argv = ["cargo", "test", "-p", "berth-models", "--release", "--test", test, "--", filt]
    elif check["checker"] == "test":
        env = {
            "CARGO_TARGET_DIR": str(ROOT / "target" / "mutants"),
            "BERTH_PARKER": check.get("parker", ""),
        }
        # `test = "lib"`: a unit test inside the crate (FILTER is its full path).
        target = ["--lib"] if test == "lib" else ["--test", test]
        argv = ["cargo", "test", "-p", "berth", *target, "--", filt, "--exact"]
    else:
        raise SystemExit(f"unknown checker {check['checker']!r}")
    return env, argv


def run_check(mutant, check):
    env, argv = command(check)
    full_env = dict(os.environ, BERTH_MUTANT=mutant, **env)
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=full_env, capture_output=True, text=True)
    took = time.monotonic() - start
    out = proc.stdout + proc.stderr
    if "could not compile" in out or "error[E" in out:
        return False, took, "does not compile", out
    if proc.returncode == 0:
        return False, took, "survived (the test passed)", out
    if "running 0 tests" in out and "test result" not in out.split("running 0 tests", 1)[1]:
        return False, took, "no test matched the filter", out
    if check["expect"] not in out:
        return False, took, f"failed without the expected message {check['expect']!r}", out
    return True, took, "caught", out


def main():
    manifest = tomllib.loads((ROOT / "mutants" / "manifest.toml").read_text())
    wanted = set(sys.argv[1:])
    mutants = [m for m in manifest["mutant"] if not wanted or m["name"] in wanted]
    if wanted - {m["name"] for m in mutants}:
        raise SystemExit(f"unknown mutants: {sorted(wanted - {m['name'] for m in mutants})}")
    # The cfg values must all be declared, or rustc would silently compile the unmutated code.
    cargo_toml = (ROOT / "Cargo.toml").read_text()
    undeclared = [m["name"] for m in mutants if f'"{m["name"]}"' not in cargo_toml]
    if undeclared:
        raise SystemExit(f"mutants not declared in Cargo.toml check-cfg: {undeclared}")
    failures = []
    rows = []
    for m in mutants:
        for check in m["checks"]:
            label = f"{check['checker']}{'/' + check['parker'] if check.get('parker') else ''}"
            print(f"mutant {m['name']:<24} {label:<14} {check['test']}::{check['filter']} ...", end=" ", flush=True)
            ok, took, verdict, out = run_check(m["name"], check)
            print(f"{verdict} ({took:.1f}s)", flush=True)
            rows.append((m["name"], label, verdict, took))
            if not ok:
                failures.append((m["name"], label, verdict, out))
    print()
    print(f"{'mutant':<26}{'checker':<16}{'result':<40}time")
    for name, label, verdict, took in rows:
        print(f"{name:<26}{label:<16}{verdict:<40}{took:.1f}s")
    if failures:
        for name, label, verdict, out in failures:
            print(f"\n==== {name} [{label}]: {verdict}; last lines of output:")
            print("\n".join(out.splitlines()[-40:]))
        print(f"\nmutant gate FAILED: {len(failures)} check(s) did not catch their mutant")
        sys.exit(1)
    print(f"\nmutant gate passed: {len(rows)} checks over {len(mutants)} mutants, each caught with its expected message")


if __name__ == "__main__":
    main()
