//! The bytes a bridge holds for its connections, counted against budgets:
//! one per connection and one for the whole bridge. What a connection
//! holds is what it read and has not answered yet (a request on its way
//! through the bus) and what waits to be written to it. Over budget, the
//! connection stops reading the other end's frames until what it holds
//! drains (the back-pressure TCP itself gives), and messages for it from
//! the bus wait: a slow reader slows only itself.
//!
//! A frame counts twice its bytes ([`frame_cost`]): the frame and the
//! value decoded from it. An answer takes the place of its request's
//! bytes, counted as the larger of the two.
//!
//! A connection may always hold its first [`FREE`] bytes, whatever the
//! bridge holds in all, so that one in good health goes on while others
//! fill the bridge's budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The bytes a frame of `len` bytes holds: itself while it is read and
/// decoded, and the value decoded from it, which the bus holds until its
/// answer is written. Twice its length.
pub(crate) fn frame_cost(len: usize) -> usize {
    len.saturating_mul(2)
}

/// What a connection may hold whatever the whole bridge holds.
pub(crate) const FREE: usize = 64 * 1024;

/// The bytes all the connections of a bridge hold.
#[derive(Debug)]
pub(crate) struct Pool {
    used: AtomicUsize,
    limit: usize,
    /// Woken when bytes are let go.
    drained: Notify,
}

impl Pool {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
            drained: Notify::new(),
        })
    }

    /// The bytes held now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// The bytes one connection holds.
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicUsize,
    limit: usize,
    pool: Arc<Pool>,
    drained: Notify,
    /// Set when the connection closes: nothing waits for room any more.
    closed: AtomicBool,
}

/// Bytes held against a [`Budget`] (and its pool) until dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Budget {
    /// A connection's budget of `limit` bytes, within `pool`.
    pub(crate) fn new(limit: usize, pool: &Arc<Pool>) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
            pool: Arc::clone(pool),
            drained: Notify::new(),
            closed: AtomicBool::new(false),
        })
    }

    /// Holds `bytes` against the budget now, whether there is room or not:
    /// room is waited for before reading or queueing ([`room`](Self::room)),
    /// not when what was taken in must be kept.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Charge {
        self.used.fetch_add(bytes, Ordering::Relaxed);
        self.pool.used.fetch_add(bytes, Ordering::Relaxed);
        Charge {
            budget: Arc::clone(self),
            bytes,
        }
    }

    /// Whether the connection holds more than it may: more than its own
    /// budget, or more than its free bytes while the bridge holds more
    /// than its budget.
    pub(crate) fn over(&self) -> bool {
        !self.fits(0)
    }

    /// Whether `bytes` more fit: within the connection's budget (a
    /// connection that holds nothing takes any one frame, so that a frame
    /// larger than its budget is not refused for ever), and within its
    /// free bytes or what is left of the bridge's budget.
    fn fits(&self, bytes: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed);
        let after = used.saturating_add(bytes);
        (after <= self.limit || used == 0)
            && (after <= FREE || self.pool.used().saturating_add(bytes) <= self.pool.limit)
    }

    /// `bytes` held against the budget if they fit now (see
    /// [`fits`](Self::fits)).
    pub(crate) fn admit(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        self.fits(bytes).then(|| self.charge(bytes))
    }

    /// The bytes this connection holds now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Waits until the connection is within its budget, or closed.
    /// Cancel-safe.
    pub(crate) async fn room(&self) {
        self.room_for(0).await;
    }

    /// Waits until `bytes` more fit, or the connection is closed.
    /// Cancel-safe.
    pub(crate) async fn room_for(&self, bytes: usize) {
        loop {
            let own = self.drained.notified();
            let pool = self.pool.drained.notified();
            tokio::pin!(own, pool);
            // Registered before the check: a release between the check and
            // the wait still wakes it.
            own.as_mut().enable();
            pool.as_mut().enable();
            if self.fits(bytes) || self.closed.load(Ordering::Relaxed) {
                return;
            }
            tokio::select! {
                () = own => {}
                () = pool => {}
            }
        }
    }

    /// The connection is closing: whatever waits for room goes on (and
    /// finds the connection closed).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.drained.notify_waiters();
    }
}

impl Charge {
    /// The charge made to hold at least `bytes`: a request's answer,
    /// which takes the place of the request's own bytes, counts as the
    /// larger of the two.
    pub(crate) fn cover(&mut self, bytes: usize) {
        let more = bytes.saturating_sub(self.bytes);
        if more > 0 {
            self.budget.used.fetch_add(more, Ordering::Relaxed);
            self.budget.pool.used.fetch_add(more, Ordering::Relaxed);
            self.bytes += more;
        }
    }

    /// The bytes held.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let budget = &self.budget;
        budget.used.fetch_sub(self.bytes, Ordering::Relaxed);
        budget.pool.used.fetch_sub(self.bytes, Ordering::Relaxed);
        budget.drained.notify_waiters();
        budget.pool.drained.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn room_comes_back_as_charges_are_let_go() {
        let pool = Pool::new(usize::MAX);
        let budget = Budget::new(1000, &pool);
        let first = budget.charge(600);
        let mut second = budget.charge(300);
        assert!(!budget.over());
        second.cover(200);
        assert_eq!(second.bytes(), 300, "covered already");
        second.cover(500);
        assert_eq!(
            (budget.used(), pool.used(), second.bytes()),
            (1100, 1100, 500)
        );
        assert!(budget.over());
        let waiting = tokio::spawn({
            let budget = Arc::clone(&budget);
            async move { budget.room().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "over budget: no room");
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("room once a charge is let go")
            .unwrap();
        drop(first);
        assert_eq!((budget.used(), pool.used()), (0, 0));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_pool_holds_back_all_but_the_free_bytes() {
        let pool = Pool::new(FREE * 3);
        let heavy = Budget::new(usize::MAX, &pool);
        let light = Budget::new(usize::MAX, &pool);
        let held = heavy.charge(FREE * 4);
        let small = light.charge(FREE / 2);
        assert!(heavy.over(), "over the pool and its free bytes");
        assert!(!light.over(), "within its free bytes");
        let more = light.charge(FREE);
        assert!(light.over());
        drop(held);
        assert!(!light.over() && !heavy.over());
        drop((small, more));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_closed_budget_lets_its_waiters_go() {
        let pool = Pool::new(usize::MAX);
        let budget = Budget::new(10, &pool);
        let _held = budget.charge(100);
        let waiting = tokio::spawn({
            let budget = Arc::clone(&budget);
            async move { budget.room().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        budget.close();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("let go on close")
            .unwrap();
    }
}
