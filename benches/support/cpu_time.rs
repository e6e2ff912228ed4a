//! A criterion measurement of the benchmark thread's CPU time.
//!
//! On a machine shared with other work, wall-clock time includes every
//! moment the thread waits for a core, which dwarfs a few nanoseconds of
//! difference between two codecs. The thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) counts only the time it ran. On platforms
//! other than 64-bit Linux it falls back to wall-clock time.

use std::time::{Duration, Instant};

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

/// The benchmark thread's CPU time, in nanoseconds.
pub(crate) struct CpuTime;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod clock {
    use std::time::Duration;

    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }

    /// `CLOCK_THREAD_CPUTIME_ID` in `<time.h>` on Linux.
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }

    /// The calling thread's CPU time since it started.
    pub(super) fn now() -> Duration {
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `struct timespec` (same layout:
        // two 64-bit fields on 64-bit Linux) that lives across the call;
        // the clock id is a constant the kernel always supports.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
}

/// The start of a measurement.
pub(crate) enum Start {
    /// CPU time of the thread.
    #[cfg_attr(
        not(all(target_os = "linux", target_pointer_width = "64")),
        allow(dead_code)
    )]
    Cpu(Duration),
    /// Wall-clock time, where the CPU clock is not available.
    #[cfg_attr(
        all(target_os = "linux", target_pointer_width = "64"),
        allow(dead_code)
    )]
    Wall(Instant),
}

impl Measurement for CpuTime {
    type Intermediate = Start;
    type Value = Duration;

    fn start(&self) -> Start {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        return Start::Cpu(clock::now());
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        return Start::Wall(Instant::now());
    }

    fn end(&self, start: Start) -> Duration {
        match start {
            #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
            Start::Cpu(t) => clock::now().saturating_sub(t),
            #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
            Start::Cpu(_) => unreachable!("only started on 64-bit Linux"),
            Start::Wall(t) => t.elapsed(),
        }
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, as for wall-clock time.
        WallTime.formatter()
    }
}

/// Checks that the clock counts work and not waiting: the codec bench calls
/// it first, so `cargo test -p codecbus-benches --bench codec` runs it.
pub(crate) fn check() {
    let m = CpuTime;
    let start = m.start();
    let mut x = 0u64;
    for i in 0..5_000_000u64 {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    assert!(m.end(start) > Duration::ZERO, "no time for work ({x})");
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        let start = m.start();
        std::thread::sleep(Duration::from_millis(50));
        let slept = m.end(start);
        assert!(
            slept < Duration::from_millis(25),
            "{slept:?} counted for a 50 ms sleep"
        );
    }
}
