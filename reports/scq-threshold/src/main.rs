//! One run of a real-thread `ScqQueue` scenario for `reports/scq-threshold` (driven by `run.py`).
//!
//! ```text
//! berth-scq-threshold-report 3p3c [--secs S] [--stall-secs S]
//! berth-scq-threshold-report 1p7c [--secs S] [--consumers C] [--stall-secs S]
//! berth-scq-threshold-report harness-check-hang [--stall-secs S]
//! berth-scq-threshold-report harness-check-kill
//! ```
//!
//! - `3p3c`: capacity 1; three producers `push` (blocking) for `--secs` (default 1.5), three
//!   consumers `pop` (blocking): the reference post's scenario (and
//!   `core/tests/scq_threshold.rs`'s). When the time is up, one more thread joins the producers
//!   and pushes an end marker per consumer; a consumer stops at the marker it pops.
//! - `1p7c`: capacity 1; one producer `push`es (blocking) for `--secs` (default 2), C consumers
//!   (default 7) spin on `try_pop` until every pushed value is taken: a real-thread shape in
//!   which six dequeuers of the allocated ring can be in flight at once beside the push (see the
//!   module docs of `core/src/queue/scq.rs`).
//! - `harness-check-hang`: a consumer pops twice from a queue that gets one value, so it blocks
//!   for good: proves that the watchdog notices a hang, dumps the queue and exits with
//!   [`HANG_EXIT`].
//! - `harness-check-kill`: sleeps without a watchdog: proves that `run.py`'s hard timeout kills a
//!   child that never reports.
//!
//! Runs are bounded by time, not by a value count, so that a loaded machine moves fewer values
//! instead of taking longer; the count is reported.
//!
//! The main thread is the watchdog. It polls a progress counter (pushes plus pops completed)
//! every 20 ms; if the counter has not moved for `--stall-secs` (default 3) before every worker
//! has finished, the run hung: it prints the queue's `{:#?}` (both rings: head, tail, threshold
//! and every entry) and exits with code [`HANG_EXIT`], leaving the stuck threads behind
//! (`process::exit` ends them). Otherwise it joins the threads and checks that every value came
//! out exactly once.
//!
//! The last line of stdout is `REPORT {json}`: `outcome` (`ok`, `hung`, `error`), `scenario`,
//! `build` (the `BERTH_MUTANT` this binary was built with, or `fix`), `pushed` and `popped`
//! (including end markers), `values` (moved, once finished), `seconds`, and on a hang
//! `stalled_s` and `dump`.

// A standalone report crate: real std threads and atomics are the point.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use berth::ScqQueue;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Exit code of a run whose watchdog saw a hang (after it printed the dump).
const HANG_EXIT: i32 = 86;
/// Exit code of a run that finished but got the values wrong.
const WRONG_EXIT: i32 = 87;

/// The mutant this binary's `berth` was built with (`run.py` sets `BERTH_MUTANT` at build time;
/// `core/build.rs` turns it into the cfg). Read at compile time, so cargo rebuilds on a change.
fn build_name() -> &'static str {
    match option_env!("BERTH_MUTANT") {
        Some(m) if !m.is_empty() => m,
        _ => "fix",
    }
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Report {
    outcome: &'static str,
    scenario: &'static str,
    pushed: u64,
    popped: u64,
    /// Values moved (known once the run finished).
    values: Option<u64>,
    seconds: f64,
    stalled_s: Option<f64>,
    dump: Option<String>,
    detail: Option<String>,
}

impl Report {
    fn print(&self) {
        let mut s = format!(
            "{{\"outcome\":{},\"scenario\":{},\"build\":{},\"pushed\":{},\"popped\":{},\
             \"seconds\":{:.3}",
            json_str(self.outcome),
            json_str(self.scenario),
            json_str(build_name()),
            self.pushed,
            self.popped,
            self.seconds,
        );
        if let Some(v) = self.values {
            let _ = write!(s, ",\"values\":{v}");
        }
        if let Some(st) = self.stalled_s {
            let _ = write!(s, ",\"stalled_s\":{st:.3}");
        }
        if let Some(d) = &self.dump {
            let _ = write!(s, ",\"dump\":{}", json_str(d));
        }
        if let Some(d) = &self.detail {
            let _ = write!(s, ",\"detail\":{}", json_str(d));
        }
        s.push('}');
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "REPORT {s}");
        let _ = out.flush();
    }
}

/// Progress shared by the workers and the watchdog.
#[derive(Default)]
struct Progress {
    /// Completed pushes (values and end markers).
    pushed: AtomicU64,
    /// Completed pops (values and end markers).
    popped: AtomicU64,
    /// Worker threads that have finished.
    finished: AtomicU64,
}

/// Polls until `threads` workers have finished, or neither a push nor a pop has completed for
/// `stall`: then prints the hang report with the queue dump and exits with [`HANG_EXIT`].
fn watchdog(
    scenario: &'static str,
    q: &ScqQueue<u64>,
    progress: &Progress,
    threads: u64,
    stall: Duration,
    start: Instant,
) {
    let mut last = u64::MAX;
    let mut since = Instant::now();
    loop {
        if progress.finished.load(Relaxed) == threads {
            return;
        }
        let pushed = progress.pushed.load(Relaxed);
        let popped = progress.popped.load(Relaxed);
        let now = pushed + popped;
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= stall {
            // The rings as they are now: `{:#?}` dumps head, tail, threshold and every entry.
            let dump = format!("{q:#?}");
            Report {
                outcome: "hung",
                scenario,
                pushed,
                popped,
                values: None,
                seconds: start.elapsed().as_secs_f64(),
                stalled_s: Some(since.elapsed().as_secs_f64()),
                dump: Some(dump),
                detail: None,
            }
            .print();
            process::exit(HANG_EXIT);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Checks that the values `base(p) + 0..counts[p]` for every producer `p`, and nothing else,
/// each came out exactly once.
fn exactly_once(counts: &[u64], got: impl IntoIterator<Item = u64>) -> Result<(), String> {
    let mut seen: Vec<Vec<u8>> = counts.iter().map(|&c| vec![0u8; c as usize]).collect();
    for v in got {
        let (p, i) = ((v / STRIDE) as usize, v % STRIDE);
        match seen.get_mut(p).and_then(|s| s.get_mut(i as usize)) {
            Some(s) => *s = s.saturating_add(1),
            None => return Err(format!("value {v} was never pushed")),
        }
    }
    for (p, s) in seen.iter().enumerate() {
        if let Some(i) = s.iter().position(|&n| n != 1) {
            return Err(format!(
                "value {} came out {} times",
                p as u64 * STRIDE + i as u64,
                s[i]
            ));
        }
    }
    Ok(())
}

/// Producer `p` pushes `p * STRIDE + i`.
const STRIDE: u64 = 1 << 40;
/// Pushed once per consumer after every producer has stopped: the consumer that pops it exits.
const END: u64 = u64::MAX;

fn finish(
    scenario: &'static str,
    q: &ScqQueue<u64>,
    progress: &Progress,
    counts: &[u64],
    got: Vec<u64>,
    start: Instant,
) -> ! {
    let values: u64 = counts.iter().sum();
    let check = if got.len() as u64 != values {
        Err(format!("{} values came out, {values} went in", got.len()))
    } else {
        exactly_once(counts, got)
    };
    let ok = check.is_ok();
    Report {
        outcome: if ok { "ok" } else { "error" },
        scenario,
        pushed: progress.pushed.load(Relaxed),
        popped: progress.popped.load(Relaxed),
        values: Some(values),
        seconds: start.elapsed().as_secs_f64(),
        stalled_s: None,
        dump: if ok { None } else { Some(format!("{q:#?}")) },
        detail: check.err(),
    }
    .print();
    process::exit(if ok { 0 } else { WRONG_EXIT });
}

/// Capacity 1, three producers and three consumers, blocking `push`/`pop`, for `secs` seconds:
/// the producers push until the time is up; then one thread pushes an end marker per consumer
/// (after every value, so FIFO order hands them out last) and the consumers pop until theirs.
fn three_by_three(secs: f64, stall: Duration) -> ! {
    const THREADS: u64 = 3;
    let q = Arc::new(ScqQueue::new(1));
    let progress = Arc::new(Progress::default());
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(secs);
    let producers: Vec<_> = (0..THREADS)
        .map(|p| {
            let (q, progress) = (Arc::clone(&q), Arc::clone(&progress));
            thread::spawn(move || {
                let mut i = 0;
                while Instant::now() < until {
                    q.push(p * STRIDE + i).unwrap();
                    progress.pushed.fetch_add(1, Relaxed);
                    i += 1;
                }
                progress.finished.fetch_add(1, Relaxed);
                i
            })
        })
        .collect();
    let consumers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (q, progress) = (Arc::clone(&q), Arc::clone(&progress));
            thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let v = q.pop().unwrap();
                    progress.popped.fetch_add(1, Relaxed);
                    if v == END {
                        break;
                    }
                    got.push(v);
                }
                progress.finished.fetch_add(1, Relaxed);
                got
            })
        })
        .collect();
    let ender = {
        let (q, progress) = (Arc::clone(&q), Arc::clone(&progress));
        thread::spawn(move || {
            let counts: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
            for _ in 0..THREADS {
                q.push(END).unwrap();
                progress.pushed.fetch_add(1, Relaxed);
            }
            progress.finished.fetch_add(1, Relaxed);
            counts
        })
    };
    watchdog("3p3c", &q, &progress, 2 * THREADS + 1, stall, start);
    let counts = ender.join().unwrap();
    let got: Vec<u64> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    finish("3p3c", &q, &progress, &counts, got, start);
}

/// Capacity 1, one producer (blocking `push`) for `secs` seconds, `consumers` threads spinning
/// on `try_pop` until every pushed value is taken.
fn one_by_many(secs: f64, consumers: u64, spin_producer: bool, stall: Duration) -> ! {
    let q = Arc::new(ScqQueue::new(1));
    let progress = Arc::new(Progress::default());
    // How many values the producer pushed, once it has stopped.
    let total = Arc::new(AtomicU64::new(u64::MAX));
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(secs);
    let producer = {
        let (q, progress, total) = (Arc::clone(&q), Arc::clone(&progress), Arc::clone(&total));
        thread::spawn(move || {
            let mut i = 0;
            while Instant::now() < until {
                if spin_producer {
                    let mut v = i;
                    while let Err(e) = q.try_push(v) {
                        v = e.into_inner();
                        std::hint::spin_loop();
                    }
                } else {
                    q.push(i).unwrap();
                }
                progress.pushed.fetch_add(1, Relaxed);
                i += 1;
            }
            total.store(i, Relaxed);
            progress.finished.fetch_add(1, Relaxed);
            i
        })
    };
    let consumer_threads: Vec<_> = (0..consumers)
        .map(|_| {
            let (q, progress, total) = (Arc::clone(&q), Arc::clone(&progress), Arc::clone(&total));
            thread::spawn(move || {
                let mut got = Vec::new();
                while progress.popped.load(Relaxed) < total.load(Relaxed) {
                    if let Ok(v) = q.try_pop() {
                        got.push(v);
                        progress.popped.fetch_add(1, Relaxed);
                    } else {
                        std::hint::spin_loop();
                    }
                }
                progress.finished.fetch_add(1, Relaxed);
                got
            })
        })
        .collect();
    watchdog("1p7c", &q, &progress, 1 + consumers, stall, start);
    let count = producer.join().unwrap();
    let got: Vec<u64> = consumer_threads
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    finish("1p7c", &q, &progress, &[count], got, start);
}

/// A hang on purpose: one value pushed, two pops. The watchdog must report it.
fn harness_check_hang(stall: Duration) -> ! {
    let q = Arc::new(ScqQueue::new(1));
    let progress = Arc::new(Progress::default());
    let start = Instant::now();
    q.push(0).unwrap();
    progress.pushed.fetch_add(1, Relaxed);
    let _consumer = {
        let (q, progress) = (Arc::clone(&q), Arc::clone(&progress));
        thread::spawn(move || {
            for _ in 0..2 {
                q.pop().unwrap();
                progress.popped.fetch_add(1, Relaxed);
            }
            progress.finished.fetch_add(1, Relaxed);
        })
    };
    watchdog("harness-check-hang", &q, &progress, 1, stall, start);
    unreachable!("the watchdog returned although the consumer cannot finish");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == name)
            .map(|i| {
                args.get(i + 1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{name} needs a number"))
            })
            .unwrap_or(default)
    };
    let stall = Duration::from_secs_f64(flag("--stall-secs", 3.0));
    match args.first().map(String::as_str) {
        Some("3p3c") => three_by_three(flag("--secs", 1.5), stall),
        Some("1p7c") => one_by_many(
            flag("--secs", 2.0),
            flag("--consumers", 7.0) as u64,
            args.iter().any(|a| a == "--spin-producer"),
            stall,
        ),
        Some("harness-check-hang") => harness_check_hang(stall),
        Some("harness-check-kill") => loop {
            thread::sleep(Duration::from_secs(3600));
        },
        _ => {
            eprintln!(
                "usage: berth-scq-threshold-report 3p3c [--secs S] | 1p7c [--secs S] \
                 [--consumers C] | harness-check-hang | harness-check-kill  [--stall-secs S]"
            );
            process::exit(2);
        }
    }
}
