#!/usr/bin/env python3
"""The kill matrix (`make kill-matrix`): every mutant of manifest.toml against every checker.

The mutant gate (run.py) asks one question: is each mutant caught by the checks named for it,
with the expected message? This asks the wider one: which tools see which kind of bug. Each
mutant is run against seven checkers, each on the suites that exercise the mutant's primitive:

  loom      the primitive's loom models (futex parker, 3 preemptions)
  shuttle   the primitive's shuttle models (random + PCT, SHUTTLE_ITERATIONS, default 200)
  miri      a few concurrent tests of the primitive under Miri (stacked borrows, one seed)
  tsan      the primitive's test suite under ThreadSanitizer
  stress    the primitive's real-thread test suite (and the linearizability checker's runs)
  proptest  the primitive's proptest model
  fuzz      the primitive's cargo-fuzz targets, FUZZ_SECS each (default 20)

A cell is `caught` when the checker's run fails (a test failure, a sanitizer or Miri report, a
fuzzer crash), `hung` when it had to be killed after CELL_TIMEOUT seconds (default 600; a hang
is a detection, but a slow one, so it is shown apart), `survived` when every run passed, and
`n/a` when the checker has nothing that exercises the primitive. A build that fails is an
`error`, never `caught`. The first row is the unmutated build: every applicable cell there must
pass, or the matrix means nothing (the script stops if one does not).

Cells are kept in reports/kill-matrix/results.json with the commit they ran at; a rerun runs
only the cells missing there or in error (`--fresh` reruns all), so the matrix can be filled over several
sittings. The README's table is regenerated from the JSON after each cell.

Usage: mutants/kill_matrix.py [--fresh] [--checkers loom,shuttle,...] [MUTANT ...]
"""

import datetime
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "reports" / "kill-matrix"
# Its own target dirs, so a long run neither rebuilds nor is rebuilt by other work's builds
# (each cell changes BERTH_MUTANT, which recompiles berth in the dir it builds in).
TARGET = ROOT / "target" / "kill-matrix"
CHECKERS = ["loom", "shuttle", "miri", "tsan", "stress", "proptest", "fuzz"]
NONE = "(none)"

# The suites that exercise each primitive, per checker: test binaries with optional filters
# (libtest runs the tests whose names contain any filter), or fuzz targets.
QUEUE_MIRI = [("queue_suite", ["vyukov::exactly_once_fifo_2x2", "scq::exactly_once_fifo_2x2"])]
SUITES = {
    "park": {
        "loom": [("loom_park", []), ("loom_vyukov", [])],
        "shuttle": [("shuttle_models", ["vyukov_"])],
        "miri": [("queue_suite", ["vyukov::exactly_once_fifo_2x2"])],
        "tsan": [("queue_suite", [])],
        "stress": [("queue_suite", []), ("linearizability", ["vyukov"])],
        "proptest": [("queue_proptest", [])],
        "fuzz": ["queue_vyukov", "two_threads"],
    },
    "vyukov": {
        "loom": [("loom_vyukov", [])],
        "shuttle": [("shuttle_models", ["vyukov_"])],
        "miri": [("queue_suite", ["vyukov::exactly_once_fifo_2x2", "vyukov::capacity"])],
        "tsan": [("queue_suite", ["vyukov::"])],
        "stress": [("queue_suite", ["vyukov::"]), ("linearizability", ["vyukov"])],
        "proptest": [("queue_proptest", [])],
        "fuzz": ["queue_vyukov", "two_threads"],
    },
    "scq": {
        "loom": [("loom_scq", [])],
        "shuttle": [("shuttle_models", ["scq_"])],
        "miri": [("queue_suite", ["scq::exactly_once_fifo_2x2", "scq::capacity"])],
        "tsan": [("queue_suite", ["scq::"]), ("scq_threshold", [])],
        "stress": [("queue_suite", ["scq::"]), ("scq_threshold", []), ("linearizability", ["scq"])],
        "proptest": [("queue_proptest", [])],
        "fuzz": ["queue_scq", "two_threads"],
    },
    "channel": {
        "loom": [("loom_channel", [])],
        "shuttle": [("shuttle_models", ["channel_"])],
        "miri": [("channel_suite", ["exactly_once_2x2", "disconnect_race"])],
        "tsan": [("channel_suite", [])],
        "stress": [("channel_suite", []), ("linearizability", ["channel"])],
        "proptest": [("channel_proptest", [])],
        "fuzz": ["channel_array", "channel_list", "channel_zero", "two_threads"],
    },
    "async": {
        "loom": [("loom_async", [])],
        "shuttle": [("shuttle_select", [])],
        "miri": [("channel_async", ["chosen_then_dropped"])],
        "tsan": [("channel_async", [])],
        "stress": [("channel_async", [])],
        "proptest": [],
        "fuzz": [],
    },
    "mpsc": {
        "loom": [("loom_async", [])],
        "shuttle": [],
        "miri": [("channel_mpsc", ["a_batch_of_n_wakes_n_blocked_senders", "a_cancelled_batch_consumes_nothing"])],
        "tsan": [("channel_mpsc", [])],
        "stress": [("channel_mpsc", [])],
        "proptest": [],
        "fuzz": [],
    },
    "select": {
        "loom": [("loom_select", [])],
        "shuttle": [("shuttle_select", [])],
        "miri": [("channel_select", ["stress_exactly_once_across_flavours", "rendezvous",
                                     "selecting_senders"])],
        "tsan": [("channel_select", [])],
        "stress": [("channel_select", [])],
        "proptest": [],
        "fuzz": [],
    },
    "spsc": {
        "loom": [("loom_spsc", [])],
        "shuttle": [("shuttle_models", ["spsc_"])],
        "miri": [("spsc_suite", ["nothing_lost_in_the_race_with_the_producers_drop", "blocking_stream"])],
        "tsan": [("spsc_suite", [])],
        "stress": [("spsc_suite", []), ("linearizability", ["spsc"])],
        "proptest": [("spsc_proptest", [])],
        "fuzz": ["spsc", "two_threads"],
    },
    "deque": {
        "loom": [("loom_deque", [])],
        "shuttle": [("shuttle_deque", [])],
        "miri": [("deque_suite", ["exactly_once_two_thieves", "growth_while_a_thief_steals"])],
        "tsan": [("deque_suite", [])],
        "stress": [("deque_suite", [])],
        "proptest": [("deque_proptest", [])],
        "fuzz": ["deque", "two_threads"],
    },
    # The asymmetric fence pair (sync::asymmetric): its litmus test is a unit test of the crate
    # ("lib"); the pool and the asymmetric deque scenarios are its users.
    "asymmetric": {
        "loom": [("loom_pool", [])],
        "shuttle": [("shuttle_pool", [])],
        "miri": [("pool_suite", ["fib_join_at_every_level_matches_sequential"])],
        "tsan": [("lib", ["sync::asymmetric"]), ("pool_suite", [])],
        "stress": [("lib", ["sync::asymmetric"]), ("deque_suite", ["asymmetric"]),
                   ("pool_suite", [])],
        "proptest": [],
        "fuzz": [],
    },
    "pool": {
        "loom": [("loom_pool", [])],
        "shuttle": [("shuttle_pool", [])],
        "miri": [("pool_suite", ["fib_join_at_every_level_matches_sequential", "scope_"])],
        "tsan": [("pool_suite", [])],
        "stress": [("pool_suite", [])],
        "proptest": [],
        "fuzz": [],
    },
}

# Where each mutant lives. A mutant in the parker or the shared wait path breaks every
# blocking primitive; it is run against the queue suites, the first users of the parker.
PRIMITIVE = {
    "park_no_recheck_rmw": "park",
    "park_consume_by_store": "park",
    "wait_never_parks": "park",
    "vyukov_lost_race_full": "vyukov",
    "vyukov_pow2_mask": "vyukov",
    "vyukov_cap1_overwrite": "vyukov",
    "vyukov_recheck_load": "vyukov",
    "channel_no_disconnect": "channel",
    "spsc_publish_relaxed": "spsc",
    "scq_weak_threshold": "scq",
    "deque_no_take_fence": "deque",
    "deque_no_steal_fence": "deque",
    "deque_skip_stamp": "deque",
    "deque_trust_copied": "deque",
    "deque_ready_overreach": "deque",
    "deque_handshake_relaxed": "deque",
    "deque_spell_start_relaxed": "deque",
    "deque_unfence_no_fence": "deque",
    "deque_spell_read_early": "deque",
    "latch_sleep_by_store": "pool",
    "asymmetric_heavy_no_barrier": "asymmetric",
    "async_cancel_no_forward": "async",
    "select_keeps_losing_registration": "select",
    "batch_wakes_one": "mpsc",
    "select_send_no_claim": "select",
    "select_sender_no_forward": "select",
    "select_claim_stale_reservation": "select",
}


def git(*args):
    # Only trailing whitespace: `status --porcelain` lines start with a space (" M path").
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.rstrip()


def test_names():
    """The integration test binaries that exist (a suite naming a missing one is skipped)."""
    core = {p.stem for p in (ROOT / "core" / "tests").glob("*.rs")}
    models = {p.stem for p in (ROOT / "models" / "tests").glob("*.rs")}
    fuzz = {p.stem for p in (ROOT / "fuzz" / "fuzz_targets").glob("*.rs")}
    return core, models, fuzz


def runs(checker, primitive):
    """The (label, argv, env, cwd) of each run of a cell; empty when not applicable."""
    core, models, fuzz = test_names()
    suites = SUITES[primitive][checker]
    out = []
    nightly = os.environ.get("NIGHTLY", "+nightly")
    for s in suites:
        if checker == "fuzz":
            if s not in fuzz:
                continue
            secs = os.environ.get("FUZZ_SECS", "20")
            out.append((f"fuzz {s}", ["cargo", nightly, "fuzz", "run", "--target-dir",
                                      str(TARGET / "fuzz"), s, "--",
                                      f"-max_total_time={secs}", "-timeout=10"], {}, ROOT / "fuzz"))
            continue
        test, filters = s
        if checker in ("loom", "shuttle"):
            if test not in models:
                continue
            env = {"RUSTFLAGS": f"--cfg {checker}", "CARGO_TARGET_DIR": str(TARGET / checker)}
            if checker == "loom":
                env.update(LOOM_MAX_PREEMPTIONS="3", BERTH_PARKER="futex")
            else:
                env["SHUTTLE_ITERATIONS"] = os.environ.get("SHUTTLE_ITERATIONS", "200")
            argv = ["cargo", "test", "-p", "berth-models", "--release", "--test", test, "--", *filters]
        else:
            if test != "lib" and test not in core:
                continue
            target = ["--lib"] if test == "lib" else ["--test", test]
            if checker == "miri":
                env = {"MIRIFLAGS": "-Zmiri-strict-provenance", "CARGO_TARGET_DIR": str(TARGET / "miri")}
                argv = ["cargo", nightly, "miri", "test", "-p", "berth", *target, "--", *filters]
            elif checker == "tsan":
                env = {"RUSTFLAGS": "-Zsanitizer=thread", "CARGO_TARGET_DIR": str(TARGET / "tsan"),
                       "TSAN_OPTIONS": "halt_on_error=1"}
                argv = ["cargo", nightly, "test", "-Zbuild-std", "--target",
                        os.environ.get("TSAN_TARGET", "x86_64-unknown-linux-gnu"), "-p", "berth",
                        *target, "--", *filters]
            else:  # stress, proptest
                env = {"CARGO_TARGET_DIR": str(TARGET / "std")}
                argv = ["cargo", "test", "-p", "berth", *target, "--", *filters]
        out.append((f"{test} {' '.join(filters)}".strip(), argv, env, ROOT))
    return out


def run_one(mutant, label, argv, env, cwd, timeout):
    full_env = dict(os.environ, **env)
    full_env["BERTH_MUTANT"] = "" if mutant == NONE else mutant
    full_env.setdefault("RUST_BACKTRACE", "0")
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        hung = True
    took = time.monotonic() - start
    return proc.returncode, hung, out, took


def detail(out):
    """The most telling line of a failed run's output."""
    pats = [r"deadlock[^\n]*", r"ThreadSanitizer: [^\n]*", r"Undefined Behavior: [^\n]*",
            r"error: [^\n]*(?:Undefined|data race|deadlock)[^\n]*", r"panicked at[^\n]*\n([^\n]*)",
            r"SUMMARY: libFuzzer: [^\n]*", r"==\d+== ERROR: libFuzzer: [^\n]*", r"test [^\n]* \.\.\. FAILED"]
    for p in pats:
        m = re.search(p, out)
        if m:
            text = m.group(1) if m.groups() else m.group(0)
            return text.strip()[:200]
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def cell(mutant, checker, todo, timeout):
    if not todo:
        return {"verdict": "n/a", "seconds": 0.0, "detail": "", "runs": []}
    total, verdict, info, log = 0.0, "survived", "", []
    for label, argv, env, cwd in todo:
        rc, hung, out, took = run_one(mutant, label, argv, env, cwd, timeout)
        total += took
        build_failed = ("could not compile" in out or "error[E" in out
                        or ("error: failed to" in out and "test result" not in out))
        ran = sum(int(a) + int(b) for a, b in
                  re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", out))
        # A checker's own report: Miri and TSan abort the test binary on what they find, so
        # there is no libtest summary to count.
        reported = any(k in out for k in ("panicked", "Undefined Behavior", "ThreadSanitizer:",
                                          "deadlock"))
        if hung:
            v = "hung"
        elif checker != "fuzz" and ran == 0 and not build_failed and not reported:
            v = "error"  # no test matched: nothing was checked
        elif rc == 0:
            v = "passed"
        elif build_failed:
            v = "error"
        elif checker == "fuzz" and not re.search(r"libFuzzer|panicked at|deadly signal", out):
            # A fuzz run that failed without a libFuzzer report did not fuzz (cargo-fuzz
            # missing, a toolchain error): that is no detection.
            v = "error"
        else:
            v = "caught"
        log.append({"run": label, "result": v, "seconds": round(took, 1), "exit": rc,
                    "detail": detail(out) if v != "passed" else ""})
        print(f"    {label}: {v} ({took:.0f} s){' -- ' + log[-1]['detail'] if log[-1]['detail'] else ''}", flush=True)
        if v == "error":
            verdict, info = "error", log[-1]["detail"]
            break
        if v in ("caught", "hung") and verdict == "survived":
            verdict, info = v, f"{label}: {log[-1]['detail']}"
            if mutant != NONE:
                break  # one detection is enough for the cell
    if mutant == NONE and verdict == "survived":
        verdict = "passed"
    return {"verdict": verdict, "seconds": round(total, 1), "detail": info, "runs": log}


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"uname": " ".join(platform.uname()), "cpus": os.cpu_count(), "cpu": cpu,
            "rustc": subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout.strip(),
            "nightly": subprocess.run(["rustc", "+nightly", "-V"], capture_output=True, text=True).stdout.strip()}


SYMBOL = {"caught": "caught", "hung": "hung", "survived": "**survived**", "n/a": "n/a",
          "passed": "passes", "error": "**error**"}


def render(results, manifest):
    names = [NONE] + [m["name"] for m in manifest["mutant"]]
    # The gate's "test" checker is a real-thread test: the stress column.
    gate = {m["name"]: sorted({"stress" if c["checker"] == "test" else c["checker"] for c in m["checks"]})
            for m in manifest["mutant"]}
    lines = ["| mutant | primitive | gate | " + " | ".join(CHECKERS) + " |",
             "|---|---|---|" + "---|" * len(CHECKERS)]
    for name in names:
        cells = results["cells"].get(name, {})
        row = [f"`{name}`" if name != NONE else "(no mutant)", PRIMITIVE.get(name, "all"),
               ", ".join(gate.get(name, [])) or "–"]
        for c in CHECKERS:
            x = cells.get(c)
            row.append("–" if x is None else f"{SYMBOL[x['verdict']]} ({x['seconds']:.0f} s)"
                       if x["verdict"] != "n/a" else "n/a")
        lines.append("| " + " | ".join(row) + " |")
    counts = {c: sum(1 for n in names[1:] if results["cells"].get(n, {}).get(c, {}).get("verdict") in ("caught", "hung"))
              for c in CHECKERS}
    applicable = {c: sum(1 for n in names[1:] if results["cells"].get(n, {}).get(c, {}).get("verdict") not in (None, "n/a"))
                  for c in CHECKERS}
    lines.append("| **caught / run** | | | " + " | ".join(f"{counts[c]}/{applicable[c]}" for c in CHECKERS) + " |")
    gaps = []
    for name in names[1:]:
        for c in gate.get(name, []):
            x = results["cells"].get(name, {}).get(c)
            if x is not None and x["verdict"] not in ("caught", "hung"):
                gaps.append(f"- `{name}`: its gate checker {c} {x['verdict']} here")
    missing = sum(1 for n in names for c in CHECKERS if c not in results["cells"].get(n, {}))
    meta = results["meta"]
    head = [f"From `results.json`: commits {', '.join(sorted(set(x['commit'] for n in results['cells'].values() for x in n.values())))}; "
            f"`{meta['command']}`; {meta['machine']['cpus']} CPUs ({meta['machine']['cpu']}); "
            f"{meta['machine']['nightly']}. Cells still to run: {missing}."]
    if gaps:
        head.append("\nA mutant's gate checker did not catch it in the matrix:\n" + "\n".join(gaps))
    return "\n".join(head) + "\n\n" + "\n".join(lines) + "\n"


def write(results, manifest):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    readme = OUT / "README.md"
    if readme.exists():
        text = readme.read_text()
        begin, end = "<!-- matrix:begin", "<!-- matrix:end -->"
        if begin in text and end in text:
            pre = text[:text.index(begin)]
            post = text[text.index(end):]
            marker = text[text.index(begin):].split("\n", 1)[0]
            readme.write_text(pre + marker + "\n\n" + render(results, manifest) + "\n" + post)


def main():
    args = sys.argv[1:]
    fresh = "--fresh" in args
    args = [a for a in args if a != "--fresh"]
    checkers = CHECKERS
    if "--checkers" in args:
        i = args.index("--checkers")
        checkers = args[i + 1].split(",")
        del args[i:i + 2]
        bad = set(checkers) - set(CHECKERS)
        if bad:
            raise SystemExit(f"unknown checkers {sorted(bad)}")
    manifest = tomllib.loads((ROOT / "mutants" / "manifest.toml").read_text())
    names = [m["name"] for m in manifest["mutant"]]
    missing = [n for n in names if n not in PRIMITIVE]
    if missing:
        raise SystemExit(f"mutants without a primitive in kill_matrix.py: {missing}")
    wanted = args or [NONE] + names
    if args and set(args) - set(names) - {NONE}:
        raise SystemExit(f"unknown mutants {sorted(set(args) - set(names) - {NONE})}")
    path = OUT / "results.json"
    results = json.loads(path.read_text()) if path.exists() and not fresh else {"cells": {}}
    # The matrix's own output (reports/kill-matrix/) does not count as a change to what is checked.
    dirty = [l for l in git("status", "--porcelain", "--untracked-files=no").splitlines()
             if not l[3:].startswith("reports/kill-matrix/")]
    commit = git("rev-parse", "--short=12", "HEAD") + (" + uncommitted changes" if dirty else "")
    results["meta"] = {"command": "mutants/kill_matrix.py " + " ".join(sys.argv[1:]), "machine": machine(),
                       "updated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "cell_timeout_s": int(os.environ.get("CELL_TIMEOUT", "600")),
                       "fuzz_secs": int(os.environ.get("FUZZ_SECS", "20")),
                       "shuttle_iterations": int(os.environ.get("SHUTTLE_ITERATIONS", "200"))}
    timeout = results["meta"]["cell_timeout_s"]
    # The unmutated build first: each suite must pass before a failure can mean "caught".
    if NONE not in wanted:
        wanted = [NONE] + wanted
    for name in wanted:
        cells = results["cells"].setdefault(name, {})
        primitives = sorted(SUITES) if name == NONE else [PRIMITIVE[name]]
        for checker in checkers:
            # A cell that errored checked nothing: run it again.
            if checker in cells and cells[checker]["verdict"] != "error" and not fresh:
                continue
            print(f"{name} x {checker} ...", flush=True)
            todo, seen = [], set()
            for p in primitives:
                for r in runs(checker, p):
                    if r[0] not in seen:
                        seen.add(r[0])
                        todo.append(r)
            c = cell(name, checker, todo, timeout)
            c["commit"] = commit
            cells[checker] = c
            print(f"  => {c['verdict']} ({c['seconds']:.0f} s) {c['detail']}", flush=True)
            write(results, manifest)
            if name == NONE and c["verdict"] not in ("passed", "n/a"):
                raise SystemExit(f"the unmutated build does not pass {checker}: {c['detail']}")
    write(results, manifest)


if __name__ == "__main__":
    main()
