//! The `select!` macro: crossbeam-channel's grammar over [`Select`](crate::channel::Select).

/// Waits on several channel operations and runs the body of the one that completes.
///
/// The grammar is crossbeam-channel's:
///
/// ```text
/// select! {
///     recv(receiver) -> pattern => body,
///     send(sender, message) -> pattern => body,
///     default => body,             // at most one default: run it if nothing is ready now
///     default(timeout) => body,    // ... or if nothing is ready within `timeout`
/// }
/// ```
///
/// - `receiver` / `sender` are expressions of type `Receiver<T>` / `Sender<T>` or references
///   to them, evaluated once, before waiting. For a receive, the pattern binds
///   `Result<T, RecvError>`; for a send, `Result<(), SendError<T>>`.
/// - `message` is evaluated only if that send is selected.
/// - A body is an expression followed by a comma, or a block (the comma is then optional).
///   The bodies' values are the macro's value, so all must have one type.
/// - When several operations are ready, one is chosen at random; a disconnected channel's
///   operation is ready and its result is the error.
/// - Without `default`, the macro waits (sleeping on this thread's parker) until one operation
///   completes. Exactly one completes: the others take nothing.
///
/// See [`Select`](crate::channel::Select) for how it waits and what "selected" means for a
/// send on a bounded or rendezvous channel.
///
/// # Examples
///
/// A receive with a timeout:
///
/// ```
/// use berth::channel;
/// use berth::select;
/// use std::time::Duration;
///
/// let (tx, rx) = channel::unbounded::<u32>();
/// let got = select! {
///     recv(rx) -> msg => msg.ok(),
///     default(Duration::from_millis(10)) => None,
/// };
/// assert_eq!(got, None);
/// # drop(tx);
/// ```
///
/// A worker that stops on a signal, with a send that happens only if chosen:
///
/// ```
/// use berth::channel;
/// use berth::select;
/// use std::thread;
///
/// let (jobs_tx, jobs_rx) = channel::bounded::<u64>(4);
/// let (done_tx, done_rx) = channel::bounded::<u64>(4);
/// let (stop_tx, stop_rx) = channel::bounded::<()>(0);
/// let worker = thread::spawn(move || loop {
///     select! {
///         recv(jobs_rx) -> job => {
///             let Ok(job) = job else { break };
///             done_tx.send(job * 2).unwrap();
///         }
///         recv(stop_rx) -> _ => break,
///     }
/// });
/// jobs_tx.send(21).unwrap();
/// assert_eq!(done_rx.recv(), Ok(42));
/// stop_tx.send(()).unwrap();
/// worker.join().unwrap();
/// ```
#[macro_export]
macro_rules! select {
    ($($tokens:tt)*) => {
        $crate::__select_parse!(() () $($tokens)*)
    };
}

/// Normalises the cases of `select!`: `(cases) (default) rest`.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_parse {
    // Done.
    (($($cases:tt)*) ($($default:tt)*)) => {
        $crate::__select_bind!(() ($($default)*) $($cases)*)
    };
    (($($cases:tt)*) ($($default:tt)*) ,) => {
        $crate::__select_bind!(() ($($default)*) $($cases)*)
    };

    // recv(r) -> pat => body
    (($($cases:tt)*) $default:tt recv($r:expr) -> $res:pat => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [recv ($r) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt recv($r:expr) -> $res:pat => $body:block $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [recv ($r) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt recv($r:expr) -> $res:pat => $body:expr, $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [recv ($r) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt recv($r:expr) -> $res:pat => $body:expr) => {
        $crate::__select_parse!(($($cases)* [recv ($r) ($res) ($body)]) $default)
    };

    // send(s, msg) -> pat => body
    (($($cases:tt)*) $default:tt send($s:expr, $m:expr) -> $res:pat => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [send ($s) ($m) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt send($s:expr, $m:expr) -> $res:pat => $body:block $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [send ($s) ($m) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt send($s:expr, $m:expr) -> $res:pat => $body:expr, $($rest:tt)*) => {
        $crate::__select_parse!(($($cases)* [send ($s) ($m) ($res) ($body)]) $default $($rest)*)
    };
    (($($cases:tt)*) $default:tt send($s:expr, $m:expr) -> $res:pat => $body:expr) => {
        $crate::__select_parse!(($($cases)* [send ($s) ($m) ($res) ($body)]) $default)
    };

    // default => body, default(timeout) => body (at most one)
    ($cases:tt () default => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!($cases ([now] ($body)) $($rest)*)
    };
    ($cases:tt () default => $body:block $($rest:tt)*) => {
        $crate::__select_parse!($cases ([now] ($body)) $($rest)*)
    };
    ($cases:tt () default => $body:expr, $($rest:tt)*) => {
        $crate::__select_parse!($cases ([now] ($body)) $($rest)*)
    };
    ($cases:tt () default => $body:expr) => {
        $crate::__select_parse!($cases ([now] ($body)))
    };
    ($cases:tt () default($t:expr) => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!($cases ([timeout ($t)] ($body)) $($rest)*)
    };
    ($cases:tt () default($t:expr) => $body:block $($rest:tt)*) => {
        $crate::__select_parse!($cases ([timeout ($t)] ($body)) $($rest)*)
    };
    ($cases:tt () default($t:expr) => $body:expr, $($rest:tt)*) => {
        $crate::__select_parse!($cases ([timeout ($t)] ($body)) $($rest)*)
    };
    ($cases:tt () default($t:expr) => $body:expr) => {
        $crate::__select_parse!($cases ([timeout ($t)] ($body)))
    };
    ($cases:tt ($($default:tt)+) default $($rest:tt)*) => {
        ::core::compile_error!("select!: at most one `default` case")
    };

    ($cases:tt $default:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "select!: expected `recv(r) -> pat => body`, `send(s, msg) -> pat => body`, ",
            "`default => body` or `default(timeout) => body`, found: ",
            ::core::stringify!($($rest)+)
        ))
    };
}

/// Evaluates each handle once, keeping it (and any temporary it borrows) alive for the whole
/// select: `(bound cases) (default) cases to bind`.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_bind {
    (($($bound:tt)*) $default:tt [recv ($r:expr) ($res:pat) ($body:expr)] $($rest:tt)*) => {
        match $r {
            ref __berth_handle => {
                let __berth_handle: &$crate::channel::Receiver<_> = __berth_handle;
                // Where the fast path (`__select_try`) puts this case's result.
                let mut __berth_slot = ::core::option::Option::None;
                $crate::__select_bind!(
                    ($($bound)* [recv __berth_handle __berth_slot ($res) ($body)])
                    $default $($rest)*
                )
            }
        }
    };
    (($($bound:tt)*) $default:tt [send ($s:expr) ($m:expr) ($res:pat) ($body:expr)] $($rest:tt)*) => {
        match $s {
            ref __berth_handle => {
                let __berth_handle: &$crate::channel::Sender<_> = __berth_handle;
                let mut __berth_slot =
                    ::core::option::Option::None::<$crate::channel::__SendClaim<'_, _>>;
                $crate::__select_bind!(
                    ($($bound)* [send __berth_handle __berth_slot ($m) ($res) ($body)])
                    $default $($rest)*
                )
            }
        }
    };
    (($($bound:tt)*) $default:tt) => {
        $crate::__select_run!(($($bound)*) $default)
    };
}

/// The fast path, then (if nothing was ready) the `Select`: `(cases) (default)`.
///
/// The fast path tries each case once, from a random start, on the handles themselves (a
/// `try_recv`, or a send's readiness check) and keeps the first result in that case's slot; no
/// `Select` is built and nothing is allocated. No user code runs inside its loop: the bodies
/// run after it, so a `break` or `continue` in a body applies to the caller's loop. If nothing
/// was ready it falls through to the `Select`, which tries again before it waits.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_run {
    (($($case:tt)*) $default:tt) => {{
        let __berth_n: usize = 0 $(+ $crate::__select_one!($case))*;
        let __berth_start = $crate::channel::__select_start(__berth_n);
        let mut __berth_k = 0;
        while __berth_k < __berth_n {
            let __berth_i = (__berth_start + __berth_k) % __berth_n;
            if $crate::__select_try!(__berth_i (0usize) $($case)*) {
                break;
            }
            __berth_k += 1;
        }
        $crate::__select_fast_dispatch!((($($case)*) $default) $($case)*)
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_one {
    ($case:tt) => {
        1usize
    };
}

/// Tries case number `$i` (counting from `$n`), storing its result in its slot: true if ready.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_try {
    ($i:ident ($n:expr) [recv $h:ident $slot:ident $($x:tt)*] $($rest:tt)*) => {
        if $i == $n {
            match $h.try_recv() {
                ::core::result::Result::Ok(__berth_v) => {
                    $slot = ::core::option::Option::Some(::core::result::Result::Ok(__berth_v));
                    true
                }
                ::core::result::Result::Err($crate::channel::TryRecvError::Disconnected) => {
                    $slot = ::core::option::Option::Some(::core::result::Result::Err(
                        $crate::channel::RecvError,
                    ));
                    true
                }
                ::core::result::Result::Err($crate::channel::TryRecvError::Empty) => false,
            }
        } else {
            $crate::__select_try!($i ($n + 1) $($rest)*)
        }
    };
    ($i:ident ($n:expr) [send $h:ident $slot:ident $($x:tt)*] $($rest:tt)*) => {
        if $i == $n {
            $slot = $crate::channel::__select_send_ready($h);
            $slot.is_some()
        } else {
            $crate::__select_try!($i ($n + 1) $($rest)*)
        }
    };
    ($i:ident ($n:expr)) => {
        false
    };
}

/// Runs the body of the case whose slot the fast path filled, or else the `Select`.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_fast_dispatch {
    ($slow:tt [recv $h:ident $slot:ident ($res:pat) ($body:expr)] $($rest:tt)*) => {
        if let ::core::option::Option::Some(__berth_r) = $slot.take() {
            let $res = __berth_r;
            $body
        } else {
            $crate::__select_fast_dispatch!($slow $($rest)*)
        }
    };
    ($slow:tt [send $h:ident $slot:ident ($m:expr) ($res:pat) ($body:expr)] $($rest:tt)*) => {
        if let ::core::option::Option::Some(__berth_claim) = $slot.take() {
            let $res = $crate::channel::__select_send(__berth_claim, $m);
            $body
        } else {
            $crate::__select_fast_dispatch!($slow $($rest)*)
        }
    };
    ((($($case:tt)*) $default:tt)) => {
        $crate::__select_slow!(($($case)*) $default)
    };
}

/// Builds the `Select`, waits, and dispatches on the index.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_slow {
    (($($case:tt)*) ()) => {{
        let mut __berth_sel = $crate::channel::Select::new();
        $( $crate::__select_add!(__berth_sel $case); )*
        let __berth_oper = __berth_sel.select();
        #[allow(unused_mut)]
        let mut __berth_index = __berth_oper.index();
        $crate::__select_dispatch!(__berth_oper __berth_index $($case)*)
    }};
    (($($case:tt)*) ([now] ($dbody:expr))) => {{
        let mut __berth_sel = $crate::channel::Select::new();
        $( $crate::__select_add!(__berth_sel $case); )*
        let __berth_result = __berth_sel.try_select();
        match __berth_result {
            ::core::result::Result::Ok(__berth_oper) => {
                #[allow(unused_mut)]
        let mut __berth_index = __berth_oper.index();
                $crate::__select_dispatch!(__berth_oper __berth_index $($case)*)
            }
            ::core::result::Result::Err(_) => $dbody,
        }
    }};
    (($($case:tt)*) ([timeout ($t:expr)] ($dbody:expr))) => {{
        let __berth_timeout: ::std::time::Duration = $t;
        let mut __berth_sel = $crate::channel::Select::new();
        $( $crate::__select_add!(__berth_sel $case); )*
        let __berth_result = __berth_sel.select_timeout(__berth_timeout);
        match __berth_result {
            ::core::result::Result::Ok(__berth_oper) => {
                #[allow(unused_mut)]
        let mut __berth_index = __berth_oper.index();
                $crate::__select_dispatch!(__berth_oper __berth_index $($case)*)
            }
            ::core::result::Result::Err(_) => $dbody,
        }
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_add {
    ($sel:ident [recv $h:ident $slot:ident $($x:tt)*]) => {
        $sel.recv($h)
    };
    ($sel:ident [send $h:ident $slot:ident $($x:tt)*]) => {
        $sel.send($h)
    };
}

/// Runs the body of case number `index` (cases are numbered in order, as `Select` numbers them).
#[doc(hidden)]
#[macro_export]
macro_rules! __select_dispatch {
    ($oper:ident $index:ident [recv $h:ident $slot:ident ($res:pat) ($body:expr)] $($rest:tt)*) => {
        if $index == 0 {
            let $res = $oper.recv($h);
            $body
        } else {
            $index -= 1;
            $crate::__select_dispatch!($oper $index $($rest)*)
        }
    };
    ($oper:ident $index:ident [send $h:ident $slot:ident ($m:expr) ($res:pat) ($body:expr)] $($rest:tt)*) => {
        if $index == 0 {
            let $res = $oper.__lenient().send($h, $m);
            $body
        } else {
            $index -= 1;
            $crate::__select_dispatch!($oper $index $($rest)*)
        }
    };
    ($oper:ident $index:ident) => {{
        let _ = $index;
        ::core::unreachable!("select!: the selected index is one of the cases")
    }};
}
