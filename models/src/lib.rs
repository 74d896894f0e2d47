//! loom and shuttle models of berth. The models are the tests in `tests/`; they compile to
//! nothing unless the crate is built with `--cfg loom` (`make loom`) or `--cfg shuttle`.
//!
//! The one library item is [`trace`] (under either cfg): the models' own record of what each
//! thread did, printed as a per-thread timeline when an execution fails (`make teach`).

#[cfg(any(loom, shuttle))]
pub mod trace {
    //! What the model's threads did, in the order they did it, printed as a timeline when the
    //! execution fails.
    //!
    //! A model calls [`start`] at the top of its closure (it clears the record of the previous
    //! execution) and [`record`] after each operation it wants a student to see, with the
    //! operation's name and its result. When anything panics in that execution (an assertion,
    //! loom's `deadlock`, a causality violation, shuttle's deadlock), a panic hook prints the
    //! record as one column per thread, rows in the order the operations returned.
    //!
    //! Bookkeeping outside the model: the record is a `std` thread-local, not a modelled
    //! primitive, so recording adds no synchronisation and no schedule point; what the model
    //! checks is unchanged. loom and shuttle run every model thread of one test as a coroutine
    //! on that test's OS thread, so the thread-local is per test even when the harness runs
    //! tests in parallel (a global `Mutex` would mix them). A panic hook rather than a `Drop`
    //! guard: loom's deadlock is raised by whichever model thread blocked last, and a guard on
    //! the main model thread would not always unwind.

    use std::cell::RefCell;
    use std::fmt::{Debug, Write as _};

    /// Width of one thread's column in the printed timeline.
    const COLUMN: usize = 30;

    struct Entry {
        thread: usize,
        name: String,
        op: String,
    }

    #[derive(Default)]
    struct Log {
        active: bool,
        printed: bool,
        entries: Vec<Entry>,
    }

    std::thread_local! {
        static LOG: RefCell<Log> = RefCell::new(Log::default());
    }

    /// The model thread running now: a small number (0 is the model's main thread) and its
    /// label, `tN` or `tN (name)` for a named thread.
    fn current_thread() -> (usize, String) {
        #[cfg(shuttle)]
        let (id, name) = {
            let me = shuttle::thread::current();
            (usize::from(me.id()), me.name().map(str::to_owned))
        };
        #[cfg(all(loom, not(shuttle)))]
        let (id, name) = {
            let me = loom::thread::current();
            // loom's ThreadId prints as `ThreadId(N)` and has no accessor.
            let id = format!("{:?}", me.id())
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(usize::MAX);
            (id, me.name().map(str::to_owned))
        };
        let label = match name {
            Some(name) => format!("t{id} ({name})"),
            None => format!("t{id}"),
        };
        (id, label)
    }

    /// Starts a fresh record for this execution; call it first in the model closure. Installs
    /// the printing panic hook on first use.
    pub fn start() {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                // Only a message is a failure: loom's coroutines (the `generator` crate) and
                // shuttle's teardown unwind with typed payloads in executions that pass.
                let payload = info.payload();
                let failure = payload.is::<&str>() || payload.is::<String>();
                if let Some(timeline) = failure.then(take_timeline).flatten() {
                    eprintln!("{timeline}");
                }
                previous(info);
            }));
        });
        LOG.with(|log| {
            if let Ok(mut log) = log.try_borrow_mut() {
                *log = Log {
                    active: true,
                    ..Log::default()
                };
            }
        });
    }

    /// Records that the current model thread did `op`, with result (or argument) `value`.
    pub fn record(op: &str, value: impl Debug) {
        let (thread, name) = current_thread();
        LOG.with(|log| {
            if let Ok(mut log) = log.try_borrow_mut() {
                if log.active {
                    log.entries.push(Entry {
                        thread,
                        name,
                        op: format!("{op} -> {value:?}"),
                    });
                }
            }
        });
    }

    /// The timeline of this execution, once: later panics of the same execution print nothing.
    fn take_timeline() -> Option<String> {
        LOG.with(|log| {
            let mut log = log.try_borrow_mut().ok()?;
            if !log.active || log.printed {
                return None;
            }
            log.printed = true;
            Some(render(&log.entries))
        })
    }

    fn render(entries: &[Entry]) -> String {
        let mut threads: Vec<usize> = entries.iter().map(|e| e.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        let mut out =
            String::from("\n==== timeline of the failing execution (the model's own record)\n");
        let mut header = format!("{:6}", "");
        for t in &threads {
            let name = entries.iter().find(|e| e.thread == *t).map(|e| &e.name);
            let _ = write!(header, "{:<COLUMN$}", name.map_or("", |n| n.as_str()));
        }
        out.push_str(header.trim_end());
        out.push('\n');
        for (seq, e) in entries.iter().enumerate() {
            let col = threads.iter().position(|&t| t == e.thread).unwrap_or(0);
            let _ = writeln!(
                out,
                "#{seq:<4} {:pad$}t{}: {}",
                "",
                e.thread,
                e.op,
                pad = col * COLUMN
            );
        }
        if entries.is_empty() {
            out.push_str("(nothing recorded before the failure)\n");
        }
        out.push_str("==== end of timeline (threads: t0 is the model's main thread)\n");
        out
    }
}
