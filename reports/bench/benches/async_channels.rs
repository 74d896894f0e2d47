//! Async channels on a 2-worker tokio runtime: berth (`send_async` / `recv_async`, and the
//! exclusive `mpsc::Receiver::recv_many_async`) beside tokio::sync::mpsc, flume (async) and
//! async-channel, in one run.
//!
//! Shapes (tasks spawned per iteration on one runtime built once per benchmark, which is what
//! async users do; the runtime's threads are reused): `spsc` (1 producer task, 1 consumer),
//! `mpsc4` (4 producers), `mpsc40` (40 producers: fan-in), each moving `MSGS` `u64`s through
//! `bounded(1024)` or `unbounded`; the consumer checks the count and the checksum. berth's
//! consumer runs three ways: `recv_async` one at a time (`berth`), and `recv_many_async` with
//! limit 1 and 32 (`berth_many1`, `berth_many32`); tokio's consumer likewise (`tokio` is `recv`,
//! `tokio_many1` / `tokio_many32` are `recv_many` with 1 and 32).
//!
//! Default budget: criterion's default times (3 s warm-up, 5 s measurement), sample size 20;
//! `BENCH_BUDGET=quick` or `smoke`: sample size 10 and the short times of `berth_bench::Budget`.

use berth_bench::Budget;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::future::Future;
use std::pin::Pin;

const MSGS: u64 = 100_000;
const SUM: u64 = MSGS * (MSGS - 1) / 2;

type Task = Pin<Box<dyn Future<Output = u64> + Send>>;

/// Producer futures (values split evenly across `producers`) and one consumer future that
/// returns (count, sum) packed: it asserts them itself.
struct Plan {
    producers: Vec<Task>,
    consumer: Task,
}

fn ranges(producers: u64) -> impl Iterator<Item = std::ops::Range<u64>> {
    let per = MSGS / producers;
    (0..producers).map(move |p| {
        p * per..if p + 1 == producers {
            MSGS
        } else {
            (p + 1) * per
        }
    })
}

/// `many`: 0 for `recv_async` one at a time, else `recv_many_async` with that limit.
fn berth_plan(producers: u64, bounded: bool, many: usize) -> Plan {
    let (tx, mut rx) = if bounded {
        berth::channel::mpsc::bounded(1024)
    } else {
        berth::channel::mpsc::unbounded()
    };
    let ps = ranges(producers)
        .map(|r| {
            let tx = tx.clone();
            Box::pin(async move {
                for i in r {
                    tx.send_async(i).await.unwrap();
                }
                0u64
            }) as Task
        })
        .collect();
    drop(tx);
    let consumer = Box::pin(async move {
        let (mut n, mut sum) = (0u64, 0u64);
        if many > 0 {
            let mut buf = Vec::with_capacity(many);
            while rx.recv_many_async(&mut buf, many).await.is_ok() {
                n += buf.len() as u64;
                sum += buf.drain(..).sum::<u64>();
            }
        } else {
            while let Ok(v) = rx.recv_async().await {
                n += 1;
                sum += v;
            }
        }
        assert_eq!((n, sum), (MSGS, SUM));
        n
    }) as Task;
    Plan {
        producers: ps,
        consumer,
    }
}

/// `many`: 0 for `recv` one at a time, else `recv_many` with that limit.
fn tokio_plan(producers: u64, bounded: bool, many: usize) -> Plan {
    macro_rules! plan {
        ($tx:ident, $rx:ident, $send:expr) => {{
            let ps = ranges(producers)
                .map(|r| {
                    let $tx = $tx.clone();
                    Box::pin(async move {
                        for i in r {
                            $send(&$tx, i).await;
                        }
                        0u64
                    }) as Task
                })
                .collect();
            drop($tx);
            let consumer = Box::pin(async move {
                let (mut n, mut sum) = (0u64, 0u64);
                if many > 0 {
                    let mut buf = Vec::with_capacity(many);
                    while $rx.recv_many(&mut buf, many).await > 0 {
                        n += buf.len() as u64;
                        sum += buf.drain(..).sum::<u64>();
                    }
                } else {
                    while let Some(v) = $rx.recv().await {
                        n += 1;
                        sum += v;
                    }
                }
                assert_eq!((n, sum), (MSGS, SUM));
                n
            }) as Task;
            Plan {
                producers: ps,
                consumer,
            }
        }};
    }
    if bounded {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1024);
        plan!(tx, rx, |t: &tokio::sync::mpsc::Sender<u64>, i| {
            let t = t.clone();
            async move { t.send(i).await.unwrap() }
        })
    } else {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
        plan!(tx, rx, |t: &tokio::sync::mpsc::UnboundedSender<u64>, i| {
            let r = t.send(i);
            async move { r.unwrap() }
        })
    }
}

fn flume_plan(producers: u64, bounded: bool) -> Plan {
    let (tx, rx) = if bounded {
        flume::bounded(1024)
    } else {
        flume::unbounded()
    };
    let ps = ranges(producers)
        .map(|r| {
            let tx = tx.clone();
            Box::pin(async move {
                for i in r {
                    tx.send_async(i).await.unwrap();
                }
                0u64
            }) as Task
        })
        .collect();
    drop(tx);
    let consumer = Box::pin(async move {
        let (mut n, mut sum) = (0u64, 0u64);
        while let Ok(v) = rx.recv_async().await {
            n += 1;
            sum += v;
        }
        assert_eq!((n, sum), (MSGS, SUM));
        n
    }) as Task;
    Plan {
        producers: ps,
        consumer,
    }
}

fn async_channel_plan(producers: u64, bounded: bool) -> Plan {
    let (tx, rx) = if bounded {
        async_channel::bounded(1024)
    } else {
        async_channel::unbounded()
    };
    let ps = ranges(producers)
        .map(|r| {
            let tx = tx.clone();
            Box::pin(async move {
                for i in r {
                    tx.send(i).await.unwrap();
                }
                0u64
            }) as Task
        })
        .collect();
    drop(tx);
    let consumer = Box::pin(async move {
        let (mut n, mut sum) = (0u64, 0u64);
        while let Ok(v) = rx.recv().await {
            n += 1;
            sum += v;
        }
        assert_eq!((n, sum), (MSGS, SUM));
        n
    }) as Task;
    Plan {
        producers: ps,
        consumer,
    }
}

fn run(rt: &tokio::runtime::Runtime, plan: Plan) {
    rt.block_on(async move {
        let consumer = tokio::spawn(plan.consumer);
        let ps: Vec<_> = plan.producers.into_iter().map(tokio::spawn).collect();
        for p in ps {
            p.await.unwrap();
        }
        assert_eq!(consumer.await.unwrap(), MSGS);
    });
}

fn benches(c: &mut Criterion) {
    let samples = Budget::from_env().pick(10, 10, 20);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    for (shape, producers) in [("spsc", 1u64), ("mpsc4", 4), ("mpsc40", 40)] {
        for (flavor, bounded) in [("b1024", true), ("unbounded", false)] {
            let mut g = c.benchmark_group(format!("async_{flavor}_{shape}"));
            g.throughput(Throughput::Elements(MSGS));
            g.sample_size(samples);
            g.bench_function("berth", |b| {
                b.iter(|| run(&rt, berth_plan(producers, bounded, 0)))
            });
            g.bench_function("berth_many1", |b| {
                b.iter(|| run(&rt, berth_plan(producers, bounded, 1)))
            });
            g.bench_function("berth_many32", |b| {
                b.iter(|| run(&rt, berth_plan(producers, bounded, 32)))
            });
            g.bench_function("tokio", |b| {
                b.iter(|| run(&rt, tokio_plan(producers, bounded, 0)))
            });
            g.bench_function("tokio_many1", |b| {
                b.iter(|| run(&rt, tokio_plan(producers, bounded, 1)))
            });
            g.bench_function("tokio_many32", |b| {
                b.iter(|| run(&rt, tokio_plan(producers, bounded, 32)))
            });
            g.bench_function("flume", |b| {
                b.iter(|| run(&rt, flume_plan(producers, bounded)))
            });
            g.bench_function("async_channel", |b| {
                b.iter(|| run(&rt, async_channel_plan(producers, bounded)))
            });
            g.finish();
        }
    }
}

criterion_group! {
    name = async_channels;
    config = Budget::from_env().criterion_default_times(10);
    targets = benches
}
criterion_main!(async_channels);
