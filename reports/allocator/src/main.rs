//! Does the allocator make `berth::spsc` block?
//!
//! Moves `--nodes` nodes (default 1,000,000) of `SIZE` payload bytes from a producer thread to a
//! consumer thread through `berth::spsc`, in one of two modes:
//!
//! - `malloc`: the producer allocates each node (`Box<[u8; SIZE]>`, i.e. the system `malloc`),
//!   fills it and pushes the box through `berth::spsc::channel::<Box<[u8; SIZE]>>(capacity)`;
//!   the consumer pops it, reads it and drops it, so every node is freed on the other thread;
//! - `pool`: `berth::spsc::pool(capacity, ..)` allocates `capacity + 2` nodes before the threads
//!   start; the producer fills a recycled node in place (`send_with`) and the consumer reads it
//!   in place (`recv_with`), which hands it back through the pool's second ring.
//!
//! Every node gets its sequence number written into its first and last 8 bytes, and every byte
//! in between is set to the sequence number's low byte; the consumer sums both copies and checks
//! the middle byte, and the run fails (exit 1) unless both sums are `N(N-1)/2` and no byte is off.
//!
//! `--wait block` (the default) uses the blocking `push`/`pop` (spin, yield, then park on a futex
//! when the ring is full or empty); `--wait spin` (malloc mode only) uses `try_push`/`try_pop` in
//! a busy loop (`spin_loop` hints; a `sched_yield` only after 65,536 failed tries in a row, a
//! safety valve for a loaded machine), so the ring itself never calls `futex`: any futex call
//! left in the transfer comes from the allocator (or from thread start and join). This is the
//! waiting of the seed's queue, which spins.
//!
//! `--pin` pins the producer and the consumer to the first and second CPU the process may run on
//! (`sched_setaffinity` from inside each thread, before its loop), so they never share a CPU.
//!
//! Each thread samples `sched_getcpu()` with a timestamp every 256 nodes (into a vector reserved
//! before its loop, so the sampling never allocates). The report gives each thread's CPU
//! histogram and migrations, and `same_cpu_fraction`: for each producer sample, whether the
//! consumer's sample nearest in time was on the same CPU. Two threads that share one CPU take
//! turns and cannot contend for a lock the way two threads running at once do.
//!
//! Measured around the transfer (from just before the two threads are spawned to just after both
//! are joined; the ring or pool is made before): wall time, and `getrusage(RUSAGE_SELF)`
//! differences (voluntary and involuntary context switches, user and system CPU time). Each
//! thread also reports its own `getrusage(RUSAGE_THREAD)` difference around its loop.
//!
//! Before the transfer, a probe on the main thread mallocs and frees 20 64-byte blocks and reports
//! how much `mallinfo2().fsmblks` (bytes in fastbins) grew: with glibc's defaults about 13 of the
//! 80-byte chunks (20 minus the 7 the tcache keeps) land in fastbins (1040 bytes); with
//! `glibc.malloc.mxfast=0` none do (0); with `glibc.malloc.tcache_count=0` all 20 do (1600). This
//! shows whether `GLIBC_TUNABLES` took effect (glibc ignores a misspelt tunable silently).
//!
//! Prints one JSON object on one line to stdout.
//!
//! Usage: `berth-allocator-report <malloc|pool> <SIZE> [--nodes N] [--capacity C]
//! [--wait block|spin]`, SIZE one of 64, 120, 128, 512, 1024.

use std::hint::black_box;
use std::process::ExitCode;
use std::thread;
use std::time::Instant;

use berth::spsc::{TryPopError, TryPushError};

/// `RUSAGE_THREAD` (Linux), spelled out so the crate builds against any libc 0.2.
const RUSAGE_THREAD: libc::c_int = 1;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Malloc,
    Pool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wait {
    Block,
    Spin,
}

struct Args {
    mode: Mode,
    size: usize,
    nodes: u64,
    capacity: usize,
    wait: Wait,
    pin: bool,
}

/// The parts of a `struct rusage` this report uses.
#[derive(Clone, Copy, Default, Debug)]
struct Usage {
    nvcsw: i64,
    nivcsw: i64,
    utime_us: i64,
    stime_us: i64,
}

impl Usage {
    fn now(who: libc::c_int) -> Usage {
        // SAFETY: `getrusage` writes a whole `struct rusage` into the zeroed one we pass.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(who, &mut ru), 0, "getrusage failed");
            ru
        };
        // time_t and suseconds_t are i64 here but not on every target.
        #[allow(clippy::unnecessary_cast)]
        let us = |tv: libc::timeval| tv.tv_sec as i64 * 1_000_000 + tv.tv_usec as i64;
        Usage {
            nvcsw: ru.ru_nvcsw as i64,
            nivcsw: ru.ru_nivcsw as i64,
            utime_us: us(ru.ru_utime),
            stime_us: us(ru.ru_stime),
        }
    }

    fn since(self, before: Usage) -> Usage {
        Usage {
            nvcsw: self.nvcsw - before.nvcsw,
            nivcsw: self.nivcsw - before.nivcsw,
            utime_us: self.utime_us - before.utime_us,
            stime_us: self.stime_us - before.stime_us,
        }
    }

    fn json(&self) -> String {
        format!(
            "{{\"nvcsw\":{},\"nivcsw\":{},\"utime_us\":{},\"stime_us\":{}}}",
            self.nvcsw, self.nivcsw, self.utime_us, self.stime_us
        )
    }
}

/// What the consumer saw.
#[derive(Default)]
struct Received {
    count: u64,
    sum_head: u64,
    sum_tail: u64,
    bad_middle: u64,
}

impl Received {
    #[inline]
    fn take<const S: usize>(&mut self, node: &[u8; S]) {
        let head = u64::from_le_bytes(node[..8].try_into().expect("8 bytes"));
        let tail = u64::from_le_bytes(node[S - 8..].try_into().expect("8 bytes"));
        self.count += 1;
        self.sum_head = self.sum_head.wrapping_add(head);
        self.sum_tail = self.sum_tail.wrapping_add(tail);
        self.bad_middle += u64::from(node[S / 2] != head as u8);
    }
}

/// Writes `seq` into a node: every byte = low byte of `seq`, then `seq` into the first and last 8.
///
/// # Safety
///
/// `p` must be valid for writes of `S` bytes, `S >= 16`.
#[inline]
unsafe fn fill_raw<const S: usize>(p: *mut u8, seq: u64) {
    // SAFETY: the caller guarantees `S` writable bytes at `p`, and `S >= 16`.
    unsafe {
        std::ptr::write_bytes(p, seq as u8, S);
        std::ptr::write_unaligned(p.cast::<u64>(), seq.to_le());
        std::ptr::write_unaligned(p.add(S - 8).cast::<u64>(), seq.to_le());
    }
}

/// Spins; yields only after 65,536 failed tries in a row (never parks, never calls `futex`).
#[inline]
fn spin_wait(spins: &mut u32) {
    std::hint::spin_loop();
    *spins += 1;
    if *spins >= 1 << 16 {
        *spins = 0;
        thread::yield_now();
    }
}

/// Where each side runs: `(start, producer CPU, consumer CPU)`.
#[derive(Clone, Copy)]
struct Placement {
    start: Instant,
    producer: Option<usize>,
    consumer: Option<usize>,
}

/// One `sched_getcpu()` sample: nanoseconds since the transfer's start, CPU.
type Sample = (u64, u32);

/// Sample every `1 << SAMPLE_SHIFT` nodes.
const SAMPLE_SHIFT: u32 = 8;

/// What one thread measured about itself.
struct ThreadStats {
    usage: Usage,
    samples: Vec<Sample>,
}

/// Per-thread bookkeeping: pins (if asked), then records usage and CPU samples around the loop.
struct Meter {
    start: Instant,
    before: Usage,
    samples: Vec<Sample>,
}

impl Meter {
    fn begin(start: Instant, pin_to: Option<usize>, nodes: u64) -> Meter {
        if let Some(cpu) = pin_to {
            pin_current_thread(cpu);
        }
        let samples = Vec::with_capacity((nodes >> SAMPLE_SHIFT) as usize + 2);
        let mut m = Meter {
            start,
            before: Usage::now(RUSAGE_THREAD),
            samples,
        };
        m.sample();
        m
    }

    #[inline]
    fn sample(&mut self) {
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        if self.samples.len() < self.samples.capacity() {
            self.samples
                .push((self.start.elapsed().as_nanos() as u64, cpu.max(0) as u32));
        }
    }

    #[inline]
    fn tick(&mut self, i: u64) {
        if i & ((1 << SAMPLE_SHIFT) - 1) == 0 {
            self.sample();
        }
    }

    fn end(mut self) -> ThreadStats {
        let usage = Usage::now(RUSAGE_THREAD).since(self.before);
        self.sample();
        ThreadStats {
            usage,
            samples: self.samples,
        }
    }
}

fn pin_current_thread(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET and sched_setaffinity only touch it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            panic!("sched_setaffinity to CPU {cpu} failed");
        }
    }
}

/// The first two CPUs this process may run on.
fn two_cpus() -> Option<(usize, usize)> {
    // SAFETY: sched_getaffinity fills the zeroed set; CPU_ISSET reads it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    let mut cpus = (0..libc::CPU_SETSIZE as usize).filter(|&c| {
        // SAFETY: CPU_ISSET only reads the set; `c` is below CPU_SETSIZE.
        unsafe { libc::CPU_ISSET(c, &set) }
    });
    Some((cpus.next()?, cpus.next()?))
}

struct Transfer {
    received: Received,
    producer: ThreadStats,
    consumer: ThreadStats,
}

fn run_malloc<const S: usize>(
    nodes: u64,
    capacity: usize,
    wait: Wait,
    place: Placement,
) -> Transfer {
    let (mut tx, mut rx) = berth::spsc::channel::<Box<[u8; S]>>(capacity);
    let producer = thread::spawn(move || {
        let mut meter = Meter::begin(place.start, place.producer, nodes);
        for seq in 0..nodes {
            meter.tick(seq);
            // `new_uninit` is `malloc`, not `calloc` (glibc's calloc bypasses the tcache).
            let mut node = Box::<[u8; S]>::new_uninit();
            // SAFETY: the box holds `S` bytes; `fill_raw` initialises all of them.
            let node = unsafe {
                fill_raw::<S>(node.as_mut_ptr().cast::<u8>(), seq);
                node.assume_init()
            };
            match wait {
                Wait::Block => {
                    if tx.push(node).is_err() {
                        panic!("consumer gone");
                    }
                }
                Wait::Spin => {
                    let mut node = node;
                    let mut spins = 0;
                    loop {
                        match tx.try_push(node) {
                            Ok(()) => break,
                            Err(TryPushError::Full(back)) => {
                                node = back;
                                spin_wait(&mut spins);
                            }
                            Err(TryPushError::Disconnected(_)) => panic!("consumer gone"),
                        }
                    }
                }
            }
        }
        meter.end()
    });
    let consumer = thread::spawn(move || {
        let mut meter = Meter::begin(place.start, place.consumer, nodes);
        let mut got = Received::default();
        match wait {
            Wait::Block => {
                while let Ok(node) = rx.pop() {
                    meter.tick(got.count);
                    got.take(&node);
                    drop(node); // free() on the consumer's thread
                }
            }
            Wait::Spin => {
                let mut spins = 0;
                loop {
                    match rx.try_pop() {
                        Ok(node) => {
                            spins = 0;
                            meter.tick(got.count);
                            got.take(&node);
                            drop(node);
                        }
                        Err(TryPopError::Empty) => spin_wait(&mut spins),
                        Err(TryPopError::Disconnected) => break,
                    }
                }
            }
        }
        (got, meter.end())
    });
    let producer = producer.join().expect("producer panicked");
    let (received, consumer) = consumer.join().expect("consumer panicked");
    Transfer {
        received,
        producer,
        consumer,
    }
}

fn run_pool<const S: usize>(nodes: u64, capacity: usize, place: Placement) -> Transfer {
    let (mut tx, mut rx) = berth::spsc::pool(capacity, || [0u8; S]);
    let producer = thread::spawn(move || {
        let mut meter = Meter::begin(place.start, place.producer, nodes);
        for seq in 0..nodes {
            meter.tick(seq);
            tx.send_with(|node| {
                // SAFETY: `node` is `S` initialised, writable bytes.
                unsafe { fill_raw::<S>(node.as_mut_ptr(), seq) }
            })
            .expect("receiver gone");
        }
        meter.end()
    });
    let consumer = thread::spawn(move || {
        let mut meter = Meter::begin(place.start, place.consumer, nodes);
        let mut got = Received::default();
        loop {
            meter.tick(got.count);
            if rx.recv_with(|node| got.take(node)).is_err() {
                break;
            }
        }
        (got, meter.end())
    });
    let producer = producer.join().expect("producer panicked");
    let (received, consumer) = consumer.join().expect("consumer panicked");
    Transfer {
        received,
        producer,
        consumer,
    }
}

/// Bytes added to fastbins by freeing 20 64-byte (80-byte chunk) blocks on this thread (see the
/// module docs): 0 with fastbins off, 20 * 80 = 1600 with the tcache off, less with both on.
fn fastbin_probe() -> i64 {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let before = unsafe { libc::mallinfo2() }.fsmblks as i64;
    let blocks: Vec<*mut libc::c_void> = (0..20)
        // SAFETY: plain malloc; each pointer is freed once below.
        .map(|_| black_box(unsafe { libc::malloc(64) }))
        .collect();
    for &b in &blocks {
        // SAFETY: allocated above by malloc, freed exactly once.
        unsafe { libc::free(black_box(b)) };
    }
    // SAFETY: as above.
    let after = unsafe { libc::mallinfo2() }.fsmblks as i64;
    after - before
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = match it.next().as_deref() {
        Some("malloc") => Mode::Malloc,
        Some("pool") => Mode::Pool,
        other => return Err(format!("mode must be malloc or pool, got {other:?}")),
    };
    let size: usize = it
        .next()
        .ok_or("missing SIZE")?
        .parse()
        .map_err(|e| format!("SIZE: {e}"))?;
    let mut args = Args {
        mode,
        size,
        nodes: 1_000_000,
        capacity: 1024,
        wait: Wait::Block,
        pin: false,
    };
    while let Some(flag) = it.next() {
        if flag == "--pin" {
            args.pin = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--nodes" => args.nodes = value.parse().map_err(|e| format!("--nodes: {e}"))?,
            "--capacity" => {
                args.capacity = value.parse().map_err(|e| format!("--capacity: {e}"))?
            }
            "--wait" => {
                args.wait = match value.as_str() {
                    "block" => Wait::Block,
                    "spin" => Wait::Spin,
                    v => return Err(format!("--wait must be block or spin, got {v}")),
                }
            }
            f => return Err(format!("unknown flag {f}")),
        }
    }
    if args.mode == Mode::Pool && args.wait == Wait::Spin {
        return Err("--wait spin is malloc mode only (the pool has no try_ operations)".into());
    }
    if args.capacity == 0 {
        return Err("--capacity must be at least 1".into());
    }
    Ok(args)
}

/// JSON for one thread: usage, CPU histogram, migrations.
fn thread_json(t: &ThreadStats) -> String {
    let mut hist = std::collections::BTreeMap::<u32, usize>::new();
    for &(_, cpu) in &t.samples {
        *hist.entry(cpu).or_default() += 1;
    }
    let migrations = t.samples.windows(2).filter(|w| w[0].1 != w[1].1).count();
    let hist = hist
        .iter()
        .map(|(c, n)| format!("\"{c}\":{n}"))
        .collect::<Vec<_>>()
        .join(",");
    let u = &t.usage;
    format!(
        "{{\"nvcsw\":{},\"nivcsw\":{},\"utime_us\":{},\"stime_us\":{},\
         \"cpu_samples\":{{{hist}}},\"migrations\":{migrations}}}",
        u.nvcsw, u.nivcsw, u.utime_us, u.stime_us
    )
}

/// For each producer sample, whether the consumer's sample nearest in time was on the same CPU.
fn same_cpu_fraction(p: &[Sample], c: &[Sample]) -> f64 {
    if p.is_empty() || c.is_empty() {
        return 0.0;
    }
    let mut j = 0;
    let mut same = 0usize;
    for &(t, cpu) in p {
        while j + 1 < c.len() && c[j + 1].0 <= t {
            j += 1;
        }
        let nearest = if j + 1 < c.len() && c[j + 1].0.abs_diff(t) < c[j].0.abs_diff(t) {
            c[j + 1]
        } else {
            c[j]
        };
        same += usize::from(nearest.1 == cpu);
    }
    same as f64 / p.len() as f64
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("berth-allocator-report: {e}");
            eprintln!(
                "usage: berth-allocator-report <malloc|pool> <64|120|128|512|1024> \
                 [--nodes N] [--capacity C] [--wait block|spin] [--pin]"
            );
            return ExitCode::from(2);
        }
    };
    let probe = fastbin_probe();
    let (pin_p, pin_c) = if args.pin {
        match two_cpus() {
            Some((a, b)) => (Some(a), Some(b)),
            None => {
                eprintln!("berth-allocator-report: --pin needs two CPUs");
                return ExitCode::from(2);
            }
        }
    } else {
        (None, None)
    };

    macro_rules! dispatch {
        ($($s:literal),*) => {
            match args.size {
                $($s => {
                    let start_usage = Usage::now(libc::RUSAGE_SELF);
                    let start = Instant::now();
                    let place = Placement { start, producer: pin_p, consumer: pin_c };
                    let t = match args.mode {
                        Mode::Malloc => {
                            run_malloc::<$s>(args.nodes, args.capacity, args.wait, place)
                        }
                        Mode::Pool => run_pool::<$s>(args.nodes, args.capacity, place),
                    };
                    let wall = start.elapsed();
                    (t, wall, Usage::now(libc::RUSAGE_SELF).since(start_usage))
                })*
                s => {
                    eprintln!("berth-allocator-report: SIZE {s} not compiled in (one of {})",
                        [$($s),*].map(|s: usize| s.to_string()).join(", "));
                    return ExitCode::from(2);
                }
            }
        };
    }
    let (t, wall, usage) = dispatch!(64, 120, 128, 512, 1024);

    let n = args.nodes;
    let expected = if n == 0 {
        0
    } else {
        (u128::from(n) * u128::from(n - 1) / 2) as u64
    };
    let r = &t.received;
    let ok = r.count == n && r.sum_head == expected && r.sum_tail == expected && r.bad_middle == 0;
    println!(
        "{{\"mode\":\"{}\",\"size\":{},\"nodes\":{},\"capacity\":{},\"wait\":\"{}\",\
         \"pin\":{},\"parker\":\"{}\",\"glibc_tunables\":\"{}\",\"probe_fastbin_bytes\":{},\
         \"received\":{},\"sum\":{},\"expected_sum\":{},\"sum_ok\":{},\
         \"wall_ns\":{},\"self\":{},\"producer\":{},\"consumer\":{},\"same_cpu_fraction\":{:.4}}}",
        match args.mode {
            Mode::Malloc => "malloc",
            Mode::Pool => "pool",
        },
        args.size,
        n,
        args.capacity,
        match args.wait {
            Wait::Block => "block",
            Wait::Spin => "spin",
        },
        args.pin,
        berth::park::PARKER,
        std::env::var("GLIBC_TUNABLES")
            .unwrap_or_default()
            .replace(['"', '\\'], "?"),
        probe,
        r.count,
        r.sum_head,
        expected,
        ok,
        wall.as_nanos(),
        usage.json(),
        thread_json(&t.producer),
        thread_json(&t.consumer),
        same_cpu_fraction(&t.producer.samples, &t.consumer.samples),
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "berth-allocator-report: check failed: received {} of {n}, sums {} and {} \
             (expected {expected}), {} bad middle bytes",
            r.count, r.sum_head, r.sum_tail, r.bad_middle
        );
        ExitCode::FAILURE
    }
}
