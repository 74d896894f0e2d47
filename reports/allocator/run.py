#!/usr/bin/env python3
"""Does the allocator make berth::spsc block? Build, run the matrix, write the report.

Usage: python3 reports/allocator/run.py [--quick] [--runs N] [--nodes N] [--no-pin]
                                        [--no-spin-control] [--strace-plain] [--no-perf]
                                        [--out DIR] [--render RESULTS_JSON]

Builds reports/allocator (package berth-allocator-report, its own workspace) in release with
CARGO_TARGET_DIR=<repo>/target/allocator, then runs the binary for every configuration of the
matrix below, `--runs` times each (default 3), round-robin over the configurations so that a burst
of load on the machine spreads over all of them instead of landing on one. Each repetition of a
configuration is three processes:

- bare:   the binary alone. Wall time and getrusage (nvcsw, nivcsw) around the transfer, per
          process and per thread, and where each thread ran (same_cpu_fraction).
- strace: `strace --seccomp-bpf -f -c -e trace=futex -o FILE -E GLIBC_TUNABLES=... -- BIN ...`
          (the seed's command, plus --seccomp-bpf so that only futex calls stop the tracee, and
          -E so the tunables reach the tracee and not strace; --strace-plain drops both, and
          passes the tunables in the environment instead). The futex line of the summary: calls
          and errors.
- perf:   `perf stat -x, -e syscalls:sys_enter_futex ... -- env GLIBC_TUNABLES=... BIN ...`:
          in-kernel counts of futex calls without stopping the tracee (the tracepoints cost a
          slower syscall path, not a ptrace round trip), split into FUTEX_WAIT_PRIVATE and
          FUTEX_WAKE_PRIVATE, waits that returned EAGAIN at once (the lock word had already
          changed) and calls that returned > 0 (wakes that woke a thread). waits - EAGAIN is
          (to within timeouts and signals) the number of waits that actually slept. Skipped (recorded as
          unavailable) when perf is missing or cannot open the tracepoints; --no-perf skips it.

Matrix (node payload sizes 64, 128, 512 bytes; 1,000,000 nodes; ring capacity 1024):

- placement "free" (the scheduler places the two threads) and "pinned" (--pin: producer and
  consumer on the first and second allowed CPU; skipped with --no-pin or on one CPU):
  malloc and pool at every size, default tunables;
- pinned only: malloc 64 with glibc.malloc.mxfast=0, with glibc.malloc.tcache_count=0 and with
  both; pool 64 with both;
- pinned only (--no-spin-control drops these): malloc at every size with --wait spin (the ring
  busy-waits and never calls futex itself, so every futex call is the allocator's or thread
  start/join's: the control that separates the allocator's futex calls from berth's own parking).

--quick: 100,000 nodes and 1 run (checks the pipeline in well under a minute).
--render RESULTS_JSON: redraw RESULTS.md and futex.svg from an existing results.json, run nothing.

Writes, next to this script: results.json (every raw run plus the environment), RESULTS.md (the
summary table) and futex.svg (a log-scale bar chart of median futex calls per configuration).

Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SIZES = (64, 128, 512)
CAPACITY = 1024
MXFAST0 = "glibc.malloc.mxfast=0"
TCACHE0 = "glibc.malloc.tcache_count=0"
BOTH0 = f"{MXFAST0}:{TCACHE0}"
RUN_TIMEOUT_S = 180

# perf events: (key, event, filter or None)
PERF_EVENTS = [
    ("futex_total", "syscalls:sys_enter_futex", None),
    ("futex_wait", "syscalls:sys_enter_futex", "op == 128"),  # FUTEX_WAIT_PRIVATE
    ("futex_wake", "syscalls:sys_enter_futex", "op == 129"),  # FUTEX_WAKE_PRIVATE
    ("futex_eagain", "syscalls:sys_exit_futex", "ret == -11"),  # a wait that did not sleep
    ("futex_ret_pos", "syscalls:sys_exit_futex", "ret > 0"),  # a wake that woke someone
]


def sh(cmd, **kw):
    """Runs a command, returns stripped stdout ('' if it fails or is missing)."""
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, check=False, **kw
        ).stdout.strip()
    except OSError:
        return ""


def loadavg():
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return None


def configs(pin, spin_control):
    out = []
    placements = ["free"] + (["pinned"] if pin else [])
    for placement in placements:
        for mode in ("malloc", "pool"):
            for size in SIZES:
                out.append(dict(placement=placement, mode=mode, size=size, wait="block", tunables=""))
    tun_place = "pinned" if pin else "free"
    for t in (MXFAST0, TCACHE0, BOTH0):
        out.append(dict(placement=tun_place, mode="malloc", size=64, wait="block", tunables=t))
    out.append(dict(placement=tun_place, mode="pool", size=64, wait="block", tunables=BOTH0))
    if spin_control and pin:  # busy-waiting threads that share a CPU would only burn time slices
        for size in SIZES:
            out.append(dict(placement=tun_place, mode="malloc", size=size, wait="spin", tunables=""))
    for c in out:
        c["name"] = config_name(c)
    return out


def config_name(c):
    parts = [c["mode"], str(c["size"]), c["placement"]]
    if c["wait"] != "block":
        parts.append("spin")
    if c["tunables"]:
        parts.append(c["tunables"].replace("glibc.malloc.", ""))
    return " ".join(parts)


def bin_args(binary, c, nodes):
    args = [str(binary), c["mode"], str(c["size"]), "--nodes", str(nodes), "--capacity", str(CAPACITY)]
    if c["wait"] != "block":
        args += ["--wait", c["wait"]]
    if c["placement"] == "pinned":
        args.append("--pin")
    return args


def child_env(c):
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if c["tunables"]:
        env["GLIBC_TUNABLES"] = c["tunables"]
    return env


def parse_report(stdout):
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    return None


def tunables_seen(probe):
    """What the fastbin probe says about the tunables in force (see src/main.rs)."""
    if probe is None:
        return None
    if probe == 0:
        return "fastbins off"
    if probe > 1200:
        return "tcache off"
    return "default"


def expected_probe(tunables):
    if MXFAST0 in tunables:
        return "fastbins off"
    if TCACHE0 in tunables:
        return "tcache off"
    return "default"


def run_one(kind, c, binary, nodes, opts, tmp):
    cmd = bin_args(binary, c, nodes)
    env = child_env(c)
    rec = dict(config=c["name"], harness=kind, load_before=loadavg())
    out_file = None
    if kind == "strace":
        out_file = Path(tmp) / "strace.txt"
        pre = ["strace"]
        if not opts.strace_plain:
            pre.append("--seccomp-bpf")
        pre += ["-f", "-c", "-e", "trace=futex", "-o", str(out_file)]
        if not opts.strace_plain:
            if c["tunables"]:
                pre += ["-E", "GLIBC_TUNABLES=" + c["tunables"]]
            env.pop("GLIBC_TUNABLES", None)
            pre.append("--")
        cmd = pre + cmd
    elif kind == "perf":
        out_file = Path(tmp) / "perf.txt"
        pre = ["perf", "stat", "-x,", "-o", str(out_file)]
        for _, ev, flt in PERF_EVENTS:
            pre += ["-e", ev]
            if flt:
                pre += ["--filter", flt]
        pre.append("--")
        if c["tunables"]:
            pre += ["env", "GLIBC_TUNABLES=" + c["tunables"]]
        env.pop("GLIBC_TUNABLES", None)
        cmd = pre + cmd
    env_prefix = ""
    if env.get("GLIBC_TUNABLES"):
        env_prefix = "GLIBC_TUNABLES=" + env["GLIBC_TUNABLES"] + " "
    rec["command"] = env_prefix + shlex.join(cmd)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        rec["returncode"] = p.returncode
        rec["stderr"] = p.stderr[-2000:]
        stdout = p.stdout
    except subprocess.TimeoutExpired as e:
        rec["returncode"] = None
        rec["error"] = f"timed out after {RUN_TIMEOUT_S} s"
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    rec["process_s"] = round(time.monotonic() - t0, 3)
    rec["load_after"] = loadavg()
    try:
        rec["report"] = parse_report(stdout)
    except json.JSONDecodeError as e:
        rec["report"] = None
        rec["error"] = f"bad JSON from the binary: {e}"
    if kind == "strace" and out_file is not None:
        rec["strace"] = parse_strace(out_file)
    if kind == "perf" and out_file is not None:
        rec["perf"] = parse_perf(out_file)
        pf = rec["perf"]
        if pf and pf.get("futex_wait") is not None and pf.get("futex_eagain") is not None:
            pf["futex_wait_slept"] = pf["futex_wait"] - pf["futex_eagain"]
    return rec


def parse_strace(path):
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        f = line.split()
        if f and f[-1] == "futex":
            # % time, seconds, usecs/call, calls, [errors], syscall
            nums = f[:-1]
            calls = int(nums[3])
            errors = int(nums[4]) if len(nums) > 4 else 0
            return dict(calls=calls, errors=errors, raw=text)
    # No futex line: no futex call at all.
    return dict(calls=0, errors=0, raw=text)


def parse_perf(path):
    try:
        lines = [l for l in Path(path).read_text().splitlines() if l and not l.startswith("#")]
    except OSError:
        return None
    counts = {}
    for (key, _, _), line in zip(PERF_EVENTS, lines):
        v = line.split(",")[0]
        counts[key] = int(v) if v.isdigit() else None
    return counts if len(counts) == len(PERF_EVENTS) else None


def perf_works(binary):
    if not shutil.which("perf"):
        return False, "perf not installed"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "p.txt"
        cmd = ["perf", "stat", "-x,", "-o", str(out)]
        for _, ev, flt in PERF_EVENTS:
            cmd += ["-e", ev] + (["--filter", flt] if flt else [])
        cmd += ["--", str(binary), "pool", "64", "--nodes", "10"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0 or parse_perf(out) is None:
            return False, (p.stderr.strip() or "perf stat failed")[-300:]
    return True, ""


def strace_works(plain):
    if not shutil.which("strace"):
        return False, "strace not installed"
    cmd = ["strace"] + ([] if plain else ["--seccomp-bpf"]) + ["-f", "-c", "-e", "trace=futex", "-o", os.devnull, "true"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()[-300:]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else None


def summarize(cfgs, runs):
    out = []
    for c in cfgs:
        rs = [r for r in runs if r["config"] == c["name"]]
        ok = [r for r in rs if r.get("report") and r["report"].get("sum_ok") and r.get("returncode") == 0]
        bare = [r["report"] for r in ok if r["harness"] == "bare"]
        st = [r["strace"] for r in ok if r["harness"] == "strace" and r.get("strace")]
        pf = [r["perf"] for r in ok if r["harness"] == "perf" and r.get("perf")]
        probes = {tunables_seen(r["report"].get("probe_fastbin_bytes")) for r in ok}
        s = dict(c)
        s.update(
            runs_total=len(rs),
            runs_ok=len(ok),
            tunables_probe=sorted(p for p in probes if p),
            tunables_effective=probes == {expected_probe(c["tunables"])},
            wall_ms=[round(b["wall_ns"] / 1e6, 1) for b in bare],
            nvcsw=[b["self"]["nvcsw"] for b in bare],
            nivcsw=[b["self"]["nivcsw"] for b in bare],
            producer_nvcsw=[b["producer"]["nvcsw"] for b in bare],
            consumer_nvcsw=[b["consumer"]["nvcsw"] for b in bare],
            same_cpu=[b["same_cpu_fraction"] for b in bare],
            # Every run of this configuration (any harness): did the two threads share a CPU?
            shared_cpu_runs=sum(1 for r in ok if r["report"]["same_cpu_fraction"] > 0.5),
            strace_futex=[x["calls"] for x in st],
            strace_errors=[x["errors"] for x in st],
        )
        for key in [k for k, _, _ in PERF_EVENTS] + ["futex_wait_slept"]:
            s["perf_" + key] = [x.get(key) for x in pf]
        for key in list(s):
            if isinstance(s[key], list) and key != "tunables_probe":
                s["median_" + key] = med(s[key])
        out.append(s)
    return out


def fmt(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, float) and digits:
        return f"{v:.{digits}f}"
    if isinstance(v, float):
        v = round(v)
    return f"{v:,}"


def fmt_range(xs):
    r = rng(xs)
    if r is None:
        return ""
    return f" ({fmt(r[0])}–{fmt(r[1])})" if r[0] != r[1] else ""


def write_results_md(path, meta, summary):
    L = []
    L.append("# Allocator report: results")
    L.append("")
    L.append(
        f"Generated by `{meta['command']}` on {meta['date']} "
        f"(commit `{meta['git_head'][:12]}`{' + uncommitted changes' if meta['git_dirty'] else ''})."
    )
    L.append("")
    L.append(
        f"{meta['nodes']:,} nodes per run, ring capacity {CAPACITY}, {meta['runs']} run(s) per "
        f"configuration and harness. Machine: {meta['nproc']} CPUs, `{meta['glibc']}`, "
        f"`{meta['rustc']}`, kernel `{meta['uname'].split()[2] if meta['uname'] else '?'}`. "
        f"Load average at start {' '.join(meta['loadavg_start'] or [])}, "
        f"at end {' '.join(meta['loadavg_end'] or [])}."
    )
    L.append("")
    L.append(
        "Medians over the runs (min–max in parentheses where they differ). *futex (strace)*: "
        "calls in the `strace -f -c -e trace=futex` summary"
        + (" (with `--seccomp-bpf`; every exact command is in results.json)"
           if meta["strace"].get("seccomp_bpf") else "")
        + ". *futex (perf)*: "
        "`syscalls:sys_enter_futex` counted by `perf stat` (no ptrace stops); *slept (perf)*: "
        "FUTEX_WAIT_PRIVATE calls minus those that returned EAGAIN at once, i.e. the waits that "
        "put a thread to sleep. *nvcsw*, *nivcsw*, *time*: "
        "from the bare runs (no tracer); nvcsw/nivcsw are `getrusage(RUSAGE_SELF)` differences "
        "around the transfer. *shared CPU*: in how many of the configuration's runs (all harnesses) "
        "the two threads spent most of the transfer on one CPU (more than half of the producer's "
        "CPU samples had the nearest consumer sample on the same CPU), so that they took turns "
        "instead of running at once. *tunables probe*: what the fastbin probe in the binary saw "
        "(proof that GLIBC_TUNABLES took effect). See README.md for what each number does and "
        "does not mean."
    )
    L.append("")
    L.append(
        "| placement | mode | size | tunables | futex (strace) | futex (perf) | slept (perf) "
        "| nvcsw | nivcsw | time (ms) | shared CPU | tunables probe |"
    )
    L.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for s in summary:
        tun = s["tunables"].replace("glibc.malloc.", "") or "default"
        if s["wait"] != "block":
            tun += ", ring spins"
        probe = ", ".join(s["tunables_probe"]) or "–"
        if not s["tunables_effective"]:
            probe += " (UNEXPECTED)"
        L.append(
            f"| {s['placement']} | {s['mode']} | {s['size']} | {tun} "
            f"| {fmt(s['median_strace_futex'])}{fmt_range(s['strace_futex'])} "
            f"| {fmt(s['median_perf_futex_total'])}{fmt_range(s['perf_futex_total'])} "
            f"| {fmt(s['median_perf_futex_wait_slept'])} "
            f"| {fmt(s['median_nvcsw'])}{fmt_range(s['nvcsw'])} "
            f"| {fmt(s['median_nivcsw'])} "
            f"| {fmt(s['median_wall_ms'])}{fmt_range(s['wall_ms'])} "
            f"| {s['shared_cpu_runs']}/{s['runs_ok']} "
            f"| {probe} |"
        )
        if s["runs_ok"] != s["runs_total"]:
            L.append(f"|  | ↑ {s['runs_total'] - s['runs_ok']} of {s['runs_total']} runs failed |||||||||||")
    L.append("")
    if not meta["perf"]["available"]:
        L.append(f"perf columns empty: {meta['perf']['why']}.")
        L.append("")
    if not meta["strace"]["available"]:
        L.append(f"strace columns empty: {meta['strace']['why']}.")
        L.append("")
    L.append("![median futex calls per configuration](futex.svg)")
    L.append("")
    Path(path).write_text("\n".join(L))


def write_svg(path, summary, meta):
    """A log-scale grouped bar chart: median futex calls (strace, perf) per configuration."""
    import math

    series = [("strace", "median_strace_futex", "strace_futex", "#4c78a8"),
              ("perf", "median_perf_futex_total", "perf_futex_total", "#f58518")]
    series = [s for s in series if any(x.get(s[1]) is not None for x in summary)]
    n = len(summary)
    left, right, top, bottom = 70, 70, 64, 200
    group_w = 44
    bar_w = (group_w - 10) / max(len(series), 1)
    width = left + right + n * group_w
    height = 480
    plot_h = height - top - bottom
    vmax = max([1] + [v for s in summary for _, _, key, _ in series for v in s[key] if v is not None])
    decades = max(1, math.ceil(math.log10(vmax * 1.05)))

    def y(v):
        v = max(v, 1)
        return top + plot_h - plot_h * math.log10(v) / decades

    def esc(t):
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    o = []
    o.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">')
    o.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    o.append(f'<text x="{left}" y="20" font-size="14" font-weight="bold">futex calls per '
             f'{meta["nodes"]:,} nodes, median of {meta["runs"]} (log scale; whiskers: min–max)</text>')
    o.append(f'<text x="{left}" y="36" fill="#555">{esc(meta["glibc"])}, {meta["nproc"]} CPUs; '
             f'free = scheduler places the threads, pinned = one CPU each; 0 and 1 drawn as a stub'
             f'</text>')
    for d in range(decades + 1):
        yy = y(10 ** d)
        o.append(f'<line x1="{left}" x2="{width - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{10 ** d:,}</text>')
    o.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#333"/>')
    for i, s in enumerate(summary):
        gx = left + i * group_w + 5
        if i and s["placement"] != summary[i - 1]["placement"]:
            sx = left + i * group_w
            o.append(f'<line x1="{sx}" x2="{sx}" y1="{top}" y2="{top + plot_h}" stroke="#999" '
                     f'stroke-dasharray="4 3"/>')
        for j, (_, mkey, rkey, color) in enumerate(series):
            v = s.get(mkey)
            if v is None:
                continue
            x0 = gx + j * bar_w
            h = max(top + plot_h - y(v), 2)  # 0 and 1 get a 2-pixel stub
            o.append(f'<rect x="{x0:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 1:.1f}" '
                     f'height="{h:.1f}" fill="{color}"><title>{esc(s["name"])}: '
                     f'{fmt(v)}</title></rect>')
            r = rng(s[rkey])
            if r and r[0] != r[1]:
                cx = x0 + (bar_w - 1) / 2
                o.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(r[0]):.1f}" y2="{y(r[1]):.1f}" '
                         f'stroke="#222"/>')
        label = s["name"].replace("mxfast=0:tcache_count=0", "both=0")
        lx, ly = gx + group_w / 2 - 4, top + plot_h + 8
        o.append(f'<text x="{lx:.1f}" y="{ly:.1f}" transform="rotate(60 {lx:.1f} {ly:.1f})">'
                 f'{esc(label)}</text>')
    lx = left
    for j, (name, _, _, color) in enumerate(series):
        label = {"strace": "strace -f -c (ptrace)", "perf": "perf stat sys_enter_futex"}[name]
        o.append(f'<rect x="{lx}" y="{44}" width="12" height="12" fill="{color}"/>')
        o.append(f'<text x="{lx + 18}" y="{54}">{label}</text>')
        lx += 200
    o.append("</svg>")
    Path(path).write_text("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 nodes, 1 run")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--nodes", type=int, default=None)
    ap.add_argument("--no-pin", action="store_true", help="skip the pinned placement")
    ap.add_argument("--no-spin-control", action="store_true",
                    help="skip the pinned malloc --wait spin control")
    ap.add_argument("--strace-plain", action="store_true",
                    help="the seed's exact strace command (no --seccomp-bpf, no -E)")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--out", default=str(HERE), help="where to write results (default: here)")
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="only redraw RESULTS.md and futex.svg (in --out) from an existing results.json")
    opts = ap.parse_args()
    if opts.render:
        data = json.loads(Path(opts.render).read_text())
        out_dir = Path(opts.out)
        write_results_md(out_dir / "RESULTS.md", data["meta"], data["summary"])
        write_svg(out_dir / "futex.svg", data["summary"], data["meta"])
        print(f"redrew {out_dir / 'RESULTS.md'} and futex.svg from {opts.render}")
        return 0
    runs = opts.runs or (1 if opts.quick else 3)
    nodes = opts.nodes or (100_000 if opts.quick else 1_000_000)
    out_dir = Path(opts.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    target = ROOT / "target" / "allocator"
    build = ["cargo", "build", "--release", "--manifest-path", str(HERE / "Cargo.toml")]
    print("building:", f"CARGO_TARGET_DIR={target}", shlex.join(build), flush=True)
    subprocess.run(build, check=True, env=dict(os.environ, CARGO_TARGET_DIR=str(target)))
    binary = target / "release" / "berth-allocator-report"

    nproc = os.cpu_count() or 1
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    pin = not opts.no_pin and nproc >= 2
    st_ok, st_why = strace_works(opts.strace_plain)
    pf_ok, pf_why = (False, "--no-perf") if opts.no_perf else perf_works(binary)
    harnesses = ["bare"] + (["strace"] if st_ok else []) + (["perf"] if pf_ok else [])

    cfgs = configs(pin, not opts.no_spin_control)
    meta = dict(
        command="python3 " + shlex.join([os.path.relpath(__file__, ROOT)] + sys.argv[1:]),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        git_head=sh(["git", "-C", str(ROOT), "rev-parse", "HEAD"]),
        git_dirty=bool(sh(["git", "-C", str(ROOT), "status", "--porcelain"])),
        rustc=sh(["rustc", "--version"]),
        glibc=(sh(["ldd", "--version"]).splitlines() or [""])[0],
        uname=sh(["uname", "-a"]),
        nproc=nproc,
        cpu_model=next((l.split(":", 1)[1].strip() for l in
                        Path("/proc/cpuinfo").read_text().splitlines()
                        if l.startswith("model name")), None) if Path("/proc/cpuinfo").exists() else None,
        loadavg_start=loadavg(),
        nodes=nodes,
        runs=runs,
        capacity=CAPACITY,
        build=f"CARGO_TARGET_DIR={target} " + shlex.join(build),
        binary=str(binary),
        strace=dict(available=st_ok, why=st_why, version=(sh(["strace", "-V"]).splitlines() or [""])[0],
                    seccomp_bpf=not opts.strace_plain),
        perf=dict(available=pf_ok, why=pf_why, version=sh(["perf", "--version"]) if shutil.which("perf") else "",
                  events=[dict(key=k, event=e, filter=f) for k, e, f in PERF_EVENTS]),
        harnesses=harnesses,
    )
    print(f"{len(cfgs)} configurations x {runs} runs x {harnesses}; {nodes:,} nodes; "
          f"load {' '.join(meta['loadavg_start'] or [])}", flush=True)

    all_runs = []
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(runs):
            for c in cfgs:
                for kind in harnesses:
                    r = run_one(kind, c, binary, nodes, opts, tmp)
                    r["rep"] = rep
                    all_runs.append(r)
                    rep_ = r.get("report") or {}
                    extra = ""
                    if kind == "strace" and r.get("strace"):
                        extra = f"futex {r['strace']['calls']}"
                    elif kind == "perf" and r.get("perf"):
                        extra = f"futex {r['perf']['futex_total']}"
                    elif rep_:
                        extra = f"nvcsw {rep_['self']['nvcsw']} same_cpu {rep_['same_cpu_fraction']}"
                    bad = "" if (rep_.get("sum_ok") and r.get("returncode") == 0) else "  FAILED"
                    print(f"[{time.monotonic() - t_start:6.1f}s] run {rep + 1}/{runs} {c['name']:<40} "
                          f"{kind:<6} {r['process_s']:6.2f}s {extra}{bad}", flush=True)
    meta["loadavg_end"] = loadavg()
    meta["total_s"] = round(time.monotonic() - t_start, 1)

    summary = summarize(cfgs, all_runs)
    results = dict(meta=meta, configs=cfgs, summary=summary, runs=all_runs)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    write_results_md(out_dir / "RESULTS.md", meta, summary)
    write_svg(out_dir / "futex.svg", summary, meta)
    print(f"wrote {out_dir / 'results.json'}, RESULTS.md, futex.svg in {meta['total_s']} s")
    failed = [r for r in all_runs if not (r.get("report") and r["report"].get("sum_ok") and r.get("returncode") == 0)]
    if failed:
        print(f"{len(failed)} run(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
