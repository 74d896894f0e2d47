//! Graceful shutdown: a producer and a few workers on a bounded job channel, stopped by a
//! signal, with every job that was accepted processed before the workers exit.
//!
//! - The shutdown signal is a channel nobody sends on: dropping its only sender disconnects it,
//!   and every `recv(shutdown)` in every `select!` becomes ready at once (a broadcast).
//! - The producer offers each job with `select! { send(jobs, job), recv(shutdown) }`: the job
//!   expression is evaluated only if the send is selected, so a job is either in the channel
//!   or was never made; nothing is dropped on the floor when the signal wins.
//! - When the producer stops it drops its sender. The workers keep receiving until the channel
//!   is empty *and* disconnected (`for job in &jobs`), so everything accepted is drained.
//! - The main thread runs the system for `RUN_FOR` (`after`), printing progress on a `tick`,
//!   signals shutdown, and waits for the workers against a grace deadline (`recv_deadline`):
//!   a worker that hangs fails the example instead of hanging it.
//!
//! Checked: jobs accepted = jobs processed (each exactly once), and the jobs drained after the
//! signal are counted.
//!
//! Run with `cargo run -p berth --example graceful_shutdown`.

// An example is a program that uses berth, so it uses std's threads and atomics, which the
// crate's own code must take from its loom/shuttle facade (core/clippy.toml).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use berth::channel::{self, Receiver};
use berth::select;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const WORKERS: usize = 3;
const CAPACITY: usize = 64;
const RUN_FOR: Duration = Duration::from_millis(300);
/// How long the workers get to drain after the signal; far more than they need.
const GRACE: Duration = Duration::from_secs(30);
/// Simulated work per job: slower than the producer, so a backlog is waiting at shutdown.
const WORK: Duration = Duration::from_micros(300);

/// What a worker did: the jobs it processed, and how many of them after the signal.
struct Report {
    worker: usize,
    processed: Vec<u64>,
    after_signal: usize,
}

fn worker(
    id: usize,
    jobs: Receiver<u64>,
    shutdown: Receiver<()>,
    signalled: Arc<AtomicBool>,
) -> Report {
    let mut processed = Vec::new();
    let mut after_signal = 0;
    // Normal operation: take jobs until the signal.
    loop {
        select! {
            recv(jobs) -> job => match job {
                Ok(job) => {
                    thread::sleep(WORK);
                    processed.push(job);
                }
                Err(_) => break, // the producer is gone and nothing is left
            },
            recv(shutdown) -> _ => break,
        }
    }
    // Draining: everything the producer managed to send is still ours to do.
    for job in &jobs {
        thread::sleep(WORK / 10);
        processed.push(job);
        if signalled.load(Relaxed) {
            after_signal += 1;
        }
    }
    Report {
        worker: id,
        processed,
        after_signal,
    }
}

fn main() {
    let (jobs_tx, jobs_rx) = channel::bounded::<u64>(CAPACITY);
    let (shutdown_tx, shutdown_rx) = channel::bounded::<()>(0);
    let (exit_tx, exit_rx) = channel::unbounded::<Report>();
    let signalled = Arc::new(AtomicBool::new(false));

    let producer = {
        let shutdown = shutdown_rx.clone();
        thread::spawn(move || {
            let mut next = 0u64;
            loop {
                select! {
                    send(jobs_tx, next) -> res => {
                        res.expect("workers drain until the producer is gone");
                        next += 1;
                    }
                    recv(shutdown) -> _ => break,
                }
            }
            next // jobs accepted: 0..next; `jobs_tx` is dropped here
        })
    };
    for id in 0..WORKERS {
        let (jobs, shutdown, exit) = (jobs_rx.clone(), shutdown_rx.clone(), exit_tx.clone());
        let signalled = Arc::clone(&signalled);
        thread::spawn(move || {
            let report = worker(id, jobs, shutdown, signalled);
            exit.send(report).unwrap();
        });
    }
    // Main keeps a receiver only to read the backlog; it never receives, and a receiver does
    // not keep the producer's side from disconnecting.
    let backlog = jobs_rx;
    drop((shutdown_rx, exit_tx));

    let stop_at = channel::after(RUN_FOR);
    let progress = channel::tick(Duration::from_millis(100));
    let started = Instant::now();
    loop {
        select! {
            recv(progress) -> _ => {
                println!(
                    "graceful_shutdown: {:?} in, {} jobs queued",
                    started.elapsed(),
                    backlog.len()
                );
            }
            recv(stop_at) -> _ => break,
        }
    }

    signalled.store(true, Relaxed);
    drop(shutdown_tx); // the broadcast: every recv(shutdown) is ready now
    let signal_at = Instant::now();
    let accepted = producer.join().unwrap();

    let deadline = signal_at + GRACE;
    let mut reports = Vec::new();
    while reports.len() < WORKERS {
        match exit_rx.recv_deadline(deadline) {
            Ok(r) => reports.push(r),
            Err(e) => panic!(
                "graceful_shutdown: {} of {WORKERS} workers exited within {GRACE:?} ({e})",
                reports.len()
            ),
        }
    }
    let drain_time = signal_at.elapsed();
    assert!(backlog.is_empty() && backlog.is_disconnected());

    // Every accepted job was processed exactly once.
    let mut seen = vec![false; accepted as usize];
    for r in &reports {
        for &job in &r.processed {
            assert!(job < accepted, "job {job} was never accepted");
            assert!(!seen[job as usize], "job {job} processed twice");
            seen[job as usize] = true;
        }
    }
    let missing = seen.iter().filter(|&&s| !s).count();
    assert_eq!(missing, 0, "{missing} accepted jobs were never processed");
    assert!(accepted > 0, "the producer ran");

    reports.sort_by_key(|r| r.worker);
    let per_worker: Vec<usize> = reports.iter().map(|r| r.processed.len()).collect();
    let drained: usize = reports.iter().map(|r| r.after_signal).sum();
    println!(
        "graceful_shutdown: {accepted} jobs accepted, all processed (per worker {per_worker:?}), \
         {drained} of them drained after the signal; shutdown took {drain_time:?}"
    );
}
