//! Probe: what one `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` costs the caller, with another
//! thread of the process spinning on the other CPU (the barrier interrupts it) and with none.
//! `membarrier_cost [CALLS]` prints nanoseconds per call for both (Linux only).
#[cfg(target_os = "linux")]
fn main() {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::time::Instant;
    const REGISTER: libc::c_long = 1 << 4; // MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED
    const BARRIER: libc::c_long = 1 << 3; // MEMBARRIER_CMD_PRIVATE_EXPEDITED
    let calls: u32 = std::env::args()
        .nth(1)
        .map_or(20_000, |a| a.parse().expect("CALLS is a number"));
    let barrier = || {
        // SAFETY: membarrier takes two integers and touches no memory of ours.
        let r = unsafe { libc::syscall(libc::SYS_membarrier, BARRIER, 0, 0) };
        assert_eq!(r, 0, "membarrier: {}", std::io::Error::last_os_error());
    };
    let time = |label: &str| {
        let start = Instant::now();
        for _ in 0..calls {
            barrier();
        }
        let ns = start.elapsed().as_nanos() / u128::from(calls);
        println!("{label}: {ns} ns per call");
    };
    // SAFETY: as above.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, REGISTER, 0, 0) };
    assert_eq!(r, 0, "register: {}", std::io::Error::last_os_error());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Relaxed) {
                std::hint::spin_loop();
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(10));
        time("another thread spinning");
        stop.store(true, Relaxed);
    });
    time("no other thread running");
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("membarrier_cost: Linux only");
}
