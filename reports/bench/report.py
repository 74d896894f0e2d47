#!/usr/bin/env python3
"""Turn a berth-bench run into a citable report: results.json, RESULTS.md and SVG plots.

Usage (what `make bench` does):

    python3 reports/bench/report.py before            # record the run's start: time, load, command
    BENCH_BUDGET=... cargo bench -p berth-bench ...   # the run
    python3 reports/bench/report.py after [--out DIR] # read the results, write the report

`after` (the default when no step is named) reads

- criterion's output, <criterion dir>/**/new/{benchmark.json,sample.json,estimates.json}, where
  the criterion dir is $CRITERION_HOME, else $CARGO_TARGET_DIR/criterion, else
  <repository>/target/criterion (as criterion itself decides), or --criterion DIR;
- benches/wait.rs's samples: $BERTH_WAIT_JSON, else <target dir>/berth-wait/wait.json, or
  --wait FILE;
- the record `before` left in <target dir>/berth-bench/run.json (then renamed run.done.json, so
  that a later report without a new `before` does not claim that run's command and start);
- reports/bench/losses.md, the hand-written explanations of losing cells;

and writes into DIR (default reports/benchmarks):

- results.json: the metadata needed to cite the run (commit, dirty paths, SHA-256 of every source
  file of core/ and reports/bench, rustc -vV, CPU, cores, kernel, load before and after, dates,
  the exact command, BENCH_BUDGET, dependency versions) and every sample of every benchmark;
- RESULTS.md: a table per workload of medians and ratios against the best competitor, the goals
  of issue 10, every losing cell with its explanation from losses.md (or "no explanation yet");
- *.svg: throughput by thread shape per workload (bars per contender), the wake-latency CDFs,
  idle CPU and the oversubscribed runs' CPU.

Only results written since `before` are used (file modification times), so stale results of an
earlier or filtered run in target/criterion do not leak in; --all uses everything (e.g. for a
saved criterion directory: `report.py after --all --criterion reports/bench/data/2026-12-02`).

Ratios are always "best competitor / berth" of a cost (median time per iteration, latency, CPU
per message), so > 1 means berth is better, < 1 means it is behind: a loss.

Python 3 standard library only.
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LOSSES_MD = HERE / "losses.md"
DEFAULT_OUT = ROOT / "reports" / "benchmarks"

BERTH = "berth"
# Sources whose SHA-256 goes into results.json: the library and the benchmark crate, and the
# lock file that pins the competitors' versions.
SOURCE_ROOTS = ("core/src", "core/Cargo.toml", "reports/bench", "Cargo.lock", "Cargo.toml")
SOURCE_SUFFIXES = (".rs", ".toml", ".py", ".md", ".lock")
SOURCE_EXCLUDE = ("reports/bench/data/",)
# Dependency versions recorded from Cargo.lock.
LOCKED = (
    "criterion",
    "crossbeam-channel",
    "crossbeam-queue",
    "crossbeam-deque",
    "crossbeam-utils",
    "flume",
    "kanal",
    "tokio",
    "async-channel",
    "rayon",
    "rayon-core",
)
# Issue 10's goals.
SCQ_GOAL = 3.0  # ScqQueue within 3x of VyukovQueue
WAKE_GOAL = 1.2  # wake latency within 1.2x of std mpsc
IDLE_GOAL = 2.0  # idle CPU of a blocked thread under 2% of a core
NO_EXPLANATION = "no explanation yet"


# ---------------------------------------------------------------------------------------------
# Where things are


def target_dir():
    env = os.environ.get("CARGO_TARGET_DIR")
    return Path(env) if env else ROOT / "target"


def criterion_dir():
    env = os.environ.get("CRITERION_HOME")
    return Path(env) if env else target_dir() / "criterion"


def wait_json_path():
    env = os.environ.get("BERTH_WAIT_JSON")
    return Path(env) if env else target_dir() / "berth-wait" / "wait.json"


def run_record_path():
    return target_dir() / "berth-bench" / "run.json"


# ---------------------------------------------------------------------------------------------
# Metadata


def run(cmd, cwd=ROOT):
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    return (out.stdout if out.returncode == 0 else None), out.stderr


def git_state():
    commit, _ = run(["git", "rev-parse", "HEAD"])
    status, _ = run(["git", "status", "--porcelain", "--untracked-files=all"])
    paths = [line[3:] for line in (status or "").splitlines() if line.strip()]
    return {
        "commit": commit.strip() if commit else None,
        "dirty": bool(paths),
        "dirty_paths": paths,
    }


def source_files():
    files = []
    for root in SOURCE_ROOTS:
        path = ROOT / root
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(p for p in path.rglob("*") if p.is_file())
    chosen = []
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        if any(rel.startswith(x) for x in SOURCE_EXCLUDE) or "/target/" in rel:
            continue
        if p.name.endswith(SOURCE_SUFFIXES) and "__pycache__" not in rel:
            chosen.append(rel)
    return sorted(set(chosen))


def source_hashes():
    per_file = {}
    for rel in source_files():
        per_file[rel] = hashlib.sha256((ROOT / rel).read_bytes()).hexdigest()
    combined = hashlib.sha256(
        "".join(f"{rel}\0{digest}\n" for rel, digest in per_file.items()).encode()
    ).hexdigest()
    return {
        "roots": list(SOURCE_ROOTS),
        "combined_sha256": combined,
        "combined_is": "sha256 of the lines '<path>\\0<sha256>\\n', sorted by path",
        "files": per_file,
    }


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine():
    uname = platform.uname()
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": affinity,
        "kernel": f"{uname.system} {uname.release}",
        "kernel_version": uname.version,
        "arch": uname.machine,
        "hostname_hash": hashlib.sha256(uname.node.encode()).hexdigest()[:12],
    }


def loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def toolchain():
    rustc, err = run(["rustc", "-vV"])
    cargo, _ = run(["cargo", "-V"])
    return {
        "rustc_vV": rustc.strip() if rustc else f"unavailable: {err.strip()}",
        "cargo_V": cargo.strip() if cargo else None,
        "rustflags": os.environ.get("RUSTFLAGS"),
    }


def locked_versions():
    try:
        text = (ROOT / "Cargo.lock").read_text()
    except OSError:
        return {}
    versions = {}
    for m in re.finditer(r'\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"', text):
        if m.group(1) in LOCKED:
            versions.setdefault(m.group(1), []).append(m.group(2))
    return {k: ", ".join(v) for k, v in sorted(versions.items())}


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def step_before(args):
    """Record the start of a run, before `cargo bench` builds and runs anything."""
    start = now_utc()
    command = args.command or os.environ.get("BERTH_BENCH_COMMAND")
    record = {
        "started": iso(start),
        "started_unix": start.timestamp(),
        "command": command,
        "via_make": "MAKELEVEL" in os.environ,
        "bench_budget": os.environ.get("BENCH_BUDGET", ""),
        "load_before": loadavg(),
        "git": git_state(),
        "sources": source_hashes(),
    }
    path = run_record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    load = record["load_before"]
    print(f"report.py: run recorded in {path} (load average before: {load})")
    cores = os.cpu_count() or 1
    if load and load[0] >= 0.5:
        print(
            f"report.py: warning: load average {load[0]:.2f} on {cores} cores before the run: "
            "the machine is not idle; these numbers will say so in the report",
            file=sys.stderr,
        )
    return 0


# ---------------------------------------------------------------------------------------------
# Reading results


def load_criterion(cdir, since):
    """[{group, function, ...samples}] for every benchmark written at or after `since`."""
    benches, skipped = [], 0
    for est_path in sorted(cdir.rglob("new/estimates.json")):
        new = est_path.parent
        if since is not None and est_path.stat().st_mtime < since:
            skipped += 1
            continue
        try:
            meta = json.loads((new / "benchmark.json").read_text())
            estimates = json.loads(est_path.read_text())
            sample = json.loads((new / "sample.json").read_text())
        except (OSError, ValueError) as e:
            print(f"report.py: skipping {new}: {e}", file=sys.stderr)
            continue
        group, function = meta.get("group_id"), meta.get("function_id")
        if not group or not function:
            continue
        iters = [float(x) for x in sample.get("iters", [])]
        times = [float(x) for x in sample.get("times", [])]
        throughput = meta.get("throughput") or {}
        elements = throughput.get("Elements") or throughput.get("elements")

        def est(name):
            e = estimates.get(name) or {}
            ci = e.get("confidence_interval") or {}
            return e.get("point_estimate"), [ci.get("lower_bound"), ci.get("upper_bound")]

        median, median_ci = est("median")
        mean, mean_ci = est("mean")
        benches.append(
            {
                "group": group,
                "function": function,
                "id": f"{group}/{function}",
                "throughput_elements": elements,
                "sampling_mode": sample.get("sampling_mode"),
                "iters": iters,
                "times_ns": times,
                "per_iter_ns": [t / i for t, i in zip(times, iters) if i],
                "median_ns": median,
                "median_ci_ns": median_ci,
                "mean_ns": mean,
                "mean_ci_ns": mean_ci,
                "source": new.relative_to(cdir).as_posix(),
            }
        )
    return benches, skipped


def load_wait(path, since):
    if not path.is_file():
        return None, "no wait samples (benches/wait.rs did not run, or ran with --test)"
    if since is not None and path.stat().st_mtime < since:
        return None, f"{path} is older than this run (wait did not run in it)"
    try:
        return json.loads(path.read_text()), None
    except ValueError as e:
        return None, f"{path}: {e}"


def relink(text, from_dir, to_dir):
    """Markdown links relative to from_dir, rewritten relative to to_dir."""

    def fix(m):
        target = m.group(2)
        if re.match(r"^([a-z]+:|#|/)", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        new = os.path.relpath((from_dir / path).resolve(), to_dir.resolve())
        return f"{m.group(1)}({Path(new).as_posix()}{'#' + anchor if anchor else ''})"

    return re.sub(r"(\]\s?)\(([^)\s]+)\)", fix, text)


def parse_losses(path):
    """{cell key: explanation markdown} from `## key[, key...]` sections of losses.md."""
    if not path.is_file():
        return {}
    entries, keys, lines = {}, None, []

    def flush():
        if keys:
            text = "\n".join(lines).strip()
            for k in keys:
                entries[k] = text

    for line in path.read_text().splitlines():
        m = re.match(r"^## (.+?)\s*$", line)
        if m:
            flush()
            keys = [k.strip().strip("`") for k in m.group(1).split(",") if k.strip()]
            lines = []
        elif keys is not None:
            lines.append(line)
    flush()
    return entries


# ---------------------------------------------------------------------------------------------
# Workloads: families of criterion groups, and the ratio cells


FAMILY_ORDER = [
    ("queue_cap16", "Queues, capacity 16"),
    ("queue_cap1024", "Queues, capacity 1024"),
    ("chan_b0", "Channels, bounded(0)"),
    ("chan_b1", "Channels, bounded(1)"),
    ("chan_b1024", "Channels, bounded(1024)"),
    ("chan_unbounded", "Channels, unbounded"),
    ("select_rx", "Select: 4 plain senders, 1 selecting receiver"),
    ("select_both", "Select: 4 selecting senders, 4 selecting receivers"),
    ("deque_owner", "Deque: the owner alone"),
    ("deque_thieves", "Deque: owner and thieves"),
    ("pool_fib32_cutoff", "Pool: fib(32), sequential below 20"),
    ("pool_fib25_every", "Pool: fib(25), a join at every level"),
    ("pool_quicksort1m", "Pool: quicksort of 1M u64"),
    ("async_b1024", "Async channels, bounded(1024), 2-worker tokio runtime"),
    ("async_unbounded", "Async channels, unbounded, 2-worker tokio runtime"),
]
WAIT_FAMILIES = [
    ("wake", "Waiting: wake latency"),
    ("idle", "Waiting: idle CPU of a blocked receiver"),
    ("oversub", "Waiting: CPU burned oversubscribed (8 producers : 8 consumers)"),
]


def classify(group):
    """(family, shape label, shape sort key) of a criterion group name."""
    m = re.fullmatch(r"p(\d+)c(\d+)_cap(\d+)", group)
    if m:
        p, c, cap = map(int, m.groups())
        return f"queue_cap{cap}", f"{p}:{c}", (p + c, p, c)
    m = re.fullmatch(r"chan_([a-z0-9]+)_([a-z]+)(\d+)x(\d+)", group)
    if m:
        p, c = int(m.group(3)), int(m.group(4))
        return f"chan_{m.group(1)}", f"{m.group(2)} {p}:{c}", (p + c, p, c)
    m = re.fullmatch(r"select_(rx|both)_([a-z0-9]+)", group)
    if m:
        order = {"b0": 0, "b1": 1, "b1024": 2, "unbounded": 3}
        return f"select_{m.group(1)}", m.group(2), (order.get(m.group(2), 9), m.group(2))
    if group == "deque_owner_pushpop":
        return "deque_owner", "push/pop", (0,)
    m = re.fullmatch(r"deque_thieves(\d+)", group)
    if m:
        return "deque_thieves", f"{m.group(1)} thieves", (int(m.group(1)),)
    m = re.fullmatch(r"pool_(.+)_t(\d+)", group)
    if m:
        return f"pool_{m.group(1)}", f"{m.group(2)} threads", (int(m.group(2)),)
    m = re.fullmatch(r"async_([a-z0-9]+)_(spsc|mpsc(\d+))", group)
    if m:
        return f"async_{m.group(1)}", m.group(2), (int(m.group(3) or 1),)
    return group, group, (0,)


def is_berth(name):
    return name == BERTH or name.startswith(BERTH + "_")


def comparisons(functions):
    """[(berth function, [its competitors], headline?)] for one group's contenders.

    berth_X is compared with the competitors named *_X where there are some (tokio_many32 for
    berth_many32: the same API shape), and is then a headline contender; otherwise with the
    competitors not paired that way, and it is a headline contender only if it is `berth`
    itself (berth_scq, berth_mutex are alternatives to the headline VyukovQueue)."""
    berths = [f for f in functions if is_berth(f)]
    others = [f for f in functions if not is_berth(f)]
    suffixes = {f[len(BERTH) + 1 :] for f in berths if f != BERTH}
    paired = {o for o in others for s in suffixes if o.endswith("_" + s)}
    plain = [o for o in others if o not in paired]
    out = []
    for b in sorted(berths, key=lambda f: (f != BERTH, f)):
        suffix = b[len(BERTH) + 1 :] if b != BERTH else None
        mine = [o for o in others if suffix and o.endswith("_" + suffix)]
        if mine:
            out.append((b, mine, True))
        elif plain:
            out.append((b, plain, b == BERTH))
    return out


def contender_order(functions):
    def key(f):
        if f == BERTH:
            return (0, f)
        if is_berth(f):
            return (1, f)
        return (2, f)

    return sorted(functions, key=key)


def cell_key(group, function, metric=None):
    key = group if function == BERTH else f"{group}/{function}"
    return f"{key}/{metric}" if metric else key


def criterion_cells(benches):
    """Families -> groups -> medians, and one ratio cell per berth contender per group."""
    groups = {}
    for b in benches:
        groups.setdefault(b["group"], {})[b["function"]] = b
    families = {}
    cells = []
    for group, funcs in groups.items():
        family, shape, skey = classify(group)
        families.setdefault(family, []).append((skey, shape, group))
        medians = {f: v["median_ns"] for f, v in funcs.items() if v["median_ns"]}
        for berth_fn, competitors, headline in comparisons(list(medians)):
            present = [(medians[c], c) for c in competitors if c in medians]
            if not present:
                continue
            best_ns, best = min(present)
            cells.append(
                {
                    "cell": cell_key(group, berth_fn),
                    "family": family,
                    "group": group,
                    "shape": shape,
                    "berth": berth_fn,
                    "headline": headline,
                    "metric": "median time per iteration",
                    "berth_value": medians[berth_fn],
                    "best_competitor": best,
                    "competitor_value": best_ns,
                    "ratio": best_ns / medians[berth_fn],
                }
            )
    for family in families:
        families[family].sort()
    return groups, families, cells


# ---------------------------------------------------------------------------------------------
# The wait benchmark


def pct(sorted_values, p):
    """Nearest-rank percentile, as benches/wait.rs prints it."""
    if not sorted_values:
        return None
    rank = math.ceil(p / 100 * len(sorted_values))
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]


def median(values):
    s = sorted(values)
    if not s:
        return None
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def wait_summary(wait):
    """Per kind: {group: {function: stats}} and the ratio cells."""
    out = {"wake": {}, "idle": {}, "oversub": {}}
    cells = []
    if not wait:
        return out, cells
    for case in wait.get("cases", []):
        group, fn = case["group"], case["function"]
        kind = group.split("_", 1)[0]
        if kind == "wake":
            lat = sorted(case["latency_ns"])
            cpu = sorted(case["recv_cpu_ns"])
            stats = {
                "samples": len(lat),
                "p50": pct(lat, 50),
                "p90": pct(lat, 90),
                "p99": pct(lat, 99),
                "p99.9": pct(lat, 99.9),
                "max": lat[-1] if lat else None,
                "mean": sum(lat) / len(lat) if lat else None,
                "recv_cpu_p50": pct(cpu, 50),
            }
        elif kind == "idle":
            shares = [100 * c / w for c, w in zip(case["cpu_ns"], case["wall_ns"]) if w]
            stats = {
                "samples": len(shares),
                "percent": shares,
                "median_percent": median(shares),
                "max_percent": max(shares) if shares else None,
                "wall_s": median(case["wall_ns"]) / 1e9 if case["wall_ns"] else None,
            }
        elif kind == "oversub":
            rounds = list(
                zip(
                    case["wall_ns"],
                    case["producer_cpu_ns"],
                    case["consumer_cpu_ns"],
                    case["process_cpu_ns"],
                    case["round_wall_ns"],
                )
            )
            items = case["items"]
            walls = sorted(r[0] for r in rounds)
            cpu_msg = sorted((r[1] + r[2]) / items for r in rounds)
            stats = {
                "rounds": len(rounds),
                "items": items,
                "wall_median_ns": median(walls),
                "cpu_per_message_median_ns": median(cpu_msg),
                "cores_busy_median": median([(r[1] + r[2]) / r[0] for r in rounds if r[0]]),
                "producer_cores_median": median([r[1] / r[0] for r in rounds if r[0]]),
                "consumer_cores_median": median([r[2] / r[0] for r in rounds if r[0]]),
                "process_cores_median": median([r[3] / r[4] for r in rounds if r[4]]),
            }
        else:
            continue
        out[kind].setdefault(group, {})[fn] = stats

    def ratio_cell(kind, group, metric, field, label):
        fns = out[kind][group]
        if BERTH not in fns or fns[BERTH].get(field) in (None, 0):
            return
        present = [(s[field], f) for f, s in fns.items() if f != BERTH and s.get(field)]
        if not present:
            return
        best_value, best = min(present)
        cells.append(
            {
                "cell": cell_key(group, BERTH, metric),
                "family": kind,
                "group": group,
                "shape": group,
                "berth": BERTH,
                "headline": True,
                "metric": label,
                "berth_value": fns[BERTH][field],
                "best_competitor": best,
                "competitor_value": best_value,
                "ratio": best_value / fns[BERTH][field],
            }
        )

    for group in out["wake"]:
        ratio_cell("wake", group, "p50", "p50", "wake latency p50")
        ratio_cell("wake", group, "p99", "p99", "wake latency p99")
    for group in out["oversub"]:
        ratio_cell("oversub", group, "wall", "wall_median_ns", "median round time")
        ratio_cell(
            "oversub", group, "cpu", "cpu_per_message_median_ns", "CPU time per message"
        )
    return out, cells


def goals(groups, wait_stats):
    """Issue 10's goals other than the ratios: [(key, goal, value text, met)]."""
    rows = []
    for group, funcs in sorted(groups.items()):
        if classify(group)[0].startswith("queue_") and "berth" in funcs and "berth_scq" in funcs:
            v, s = funcs["berth"]["median_ns"], funcs["berth_scq"]["median_ns"]
            if v and s:
                rows.append(
                    (
                        f"{group}/berth_scq/vs-vyukov",
                        f"ScqQueue within {SCQ_GOAL:g}x of VyukovQueue",
                        f"{s / v:.2f}x",
                        s / v <= SCQ_GOAL,
                    )
                )
    for group, fns in sorted(wait_stats["wake"].items()):
        if BERTH in fns and "std" in fns and fns["std"]["p50"]:
            r = fns[BERTH]["p50"] / fns["std"]["p50"]
            rows.append(
                (
                    f"{group}/p50/vs-std",
                    f"wake latency p50 within {WAKE_GOAL:g}x of std mpsc",
                    f"{r:.2f}x",
                    r <= WAKE_GOAL,
                )
            )
    for group, fns in sorted(wait_stats["idle"].items()):
        if BERTH in fns and fns[BERTH]["max_percent"] is not None:
            v = fns[BERTH]["max_percent"]
            rows.append(
                (
                    f"{group}/berth",
                    f"idle CPU of a blocked receiver under {IDLE_GOAL:g}% of a core (worst sample)",
                    f"{v:.3f}%",
                    v < IDLE_GOAL,
                )
            )
    return rows


# ---------------------------------------------------------------------------------------------
# SVG (plain SVG 1.1 text: no plotting library, no fonts to load)


PALETTE = {
    "berth": "#1f5fa8",
    "berth_scq": "#4b8fd6",
    "berth_mutex": "#8fb9e6",
    "berth_many1": "#4b8fd6",
    "berth_many32": "#8fb9e6",
    "crossbeam": "#d9661f",
    "flume": "#7a9a01",
    "kanal": "#8e44ad",
    "std": "#555555",
    "rayon": "#c0392b",
    "tokio": "#c0392b",
    "tokio_many1": "#e07b6f",
    "tokio_many32": "#f0b3ab",
    "async_channel": "#16a085",
}
FALLBACK = ["#b8860b", "#2e8b57", "#9932cc", "#708090", "#a0522d", "#4682b4"]


def colour(name, i):
    return PALETTE.get(name, FALLBACK[i % len(FALLBACK)])


def esc(text):
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def nice_ticks(top, count=5):
    if top <= 0:
        return [0, 1]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    ticks, t = [], 0.0
    while t < top + step * 0.999:
        ticks.append(t)
        t += step
    return ticks


def fmt_num(v):
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}".rstrip("0").rstrip(".")


def svg_doc(width, height, body):
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">\n'
        f'<rect width="{width}" height="{height}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )


def legend(names, x, y):
    out = []
    for i, name in enumerate(names):
        yy = y + i * 16
        out.append(f'<rect x="{x}" y="{yy - 9}" width="10" height="10" fill="{colour(name, i)}"/>')
        out.append(f'<text x="{x + 14}" y="{yy}">{esc(name)}</text>')
    return out


def bar_chart(title, subtitle, categories, series, y_label):
    """Grouped bars: one group per category, one bar per series; `series` is
    [(name, [value or None per category])]."""
    names = [n for n, _ in series]
    legend_w = 20 + 7 * max((len(n) for n in names), default=4)
    plot_w = max(360, 90 * len(categories) * max(1, len(names)) // 3)
    left, top, bottom = 70, 52, 48
    width, height = left + plot_w + legend_w + 20, 380
    plot_h = height - top - bottom
    values = [v for _, vs in series for v in vs if v is not None]
    ticks = nice_ticks(max(values) if values else 1)
    ymax = ticks[-1] or 1
    body = [
        f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>',
        f'<text x="{left}" y="38" fill="#444">{esc(subtitle)}</text>',
    ]
    for t in ticks:
        y = top + plot_h - plot_h * t / ymax
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_num(t)}</text>')
    body.append(
        f'<text transform="translate(16,{top + plot_h / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{esc(y_label)}</text>'
    )
    n_cat, n_ser = max(1, len(categories)), max(1, len(series))
    group_w = plot_w / n_cat
    bar_w = group_w * 0.8 / n_ser
    for ci, cat in enumerate(categories):
        gx = left + ci * group_w + group_w * 0.1
        for si, (name, vs) in enumerate(series):
            v = vs[ci]
            if v is None:
                continue
            h = plot_h * v / ymax
            x, y = gx + si * bar_w, top + plot_h - h
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w * 0.92:.1f}" height="{h:.1f}" '
                f'fill="{colour(name, si)}"><title>{esc(name)} {esc(cat)}: {v:.4g}</title></rect>'
            )
        body.append(
            f'<text x="{left + ci * group_w + group_w / 2:.1f}" y="{top + plot_h + 18}" '
            f'text-anchor="middle">{esc(cat)}</text>'
        )
    body.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#333"/>'
    )
    body += legend(names, left + plot_w + 16, top + 10)
    return svg_doc(width, height, body)


def cdf_chart(title, subtitle, series):
    """Latency distributions: x = latency (µs, log scale), y = the fraction of wake-ups at or
    below it on a tail scale, -log10(1 - q), so that 0.9, 0.99 and 0.999 are equally far apart
    and the tail is visible. `series` is [(name, sorted values in ns)]; the i-th of n sorted
    values is plotted at q = (i - 0.5) / n."""
    names = [n for n, _ in series]
    left, top, bottom, plot_w = 70, 52, 48, 560
    legend_w = 20 + 7 * max((len(n) for n in names), default=4)
    width, height = left + plot_w + legend_w + 20, 400
    plot_h = height - top - bottom
    all_us = [v / 1e3 for _, vs in series for v in vs if v > 0]
    lo = 10 ** math.floor(math.log10(min(all_us))) if all_us else 1
    hi = 10 ** math.ceil(math.log10(max(all_us))) if all_us else 10
    if hi <= lo:
        hi = lo * 10
    span = math.log10(hi) - math.log10(lo)
    most = max((len(vs) for _, vs in series), default=1)
    y_top = math.log10(2 * most)  # the largest sample's q = 1 - 0.5 / n

    def xpos(us):
        return left + plot_w * (math.log10(max(us, lo)) - math.log10(lo)) / span

    def ypos(q):
        return top + plot_h * (1 - (-math.log10(1 - q)) / y_top)

    body = [
        f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>',
        f'<text x="{left}" y="38" fill="#444">{esc(subtitle)}</text>',
    ]
    decade = lo
    while decade <= hi * 1.0001:
        x = xpos(decade)
        body.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#ddd"/>'
        )
        body.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
            f"{fmt_num(decade)}</text>"
        )
        decade *= 10
    q_ticks = [0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999]
    for q in (q for q in q_ticks if -math.log10(1 - q) <= y_top):
        y = ypos(q)
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
            'stroke="#ccc" stroke-dasharray="4,3"/>'
        )
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{q:g}</text>')
    body.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 8}" text-anchor="middle">'
        "send → recv-return latency (µs, log scale)</text>"
    )
    body.append(
        f'<text transform="translate(16,{top + plot_h / 2:.0f}) rotate(-90)" '
        'text-anchor="middle">fraction of wake-ups ≤ x (tail scale)</text>'
    )
    for si, (name, vs) in enumerate(series):
        n = len(vs)
        if not n:
            continue
        # Every order statistic in the top 1% (the tail), every k-th below: ~1,000 points.
        k = max(1, n // 1000)
        idx = sorted(set(range(0, n, k)) | set(range(max(0, n - n // 100 - 1), n)))
        pts = [f"{xpos(vs[i] / 1e3):.1f},{ypos((i + 0.5) / n):.1f}" for i in idx]
        body.append(
            f'<polyline fill="none" stroke="{colour(name, si)}" stroke-width="1.8" '
            f'points="{" ".join(pts)}"><title>{esc(name)}</title></polyline>'
        )
    body += legend(names, left + plot_w + 16, top + 10)
    return svg_doc(width, height, body)


# ---------------------------------------------------------------------------------------------
# Markdown


def fmt_time(ns):
    if ns is None:
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.1f} ns"


def fmt_ratio(r):
    """Two decimals, except that a loss never reads as 1.00."""
    if r is None:
        return "–"
    if r < 1 and f"{r:.2f}" == "1.00":
        return f"{r:.4f}"
    return f"{r:.2f}"


def md_table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def throughput_of(bench):
    """(value, unit) for the plots: elements/s when criterion knows the element count."""
    m = bench["median_ns"]
    if not m:
        return None, None
    if bench["throughput_elements"]:
        return bench["throughput_elements"] / m * 1e9 / 1e6, "million elements per second"
    return 1e9 / m, "iterations per second"


def family_section(family, title, entries, groups, cells_by_key, out_dir, plots):
    """Markdown for one workload family, and its throughput SVG."""
    group_names = [g for _, _, g in entries]
    funcs = contender_order({f for g in group_names for f in groups[g]})
    berth_fns = [f for f in funcs if is_berth(f)]
    header = ["shape"] + [f"{f}" for f in funcs] + [f"ratio {b}" for b in berth_fns]
    rows = []
    for _, shape, g in entries:
        row = [f"{shape} (`{g}`)"]
        row += [fmt_time(groups[g][f]["median_ns"]) if f in groups[g] else "–" for f in funcs]
        for b in berth_fns:
            c = cells_by_key.get(cell_key(g, b))
            row.append(f"{fmt_ratio(c['ratio'])} vs {c['best_competitor']}" if c else "–")
        rows.append(row)
    parts = [f"## {title}", ""]
    # Plot: throughput by shape.
    shapes = [shape for _, shape, _ in entries]
    unit = None
    series = []
    for f in funcs:
        vals = []
        for _, _, g in entries:
            b = groups[g].get(f)
            v, u = throughput_of(b) if b else (None, None)
            unit = unit or u
            vals.append(v)
        series.append((f, vals))
    name = f"throughput_{family}.svg"
    (out_dir / name).write_text(
        bar_chart(title, "median of criterion's samples; higher is better", shapes, series, unit or "")
    )
    plots.append(name)
    parts.append(f"![{esc(title)}]({name})")
    parts.append("")
    parts.append("Median time per iteration (lower is better); ratio = best competitor / berth.")
    parts.append("")
    parts.append(md_table(header, rows))
    if family.startswith("queue_"):
        extra = []
        for _, shape, g in entries:
            v = groups[g].get("berth", {}).get("median_ns")
            s = groups[g].get("berth_scq", {}).get("median_ns")
            if v and s:
                extra.append(f"{shape} {s / v:.2f}x")
        if extra:
            parts.append("")
            parts.append(
                f"ScqQueue time / VyukovQueue time (goal: at most {SCQ_GOAL:g}x): " + ", ".join(extra) + "."
            )
    parts.append("")
    return "\n".join(parts)


def wait_sections(wait_stats, cells_by_key, out_dir, plots, wait):
    parts = []
    raw = {c["group"] + "/" + c["function"]: c for c in (wait or {}).get("cases", [])}
    if wait_stats["wake"]:
        gap = (wait or {}).get("wake_gap_ns")
        parts += ["## Waiting: wake latency", ""]
        parts.append(
            "A receiver blocked in `recv` on an empty channel is woken by a send; latency = "
            "the receiver's clock when `recv` returns - the sender's clock just before `send` "
            f"(one monotonic clock). The sender waits {gap / 1e3:.0f} µs after each "
            "acknowledged message, so the receiver is asleep when the next one comes. "
            "`recv CPU` is the receiver thread's CPU time across one `recv` (its spinning before "
            "sleeping, and the wake-up path). Ratio = best competitor / berth (> 1: berth wakes "
            "sooner)."
            if gap
            else "Wake latency of a receiver blocked in `recv`."
        )
        parts.append("")
        for group, fns in sorted(wait_stats["wake"].items()):
            order = contender_order(fns)
            rows = [
                [
                    f,
                    fns[f]["samples"],
                    fmt_time(fns[f]["p50"]),
                    fmt_time(fns[f]["p90"]),
                    fmt_time(fns[f]["p99"]),
                    fmt_time(fns[f]["p99.9"]),
                    fmt_time(fns[f]["max"]),
                    fmt_time(fns[f]["mean"]),
                    fmt_time(fns[f]["recv_cpu_p50"]),
                ]
                for f in order
            ]
            parts.append(f"### `{group}`")
            parts.append("")
            name = f"latency_{group}.svg"
            series = [(f, sorted(raw[f"{group}/{f}"]["latency_ns"])) for f in order if f"{group}/{f}" in raw]
            (out_dir / name).write_text(
                cdf_chart(f"Wake latency, {group}", "empirical CDF of every kept wake-up; left is better", series)
            )
            plots.append(name)
            parts.append(f"![wake latency {group}]({name})")
            parts.append("")
            parts.append(
                md_table(
                    ["contender", "wake-ups", "p50", "p90", "p99", "p99.9", "max", "mean", "recv CPU p50"],
                    rows,
                )
            )
            ratios = []
            for metric in ("p50", "p99"):
                c = cells_by_key.get(cell_key(group, BERTH, metric))
                if c:
                    ratios.append(f"{metric} {fmt_ratio(c['ratio'])} vs {c['best_competitor']}")
            if ratios:
                parts.append("")
                parts.append("Ratio: " + "; ".join(ratios) + ".")
            parts.append("")
    if wait_stats["idle"]:
        parts += ["## Waiting: idle CPU of a blocked receiver", ""]
        parts.append(
            "A receiver blocks in `recv` on an empty channel until one message arrives; its "
            "thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) over that wait / the wall time, as % of "
            f"one core, per sample. Goal for berth: under {IDLE_GOAL:g}%."
        )
        parts.append("")
        groups = sorted(wait_stats["idle"])
        fns_all = contender_order({f for g in groups for f in wait_stats["idle"][g]})
        rows = []
        for g in groups:
            fns = wait_stats["idle"][g]
            wall = next(iter(fns.values()))["wall_s"]
            row = [f"`{g}` ({wall:.2f} s)" if wall else f"`{g}`"]
            for f in fns_all:
                s = fns.get(f)
                row.append(", ".join(f"{p:.3f}%" for p in s["percent"]) if s else "–")
            rows.append(row)
        parts.append(md_table(["channel (wait)"] + fns_all, rows))
        name = "idle_cpu.svg"
        series = [
            (f, [wait_stats["idle"][g].get(f, {}).get("median_percent") for g in groups]) for f in fns_all
        ]
        (out_dir / name).write_text(
            bar_chart("Idle CPU of a blocked receiver", "median % of one core; lower is better", groups, series, "% of a core")
        )
        plots.append(name)
        parts += ["", f"![idle CPU]({name})", ""]
    if wait_stats["oversub"]:
        parts += ["## Waiting: CPU burned oversubscribed (8 producers : 8 consumers)", ""]
        parts.append(
            "16 threads on this machine's cores move `items` values per round through one channel "
            "or queue (threads spawned once, a barrier per round, checksum asserted). Per round: "
            "wall time; cores busy = (producers' + consumers' thread CPU time) / wall time; CPU "
            "per message = that CPU time / items; process = process CPU / the timing thread's "
            "round. Medians over the rounds. Ratios = best competitor / berth of the round time "
            "and of the CPU per message (> 1: berth is faster, or burns less)."
        )
        parts.append("")
        rows, ratio_lines = [], []
        groups = sorted(wait_stats["oversub"])
        for g in groups:
            fns = wait_stats["oversub"][g]
            for f in contender_order(fns):
                s = fns[f]
                rows.append(
                    [
                        f"`{g}` ({s['items']:,} items)",
                        f,
                        s["rounds"],
                        fmt_time(s["wall_median_ns"]),
                        f"{s['cores_busy_median']:.2f}",
                        f"{s['producer_cores_median']:.2f}",
                        f"{s['consumer_cores_median']:.2f}",
                        fmt_time(s["cpu_per_message_median_ns"]),
                        f"{s['process_cores_median']:.2f}",
                    ]
                )
            ratios = []
            for metric in ("wall", "cpu"):
                c = cells_by_key.get(cell_key(g, BERTH, metric))
                if c:
                    ratios.append(f"{metric} {fmt_ratio(c['ratio'])} vs {c['best_competitor']}")
            if ratios:
                ratio_lines.append(f"- `{g}`: " + "; ".join(ratios) + ".")
        parts.append(
            md_table(
                ["workload", "contender", "rounds", "round", "cores busy", "producers", "consumers", "CPU/message", "process cores"],
                rows,
                ["---", "---"] + ["---:"] * 7,
            )
        )
        if ratio_lines:
            parts += ["", "Ratios (best competitor / berth):", ""] + ratio_lines
        fns_all = contender_order({f for g in groups for f in wait_stats["oversub"][g]})
        series = [
            (f, [wait_stats["oversub"][g].get(f, {}).get("cpu_per_message_median_ns") for g in groups])
            for f in fns_all
        ]
        name = "oversub_cpu.svg"
        (out_dir / name).write_text(
            bar_chart("CPU per message, 8:8 oversubscribed", "median over rounds; lower is better", groups, series, "ns of CPU per message")
        )
        plots.append(name)
        parts += ["", f"![oversubscribed CPU]({name})", ""]
    return "\n".join(parts)


def write_report(out_dir, meta, benches, groups, families, wait, wait_stats, cells, losses, notes):
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.svg"):
        old.unlink()
    cells_by_key = {c["cell"]: c for c in cells}
    plots = []
    goal_rows = goals(groups, wait_stats)

    md = ["# berth benchmark report", ""]
    md.append(
        "Generated by `reports/bench/report.py` from one run of the benchmarks in "
        "`reports/bench/` (see its README for what each measures). Every sample, and the "
        "metadata below in full, is in [`results.json`](results.json). Do not edit by hand: "
        "rerun `make bench` (explanations of losses go in `reports/bench/losses.md`)."
    )
    md.append("")
    g = meta["git"]
    dirty = (
        f"dirty: {len(g['dirty_paths'])} changed or untracked path(s), listed in results.json"
        if g["dirty"]
        else "clean"
    )
    load_b, load_a = meta.get("load_before"), meta.get("load_after")
    lf = lambda l: " ".join(f"{x:.2f}" for x in l) if l else "not recorded"
    m = meta["machine"]
    rows = [
        ["commit", f"`{g['commit']}` ({dirty})"],
        ["command", f"`{meta['command']}`" + (" (run by `make bench`)" if meta.get("via_make") else "")],
        ["BENCH_BUDGET", f"`{meta['bench_budget'] or 'default'}`"],
        ["started, finished", f"{meta['started'] or 'not recorded'}, {meta['finished']}"],
        ["machine", f"{m['cpu_model']}, {m['cores']} cores ({m['cores_usable']} usable), {m['kernel']} {m['arch']}"],
        ["toolchain", "`" + meta["toolchain"]["rustc_vV"].splitlines()[0] + "`" + (f", RUSTFLAGS=`{meta['toolchain']['rustflags']}`" if meta["toolchain"]["rustflags"] else "")],
        ["load average (1, 5, 15 min)", f"before: {lf(load_b)}; after: {lf(load_a)}"],
        ["sources", f"SHA-256 `{meta['sources']['combined_sha256'][:16]}…` over {len(meta['sources']['files'])} files of {', '.join(meta['sources']['roots'])}"],
        ["competitors (Cargo.lock)", ", ".join(f"{k} {v}" for k, v in meta["locked_versions"].items())],
    ]
    md.append(md_table(["", ""], rows, ["---", "---"]))
    md.append("")
    for note in notes:
        md.append(f"> **Note:** {note}")
        md.append("")
    md.append(
        "To cite: the commit and command above, with `results.json` (its `meta` has the full "
        "`rustc -vV`, every source file's SHA-256, and the dirty paths)."
    )
    md.append("")
    md.append(
        "**Ratios** are the best competitor's cost / berth's cost in the same cell (median time "
        "per iteration, latency, CPU per message): **> 1 means berth is ahead, < 1 behind**. "
        "Every cell below 1.00 is listed under [Losses](#losses)."
    )
    md.append("")

    # Headline.
    md += ["## Headline", ""]
    head_rows = []
    fam_titles = dict(FAMILY_ORDER + WAIT_FAMILIES)
    fam_order = [f for f, _ in FAMILY_ORDER + WAIT_FAMILIES]
    headline = [c for c in cells if c["headline"]]
    for fam in fam_order + sorted({c["family"] for c in headline} - set(fam_order)):
        fc = [c for c in headline if c["family"] == fam]
        if not fc:
            continue
        worst = min(fc, key=lambda c: c["ratio"])
        head_rows.append(
            [
                fam_titles.get(fam, fam),
                len(fc),
                sum(c["ratio"] >= 1 for c in fc),
                sum(c["ratio"] < 1 for c in fc),
                fmt_ratio(geomean([c["ratio"] for c in fc])),
                f"{fmt_ratio(worst['ratio'])} (`{worst['cell']}` vs {worst['best_competitor']})",
            ]
        )
    if headline:
        head_rows.append(
            [
                "**all**",
                len(headline),
                sum(c["ratio"] >= 1 for c in headline),
                sum(c["ratio"] < 1 for c in headline),
                fmt_ratio(geomean([c["ratio"] for c in headline])),
                "",
            ]
        )
    md.append(
        md_table(["workload", "cells", "berth ahead (≥ 1.00)", "berth behind", "geometric mean ratio", "worst cell"], head_rows)
        if head_rows
        else "No cell was measured in this run."
    )
    md.append("")
    md.append(
        "Headline cells compare berth's main contender (`berth`, or a berth variant against the "
        "competitor with the same API shape, e.g. `berth_many32` vs `tokio_many32`) with the "
        "best competitor. berth's alternative implementations (`berth_scq`, `berth_mutex`) "
        "have their ratios in the tables and in the losses, not in this summary."
    )
    md.append("")
    if goal_rows:
        md += ["### Goals (issue 10)", ""]
        md.append(
            md_table(
                ["goal", "cell", "value", "met"],
                [[goal, f"`{k}`", v, "yes" if ok else "**no**"] for k, goal, v, ok in goal_rows],
                ["---", "---", "---:", "---"],
            )
        )
        md.append("")

    # Families.
    present = [f for f in fam_order if f in families] + sorted(set(families) - set(fam_order))
    for fam in present:
        md.append(family_section(fam, fam_titles.get(fam, fam), families[fam], groups, cells_by_key, out_dir, plots))
    md.append(wait_sections(wait_stats, cells_by_key, out_dir, plots, wait))

    # Losses.
    md += ["## Losses", ""]
    losing = sorted((c for c in cells if c["ratio"] < 1), key=lambda c: (not c["headline"], c["ratio"]))
    missed = [(k, goal, v) for k, goal, v, ok in goal_rows if not ok]
    if not losing and not missed:
        md.append("None: berth is at or above 1.00 in every cell measured, and meets every goal.")
    else:
        md.append(
            "Every cell below 1.00, and every goal not met, with its explanation from "
            "`reports/bench/losses.md` (keyed by cell name). An explanation written for an "
            "earlier run says so; it is quoted, not re-checked against this run."
        )
        md.append("")
        for c in losing:
            kind = "" if c["headline"] else " (alternative implementation)"
            md.append(
                f"### `{c['cell']}`: {fmt_ratio(c['ratio'])}{kind}"
            )
            md.append("")
            md.append(
                f"{c['metric']}: {c['berth']} {fmt_time(c['berth_value'])}, "
                f"{c['best_competitor']} {fmt_time(c['competitor_value'])}."
            )
            md.append("")
            md.append(losses.get(c["cell"], f"*{NO_EXPLANATION}.*"))
            md.append("")
        for key, goal, value in missed:
            md.append(f"### `{key}`: goal not met")
            md.append("")
            md.append(f"{goal}: {value}.")
            md.append("")
            md.append(losses.get(key, f"*{NO_EXPLANATION}.*"))
            md.append("")
    unused = sorted(set(losses) - {c["cell"] for c in losing} - {k for k, _, _ in missed})
    if unused:
        md.append(
            "Entries of `losses.md` for cells that are not losses in this run (or were not "
            "measured): " + ", ".join(f"`{k}`" for k in unused) + "."
        )
        md.append("")

    # Limits.
    md += ["## What this does not show", ""]
    missing = [fam_titles[f] for f in fam_order if f not in families and f not in wait_stats_present(wait_stats)]
    if missing:
        md.append("- **Not run this time** (filtered out, or failed): " + "; ".join(missing) + ".")
    md.append(
        f"- Many-core behaviour: this ran on {m['cores']} cores; every shape with more threads "
        "than cores is oversubscribed, which rewards whoever gives a core back soonest."
    )
    md.append(
        "- Run-to-run variance: each number is one run's median; on a virtualised machine "
        "consecutive runs have differed by 2x and more in the threaded cells. Read ratios near "
        "1 as level, and compare only ratios measured on the same machine."
    )
    md.append(
        "- Why a cell is what it is: the tables say where berth is behind, `losses.md` says "
        "why where someone has found out (a profile, a counter); nothing here is inferred."
    )
    md.append("")
    md.append("Plots: " + ", ".join(f"[{p}]({p})" for p in plots) + "." if plots else "No plots.")
    md.append("")
    (out_dir / "RESULTS.md").write_text("\n".join(md))

    results = {
        "schema": "berth-bench-results/1",
        "meta": meta,
        "ratio_definition": "best competitor cost / berth cost; > 1 means berth is ahead",
        "cells": cells,
        "goals": [{"key": k, "goal": goal, "value": v, "met": ok} for k, goal, v, ok in goal_rows],
        "criterion": benches,
        "wait": wait,
        "plots": plots,
    }
    (out_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    return plots


def wait_stats_present(wait_stats):
    return {k for k, v in wait_stats.items() if v}


def step_after(args):
    record_path = run_record_path()
    record = None
    if record_path.is_file() and not args.all:
        record = json.loads(record_path.read_text())
    since = None if (args.all or record is None) else record["started_unix"] - 1.0
    cdir = Path(args.criterion) if args.criterion else criterion_dir()
    benches, skipped = load_criterion(cdir, since) if cdir.is_dir() else ([], 0)
    wait, wait_note = load_wait(Path(args.wait) if args.wait else wait_json_path(), since)
    if not benches and not wait:
        print(f"report.py: no results in {cdir} or the wait samples since the run started", file=sys.stderr)
        return 1

    finished = now_utc()
    notes = []
    git_now, sources_now = git_state(), source_hashes()
    if record:
        meta_git, sources = record["git"], record["sources"]
        if sources["combined_sha256"] != sources_now["combined_sha256"]:
            changed = sorted(
                k
                for k in set(sources["files"]) | set(sources_now["files"])
                if sources["files"].get(k) != sources_now["files"].get(k)
            )
            notes.append(
                "source files changed while the benchmarks ran (" + ", ".join(changed[:8])
                + (", …" if len(changed) > 8 else "")
                + "): the hashes are those at the start; results.json has both."
            )
    else:
        meta_git, sources = git_state(), sources_now
        notes.append(
            "no record of the run's start (`report.py before` did not run, or --all): the "
            "command, start time and load before are unknown, and every result found was used."
        )
    meta = {
        "git": meta_git,
        "git_at_report": git_now,
        "sources": sources,
        "sources_at_report_sha256": sources_now["combined_sha256"],
        "command": (record or {}).get("command") or "unknown",
        "via_make": (record or {}).get("via_make", False),
        "bench_budget": (record or {}).get("bench_budget", os.environ.get("BENCH_BUDGET", "")),
        "started": (record or {}).get("started"),
        "finished": iso(finished),
        "load_before": (record or {}).get("load_before"),
        "load_after": loadavg(),
        "machine": machine(),
        "toolchain": toolchain(),
        "locked_versions": locked_versions(),
        "criterion_dir": str(cdir),
        "criterion_results_ignored_as_older": skipped,
        "wait_note": wait_note,
    }
    if wait and wait.get("budget") and meta["bench_budget"] and wait["budget"] != (meta["bench_budget"] or "default"):
        notes.append(f"the wait samples were taken with BENCH_BUDGET={wait['budget']}.")
    lb = meta["load_before"]
    if lb and lb[0] >= 0.5:
        notes.append(
            f"the 1-minute load average was {lb[0]:.2f} before the run on {meta['machine']['cores']} "
            "cores: the machine was not idle, and these numbers include that interference."
        )
    if meta["bench_budget"] in ("smoke", "quick"):
        notes.append(
            f"BENCH_BUDGET={meta['bench_budget']}: a short run for checking, not the full "
            "measurement; cite the default budget's report."
        )

    groups, families, cells = criterion_cells(benches)
    wait_stats, wait_cells = wait_summary(wait)
    cells += wait_cells
    losses_path = Path(args.losses) if args.losses else LOSSES_MD
    out_dir = Path(args.out) if args.out else DEFAULT_OUT
    losses = {
        k: relink(v, losses_path.resolve().parent, out_dir)
        for k, v in parse_losses(losses_path).items()
    }
    plots = write_report(out_dir, meta, benches, groups, families, wait, wait_stats, cells, losses, notes)
    if record and not args.keep_record:
        record_path.replace(record_path.with_name("run.done.json"))
    n_loss = sum(c["ratio"] < 1 for c in cells)
    print(
        f"report.py: {len(benches)} criterion benchmarks ({skipped} older ones ignored), "
        f"{len((wait or {}).get('cases', []))} wait cases, {len(cells)} ratio cells "
        f"({n_loss} below 1.00), {len(plots)} plots -> {out_dir}/RESULTS.md, results.json"
    )
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", default="after", choices=["before", "after"])
    parser.add_argument("--command", help="before: the command being run (else $BERTH_BENCH_COMMAND)")
    parser.add_argument("--out", help=f"after: output directory (default {DEFAULT_OUT.relative_to(ROOT)})")
    parser.add_argument("--criterion", help="after: criterion's output directory")
    parser.add_argument("--wait", help="after: benches/wait.rs's JSON")
    parser.add_argument("--losses", help="after: the explanations (default reports/bench/losses.md)")
    parser.add_argument("--all", action="store_true", help="after: use every result found, ignore the run record")
    parser.add_argument("--keep-record", action="store_true", help="after: leave the run record in place")
    args = parser.parse_args(argv[1:])
    return step_before(args) if args.step == "before" else step_after(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
