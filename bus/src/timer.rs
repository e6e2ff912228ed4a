// Request timeouts on recycled `Sleep`s.
//
// Why: arming a fresh tokio timer inserts an entry into the timer wheel and
// removes it again when the reply comes first, which costs about as much
// as the rest of a local request/reply round trip. Re-arming a registered
// `Sleep` to a *later* deadline is a single atomic update in tokio (the
// wheel entry is moved lazily, only if it fires early). Requests with the
// usual fixed timeout always move the deadline later, so each thread keeps
// a few `Sleep`s and every request borrows one.
//
// A recycled `Sleep` stays registered until its deadline, when it wakes the
// task that last used it once (a spurious, harmless wakeup) and is moved
// further out lazily by the next request. `Sleep`s are only reused on the
// runtime that created them.

use std::cell::RefCell;
use std::pin::Pin;
use std::time::Duration;

use tokio::runtime::{Handle, Id};
use tokio::time::{Instant, Sleep};

/// Sleeps kept per thread: enough for the requests one worker thread
/// typically has in flight at once.
const POOL_SIZE: usize = 8;

thread_local! {
    static POOL: RefCell<Vec<(Id, Pin<Box<Sleep>>)>> = const { RefCell::new(Vec::new()) };
}

/// A timer borrowed from the pool; give it back with [`recycle`](Self::recycle).
pub(crate) struct PooledSleep {
    runtime: Id,
    pub(crate) sleep: Pin<Box<Sleep>>,
}

/// A timer that fires `timeout` from now.
///
/// # Panics
///
/// Outside a tokio runtime (with the time driver enabled).
pub(crate) fn after(timeout: Duration) -> PooledSleep {
    let now = Instant::now();
    // A timeout too large to represent waits "forever" (about 30 years).
    let deadline = now
        .checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30));
    let runtime = Handle::current().id();
    let reused = POOL
        .try_with(|pool| {
            let mut pool = pool.borrow_mut();
            let pos = pool.iter().rposition(|(id, _)| *id == runtime)?;
            Some(pool.swap_remove(pos).1)
        })
        .ok()
        .flatten();
    let sleep = match reused {
        Some(mut sleep) => {
            sleep.as_mut().reset(deadline);
            sleep
        }
        None => Box::pin(tokio::time::sleep_until(deadline)),
    };
    PooledSleep { runtime, sleep }
}

impl PooledSleep {
    /// Returns the timer to this thread's pool (dropping timers of other
    /// runtimes when the pool is full).
    pub(crate) fn recycle(self) {
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() >= POOL_SIZE {
                pool.retain(|(id, _)| *id == self.runtime);
            }
            if pool.len() < POOL_SIZE {
                pool.push((self.runtime, self.sleep));
            }
        });
    }
}
