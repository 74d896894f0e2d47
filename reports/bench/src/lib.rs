//! What the benchmarks of `berth-bench` share: the `BENCH_BUDGET` budgets.
//!
//! Every benchmark binary reads `BENCH_BUDGET` once, through [`Budget::from_env`]:
//!
//! | `BENCH_BUDGET` | meant for | criterion benchmarks |
//! |---|---|---|
//! | unset, `default` | the published run | each file's own times, criterion's HTML plots |
//! | `quick` | the suite in a few minutes | 0.25 s warm-up + 0.5 s measurement, no plots |
//! | `smoke` | the pipeline, with a filter | 0.05 s warm-up + 0.1 s measurement, no plots |
//!
//! The sample size stays at criterion's minimum of 10 in every budget (the pool and async
//! benchmarks use more in the default budget). Criterion's command-line flags still override
//! all of it. `benches/wait.rs`, which is not a criterion benchmark, sizes its sample counts
//! and idle times by the same budget ([`Budget::pick`]).

use std::time::Duration;

use criterion::Criterion;

/// How long the benchmarks run: the value of `BENCH_BUDGET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// `BENCH_BUDGET=smoke`: every benchmark as short as criterion allows; for checking that the
    /// benchmarks and the report pipeline work, not for numbers.
    Smoke,
    /// `BENCH_BUDGET=quick`: the whole suite in a few minutes.
    Quick,
    /// `BENCH_BUDGET` unset or `default`: the full run that reports are made from.
    Full,
}

impl Budget {
    /// Reads `BENCH_BUDGET`; an unknown value is reported on stderr and read as the default.
    pub fn from_env() -> Budget {
        let value = std::env::var("BENCH_BUDGET").unwrap_or_default();
        match value.as_str() {
            "smoke" => Budget::Smoke,
            "quick" => Budget::Quick,
            "" | "default" => Budget::Full,
            other => {
                eprintln!(
                    "BENCH_BUDGET={other:?} is not known \
                     (use \"smoke\", \"quick\" or \"default\"); using the default"
                );
                Budget::Full
            }
        }
    }

    /// The name written into reports: `smoke`, `quick` or `default`.
    pub fn name(self) -> &'static str {
        match self {
            Budget::Smoke => "smoke",
            Budget::Quick => "quick",
            Budget::Full => "default",
        }
    }

    /// One of three values by budget: `(smoke, quick, full)`.
    pub fn pick<T>(self, smoke: T, quick: T, full: T) -> T {
        match self {
            Budget::Smoke => smoke,
            Budget::Quick => quick,
            Budget::Full => full,
        }
    }

    /// The criterion configuration of the throughput benchmarks (queues, channels, select,
    /// deque): sample size 10, and in the default budget a warm-up of 0.5 s and the
    /// `full_measurement` that the benchmark file chose.
    pub fn criterion(self, full_measurement: Duration) -> Criterion {
        let base = Criterion::default().sample_size(10);
        match self {
            Budget::Full => base
                .measurement_time(full_measurement)
                .warm_up_time(Duration::from_millis(500)),
            Budget::Quick => base
                .measurement_time(Duration::from_millis(500))
                .warm_up_time(Duration::from_millis(250))
                .without_plots(),
            Budget::Smoke => Self::smoke(base),
        }
    }

    /// The criterion configuration of the benchmarks that keep criterion's default times in
    /// the default budget (pool, async): there, criterion's defaults (3 s warm-up, 5 s
    /// measurement) with `full_sample_size`; quick and smoke as in [`Budget::criterion`].
    pub fn criterion_default_times(self, full_sample_size: usize) -> Criterion {
        match self {
            Budget::Full => Criterion::default().sample_size(full_sample_size),
            Budget::Quick | Budget::Smoke => self.criterion(Duration::from_millis(500)),
        }
    }

    fn smoke(base: Criterion) -> Criterion {
        base.measurement_time(Duration::from_millis(100))
            .warm_up_time(Duration::from_millis(50))
            .without_plots()
    }
}

/// What the whole process used, from `getrusage(RUSAGE_SELF)`: for the probes in `examples/`,
/// which print it divided per value, so that a machine without `perf` (such as the 16-core
/// machine of `runs/2026-12-04-16core`) still shows where a loss goes: CPU burned while
/// waiting, or sleeps and wake-ups (voluntary context switches).
#[cfg(unix)]
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    /// User CPU time, nanoseconds.
    pub user_ns: u64,
    /// System CPU time, nanoseconds.
    pub sys_ns: u64,
    /// Voluntary context switches: a thread blocked (a futex wait, a yield that switched).
    pub voluntary: u64,
    /// Involuntary context switches: a thread was preempted.
    pub involuntary: u64,
}

#[cfg(unix)]
impl Usage {
    /// The process's usage so far.
    pub fn now() -> Usage {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `getrusage` writes a `rusage` into the pointer it is given, which points to a
        // zeroed one of the right size; RUSAGE_SELF is a valid `who`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
        assert_eq!(rc, 0, "getrusage failed");
        // SAFETY: zeroed is a valid `rusage` (plain integers), and getrusage filled it in.
        let usage = unsafe { usage.assume_init() };
        let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        Usage {
            user_ns: ns(usage.ru_utime),
            sys_ns: ns(usage.ru_stime),
            voluntary: usage.ru_nvcsw as u64,
            involuntary: usage.ru_nivcsw as u64,
        }
    }

    /// What was used since `earlier`, as one line per `per` values: CPU (user + system, and
    /// the system share) and context switches.
    pub fn since(self, earlier: Usage, per: u64) -> String {
        let per = per.max(1) as f64;
        let user = self.user_ns.saturating_sub(earlier.user_ns) as f64;
        let sys = self.sys_ns.saturating_sub(earlier.sys_ns) as f64;
        let vol = self.voluntary.saturating_sub(earlier.voluntary) as f64;
        let invol = self.involuntary.saturating_sub(earlier.involuntary) as f64;
        format!(
            "cpu {:.1} ns/value (sys {:.1}), voluntary switches {:.4}/value ({}), involuntary {:.4}/value ({})",
            (user + sys) / per,
            sys / per,
            vol / per,
            vol,
            invol / per,
            invol
        )
    }
}
