//! A small dependency scheduler: jobs form a DAG, each runs on a `berth::pool::ThreadPool` as
//! soon as the jobs it depends on have finished, and the main thread watches with `select!`
//! over the completion channel, a progress ticker and an overall deadline.
//!
//! - Each job has a count of unfinished dependencies. The job that brings a dependent's count
//!   to zero spawns it on the pool (`ThreadPool::spawn`), so no thread polls the graph.
//! - A finished job reports `(job, finish order)` on an unbounded channel.
//! - The main thread's `select!` takes completions, prints progress on `tick`, and gives up at
//!   `after(DEADLINE)` (a hung job would fail the example instead of hanging it).
//!
//! Checked: every job ran exactly once, after all of its dependencies, and its value (1 + the
//! sum of its dependencies' values, mod a prime) equals a sequential evaluation of the graph.
//!
//! Run with `cargo run -p berth --example scheduler`.

// An example is a program that uses berth, so it uses std's atomics and Arc, which the crate's
// own code must take from its loom/shuttle facade (core/clippy.toml).
#![allow(clippy::disallowed_types)]

use berth::channel::{self, Sender};
use berth::pool::ThreadPool;
use berth::select;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire};
use std::sync::Arc;
use std::time::Duration;

const JOBS: usize = 500;
const MODULUS: u64 = 1_000_000_007;
/// Far longer than the graph takes; only a bug (a job never spawned) can reach it.
const DEADLINE: Duration = Duration::from_secs(30);

/// The dependencies of job `i`: a few earlier jobs, so the graph is acyclic and has fan-in and
/// fan-out.
fn deps_of(i: usize) -> Vec<usize> {
    let mut d: Vec<usize> = [i / 2, i / 3, i.saturating_sub(7)]
        .into_iter()
        .filter(|&j| j < i)
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

struct Graph {
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    /// Dependencies not finished yet, per job.
    pending: Vec<AtomicUsize>,
    /// A job's value, written before it reports (0 until then; values are never 0).
    value: Vec<AtomicU64>,
    /// How many jobs have finished: each job takes the next number as its finish order.
    finished: AtomicUsize,
}

fn run_job(graph: Arc<Graph>, pool: Arc<ThreadPool>, done: Sender<(usize, usize)>, job: usize) {
    let mut value = 1u64;
    for &d in &graph.deps[job] {
        let dep = graph.value[d].load(Acquire);
        assert_ne!(dep, 0, "job {job} ran before its dependency {d}");
        value = (value + dep) % MODULUS;
    }
    graph.value[job].store(value, std::sync::atomic::Ordering::Release);
    let order = graph.finished.fetch_add(1, AcqRel);
    for &next in &graph.dependents[job] {
        // The last dependency to finish releases the dependent (AcqRel: it sees every value).
        if graph.pending[next].fetch_sub(1, AcqRel) == 1 {
            let (g, p, d) = (Arc::clone(&graph), Arc::clone(&pool), done.clone());
            pool.spawn(move || run_job(g, p, d, next));
        }
    }
    done.send((job, order))
        .expect("the scheduler waits for every job");
}

fn main() {
    let deps: Vec<Vec<usize>> = (0..JOBS).map(deps_of).collect();
    let mut dependents = vec![Vec::new(); JOBS];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let graph = Arc::new(Graph {
        pending: deps.iter().map(|d| AtomicUsize::new(d.len())).collect(),
        value: (0..JOBS).map(|_| AtomicU64::new(0)).collect(),
        finished: AtomicUsize::new(0),
        deps,
        dependents,
    });
    let pool = Arc::new(ThreadPool::new(2));
    let (done_tx, done_rx) = channel::unbounded();

    let roots: Vec<usize> = (0..JOBS).filter(|&i| graph.deps[i].is_empty()).collect();
    for &r in &roots {
        let (g, p, d) = (Arc::clone(&graph), Arc::clone(&pool), done_tx.clone());
        pool.spawn(move || run_job(g, p, d, r));
    }
    drop(done_tx); // the jobs hold the only senders

    let ticker = channel::tick(Duration::from_millis(50));
    let deadline = channel::after(DEADLINE);
    let mut order = vec![usize::MAX; JOBS];
    let mut completed = 0;
    let mut ticks = 0;
    while completed < JOBS {
        select! {
            recv(done_rx) -> msg => {
                let (job, at) = msg.expect("a job is still running, so a sender is alive");
                assert_eq!(order[job], usize::MAX, "job {job} ran twice");
                order[job] = at;
                completed += 1;
            }
            recv(ticker) -> _ => {
                ticks += 1;
                println!("scheduler: {completed}/{JOBS} jobs done");
            }
            recv(deadline) -> _ => panic!("scheduler: only {completed}/{JOBS} jobs within {DEADLINE:?}"),
        }
    }
    // Every job has reported and dropped its sender, and no job is left to spawn another.
    assert!(done_rx.recv().is_err(), "no job reports after the last one");

    // After all of its dependencies, and with the value a sequential evaluation gives.
    let mut expected = vec![0u64; JOBS];
    for i in 0..JOBS {
        expected[i] = graph.deps[i]
            .iter()
            .fold(1, |acc, &d| (acc + expected[d]) % MODULUS);
        for &d in &graph.deps[i] {
            assert!(
                order[d] < order[i],
                "job {i} finished before its dependency {d}"
            );
        }
        assert_eq!(graph.value[i].load(Acquire), expected[i], "job {i}'s value");
    }
    let edges: usize = graph.deps.iter().map(Vec::len).sum();
    println!(
        "scheduler: {JOBS} jobs ({} without dependencies, {edges} dependency edges) on a 2-thread pool, all in \
         dependency order; {ticks} progress ticks; job {} = {}",
        roots.len(),
        JOBS - 1,
        expected[JOBS - 1]
    );
}
